"""The pool's clean-up calls to a networked backend (a key's release, a place in the fleet's
queue given up) when they would otherwise run on an event loop.

Why: a task that is cancelled, or a direct caller on the loop that stops waiting, hands a key or
a queue place back to Redis. Done inline that is a synchronous round trip on the loop's thread, so
every other task of the process waits for it (a slow Redis: up to the socket timeout). Handed to
the loop's own executor it is lost when the loop closes first (``asyncio.run`` ending, a loop
closed by hand: its callbacks never run). So the calls go to threads of the pool's own, which
outlive any loop, and the interpreter joins at exit. Bounded: two threads, and at most
``backlog`` calls queued; past that a call is dropped with a warning, and the backend's expiry
(the lease's TTL, the queue place's grace) frees what it would have.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from hermes_core.forked import renew_in_child

log = logging.getLogger("hermes_core.pool")

WORKERS = 2
BACKLOG = 256


class OffLoop:
    """Runs small calls in threads of its own, at most ``backlog`` queued; :meth:`drain` waits
    for them (tests, a shutdown that wants its releases made)."""

    def __init__(self, workers: int = WORKERS, backlog: int = BACKLOG) -> None:
        self.workers = workers
        self.backlog = backlog
        self.renew_after_fork()
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """No calls, no threads yet; again in a forked child (:mod:`hermes_core.forked`): the parent's
        threads are not there, and an executor that had idle ones there queued the child's
        calls for threads that never ran them."""
        self._pending = 0
        self._idle = threading.Condition()
        self._executor: ThreadPoolExecutor | None = None   # made at the first call

    def submit(self, what: str, fn: Callable[[], object]) -> bool:
        """Run ``fn`` in a thread of this runner; False when the backlog is full (dropped, with a
        warning naming ``what``, which says no secret)."""
        with self._idle:
            if self._pending >= self.backlog:
                log.warning("credential pool: %d clean-up calls are waiting for the backend "
                            "already; the %s is left to expire", self._pending, what)
                return False
            self._pending += 1
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers,
                                                    thread_name_prefix="hermes-pool-cleanup")
            executor = self._executor
        executor.submit(self._run, what, fn)
        return True

    def _run(self, what: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except Exception as e:  # nobody awaits it: say so; the backend's expiry is the backstop
            log.warning("credential pool: the %s failed (%s); it is left to expire", what,
                        type(e).__name__)
        finally:
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    @property
    def pending(self) -> int:
        return self._pending

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every call handed over so far; True when none is
        left."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)
