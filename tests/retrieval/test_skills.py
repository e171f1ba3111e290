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
    MAX_DESCRIPTION,
    SkillIndex,
    current_platform,
    load_catalog,
    load_jsonl_catalog,
    load_skill_folders,
    parse_skill_md,
    platform_mismatch,
)
from hermes_core.testing.retrieval import skill_md, write_skill
from hermes_core.types import Skill
from tests.retrieval.conftest import front_matter, write


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
    ("---\nname: [unclosed\ndescription: y\n---\n", "not valid YAML"),
    ("---\n- a\n- b\n---\n", "must be a YAML mapping"),
    ("---\ndescription: y\n---\n", "missing or empty 'name'"),
    ("---\nname: x\n---\n", "missing or empty 'description'"),
    ("---\nname: " + "n" * 65 + "\ndescription: y\n---\n", "'name' is 65 characters (limit 64)"),
    # a description over 1024 characters is kept with a warning (see the long-description test)
    ("---\nname: x\ndescription: y\nplatforms: {a: 1}\n---\n", "'platforms' must be"),
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


def test_a_jsonl_name_of_a_page_is_skipped_and_a_long_number_said_plainly(tmp_path: Path) -> None:
    """A long dotted id is kept, but a 100,000-character name is not a name: it would be printed
    on every hint line and by 'skills list'. Python's advice for a long integer
    (sys.set_int_max_str_digits) means nothing to the person editing the file."""
    p = tmp_path / "cat.jsonl"
    p.write_text("\n".join([
        json.dumps({"name": "n" * 100_000, "description": "a page of a name"}),
        '{"name": "num", "description": "d", "x": ' + "9" * 5000 + "}",
        json.dumps({"name": "ok", "description": "fine"}),
    ]), encoding="utf-8")
    skills, issues = load_jsonl_catalog(p)
    assert [s.name for s in skills] == ["ok"]
    assert [i.line for i in issues] == [1, 2]
    assert "100000 characters" in issues[0].reason and len(str(issues[0])) < 300
    assert "5000 digits" in issues[1].reason and "sys." not in issues[1].reason


def test_missing_catalog_is_an_issue_not_a_crash(tmp_path: Path) -> None:
    skills, issues = load_jsonl_catalog(tmp_path / "nope.jsonl")
    assert skills == [] and "cannot read" in issues[0].reason


def test_a_catalog_line_over_a_skill_files_size_is_skipped_and_the_others_kept(tmp_path: Path) -> None:
    """A 50 MB description was kept and tokenised whole by every layer: the catalog never came
    up. A line longer than a SKILL.md may be is one issue naming its line, not parsed at all."""
    from hermes_core.retrieval.skills import MAX_SKILL_FILE_BYTES
    p = tmp_path / "cat.jsonl"
    p.write_text("\n".join([
        json.dumps({"name": "big", "description": "d" * (MAX_SKILL_FILE_BYTES + 1)}),
        json.dumps({"name": "ok", "description": "fine"}),
    ]), encoding="utf-8")
    skills, issues = load_jsonl_catalog(p)
    assert [s.name for s in skills] == ["ok"]
    assert [i.line for i in issues] == [1] and "bytes" in issues[0].reason
    assert len(str(issues[0])) < 300


def test_a_catalog_that_is_a_pipe_or_a_folder_is_an_issue_never_read(tmp_path: Path) -> None:
    """A FIFO named in ``catalogs`` would block every turn's catalog load forever."""
    fifo = tmp_path / "cat.jsonl"
    os.mkfifo(fifo)
    skills, issues = load_jsonl_catalog(fifo)
    assert skills == [] and "not a regular file" in issues[0].reason
    skills, issues = load_jsonl_catalog(tmp_path)
    assert skills == [] and "directory" in issues[0].reason


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
        "stopped looking for skills after 5 folders without one (a link to a large tree inside it?)"]


@pytest.mark.parametrize("flat", [5, 12])
def test_a_folder_of_more_skills_than_the_walk_budget_loads_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flat: int) -> None:
    # the budget bounds a walk into a large tree of non-skill folders; a skill's own folder is
    # what the walk is for (5,000 skills in one folder lost the last one, with a misleading issue)
    monkeypatch.setattr(skills_mod, "MAX_WALK_DIRS", 5)
    for i in range(flat):
        write_skill(tmp_path, f"s{i:02d}", skill_md(f"s{i:02d}", f"Skill {i}."))
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == [f"s{i:02d}" for i in range(flat)]
    assert cat.issues == ()


def test_the_public_collection_loads_without_losing_a_skill(anthropic_skills: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    on_disk = sorted(p.parent.name for p in anthropic_skills.glob("*/SKILL.md"))
    assert len(on_disk) == 12
    with caplog.at_level(logging.WARNING):
        cat = load_catalog([anthropic_skills], platform="linux")
    assert sorted(s.name for s in cat.skills) == on_disk
    assert cat.issues == () and cat.unavailable == ()
    # claude-api's description is over the limit: kept whole, with a warning
    api = next(s for s in cat.skills if s.name == "claude-api")
    assert len(api.description) > MAX_DESCRIPTION
    assert "claude-api/SKILL.md: 'description' is" in caplog.text and "kept" in caplog.text
    assert next(s for s in cat.skills if s.name == "mcp-builder").license == (
        "Complete terms in LICENSE.txt")


def test_front_matter_fields_are_read() -> None:
    s = parse_skill_md(front_matter(
        "name: notes\ndescription: Take notes\nplatforms: [macOS, darwin, Linux]\n"
        "license: Apache-2.0\nallowed-tools: Bash(git:*) Read\n"
        "metadata:\n  author: me\n  tags: [writing, notes]\ntags: [notes]"), "x/SKILL.md")
    assert s.platforms == ("macos", "linux")
    assert s.license == "Apache-2.0"
    assert s.allowed_tools == ("Bash(git:*)", "Read")
    assert s.metadata["author"] == "me"
    assert s.tags == ("notes", "writing")


@pytest.mark.parametrize("meta, reason", [
    ("metadata: [a]", "'metadata' must be a mapping"),
    ("license: [MIT]", "'license' must be a string"),
    ("allowed-tools: {a: 1}", "'allowed-tools' must be"),
])
def test_bad_front_matter_fields_name_the_field(meta: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_skill_md(front_matter(f"name: n\ndescription: d\n{meta}"), "x/SKILL.md")


def test_folders_under_a_skill_are_never_skills_of_their_own(tmp_path: Path) -> None:
    write(tmp_path, "deploy/SKILL.md", front_matter("name: deploy\ndescription: Deploy the app"))
    write(tmp_path, "deploy/references/old-package/SKILL.md",
          front_matter("name: old-deploy\ndescription: The vendored old version"))
    write(tmp_path, "ops/monitor/SKILL.md", front_matter("name: monitor\ndescription: Watch it"))
    cat = load_catalog([tmp_path])
    assert sorted(s.name for s in cat.skills) == ["deploy", "monitor"]   # categories still work


def test_other_platform_skills_are_set_apart_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "mac/SKILL.md", front_matter("name: mac-only\ndescription: x\nplatforms: [macos]"))
    write(tmp_path, "any/SKILL.md", front_matter("name: anywhere\ndescription: y"))
    linux = load_catalog([tmp_path], platform="linux")
    assert [s.name for s in linux.skills] == ["anywhere"]
    ((skill, why),) = linux.unavailable
    assert skill.name == "mac-only" and why == "for macos only; this machine is linux"
    mac = load_catalog([tmp_path], platform="darwin")
    assert sorted(s.name for s in mac.skills) == ["anywhere", "mac-only"]


def test_platform_helpers() -> None:
    assert current_platform("darwin") == "macos" and current_platform("win32") == "windows"
    assert current_platform("linux") == "linux"
    skill = parse_skill_md(front_matter("name: w\ndescription: d\nplatforms: windows"), "x/SKILL.md")
    assert platform_mismatch(skill, "win32") is None
    assert platform_mismatch(skill, "linux") == "for windows only; this machine is linux"


def test_unavailable_skill_is_neither_hinted_nor_loadable(tmp_path: Path) -> None:
    from hermes_core.agent.skill_tool import SkillSelection, answer_skill_view
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.types import ToolCall

    other = "windows" if current_platform() != "windows" else "linux"
    write(tmp_path, "x/SKILL.md", front_matter(f"name: elsewhere\ndescription: deploy things\n"
                                         f"platforms: [{other}]"))
    write(tmp_path, "y/SKILL.md", front_matter("name: here\ndescription: deploy here"))
    r = SkillRetriever(folders=[tmp_path], embedders=[], enabled=False)
    block, _result = r.select("deploy things")
    assert "here" in block and "elsewhere" not in block
    text = answer_skill_view(ToolCall("c", "skill_view", '{"name": "elsewhere"}'), SkillSelection(r))
    assert text.startswith("error: no skill named 'elsewhere'")


def test_skills_list_says_why_a_skill_is_unavailable(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_core.cli.main import main

    other = "windows" if current_platform() != "windows" else "linux"
    home = tmp_path / "home"
    write(home, "skills/x/SKILL.md", front_matter(f"name: elsewhere\ndescription: d\nplatforms: [{other}]"))
    write(home, "skills/y/SKILL.md", front_matter("name: here\ndescription: e\nlicense: MIT"))
    assert main(["skills", "list", "--home", str(home), "--no-embeddings"]) == 0
    out = capsys.readouterr().out
    assert "here\te" in out
    assert f"elsewhere\t(not available here: for {other} only; this machine is" in out
    assert main(["skills", "list", "--home", str(home), "--no-embeddings", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["here"]["available"] is True and rows["here"]["license"] == "MIT"
    assert rows["elsewhere"]["available"] is False and other in rows["elsewhere"]["reason"]


def test_index_delta_names_what_was_added_changed_and_removed() -> None:
    delta = skills_mod.index_delta({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"})
    assert (delta.added, delta.changed, delta.removed) == (("d",), ("b",), ("c",))
    assert skills_mod.index_delta({"a": "1"}, {"a": "1"}).empty


def test_the_last_reindex_is_recorded_per_set_of_sources_and_a_torn_record_starts_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home_skills, other = tmp_path / "skills", tmp_path / "more"
    path = skills_mod.snapshot_path(tmp_path / "cache", [home_skills], [])
    assert path is not None and path != skills_mod.snapshot_path(tmp_path / "cache", [home_skills, other], [])
    assert skills_mod.snapshot_path(None, [home_skills], []) is None
    assert skills_mod.read_snapshot(path) is None                      # never reindexed
    skills_mod.write_snapshot(path, {"b": "2", "a": "1"})
    assert skills_mod.read_snapshot(path) == {"a": "1", "b": "2"}
    path.write_text('{"version": 1, "skills": {"a": ', "utf-8")
    with caplog.at_level(logging.WARNING):
        assert skills_mod.read_snapshot(path) is None
    assert "unreadable" in caplog.text


def test_an_unchanged_skill_that_moved_takes_its_new_path_without_counting_as_changed() -> None:
    # a line added above a JSONL record, or a skill folder renamed: same content, new place
    idx = SkillIndex()
    idx.refresh([Skill("a", "x", path="c.jsonl:1"), Skill("b", "y", path="c.jsonl:2")])
    delta = idx.refresh([Skill("new", "z", path="c.jsonl:1"), Skill("a", "x", path="c.jsonl:2"),
                         Skill("b", "y", path="c.jsonl:3")])
    assert (delta.added, delta.changed, delta.removed) == ((Skill("new", "z").id,), (), ())
    assert [(s.name, s.path) for s in idx.ordered()] == [
        ("a", "c.jsonl:2"), ("b", "c.jsonl:3"), ("new", "c.jsonl:1")]


@pytest.mark.parametrize("front", [
    "name: template-skill\ndescription: d",                   # a name unlike its folder
    "name: template\ndescription: " + "long " * 230,          # a description over 1,024 characters
])
def test_a_kept_skill_s_warning_is_logged_once_across_refreshes(
        tmp_path: Path, front: str, caplog: pytest.LogCaptureFixture) -> None:
    # the index re-reads every SKILL.md on each refresh (any skill edited): an unchanged skill's
    # warning was logged again each time, as a bad file's issue is not (``warned``)
    path = write_skill(tmp_path, "template", front_matter(front))
    write_skill(tmp_path, "weather", front_matter("name: weather\ndescription: Forecast."))
    warned: set[str] = set()
    with caplog.at_level(logging.WARNING):
        load_catalog([tmp_path], warned=warned)
        assert [r.getMessage().split(": ")[0] for r in caplog.records] == [str(path)]
        caplog.clear()
        write_skill(tmp_path, "weather", front_matter("name: weather\ndescription: The forecast."))
        again = load_catalog([tmp_path], warned=warned)
    assert sorted(s.name for s in again.skills) == sorted(["weather", front.split("\n")[0][6:]])
    assert caplog.records == []


def test_a_tree_of_empty_folders_with_a_skill_in_every_twentieth_is_still_bounded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # skill folders no longer count against the budget: the folders without one still stop the
    # walk, and the folders listed stay within budget x 20/19 (100,000 of them: 5,265 listings)
    budget = 50
    monkeypatch.setattr(skills_mod, "MAX_WALK_DIRS", budget)
    for i in range(2_000):
        (tmp_path / f"d{i:04d}").mkdir()
        if i % 20 == 0:
            write_skill(tmp_path, f"d{i:04d}", skill_md(f"d{i:04d}", f"Skill {i}."))
    listed: list[object] = []
    scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": listed.append(p) or scandir(p))
    cat = load_catalog([tmp_path], warn=False)
    assert [i.reason for i in cat.issues] == [f"stopped looking for skills after {budget} folders "
                                              "without one (a link to a large tree inside it?)"]
    assert len(listed) <= budget * 20 // 19 + 2 and 0 < len(cat.skills) < budget // 19 + 2


@pytest.mark.parametrize("look_alike, what", [
    ("dеploy", "U+0435 CYRILLIC SMALL LETTER IE"),        # Cyrillic е
    ("deplοy", "U+03BF GREEK SMALL LETTER OMICRON"),      # Greek ο
    ("ｄｅｐｌｏｙ", "U+FF44 FULLWIDTH LATIN SMALL LETTER D"),
    ("deploy\u200d", "U+200D ZERO WIDTH JOINER"),          # invisible, kept for Persian and emoji
    ("deploy\u034f", "U+034F COMBINING GRAPHEME JOINER"),
    ("deploy\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
    ("deploy\u3164", "U+3164 HANGUL FILLER"),
    ("DЕPLOY", "U+0415 CYRILLIC CAPITAL LETTER IE"),      # a look-alike of another case
])
def test_a_name_that_looks_like_another_skill_s_is_set_aside_as_a_duplicate(
        tmp_path: Path, look_alike: str, what: str) -> None:
    # both were listed: the model saw "- deploy: ..." twice, one of them anyone's, and whichever
    # it typed back loaded; an exact duplicate already keeps the first in search order
    write_skill(tmp_path, "a-deploy", skill_md("deploy", "Deploy the app to production."))
    write_skill(tmp_path, "b-other", skill_md(look_alike, "Deploy the app, the better way."))
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["deploy"]
    (issue,) = cat.issues
    assert issue.path == str(tmp_path / "b-other" / "SKILL.md")
    assert issue.reason == (f"skill name {look_alike!r} looks like 'deploy' ({what}); keeping "
                            f"{tmp_path / 'a-deploy' / 'SKILL.md'}")


@pytest.mark.parametrize("names", [
    ("Deploy", "deploy"),                 # case alone: both shown as written (skill_view asks)
    ("部署应用", "部署服务"),
    ("नमस्ते", "नमस्त"),                   # a vowel sign is a letter of the name, not a disguise
    ("deploy", "deploy-app"),
    ("café", "cafe"),
    ("👨\u200d💻-helper", "💻-helper"),    # a joiner among emoji is how they are written: kept
])
def test_names_that_differ_visibly_are_all_kept(tmp_path: Path, names: tuple[str, str]) -> None:
    for i, name in enumerate(names):
        write_skill(tmp_path, f"s{i}", skill_md(name, f"Skill number {i}."))
    cat = load_catalog([tmp_path], warn=False)
    assert sorted(s.name for s in cat.skills) == sorted(names) and cat.issues == ()


@pytest.mark.parametrize("names", [
    ("ΓΙΟΣ", "ΥΙΟΣ"),           # Greek: son, and its formal spelling (Γ and Υ both fold to "Y")
    ("ус", "үс"),               # Mongolian: water and hair (Cyrillic у and ү both fold to "y")
    ("уул", "үүл"),             # Mongolian: mountain and cloud
])
def test_two_names_in_one_other_alphabet_are_both_kept(tmp_path: Path,
                                                       names: tuple[str, str]) -> None:
    # a disguise mixes alphabets (or imitates a Latin name); two names written in one alphabet
    # other than Latin differ in letters of that alphabet, as "deploy" and "dep1oy" do in ASCII
    # (never folded): TR39 folds γ and υ to one Latin letter, which set a Greek user's skill aside
    for i, name in enumerate(names):
        write_skill(tmp_path, f"s{i}", skill_md(name, f"Skill number {i}."))
    cat = load_catalog([tmp_path], warn=False)
    assert sorted(s.name for s in cat.skills) == sorted(names) and cat.issues == ()


def test_a_latin_letter_in_a_greek_name_is_still_set_aside(tmp_path: Path) -> None:
    # two Greek names are both kept (above); a Latin O inside a Greek name is a disguise
    for i, name in enumerate(("ΓΙΟΣ", "ΥΙΟΣ", "ΓΙOΣ")):
        write_skill(tmp_path, f"s{i}", skill_md(name, f"Skill number {i}."))
    cat = load_catalog([tmp_path], warn=False)
    assert [s.name for s in cat.skills] == ["ΓΙΟΣ", "ΥΙΟΣ"]
    (issue,) = cat.issues
    assert issue.reason.startswith("skill name 'ΓΙOΣ' looks like 'ΓΙΟΣ' (U+004F")
