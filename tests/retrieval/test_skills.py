"""Skill catalog: a real public collection loads whole; agentskills front matter is read;
folders under a skill are its files; other platforms' skills are set apart with the reason."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hermes_core.retrieval.retriever import hint_description, render_full_list, render_hint
from hermes_core.retrieval.skills import (
    MAX_DESCRIPTION,
    current_platform,
    load_catalog,
    parse_skill_md,
    platform_mismatch,
)
from tests.retrieval.conftest import write


def _front(meta: str, body: str = "Body.") -> str:
    return f"---\n{meta}\n---\n{body}\n"


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


def test_long_descriptions_are_clipped_in_hints_only(anthropic_skills: Path) -> None:
    api = next(s for s in load_catalog([anthropic_skills]).skills if s.name == "claude-api")
    clipped = hint_description(api)
    assert len(clipped) == MAX_DESCRIPTION and clipped.endswith("…")
    assert api.description.startswith(clipped[:-1])
    for block in (render_hint([api]), render_full_list([api])):
        assert clipped in block and api.description not in block


def test_front_matter_fields_are_read() -> None:
    s = parse_skill_md(_front(
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
        parse_skill_md(_front(f"name: n\ndescription: d\n{meta}"), "x/SKILL.md")


def test_folders_under_a_skill_are_never_skills_of_their_own(tmp_path: Path) -> None:
    write(tmp_path, "deploy/SKILL.md", _front("name: deploy\ndescription: Deploy the app"))
    write(tmp_path, "deploy/references/old-package/SKILL.md",
          _front("name: old-deploy\ndescription: The vendored old version"))
    write(tmp_path, "ops/monitor/SKILL.md", _front("name: monitor\ndescription: Watch it"))
    cat = load_catalog([tmp_path])
    assert sorted(s.name for s in cat.skills) == ["deploy", "monitor"]   # categories still work


def test_other_platform_skills_are_set_apart_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "mac/SKILL.md", _front("name: mac-only\ndescription: x\nplatforms: [macos]"))
    write(tmp_path, "any/SKILL.md", _front("name: anywhere\ndescription: y"))
    linux = load_catalog([tmp_path], platform="linux")
    assert [s.name for s in linux.skills] == ["anywhere"]
    ((skill, why),) = linux.unavailable
    assert skill.name == "mac-only" and why == "for macos only; this machine is linux"
    mac = load_catalog([tmp_path], platform="darwin")
    assert sorted(s.name for s in mac.skills) == ["anywhere", "mac-only"]


def test_platform_helpers() -> None:
    assert current_platform("darwin") == "macos" and current_platform("win32") == "windows"
    assert current_platform("linux") == "linux"
    skill = parse_skill_md(_front("name: w\ndescription: d\nplatforms: windows"), "x/SKILL.md")
    assert platform_mismatch(skill, "win32") is None
    assert platform_mismatch(skill, "linux") == "for windows only; this machine is linux"


def test_unavailable_skill_is_neither_hinted_nor_loadable(tmp_path: Path) -> None:
    from hermes_core.agent.skill_tool import SkillSelection, answer_skill_view
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.types import ToolCall

    other = "windows" if current_platform() != "windows" else "linux"
    write(tmp_path, "x/SKILL.md", _front(f"name: elsewhere\ndescription: deploy things\n"
                                         f"platforms: [{other}]"))
    write(tmp_path, "y/SKILL.md", _front("name: here\ndescription: deploy here"))
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
    write(home, "skills/x/SKILL.md", _front(f"name: elsewhere\ndescription: d\nplatforms: [{other}]"))
    write(home, "skills/y/SKILL.md", _front("name: here\ndescription: e\nlicense: MIT"))
    assert main(["skills", "list", "--home", str(home), "--no-embeddings"]) == 0
    out = capsys.readouterr().out
    assert "here\te" in out
    assert f"elsewhere\t(not available here: for {other} only; this machine is" in out
    assert main(["skills", "list", "--home", str(home), "--no-embeddings", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["here"]["available"] is True and rows["here"]["license"] == "MIT"
    assert rows["elsewhere"]["available"] is False and other in rows["elsewhere"]["reason"]
