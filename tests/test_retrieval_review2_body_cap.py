"""Review round 2: a huge skill body is capped, and the model is told it was cut, on both paths
(trigger auto-load and skill_view)."""

from __future__ import annotations

from hermes_core.agent.skill_tool import SkillSelection, answer_tool_calls
from hermes_core.retrieval.retriever import SkillRetriever, render
from hermes_core.retrieval.skills import MAX_BODY_CHARS
from hermes_core.types import Skill, ToolCall

BIG = Skill("big-manual", "The whole operations manual", body="step. " * 100_000,  # 600 KB
            triggers=("open the manual",))


def test_auto_loaded_body_is_capped_with_a_note() -> None:
    r = SkillRetriever(skills=[BIG])
    block, res = r.select("open the manual please")
    assert res.layer == "L1"
    assert len(block) < MAX_BODY_CHARS + 1_000
    assert "truncated" in block and "599999" in block


def test_skill_view_says_when_it_cut_the_body() -> None:
    sel = SkillSelection(SkillRetriever(skills=[BIG]))
    (msg,) = answer_tool_calls([ToolCall("c1", "skill_view", '{"name": "big-manual"}')], sel)
    assert len(msg.content) < MAX_BODY_CHARS + 1_000
    assert "truncated" in msg.content and "599999" in msg.content


def test_a_body_under_the_cap_is_untouched() -> None:
    small = Skill("small", "A small skill", body="Do the thing.", triggers=("do the thing",))
    r = SkillRetriever(skills=[small])
    _, res = r.select("do the thing now")
    assert render(res).endswith("Do the thing.\n")
    (msg,) = answer_tool_calls([ToolCall("c1", "skill_view", '{"name": "small"}')], SkillSelection(r))
    assert msg.content == "# Skill: small\n\nDo the thing."
