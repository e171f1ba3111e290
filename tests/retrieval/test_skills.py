"""Tests of ``hermes_core/retrieval/skills.py``.

Catalog loading, bad files, duplicates, vanished folders and the incremental index.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from pathlib import Path

import pytest

from hermes_core.retrieval import skills as skills_mod
from hermes_core.retrieval.skills import (
    SkillIndex,
    load_catalog,
    load_jsonl_catalog,
    load_skill_folders,
    parse_skill_md,
)
from hermes_core.testing.retrieval import skill_md, write_skill
from hermes_core.types import Skill


def test_skill_md_front_matter_and_body(tmp_path: Path) -> None:
    p = write_skill(tmp_path, "w", "---\nname: weather\ndescription: Get the  forecast\n"
                    "triggers: [天气预报, forecast please]\nsynonyms: rain\ntags: [x]\ncategory: tools\n"
                    "---\n# Weather\nCall the API.\n")
    skills, issues = load_skill_folders([tmp_path])
    assert issues == []
    (s,) = skills
    assert (s.name, s.description, s.category) == ("weather", "Get the forecast", "tools")
    assert s.triggers == ("天气预报", "forecast please")
    assert s.synonyms == ("rain",)
    assert s.body == "# Weather\nCall the API."
    assert s.path == str(p)


@pytest.mark.parametrize("text, reason", [
    ("no front matter here", "no YAML front matter"),
    ("---\nname: x\ndescription: y\n", "not closed"),
    ("---\nname: [unclosed\ndescription: y\n---\n", "not valid YAML at line"),
    ("---\n- a\n- b\n---\n", "must be a YAML mapping"),
    ("---\ndescription: y\n---\n", "missing or empty 'name'"),
    ("---\nname: x\n---\n", "missing or empty 'description'"),
    ("---\nname: " + "n" * 65 + "\ndescription: y\n---\n", "'name' is 65 characters (limit 64)"),
    ("---\nname: x\ndescription: " + "d" * 1025 + "\n---\n", "'description' is 1025 characters"),
    ("---\nname: x\ndescription: y\ntriggers: {a: 1}\n---\n", "'triggers' must be"),
    ("---\nname: x\ndescription: y\ncategory: [a]\n---\n", "'category' must be a string"),
])
def test_malformed_skill_md_is_skipped_with_path_and_reason(
        tmp_path: Path, text: str, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    bad = write_skill(tmp_path, "bad", text)
    write_skill(tmp_path, "good", skill_md("good", "A good skill"))
    with caplog.at_level(logging.WARNING):
        cat = load_catalog([tmp_path])
    assert [s.name for s in cat.skills] == ["good"]
    (issue,) = cat.issues
    assert issue.path == str(bad)
    assert reason in issue.reason
    assert str(bad) in caplog.text and reason in caplog.text


def test_binary_and_non_utf8_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "SKILL.md").write_bytes(b"---\nname: a\x00\n---\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    skills, issues = load_skill_folders([tmp_path])
    assert skills == []
    assert sorted(i.reason for i in issues) == ["binary file, not text", "not valid UTF-8"]


def test_bom_is_accepted() -> None:
    s = parse_skill_md("\ufeff---\nname: a\ndescription: b\n---\nbody", "x/SKILL.md")
    assert (s.name, s.body) == ("a", "body")


def test_duplicate_names_keep_first_in_search_order(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    home, extra = tmp_path / "home", tmp_path / "extra"
    write_skill(home, "z-dir", skill_md("dup", "from home z"))
    write_skill(home, "a-dir", skill_md("dup", "from home a"))
    write_skill(extra, "a", skill_md("dup", "from extra"))
    with caplog.at_level(logging.WARNING):
        cat = load_catalog([home, extra])
    (s,) = cat.skills
    assert s.description == "from home a"  # first folder, then sorted path
    assert len(cat.issues) == 2
    assert all("duplicate skill name 'dup'" in i.reason and str(home / "a-dir") in i.reason
               for i in cat.issues)
    # the same on a second load: the winner does not depend on listing order
    assert load_catalog([home, extra], warn=False).skills[0].description == "from home a"


def test_jsonl_catalog_lines(tmp_path: Path) -> None:
    p = tmp_path / "cat.jsonl"
    long_name = "A.B." + "c" * 70
    p.write_text("\n".join([
        json.dumps({"name": "ok", "description": "fine", "triggers": ["t1"], "body": "B"}),
        "{not json",
        json.dumps({"name": "no-desc"}),
        json.dumps(["a", "list"]),
        "",
        json.dumps({"name": long_name, "description": "long dotted id"}),
    ]), encoding="utf-8")
    skills, issues = load_jsonl_catalog(p)
    assert [s.name for s in skills] == ["ok", long_name]  # over-long JSONL names kept, with a warning
    assert skills[0].triggers == ("t1",) and skills[0].body == "B"
    assert [(i.line, i.reason.split(" (")[0]) for i in issues] == [
        (2, "not valid JSON"), (3, "missing or empty 'description'"),
        (4, "expected a mapping with 'name' and 'description'")]
    assert str(issues[0]) == f"{p}:2: {issues[0].reason}"


def test_missing_catalog_is_an_issue_not_a_crash(tmp_path: Path) -> None:
    skills, issues = load_jsonl_catalog(tmp_path / "nope.jsonl")
    assert skills == [] and "cannot read" in issues[0].reason


def test_vanished_folder_between_refreshes(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("a", "first"))
    write_skill(root, "b", skill_md("b", "second"))
    index = SkillIndex()
    d1 = index.refresh(load_catalog([root]).skills)
    assert len(d1.added) == 2
    shutil.rmtree(root)
    cat = load_catalog([root])
    assert cat.skills == () and cat.issues == ()
    d2 = index.refresh(cat.skills)
    assert sorted(d2.removed) == sorted(d1.added) and index.skills == {}


def test_incremental_index_reports_only_differences() -> None:
    a, b, c = Skill("a", "one"), Skill("b", "two"), Skill("c", "three")
    index = SkillIndex()
    assert index.refresh([a, b]).added == tuple(sorted((a.id, b.id)))
    assert index.refresh([a, b]).empty
    b2 = Skill("b", "two, changed")
    delta = index.refresh([a, b2, c])
    assert delta.added == (c.id,) and delta.changed == (b.id,) and delta.removed == ()
    assert index.skills[b.id].description == "two, changed"
    assert index.hashes[b.id] == b2.content_hash
    delta = index.refresh([c])
    assert delta.removed == tuple(sorted((a.id, b.id)))
    assert [s.name for s in index.ordered()] == ["c"]


def test_ids_and_hashes_are_deterministic() -> None:
    assert Skill("x", "d").id == Skill("x", "other").id
    assert Skill("x", "d").content_hash == Skill("x", "d").content_hash
    assert Skill("x", "d").content_hash != Skill("x", "d", body="b").content_hash


# SKILL.md discovery on odd file systems (special files, unreadable folders).

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


# The skills walk is bounded: a link to a huge tree inside skills/ must not make every refresh
# (and the per-turn change check) walk the whole disk.

def test_depth_and_package_trees_bound_the_walk(tmp_path: Path) -> None:
    write_skill(tmp_path, "team/deploy", skill_md("deploy", "Deploy the service."))
    deep = "/".join(f"d{i}" for i in range(skills_mod.MAX_WALK_DEPTH + 2))
    write_skill(tmp_path, deep, skill_md("too-deep", "Below the depth limit."))
    write_skill(tmp_path, "tool/node_modules/pkg", skill_md("vendored", "Inside node_modules."))
    write_skill(tmp_path, ".git/hooks", skill_md("hidden", "Inside a hidden folder."))
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["deploy"]
    assert cat.issues == ()


def test_a_huge_tree_stops_the_walk_with_an_issue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_mod, "MAX_WALK_DIRS", 5)
    write_skill(tmp_path, "a", skill_md("alpha", "First."))
    for i in range(10):
        (tmp_path / "zz" / f"dir{i}").mkdir(parents=True)
    linked = tmp_path / "home-link"
    linked.symlink_to(tmp_path / "zz")
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["alpha"]
    assert [i.reason for i in cat.issues] == [
        "stopped looking for skills after 5 folders (a link to a large tree inside it?)"]
