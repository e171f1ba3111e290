"""Retrieval follows the current message through a conversation that changes topic.

The shipped example home, offline (a fake provider), lexical layers only: each turn's prompt must
hint the skills of that turn's message, never the earlier topics', while a short follow-up ("why?",
"and in Chinese?", "为什么？") keeps the topic it follows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider

EXAMPLE_HOME = Path(__file__).resolve().parents[2] / "examples" / "home"
EARLIER = ("git-rebase-conflicts", "traffic-violation-lookup")


@pytest.fixture
def agent(tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE_HOME, home)
    settings = load_settings({"home": str(home), "skill_utils": {"embeddings": False}}, env={})
    a = Agent(settings, provider=FakeProvider(["ok"] * 20))
    yield a
    a.close()


def hinted(agent: Agent) -> tuple[str, ...]:
    reply = agent.last_reply
    assert reply is not None and reply.retrieval is not None
    return tuple(reply.retrieval.names)


def test_three_topics_in_english_and_chinese_each_turn_hints_its_own_skill(agent: Agent) -> None:
    agent.chat("How do I fix a rebase conflict?")
    assert hinted(agent) == ("git-rebase-conflicts",)
    agent.chat("帮我查一下最近的违章记录")
    assert hinted(agent) == ("traffic-violation-lookup",)
    agent.chat("my postgres query got really slow after the last deploy, what should I look at?")
    names = hinted(agent)
    assert names and names[0] == "sql-query-optimization"
    assert not set(names) & set(EARLIER)
    context = agent.last_reply.prompt.context   # type: ignore[union-attr]
    assert "sql-query-optimization" in context
    assert all(name not in context for name in EARLIER)


def test_short_follow_ups_keep_the_topic_they_follow(agent: Agent) -> None:
    agent.chat("How do I fix a rebase conflict?")
    agent.chat("my postgres query got really slow after the last deploy, what should I look at?")
    agent.chat("why?")
    assert hinted(agent)[:1] == ("sql-query-optimization",)
    agent.chat("and in Chinese?")
    assert hinted(agent)[:1] == ("sql-query-optimization",)
    assert "git-rebase-conflicts" not in hinted(agent)


def test_chinese_topic_after_english_ones_is_not_outvoted(agent: Agent) -> None:
    agent.chat("my postgres query got really slow after the last deploy, what should I look at?")
    agent.chat("How do I fix a rebase conflict?")
    agent.chat("驾照被扣分了，怎么在网上交罚款？")
    names = hinted(agent)
    assert names[:1] == ("traffic-violation-lookup",)
    assert not {"sql-query-optimization", "git-rebase-conflicts"} & set(names)
    agent.chat("为什么？")
    assert hinted(agent)[:1] == ("traffic-violation-lookup",)


def test_the_turns_decisions_travel_on_the_prompt(agent: Agent) -> None:
    agent.chat("How do I fix a rebase conflict?")
    agent.chat("my postgres query got really slow after the last deploy, what should I look at?")
    prompt = agent.last_reply.prompt   # type: ignore[union-attr]
    assert prompt is not None and prompt.turn is not None
    assert prompt.turn.retrieval is agent.last_reply.retrieval   # type: ignore[union-attr]
    assert prompt.turn.query is not None
    assert prompt.turn.query.message.startswith("my postgres query")
    assert prompt.turn.query.previous_user == "How do I fix a rebase conflict?"
    assert agent.last_turn is prompt.turn
