"""Tests of ``hermes_core/agent/interrupts.py``: Ctrl-C held back while a turn is recorded."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from hermes_core.agent.interrupts import held_interrupts


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt, as in a terminal (CI may run with it ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


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
