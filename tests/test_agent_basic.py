"""The Agent with test doubles: history, hooks, streaming, async, override."""

from __future__ import annotations

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.errors import RateLimited
from hermes_core.testing import FakeProvider, FunctionProvider


def make_agent(home, provider):
    (home / "SOUL.md").write_text("You are a test persona.", encoding="utf-8")
    return Agent(load_settings({"home": str(home)}, env={}), provider=provider)


def test_chat_keeps_history_and_records_exact_prompt(hermes_home):
    fake = FakeProvider(["first", "second"])
    agent = make_agent(hermes_home, fake)
    assert agent.chat("hi").text == "first"
    assert agent.chat("again").text == "second"
    req = fake.last_request
    assert req.prompt.system == "You are a test persona."
    assert [m.content for m in req.prompt.messages] == ["hi", "first", "again"]
    assert len(agent.history) == 4


def test_scripted_error_surfaces(hermes_home):
    agent = make_agent(hermes_home, FakeProvider([RateLimited(retry_after=30)]))
    try:
        agent.chat("hi")
    except RateLimited as e:
        assert e.retry_after == 30
    else:
        raise AssertionError("expected RateLimited")
    assert agent.history == []  # a failed turn leaves no half-written history


def test_stream_and_hooks(hermes_home):
    seen = []
    agent = make_agent(hermes_home, FunctionProvider(lambda p, m: f"echo {p.messages[-1].content}"))
    agent.pre_llm_call = lambda msg, prompt: f"EXTRA CONTEXT for {msg}"
    agent.post_llm_call = seen.append
    stream = agent.stream("ping")
    assert "".join(stream) == "echo ping"
    assert stream.reply is not None and stream.reply.text == "echo ping"
    assert stream.reply.prompt.context == "EXTRA CONTEXT for ping"
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
