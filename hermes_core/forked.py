"""What a process forked from one using hermes_core starts with: locks of its own, and none of the
parent's requests, queued lines, connections or random streams.

Why: servers load their app, agent included, and then fork their workers (gunicorn and uWSGI
with a preloaded app, multiprocessing's fork start method, a Celery prefork pool). ``fork``
copies the memory but only the forking thread, so a lock another thread of the parent held at
that moment is held in the child for ever: the child's first call that takes it hangs. And what
the parent's threads had under way is copied as if it were the child's: its requests in flight
(a key at its ``max_in_flight`` stays there, since only the parent releases them), its waiters
(nobody in the child wakes them), its clean-up and writer threads (not in the child), the lines
they had still to write (written twice, once by each process), the requests it sent, which a
Redis that lost its window gets back from each process (counted twice), and its SDK clients'
open connections (one socket shared by two processes, their requests and replies interleaved).

So each object holding such state registers here (:func:`renew_in_child`), and in a forked child
its :meth:`Renewed.renew_after_fork` makes new locks and drops the parent's per-process state,
keeping what the fleet knows (deadlines, removals, windows of requests really sent). A lock whose
child needs nothing else (a module's, or one guarding a table that is as true in the child) is
made free again in place by :func:`child_lock`, as CPython does for its own (``threading``,
``logging``, ``concurrent.futures``). A process that never forks runs none of it.
(:mod:`hermes_core.agent.pool.reconnect`, :mod:`hermes_core.kept_table` and
:mod:`hermes_core.forked_sqlite` keep the hooks they had before this module: the last
also acts before the fork.)

A random generator the library makes for itself (:func:`own_random`: the pool's draw for
``rotation: random``, the call loop's backoff jitter) is seeded again in a child: with the
parent's state every worker drew the same numbers, picked the same keys in the same order and
slept the same backoffs, retrying together after an outage, the herd jitter is there to break.
A generator the caller passed in is the caller's (a seeded, reproducible run) and is left be.
"""

from __future__ import annotations

import os
import random
import threading
import weakref
from typing import Protocol, TypeVar


class Renewed(Protocol):
    """An object with locks or per-process state a forked child must not inherit."""

    def renew_after_fork(self) -> None:
        """In a forked child (only the forking thread is there): new locks; the parent's
        requests, waiters, threads, queued lines and connections forgotten."""
        ...


_LIVE: weakref.WeakSet[Renewed] = weakref.WeakSet()
_RNGS: weakref.WeakSet[random.Random] = weakref.WeakSet()
_LOCKS: weakref.WeakSet[object] = weakref.WeakSet()
L = TypeVar("L")


def renew_in_child(obj: Renewed) -> None:
    """Call ``obj.renew_after_fork()`` in any child forked while ``obj`` is alive."""
    _LIVE.add(obj)


def child_lock(lock: L) -> L:
    """``lock`` (a ``threading`` Lock, RLock, Condition or Event), free again in any child forked
    while it is alive, whoever held it in the parent: the object itself, so a module that
    imported it by name holds the renewed one too. Its ``_at_fork_reinit`` is what CPython's
    own after-fork code calls on its locks. An RLock the forking thread itself holds stays held:
    the child goes on inside that section and leaves it (freed, its release raised); a plain
    lock names no holder, so one the forking thread held is freed too, and leaving its section
    in the child raises ``RuntimeError``."""
    _LOCKS.add(lock)
    return lock


def own_random() -> random.Random:
    """A new generator seeded from the system, seeded so again in any child forked while it is
    alive (``random``'s module functions get that from ``random`` itself; an instance does not)."""
    rng = random.Random()
    _RNGS.add(rng)
    return rng


_RLOCK = type(threading.RLock())


def _in_child() -> None:
    for lock in list(_LOCKS):
        if isinstance(lock, _RLOCK) and lock._is_owned():  # type: ignore[attr-defined]
            continue   # the forking thread's own section: it goes on here
        lock._at_fork_reinit()  # type: ignore[attr-defined]
    for rng in list(_RNGS):
        rng.seed()
    for obj in list(_LIVE):
        obj.renew_after_fork()


os.register_at_fork(after_in_child=_in_child)
