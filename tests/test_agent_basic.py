"""The Agent with test doubles: history, hooks, streaming, async, override."""

from __future__ import annotations

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.errors import AllProvidersFailed, RateLimited
from hermes_core.testing import FakeProvider, FunctionProvider


def make_agent(home, provider):
    (home / "SOUL.md").write_text("You are a test persona.", encoding="utf-8")
    return Agent(load_settings({"home": str(home)}, env={}), provider=provider,
                 loop_options={"sleep": SLEEPS.append, "audit_path": False})


SLEEPS: list[float] = []


def test_chat_keeps_history_and_records_exact_prompt(hermes_home):
    fake = FakeProvider(["first", "second"])
    agent = make_agent(hermes_home, fake)
    assert agent.chat("hi").text == "first"
    assert agent.chat("again").text == "second"
    req = fake.last_request
    assert req.prompt.system == "You are a test persona."
    assert [m.content for m in req.prompt.messages] == ["hi", "first", "again"]
    assert len(agent.history) == 4


def test_scripted_error_surfaces_and_history_is_untouched(hermes_home):
    fake = FakeProvider([RateLimited(retry_after=3), RateLimited(retry_after=3)], default=None)
    agent = make_agent(hermes_home, fake)
    with pytest.raises(AllProvidersFailed) as info:
        agent.chat("hi")
    assert info.value.attempts[0].status == "429"
    assert isinstance(info.value.last_error, RateLimited)
    assert SLEEPS and SLEEPS[-1] == 3  # a keyless provider's Retry-After is waited out, not spun on
    assert agent.history == []  # a failed turn leaves no half-written history


def test_stream_and_hooks(hermes_home):
    seen = []
    agent = make_agent(hermes_home, FunctionProvider(lambda p, m: f"echo {p.messages[-1].content}"))
    agent.pre_llm_call = lambda msg, prompt: f"EXTRA CONTEXT for {msg}"
    agent.post_llm_call = seen.append
    stream = agent.stream("ping")
    assert "".join(stream) == "echo ping"
    assert stream.reply is not None and stream.reply.text == "echo ping"
    assert stream.reply.prompt.context.endswith("\n\nEXTRA CONTEXT for ping")
    assert "EXTRA" not in stream.reply.prompt.system
    assert seen and seen[0].text == "echo ping"


async def test_async_chat_and_stream(hermes_home):
    agent = make_agent(hermes_home, FakeProvider(["a b c", "d"]))
    assert (await agent.achat("x")).text == "a b c"
    assert "".join([p async for p in agent.astream("y")]) == "d"
    assert len(agent.history) == 4


def test_override_swaps_provider(hermes_home):
    agent = make_agent(hermes_home, FakeProvider(["outer"]))
    with agent.override(provider=FakeProvider(["inner"])):
        assert agent.chat("1").text == "inner"
    assert agent.chat("2").text == "outer"


def test_offline_without_keys(hermes_home):
    agent = Agent(load_settings({"home": str(hermes_home)}, env={}))
    assert agent.offline and "no API key" in (agent.offline_reason or "")
    assert "offline reply" in agent.chat("hello").text
