"""``offline_agent``: an Agent on a test double, wired as every offline test wants it."""

from __future__ import annotations

from pathlib import Path

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
