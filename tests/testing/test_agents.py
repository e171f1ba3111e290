"""``offline_agent``: an Agent on a test double, wired as every offline test wants it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import FakeClock, FakeProvider, tool_call, tool_calls
from hermes_core.testing.agents import offline_agent


def test_agent_keywords_reach_the_agent_and_the_rest_the_settings(tmp_path: Path) -> None:
    """``offline_agent(home, fake, tools=[add])`` sent ``tools`` to the settings, which refused
    it as "key 'tools': unknown key": no Agent option (tools, an approver, a session id) could
    be given. ``context_engine`` names both: a mapping is its settings."""
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    clock = FakeClock()
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2)), "3"])
    agent = offline_agent(tmp_path, fake, tools=[add], session_id="s9",
                          context_engine={"enabled": False}, loop_options={"clock": clock})
    reply = agent.chat("1 + 2?")
    assert [(r.name, r.output) for r in reply.tool_results] == [("add", "3")]
    assert agent.session_id == "s9" and not agent.settings.context_engine.enabled
    assert "session: s9" in fake.last_request.context


def test_a_double_that_needs_a_key_it_was_not_given_is_refused_not_bypassed(
        tmp_path: Path) -> None:
    """A keyed ``ScriptedProvider`` (``requires_key=True``) with no credentials: the Agent fell
    back to its offline provider, every turn answered "[offline reply: nothing was sent to a
    model] ...", the script was never played and a test asserting only that a turn ran passed.
    """
    from hermes_core.errors import ConfigError
    from hermes_core.testing import ScriptedProvider

    script = ScriptedProvider("p", script=["scripted"], requires_key=True)
    with pytest.raises(ConfigError) as info:
        offline_agent(tmp_path, script)
    assert "ScriptedProvider 'p' needs a key" in str(info.value)
    assert "drop requires_key=True" in str(info.value) and "credentials=" in str(info.value)
    assert script.calls == []
    keyed = offline_agent(tmp_path, ScriptedProvider("p", script=["scripted"], requires_key=True),
                          credentials={"p": {"keys": [{"key": "sk-test-0123456789"}]}})
    assert keyed.chat("hi").text == "scripted"
    keyless = offline_agent(tmp_path, ScriptedProvider("p", script=["scripted"]))
    assert keyless.chat("hi").text == "scripted"


def test_no_real_sleeping_in_the_async_forms_either(tmp_path: Path) -> None:
    """``offline_agent`` promised "no real sleeping" but replaced only the loop's ``sleep``:
    ``achat`` after a 429 with Retry-After 20 waited 20 s on ``asyncio.sleep``."""
    import asyncio
    import time

    from hermes_core.errors import RateLimited

    fake = FakeProvider([RateLimited("slow down", retry_after=20), "ok now"], default=None)
    agent = offline_agent(tmp_path, fake)
    started = time.monotonic()
    assert asyncio.run(agent.achat("hi")).text == "ok now"
    assert time.monotonic() - started < 5.0 and len(fake.requests) == 2


class _AuthorsDouble:
    """An author's own provider double that does not say ``requires_key``: keyed, as the
    Agent reads it."""

    name = "mine"
    kind = "openai"


def test_the_refusal_says_how_to_make_the_author_s_own_double_keyless(tmp_path: Path) -> None:
    """The fix offered was ``ScriptedProvider(..., kind='offline')`` whatever the double."""
    from hermes_core.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        offline_agent(tmp_path, _AuthorsDouble())
    assert "_AuthorsDouble 'mine' needs a key" in str(info.value)
    assert "requires_key = False" in str(info.value)
    assert "ScriptedProvider" not in str(info.value)


def test_no_provider_is_an_agent_answering_offline_not_a_refusal(tmp_path: Path) -> None:
    """``offline_agent(home, None)`` (the Agent's own offline fallback) raised "NoneType '?'
    needs a key"."""
    agent = offline_agent(tmp_path, None)
    assert agent.offline_reason is not None
    assert "offline reply" in agent.chat("hi").text
