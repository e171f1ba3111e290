"""Tests of ``hermes_core/agent/pool/off_loop.py``: the pool's clean-up calls in threads of its
own, bounded, waited for by ``drain``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.agent.pool.off_loop import OffLoop


def test_calls_run_in_threads_of_their_own_and_drain_waits_for_them() -> None:
    runner, gate, seen = OffLoop(), threading.Event(), []

    def call() -> None:
        gate.wait(10)
        seen.append(threading.current_thread().name)

    assert runner.submit("test call", call)
    assert runner.pending == 1 and not runner.drain(0.05)   # still held at the gate
    gate.set()
    assert runner.drain(10.0) and runner.pending == 0
    assert seen[0].startswith("hermes-pool-cleanup")


def test_past_the_backlog_a_call_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    runner, gate, ran = OffLoop(workers=1, backlog=2), threading.Event(), []
    for i in range(2):
        assert runner.submit("test call", lambda i=i: (gate.wait(10), ran.append(i)))
    with caplog.at_level(logging.WARNING, "hermes_core.pool"):
        assert runner.submit("leave of p's queue", lambda: ran.append(99)) is False
    gate.set()
    assert runner.drain(10.0)
    assert ran == [0, 1]
    assert "leave of p's queue is left to expire" in caplog.text


def test_a_call_that_raises_is_logged_by_its_type_and_the_runner_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    runner, ran = OffLoop(), []

    def fails() -> None:
        raise ConnectionError("sk-secret-in-a-message-0001")

    with caplog.at_level(logging.WARNING, "hermes_core.pool"):
        runner.submit("release of a key", fails)
        assert runner.drain(10.0)
    runner.submit("release of a key", lambda: ran.append(1))
    assert runner.drain(10.0) and ran == [1]
    assert "the release of a key failed (ConnectionError)" in caplog.text
    assert "sk-secret" not in caplog.text


def test_a_forked_child_runs_its_calls_in_threads_of_its_own(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A runner that had run calls in the parent: the child inherited its executor, whose idle
    threads are not in the child, so the child's calls were queued and never ran (the releases
    and queue leaves they carry were left to expire) and ``drain`` waited its whole timeout."""
    runner = OffLoop()
    assert runner.submit("test call", lambda: None) and runner.drain(10.0)

    def child() -> object:
        ran: list[int] = []
        runner.submit("test call", lambda: ran.append(1))
        return runner.drain(5.0), ran

    assert in_forked_child(child) == (True, [1])


def test_a_child_forked_while_a_thread_was_in_the_runner_hands_calls_over(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A thread of the parent's inside the runner's condition at the fork (a call handed over,
    or one ending) left it held in the child for ever: the child's first hand-over hung."""
    runner = OffLoop()

    def child() -> object:
        ran: list[int] = []
        runner.submit("test call", lambda: ran.append(1))
        return runner.drain(5.0), ran

    with held_by_a_thread(runner._idle):
        assert in_forked_child(child) == (True, [1])
