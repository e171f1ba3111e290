"""Review round 2: the skill_view tool answers with the skill the model asked for."""

from __future__ import annotations

import pytest

from hermes_core.agent.skill_tool import SkillSelection, answer_tool_calls
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill, ToolCall


def _selection() -> SkillSelection:
    return SkillSelection(SkillRetriever(skills=[
        Skill("Deploy", "Deploy with the blue/green script", body="BLUE-GREEN STEPS"),
        Skill("deploy", "Deploy with the legacy rsync script", body="RSYNC STEPS"),
        Skill("weather", "Get the forecast", body="WEATHER STEPS")]))


def test_skill_view_prefers_the_exact_name_over_a_case_insensitive_match() -> None:
    sel = _selection()
    (msg,) = answer_tool_calls([ToolCall("c1", "skill_view", '{"name": "deploy"}')], sel)
    assert msg.content.startswith("# Skill: deploy\n") and "RSYNC STEPS" in msg.content
    (msg,) = answer_tool_calls([ToolCall("c2", "skill_view", '{"name": "Deploy"}')], sel)
    assert "BLUE-GREEN STEPS" in msg.content


def test_skill_view_still_forgives_case_when_the_name_is_unambiguous() -> None:
    (msg,) = answer_tool_calls([ToolCall("c1", "skill_view", '{"name": " WEATHER "}')], _selection())
    assert "WEATHER STEPS" in msg.content


@pytest.mark.parametrize("arguments", ['{"skill": "weather"}', '{"name": 5}', "[1]", "not json", "{}"])
def test_skill_view_without_a_usable_name_says_what_is_wrong(arguments: str) -> None:
    (msg,) = answer_tool_calls([ToolCall("c1", "skill_view", arguments)], _selection())
    assert msg.content.startswith("error: skill_view needs a 'name' argument")
    assert "no skill named ''" not in msg.content
