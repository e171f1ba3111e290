"""Ctrl-C during a slash command cancels that command, not the chat (as it does for a reply)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from helpers import copy_example_home

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    home = copy_example_home(tmp_path / "home")
    return Agent.from_config({"home": str(home), "skill_utils": {"embeddings": False}},
                             offline=True)


def test_ctrl_c_during_a_slash_command_keeps_the_chat(agent: Agent, monkeypatch):
    real = agent.retriever.retrieve
    calls = []

    def interrupted_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:   # the user presses Ctrl-C while /skills runs
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(agent.retriever, "retrieve", interrupted_once)
    out = io.StringIO()
    repl = Repl(agent, stdin=io.StringIO("/skills slow query\nhello after\n/exit\n"), stdout=out,
                stream=False)
    assert repl.run() == 0
    assert "[cancelled]" in out.getvalue()
    # the line after the interrupted command was still answered
    assert [m.content for m in agent.history if m.role == "user"] == ["hello after"]
