"""Turns after ``end_session()`` are recorded too. The agent kept a once-only flag, so a chat that
went on after an explicit ``end_session()`` (a service recording at checkpoints, the README's old
snippet followed by more turns) lost every later turn from episodic memory."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.agent import Agent


def test_turns_after_end_session_are_recorded_on_close(tmp_path: Path):
    config = {"home": str(tmp_path), "skill_utils": {"enabled": False}}
    agent = Agent.from_config(config, offline=True)
    agent.chat("first topic: the walrus budget")
    assert agent.end_session() is not None
    assert agent.end_session() is None          # nothing new: not recorded twice
    agent.chat("second topic: the zebra migration")
    agent.close()
    engine = Agent.from_config(config, offline=True).context_engine
    try:
        found = engine.retrieve("zebra migration", max_results=5)
        assert len(found) == 1 and "walrus" in found[0].summary and "zebra" in found[0].summary
    finally:
        engine.close()
