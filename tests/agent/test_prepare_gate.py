"""PrepareGate: cheap builds run on the event loop; a single slow one there (the core taken by
another process) does not send the next to a thread, consecutive slow ones do."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.prepare_gate import INLINE_PREPARE_S, STRIKES, PrepareGate
from hermes_core.testing import FakeProvider
from tests.agent.conftest import (
    agent_for,
)

CHEAP = INLINE_PREPARE_S / 10
SLOW = INLINE_PREPARE_S * 5


def test_the_first_build_goes_to_a_thread_as_nothing_is_measured_yet() -> None:
    assert not PrepareGate().inline()


def test_a_cheap_build_in_a_thread_brings_the_next_onto_the_loop() -> None:
    gate = PrepareGate()
    gate.ran_in_thread(CHEAP)
    assert gate.inline()


def test_a_hook_always_sends_the_build_to_a_thread() -> None:
    gate = PrepareGate()
    gate.ran_in_thread(CHEAP)
    assert not gate.inline(hooked=True)


def test_one_slow_build_on_the_loop_is_taken_for_a_preemption_and_stays_inline() -> None:
    gate = PrepareGate()
    gate.ran_in_thread(CHEAP)
    gate.ran_inline(SLOW)
    assert gate.inline()
    gate.ran_inline(CHEAP)      # the next was cheap again: the strike is forgotten
    gate.ran_inline(SLOW)
    assert gate.inline()


def test_consecutive_slow_builds_on_the_loop_send_the_next_to_a_thread() -> None:
    gate = PrepareGate()
    gate.ran_in_thread(CHEAP)
    for _ in range(STRIKES):
        gate.ran_inline(SLOW)
    assert not gate.inline()
    gate.ran_in_thread(SLOW)    # costly in the thread too: it stays there
    assert not gate.inline()
    gate.ran_in_thread(CHEAP)   # cheap again: back on the loop
    assert gate.inline()


async def test_async_turns_build_a_prompt_on_the_loop_only_after_a_cheap_build(
        home: Path, monkeypatch: pytest.MonkeyPatch):
    """A thread hop costs more than a cheap build: after a build measured under the threshold the
    next one runs on the event loop; once builds are costly they go back to a worker thread."""
    import threading

    agent = agent_for(home, FakeProvider(["one", "two", "three", "four"]))
    built_on: list[bool] = []
    build = agent._turn

    def spy(message: str):  # type: ignore[no-untyped-def]
        built_on.append(threading.current_thread() is threading.main_thread())
        return build(message)

    monkeypatch.setattr(agent, "_turn", spy)
    monkeypatch.setattr(agent.prepare_gate, "threshold_s", 60.0)   # every build is cheap
    await agent.achat("first")      # nothing measured yet: a worker thread
    await agent.achat("second")     # the first was cheap: on the loop
    monkeypatch.setattr(agent.prepare_gate, "threshold_s", 0.0)    # every build is costly
    await agent.achat("third")      # decided by the second build's cost: a thread now
    assert [p async for p in agent.astream("fourth")] == ["four"]
    assert built_on == [False, True, False, False]
    assert [m.content for m in agent.history if m.role == "assistant"] == [
        "one", "two", "three", "four"]
