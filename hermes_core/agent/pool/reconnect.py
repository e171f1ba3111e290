"""The reconnect probe of a degraded Redis backend, run in a thread of its own.

Why: the probe used to run in whichever request found it due. Against a Redis that accepts
connections and never answers (a paused VM, a swap storm, ``DEBUG SLEEP``), PING and redis-py's
one retry each waited out the socket timeout, so one request per reconnect interval stalled
2 x ``socket_timeout_s`` before being served locally anyway. Now the request that finds the probe
due starts it in a thread and waits only for the probe to settle, at most ``wait_s``: a Redis
that answers PING within that is back, and the request waits for the rest of the rejoin (merging
the outage into Redis) and is served there, as before; a stuck one is left to the thread, and the
request is served locally at once. A probe whose PING answers later still rejoins, for the
requests after it.

A run that has not returned after ``late_s`` (a client given without a socket timeout, a
connection blackholed mid-read) is said once, by the next due request that finds it: no other run
starts until it returns, and the backend stays on its local fallback meanwhile.

A process forked while a run was under way inherits that run as under way but not its thread,
and a lock another thread held across ``Thread.start`` as held: each probe gets a fresh lock and
no run in a forked child (``os.register_at_fork``), so the child probes on its own. A close under
way in the parent (its client's retry turned off) is not the child's either: the child's copy of
the client gets its retry back.

A backend closed while a run is under way stops it (:meth:`BackgroundProbe.stop`): the run is
marked stopped (``answered`` then returns False: no rejoin, no merge after the close), the caller
closes its connections, and the stop waits for the thread to end, so a closed pool leaves no
thread talking to Redis. Closing a connection does not cut a PING blocked on a stuck Redis short
(redis-py reconnects under it and reads the handshake until its socket timeout): the wait is the
timeout in progress, the retry after it turned off while closing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger("hermes_core.agent.pool.redis")

#: How long the request that starts a probe waits for Redis to answer it: a loopback or LAN
#: PING takes a millisecond, a stuck Redis never answers.
WAIT_S = 0.1
#: After how long a run still under way is said: far past what PING, its retry and a merge take
#: under a socket timeout (RedisPoolState passes the larger of this and 10 timeouts).
LATE_S = 60.0


class _Probe:
    """One run: ``settled`` once Redis answered PING or the run ended; ``answered`` says which."""

    def __init__(self) -> None:
        self.settled = threading.Event()
        self.done = threading.Event()
        self.answered = False
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.said_late = False
        self.stopped = False


class BackgroundProbe:
    """Runs ``probe`` (given a callback to call once Redis answered PING, which returns whether
    the run may go on) in a daemon thread, one run at a time."""

    def __init__(self, probe: Callable[[Callable[[], bool]], object],
                 wait_s: float = WAIT_S, late_s: float = LATE_S) -> None:
        self._probe = probe
        self.wait_s = wait_s
        self.late_s = late_s
        self._lock = threading.Lock()
        self._current: _Probe | None = None
        self.runs = 0   # how many probes were started (observability, tests)
        _PROBES.add(self)

    def _forget_in_child(self) -> None:
        """In a forked child: the parent's run is not this process's (its thread is not here),
        and the lock may have been held by a thread of the parent's."""
        self._lock = threading.Lock()
        self._current = None

    def run(self) -> None:
        """Start a probe unless one is under way; wait for it to settle (at most ``wait_s``) and,
        when Redis answered, for the rejoin to end. A bug the probe raised (no outage) is raised
        here when this call waited for it."""
        with self._lock:
            current = self._current
            if current is None or current.done.is_set():
                current = self._current = _Probe()
                self.runs += 1
                threading.Thread(target=self._run, args=(current,), daemon=True,
                                 name="hermes-pool-redis-probe").start()
            elif not current.said_late and time.monotonic() - current.started >= self.late_s:
                current.said_late = True
                log.warning("credential pool: the Redis reconnect probe started %.0f s ago has "
                            "not returned (a connection without a socket timeout?); no other "
                            "probe starts until it does, and the pool keeps its local state",
                            time.monotonic() - current.started)
        if current.settled.wait(self.wait_s) and current.answered:
            current.done.wait()
        if current.done.is_set() and current.error is not None:
            raise current.error

    def stop(self, interrupt: Callable[[], None], timeout: float) -> bool:
        """Stop the run under way, if any: marked stopped (its ``answered`` says no more), then
        ``interrupt`` (closing the connections it may use), then wait for its thread to end, at
        most ``timeout``; False (and said) when it had not ended by then."""
        with self._lock:
            current = self._current
            if current is not None:
                current.stopped = True
        interrupt()
        if current is None or current.done.wait(timeout):
            return True
        log.warning("credential pool: the Redis reconnect probe did not stop within %.1f s of "
                    "the close (a client without a socket timeout?)", timeout)
        return False

    def _run(self, run: _Probe) -> None:
        def answered() -> bool:
            run.answered = True
            run.settled.set()
            return not run.stopped

        try:
            self._probe(answered)
        except BaseException as exc:  # surfaces in a waiting caller; else said here
            run.error = exc
            log.warning("credential pool: the Redis reconnect probe failed: %s",
                        type(exc).__name__)
        finally:
            run.done.set()
            run.settled.set()


# per Retry turned off: (the Retry, closes under way, its retries before the first of them)
_OFF: dict[int, tuple[Any, int, int]] = {}
_OFF_LOCK = threading.Lock()


@contextlib.contextmanager
def retries_off(retry: Any) -> Iterator[None]:
    """A redis-py ``Retry`` turned to no retry meanwhile (None: a client given, whose own policy
    is not ours to change): a probe's command cut by the close is not sent again. Closes that
    overlap (two threads' shutdown) share one count: the last to end gives back what the first
    found, not the 0 the others found."""
    if retry is None:
        yield
        return
    with _OFF_LOCK:
        _, n, saved = _OFF.get(id(retry), (retry, 0, retry.get_retries()))
        _OFF[id(retry)] = (retry, n + 1, saved)
        retry.update_retries(0)
    try:
        yield
    finally:
        with _OFF_LOCK:
            _, n, saved = _OFF.pop(id(retry))
            if n > 1:
                _OFF[id(retry)] = (retry, n - 1, saved)
            else:
                retry.update_retries(saved)


_PROBES: weakref.WeakSet[BackgroundProbe] = weakref.WeakSet()


def _forget_in_child() -> None:
    global _OFF_LOCK
    _OFF_LOCK = threading.Lock()   # a parent's thread may have held it across the fork
    # a close under way in the parent is not the child's: no thread here gives its retries back
    for retry, _, saved in _OFF.values():
        retry.update_retries(saved)
    _OFF.clear()
    for probe in list(_PROBES):
        probe._forget_in_child()


os.register_at_fork(after_in_child=_forget_in_child)
