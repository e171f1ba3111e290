"""Tests of ``hermes_core/agent/interrupts.py``: Ctrl-C held back while a turn is recorded."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.interrupts import held_interrupts
from hermes_core.testing import FunctionProvider
from hermes_core.types import Usage
from tests.agent.conftest import (
    routed_agent,
)


def test_ctrl_c_inside_the_block_is_raised_after_it_completes(python_sigint: None):
    steps = []
    with pytest.raises(KeyboardInterrupt), held_interrupts():
        steps.append(1)
        signal.raise_signal(signal.SIGINT)
        steps.append(2)
    assert steps == [1, 2]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_block_without_ctrl_c_runs_as_is(python_sigint: None):
    with held_interrupts():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with held_interrupts():
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_the_block_runs_without_touching_signals(python_sigint: None):
    done: list[object] = []

    def work() -> None:
        with held_interrupts():   # signal.signal would raise ValueError here
            done.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert done == [signal.default_int_handler]


END_OF_TURN_FILES = ("agent/agent.py", "agent/turn.py", "agent/resilience.py", "agent/resilience_run.py",
                     "agent/reply.py")


def interrupt_at_line(n: int, armed: list[bool]):
    """A tracer that raises SIGINT in this process at the ``n``-th line run, once ``armed``, in
    the agent's end-of-turn code: Ctrl-C pressed at that point, as the terminal would send it."""
    import signal
    count = [0]

    def local(frame, event, arg):
        if event == "line" and armed[0]:
            count[0] += 1
            if count[0] == n:
                signal.raise_signal(signal.SIGINT)
        return local

    def tracer(frame, event, arg):
        if frame.f_code.co_filename.replace("\\", "/").endswith(END_OF_TURN_FILES):
            return local
        return None

    return tracer, count


def kept_or_cancelled(agent: Agent) -> str:
    """'kept' or 'cancelled', asserting the agent is wholly in that state."""
    from hermes_core.agent.pricing import Cost
    if not agent.history:
        assert agent.stats.turns == 0 and agent.stats.usage == Usage()
        # a reply that came before the interrupt was billed: wasted, priced (decision 97)
        wasted = agent.stats.wasted
        assert agent.stats.cost == (Cost() if wasted == Usage() else agent.prices.cost("m", wasted))
        assert agent.last_reply is None
        return "cancelled"
    assert [m.role for m in agent.history] == ["user", "assistant"], agent.history
    assert agent.stats.turns == 1 and agent.stats.usage.input_tokens > 0
    assert agent.last_reply is not None and agent.last_reply.text == agent.history[-1].content
    return "kept"


@pytest.mark.parametrize("mode", ["chat", "stream"])
def test_ctrl_c_at_any_step_of_recording_a_turn_keeps_it_whole_or_not_at_all(
        tmp_path: Path, mode: str):
    import signal
    import sys
    # CI may run with SIGINT ignored: Ctrl-C must raise here as in a terminal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    outcomes: dict[str, int] = {}
    try:
        n = 0
        while True:
            n += 1
            armed = [False]

            def answer(prompt, model, armed=armed):
                armed[0] = True          # from here on the reply is complete: the turn ends
                return "The answer is 42."

            (tmp_path / f"h{n}").mkdir()
            agent = routed_agent(tmp_path / f"h{n}", FunctionProvider(answer),
                                 routing={"default_model": "m"})
            tracer, count = interrupt_at_line(n, armed)
            old = sys.gettrace()
            sys.settrace(tracer)
            try:
                if mode == "chat":
                    agent.chat("what is the answer?")
                else:
                    stream = agent.stream("what is the answer?")
                    for _ in stream:
                        pass
            except KeyboardInterrupt:
                pass
            finally:
                sys.settrace(old)
            state = kept_or_cancelled(agent)
            outcomes[state] = outcomes.get(state, 0) + 1
            agent.chat("and again?")          # the next turn sends a well-formed conversation
            assert [m.role for m in agent.history[-2:]] == ["user", "assistant"]
            if count[0] < n:                  # every line of the sequence has been interrupted
                break
    finally:
        signal.signal(signal.SIGINT, previous)
    assert n > 10 and outcomes.get("kept", 0) > 0
