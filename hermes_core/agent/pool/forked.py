"""What a process forked from one using the pool starts with: locks of its own, and none of the
parent's requests.

Why: servers load their app, pool included, and then fork their workers (gunicorn and uWSGI with
a preloaded app, multiprocessing's fork start method, a Celery prefork pool). ``fork`` copies the
memory but only the forking thread, so a lock another thread of the parent held at that moment is
held in the child for ever: the child's first acquire, release or status that takes it hangs.
And what the parent's threads had under way is copied as if it were the child's: its requests in
flight (a key at its ``max_in_flight`` stays there, since only the parent releases them), its
waiters (nobody in the child wakes them), its clean-up threads (not in the child), the requests
it sent, which a Redis that lost its window gets back from each process (from parent and child:
counted twice).

So each pool object holding such state registers here (:func:`renew_in_child`), and in a forked
child its :meth:`Renewed.renew_after_fork` makes new locks and drops the parent's per-process
state, keeping what the fleet knows (deadlines, removals, windows of requests really sent). A
process that never forks runs none of it. (:mod:`.reconnect` keeps the hook it had before this
module: its state is the module's, not an object's.)

A random generator the library makes for itself (:func:`own_random`: the pool's draw for
``rotation: random``, the call loop's backoff jitter) is seeded again in a child: with the
parent's state every worker drew the same numbers, picked the same keys in the same order and
slept the same backoffs, retrying together after an outage, the herd jitter is there to break.
A generator the caller passed in is the caller's (a seeded, reproducible run) and is left be.
"""

from __future__ import annotations

import os
import random
import weakref
from typing import Protocol


class Renewed(Protocol):
    """A pool object with locks or per-process state a forked child must not inherit."""

    def renew_after_fork(self) -> None:
        """In a forked child (only the forking thread is there): new locks; the parent's
        requests, waiters and threads forgotten."""
        ...


_LIVE: weakref.WeakSet[Renewed] = weakref.WeakSet()
_RNGS: weakref.WeakSet[random.Random] = weakref.WeakSet()


def renew_in_child(obj: Renewed) -> None:
    """Call ``obj.renew_after_fork()`` in any child forked while ``obj`` is alive."""
    _LIVE.add(obj)


def own_random() -> random.Random:
    """A new generator seeded from the system, seeded so again in any child forked while it is
    alive (``random``'s module functions get that from ``random`` itself; an instance does not)."""
    rng = random.Random()
    _RNGS.add(rng)
    return rng


def _in_child() -> None:
    for rng in list(_RNGS):
        rng.seed()
    for obj in list(_LIVE):
        obj.renew_after_fork()


os.register_at_fork(after_in_child=_in_child)
