"""Review round 2: SKILL.md discovery on odd file systems (special files, unreadable folders)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from retrieval_fixtures import skill_md, write_skill

from hermes_core.retrieval.skills import load_catalog, load_skill_folders


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_named_pipe_called_skill_md_is_skipped_not_read(tmp_path: Path) -> None:
    write_skill(tmp_path, "ok", skill_md("ok", "a fine skill"))
    (tmp_path / "pipe").mkdir()
    fifo = tmp_path / "pipe" / "SKILL.md"
    os.mkfifo(fifo)
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(load_skill_folders([tmp_path])), daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():  # opening a pipe for reading blocks until a writer comes: unblock the loader
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("loading the catalog blocked on a named pipe")
    ((skills, issues),) = out  # type: ignore[misc]
    assert [s.name for s in skills] == ["ok"]
    assert [(i.path, i.reason) for i in issues] == [(str(fifo), "not a regular file")]


def test_a_skill_md_linked_to_a_device_is_skipped_not_read(tmp_path: Path) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    write_skill(tmp_path, "ok", skill_md("ok", "a fine skill"))
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "SKILL.md").symlink_to("/dev/zero")  # size 0 by stat, endless to read
    skills, issues = load_skill_folders([tmp_path])
    assert [s.name for s in skills] == ["ok"]
    assert [i.reason for i in issues] == ["not a regular file"]


@pytest.mark.parametrize("error,reported", [
    (PermissionError(13, "Permission denied"), True),    # chmod 000: reported, not silently dropped
    (FileNotFoundError(2, "No such file or directory"), False),  # deleted mid-walk: simply gone
])
def test_a_folder_that_cannot_be_listed_is_reported_unless_it_vanished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, reported: bool) -> None:
    write_skill(tmp_path, "ok", skill_md("ok", "a fine skill"))
    write_skill(tmp_path, "bad", skill_md("bad", "a skill in a folder we cannot list"))
    bad = str(tmp_path / "bad")
    error.filename = bad
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str] = ".") -> object:  # root ignores modes: simulate
        if os.fspath(path) == bad:
            raise error
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["ok"]
    expected = [(bad, "cannot list folder: Permission denied")] if reported else []
    assert [(i.path, i.reason) for i in cat.issues] == expected


def test_a_configured_folder_we_may_not_enter_is_an_issue_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path / "mine", "ok", skill_md("ok", "a fine skill"))
    theirs = tmp_path / "theirs" / "skills"  # e.g. skill_utils.folders: [/root/skills] as a user
    real_is_dir = Path.is_dir

    def is_dir(self: Path) -> bool:  # what pathlib does when a parent is not searchable (EACCES)
        if self == theirs:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_dir(self)

    monkeypatch.setattr(Path, "is_dir", is_dir)
    cat = load_catalog([tmp_path / "mine", theirs], warn=False)
    assert [s.name for s in cat.skills] == ["ok"]
    assert [(i.path, i.reason) for i in cat.issues] == [
        (str(theirs), "cannot list folder: Permission denied")]


def test_the_same_folder_configured_twice_is_read_once(tmp_path: Path) -> None:
    # HERMES_HOME/skills is always searched; listing it again in skill_utils.folders (or a link to
    # it) must not turn every skill into a "duplicate skill name" warning
    skills_dir = tmp_path / "home" / "skills"
    write_skill(skills_dir, "a", skill_md("a", "skill a"))
    write_skill(skills_dir, "b", skill_md("b", "skill b"))
    (tmp_path / "link").symlink_to(skills_dir, target_is_directory=True)
    cat = load_catalog([skills_dir, str(skills_dir) + "/", tmp_path / "link"], warn=False)
    assert sorted(s.name for s in cat.skills) == ["a", "b"]
    assert cat.issues == ()


def test_the_same_jsonl_catalog_configured_twice_is_read_once(tmp_path: Path) -> None:
    cat_file = tmp_path / "skills.jsonl"
    cat_file.write_text('{"name": "a", "description": "skill a"}\n')
    cat = load_catalog(catalogs=[cat_file, str(cat_file)], warn=False)
    assert [s.name for s in cat.skills] == ["a"] and cat.issues == ()


def test_a_configured_catalog_path_with_a_tilde_is_expanded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "skills.jsonl").write_text('{"name": "a", "description": "skill a"}\n')
    cat = load_catalog(catalogs=["~/skills.jsonl"], warn=False)  # skill_utils.catalogs: [~/skills.jsonl]
    assert [s.name for s in cat.skills] == ["a"] and cat.issues == ()


@pytest.mark.parametrize("value, kind", [("yes", "bool"), ("2024-01-01", "date"), ("[a, b]", "list")])
def test_a_description_yaml_reads_as_another_type_says_so(tmp_path: Path, value: str, kind: str) -> None:
    write_skill(tmp_path, "x", f"---\nname: x\ndescription: {value}\n---\n")
    _, issues = load_skill_folders([tmp_path])
    (issue,) = issues
    assert issue.reason == f"'description' must be text (got {kind}); quote it"


def test_a_configured_folder_inside_another_is_not_read_twice(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "a", skill_md("a", "skill a"))
    write_skill(tmp_path / "skills" / "team", "b", skill_md("b", "skill b"))
    for order in ([tmp_path / "skills", tmp_path / "skills" / "team"],
                  [tmp_path / "skills" / "team", tmp_path / "skills"]):
        cat = load_catalog(order, warn=False)
        assert sorted(s.name for s in cat.skills) == ["a", "b"] and cat.issues == ()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-16-le"])
def test_a_utf16_skill_md_is_named_as_such_not_as_binary(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "w").mkdir()
    text = "---\nname: w\ndescription: Windows Notepad saved me as Unicode\n---\n"
    (tmp_path / "w" / "SKILL.md").write_bytes(text.encode(encoding))
    _, issues = load_skill_folders([tmp_path])
    (issue,) = issues
    assert issue.reason == "UTF-16 text; save the file as UTF-8"
