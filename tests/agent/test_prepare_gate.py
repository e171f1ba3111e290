"""PrepareGate: cheap builds run on the event loop; a single slow one there (the core taken by
another process) does not send the next to a thread, consecutive slow ones do."""

from __future__ import annotations

from hermes_core.agent.prepare_gate import INLINE_PREPARE_S, STRIKES, PrepareGate

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
