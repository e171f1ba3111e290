"""Catalog loading, bad files, duplicates, vanished folders and the incremental index."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from retrieval_fixtures import skill_md, write_skill

from hermes_core.retrieval.skills import (
    SkillIndex,
    load_catalog,
    load_jsonl_catalog,
    load_skill_folders,
    parse_skill_md,
)
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
    # a description over 1024 characters is kept with a warning (tests/retrieval/test_skills.py)
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
