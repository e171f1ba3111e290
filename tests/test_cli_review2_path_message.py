"""A message that starts with a file path ("/etc/hosts is empty, why?") is sent to the model; it
used to be taken for an unknown slash command, and no message starting with "/" could be sent."""

from __future__ import annotations

import io
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


def test_a_leading_path_is_a_message_and_commands_still_work(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    fake = FakeProvider(["answered"])
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("/etc/hosts is empty, why?\n/nosuch\n/stats\n/exit\n"),
         stdout=out, stream=False).run()
    text = out.getvalue()
    assert [m.content for m in agent.history if m.role == "user"] == ["/etc/hosts is empty, why?"]
    assert "unknown command /etc" not in text
    assert "unknown command /nosuch" in text       # a mistyped command is still caught
    assert "turns 1" in text
