"""Tests of ``hermes_core/retrieval/served.py``: the catalog a retriever serves, on or off."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.served import served_catalog


def _skill(folder: Path, name: str, text: str) -> None:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    _skill(tmp_path, "weather", "---\nname: weather\ndescription: Get the forecast\n---\nbody\n")
    _skill(tmp_path, "broken", "---\nname: [\n---\n")
    return tmp_path


@pytest.mark.parametrize("enabled", [True, False])
def test_the_served_catalog_holds_the_skills_and_the_skipped_files(skills_dir: Path, enabled: bool) -> None:
    cat = served_catalog(SkillRetriever(folders=[skills_dir], embedders=[], enabled=enabled))
    assert [s.name for s in cat.skills] == ["weather"]
    [issue] = cat.issues
    assert issue.path.endswith("broken/SKILL.md") and "not valid YAML" in issue.reason


def test_with_retrieval_off_the_catalog_is_read_fresh_and_no_index_is_built(skills_dir: Path) -> None:
    r = SkillRetriever(folders=[skills_dir], embedders=[], enabled=False)
    assert [s.name for s in served_catalog(r).skills] == ["weather"]
    _skill(skills_dir, "news", "---\nname: news\ndescription: Read the headlines\n---\n")
    assert [s.name for s in served_catalog(r).skills] == ["news", "weather"]
    assert not r._lexical_ready.is_set()


def test_with_retrieval_on_the_catalog_is_the_index(skills_dir: Path) -> None:
    r = SkillRetriever(folders=[skills_dir], embedders=[])
    assert [s.name for s in served_catalog(r).skills] == ["weather"]
    assert r._lexical_ready.is_set()


def test_the_skill_tool_and_the_prompt_warnings_read_the_served_catalog(skills_dir: Path) -> None:
    from hermes_core.agent.skill_tool import SkillSelection
    from hermes_core.cli.prompt_cmd import _skill_warnings

    for enabled in (True, False):
        r = SkillRetriever(folders=[skills_dir], embedders=[], enabled=enabled)
        cat = served_catalog(r)
        assert SkillSelection(r).catalog() == list(cat.skills)
        assert [w["file"] for w in _skill_warnings(r)] == [i.path for i in cat.issues]
