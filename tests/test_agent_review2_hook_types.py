"""A pre_llm_call hook returning something other than str / Prompt / None (an async function's
coroutine, a list of lines) gets a TypeError that names the hook and what it returned; it used to
fail inside str.join ("sequence item 1: expected str instance, coroutine found") and leave a
"coroutine was never awaited" warning."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


def _agent(tmp_path: Path, hook) -> Agent:
    settings = load_settings({"home": str(tmp_path), "context_engine": {"enabled": False},
                              "skill_utils": {"enabled": False}})
    return Agent(settings, provider=FakeProvider(["ok"]), pre_llm_call=hook)


def test_async_hook_gets_a_clear_error(tmp_path: Path):
    async def hook(message, prompt):
        return "extra"

    agent = _agent(tmp_path, hook)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "never awaited" RuntimeWarning either
        with pytest.raises(TypeError, match=r"pre_llm_call.*coroutine"):
            asyncio.run(agent.achat("hi"))
    assert agent.history == []


def test_list_returning_hook_gets_a_clear_error(tmp_path: Path):
    agent = _agent(tmp_path, lambda m, p: ["line one", "line two"])
    with pytest.raises(TypeError, match="pre_llm_call must return str, Prompt or None, not list"):
        agent.chat("hi")
