"""The reconnect probe's thread (``reconnect.BackgroundProbe``): one run at a time, a request
waits for it at most ``wait_s``, and a process forked while a run was under way (or while another
thread held the probe's lock) probes on its own instead of waiting for a thread it does not have."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from redis.backoff import NoBackoff
from redis.retry import Retry

from hermes_core.agent.pool.reconnect import BackgroundProbe, retries_off

FORK = multiprocessing.get_context("fork")
#: A guard against a hung child only (a deadlock would otherwise hang the suite); never a timing.
JOIN_S = 30


def _parent_blocks(parent: int, release: threading.Event) -> Callable[[Callable[[], None]], bool]:
    """A probe that hangs in the parent (a stuck Redis) until ``release``, and answers at once in
    any other process."""
    def probe(answered: Callable[[], None]) -> bool:
        if os.getpid() == parent:
            release.wait(JOIN_S)
            return False
        answered()
        return True
    return probe


def _in_child(prober: BackgroundProbe) -> None:
    """Exit 0 when a run in the child started a probe of its own and it answered."""
    done = threading.Event()

    def go() -> None:
        prober.run()
        done.set()

    threading.Thread(target=go, daemon=True).start()
    os._exit(0 if done.wait(JOIN_S / 3) and prober.runs == 2 else 1)


def test_a_run_waits_at_most_wait_s_for_a_probe_that_does_not_answer() -> None:
    release = threading.Event()
    prober = BackgroundProbe(_parent_blocks(os.getpid(), release), wait_s=0.05)
    prober.run()
    prober.run()   # the first is under way: joined, not started again
    assert prober.runs == 1
    release.set()


def _assert_the_child_probes(prober: BackgroundProbe) -> None:
    """Fork a child that runs its own probe of ``prober`` (``_in_child``) and wait for it to pass."""
    kid = FORK.Process(target=_in_child, args=(prober,))
    kid.start()
    kid.join(JOIN_S)
    assert kid.exitcode == 0


def test_a_child_forked_while_a_probe_was_under_way_probes_again() -> None:
    """The child inherited the parent's run as under way, but not its thread: each due request
    there joined a run that never ended, so the child never probed and never rejoined Redis."""
    release = threading.Event()
    prober = BackgroundProbe(_parent_blocks(os.getpid(), release), wait_s=0.05)
    prober.run()   # under way in the parent
    try:
        _assert_the_child_probes(prober)
    finally:
        release.set()


def test_a_child_forked_while_another_thread_held_the_probe_lock_does_not_hang() -> None:
    """A thread starting a probe holds the lock across ``Thread.start``; a fork then left the
    child's copy held, and the child's first due request waited on it for ever."""
    release = threading.Event()
    prober = BackgroundProbe(_parent_blocks(os.getpid(), release), wait_s=0.05)
    prober.runs = 1   # as after a first run (the child checks it ran one of its own)
    held, go_on = threading.Event(), threading.Event()

    def holder() -> None:
        with prober._lock:
            held.set()
            go_on.wait(JOIN_S)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(JOIN_S)
    try:
        _assert_the_child_probes(prober)
    finally:
        go_on.set()
        t.join(JOIN_S)
        release.set()


def test_a_probe_that_does_not_return_by_the_next_due_run_is_said_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """A probe that never returns (a client given without a socket timeout, a blackholed
    connection) kept every later run joining it, and the backend on its local fallback for
    good, without a word."""
    release = threading.Event()
    prober = BackgroundProbe(_parent_blocks(os.getpid(), release), wait_s=0.01, late_s=0.05)
    try:
        with caplog.at_level(logging.WARNING, logger="hermes_core.agent.pool.redis"):
            prober.run()
            prober.run()   # joined before late_s: not said
            assert "has not returned" not in caplog.text
            time.sleep(0.05)
            prober.run()
            prober.run()
        assert caplog.text.count("has not returned") == 1
        assert prober.runs == 1
    finally:
        release.set()


@pytest.mark.parametrize("order", [
    ("a+", "b+", "a-", "b-"),   # two closes at once (two threads' shutdown), the first ends first
    ("a+", "b+", "b-", "a-"),
    ("a+", "a-", "b+", "b-"),   # one after the other
])
def test_closes_that_overlap_give_the_client_its_retry_back(order: tuple[str, ...]) -> None:
    """Each close saved the retries it found and put them back: a second close started while the
    first was waiting for the probe saved the first's 0, and when it ended last the backend had
    no retry for the rest of its life (a connection reset on any later command fell back to the
    local state, warning). No retry while any close is under way; the client's own once none
    is."""
    retry = Retry(NoBackoff(), 1)
    closes = {"a": retries_off(retry), "b": retries_off(retry)}
    open_ = set()
    for step in order:
        name, what = step[0], step[1]
        if what == "+":
            closes[name].__enter__()
            open_.add(name)
        else:
            closes[name].__exit__(None, None, None)
            open_.discard(name)
        assert retry.get_retries() == (0 if open_ else 1), step


def test_a_child_forked_during_a_close_keeps_its_client_s_retry(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A thread of the parent closing the backend (its client's one retry turned off meanwhile)
    at the fork: the close is not the child's, but the child's copy of the client kept no retry
    for good (only the parent's thread gives it back), and the child's own closes then never
    gave it back either (one close still counted as under way)."""
    retry, closing, closed = Retry(NoBackoff(), 1), threading.Event(), threading.Event()

    def close() -> None:
        with retries_off(retry):
            closing.set()
            closed.wait(60)

    t = threading.Thread(target=close)
    t.start()
    assert closing.wait(60)

    def child() -> object:
        before = retry.get_retries()
        with retries_off(retry):
            during = retry.get_retries()
        return before, during, retry.get_retries()

    try:
        got: Any = in_forked_child(child)
    finally:
        closed.set()
        t.join(60)
    assert got == (1, 0, 1)
    assert retry.get_retries() == 1
