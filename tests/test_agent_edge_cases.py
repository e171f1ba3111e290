"""Agent turns at the edges: async streams, tool rounds that never end, cancelled streams."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hermes_core.agent.agent import MAX_TOOL_ROUNDS, Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.types import Completion, ToolCall

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(EXAMPLE_HOME, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache"))
    return dst


def agent_for(home: Path, provider, **settings) -> Agent:
    cfg = {"home": str(home), "llm": {"routing": {"default_model": "m-default"}}, **settings}
    return Agent(load_settings(cfg, env={}), provider=provider,
                 loop_options={"sleep": lambda s: None, "audit_path": False})


async def test_astream_reply_names_the_provider_and_model_like_achat(home: Path):
    fake = FakeProvider(["one", "two"], name="fake")
    agent = agent_for(home, fake)
    done = await agent.achat("hello")
    _ = [p async for p in agent.astream("again")]
    streamed = agent.last_reply
    assert streamed is not None and streamed.text == "two"
    assert (streamed.provider, streamed.model) == (done.provider, done.model) == ("fake", "m-default")
