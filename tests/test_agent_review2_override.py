"""``override()`` puts back exactly what it found. It restored ``context_engine`` from the prompt
builder's memory source, so an agent built with its own PromptBuilder lost its episodic memory
(no session recorded at close) after any ``with agent.override(provider=...)``."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


def test_override_restores_the_agents_own_context_engine(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False}})
    builder = PromptBuilder(tmp_path, settings)          # a custom builder: gets the agent's memory
    agent = Agent(settings, provider=FakeProvider(["a", "b"]), prompt_builder=builder)
    engine = agent.context_engine
    assert engine is not None
    with agent.override(provider=FakeProvider(["from the override"], name="other")):
        assert agent.chat("inside").text == "from the override"
    assert agent.context_engine is engine
    assert builder.memory_source is engine       # wired to the agent's engine, and put back
    agent.chat("outside")
    assert agent.end_session() is not None            # the session is still recorded
    agent.close()
