"""Tests of ``hermes_core/forked.py``: what a lock registered with ``child_lock`` is in a child
forked by the very thread inside its section (the other threads' holds are pinned beside each
module that registers a lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from hermes_core.forked import child_lock


def test_an_rlock_the_forking_thread_holds_is_still_its_own_in_the_child(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """Code run inside one of our re-entrant sections forks (an author's embedder under the
    retriever's refresh lock using a fork-started pool): the child goes on in that section and
    leaves it, so the lock stays held by it there, not freed under it."""
    lock = child_lock(threading.RLock())

    def leave_the_section() -> object:
        lock.release()
        return lock.acquire(blocking=False)

    with lock:
        assert in_forked_child(leave_the_section) is True


def test_a_plain_lock_the_forking_thread_holds_is_free_in_the_child_and_leaving_raises(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A plain lock says nothing of its holder, so in a child it is freed whoever held it: the
    forking thread's own section, left in the child, releases a free lock and raises. None of our
    plain-lock sections runs code that forks; a child that leaves one would see this error."""
    lock = child_lock(threading.Lock())

    def leave_the_section() -> object:
        lock.release()
        return "left"

    with lock:
        assert in_forked_child(leave_the_section) == \
            "raised RuntimeError('release unlocked lock')"
    assert not lock.locked()
