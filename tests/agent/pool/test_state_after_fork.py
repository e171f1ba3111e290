"""The pool after a fork (through :mod:`hermes_core.forked`): a child forked from a process using the pool
(the in-memory state or Redis; while a thread held a backend lock, or with leases open) acquires
and releases on locks and connections of its own, counts only its own requests in flight, ends
none of the parent's leases, and gives a Redis that lost the window the parent's requests back once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import pytest
import redis

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import InMemoryPoolState, KeySpec, Outcome, PoolPolicy


def _lose_the_pool_state(rds: redis.Redis, prefix: str) -> None:
    """What a Redis that restarted empty holds of ``prefix``: nothing (the epoch too, so the next
    acquire of every process resyncs)."""
    for name in rds.scan_iter(match=f"{prefix}:*"):
        rds.delete(name)


@pytest.mark.parametrize("lock", ["_lock", "_resync_lock", "_leases._lock"])
def test_a_child_forked_while_a_thread_held_a_backend_lock_acquires_and_releases(
        redis_url: str, redis_prefix: str, rds: redis.Redis, lock: str,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A thread of the parent inside one of the backend's locks at the fork (a request; a
    merge-back into a Redis that lost the state, which holds ``_resync_lock`` throughout; a
    lease being remembered): the child's copy stayed held, and its first acquire (which here
    resyncs too) waited for ever."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    _lose_the_pool_state(rds, redis_prefix)

    def child() -> object:
        got = be.acquire("p", keys, pol)
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return got.fingerprint, be.degraded

    try:
        with held_by_a_thread(attrgetter(lock)(be)):
            assert in_forked_child(child) == ("a", False)
    finally:
        be.close()


def test_a_forked_child_does_not_end_the_parent_s_lease(
        redis_url: str, redis_prefix: str,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """The parent's open leases are its own: the child's copy let a release naming no lease end
    the parent's lease in Redis, and the key looked free to the fleet while the parent's request
    still ran."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    held = be.acquire("p", keys, pol)                # in flight in the parent across the fork

    def child() -> object:
        be.release("p", "a", Outcome("ok"), pol)     # names no lease: none of the child's
        return be.snapshot("p", keys, pol).keys[0].in_flight

    try:
        assert in_forked_child(child) == 1
        be.release("p", "a", Outcome("ok"), pol, lease=held.lease)
        assert be.snapshot("p", keys, pol).keys[0].in_flight == 0
    finally:
        be.close()


def test_a_redis_that_lost_the_window_gets_the_parent_s_requests_back_once(
        redis_url: str, redis_prefix: str, rds: redis.Redis,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A Redis that restarted empty gets back from each process what it sent in the window
    (its resync). The child's copy of what the parent sent went back from the child too: the
    parent's request counted twice, 4 in a window of 3."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    _lose_the_pool_state(rds, redis_prefix)

    def child() -> object:
        got = be.acquire("p", keys, pol)            # resyncs: merges back what it sent
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return be.snapshot("p", keys, pol).keys[0].requests_in_window

    try:
        assert in_forked_child(child) == 1
        be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
        # the parent's first request (merged back by the parent only), the child's, its second
        assert be.snapshot("p", keys, pol).keys[0].requests_in_window == 3
    finally:
        be.close()


def test_a_forked_child_talks_to_redis_on_connections_of_its_own(
        redis_url: str, redis_prefix: str, rds: redis.Redis,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """Checked, not assumed: redis-py's pool notices the new pid and makes the child new
    connections, so a command a parent's thread has under way at the fork (here a ``BLPOP``
    waiting) shares its socket with no command of the child's: each side reads its own reply."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix,
                                                            socket_timeout_s=60.0))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    popped: list[object] = []
    waiting = threading.Thread(target=lambda: popped.append(
        be._redis.blpop([f"{redis_prefix}:list"], timeout=30)))
    waiting.start()
    for _ in range(10_000):   # until Redis has the BLPOP (counted, not timed)
        if any(c.get("cmd") == "blpop" for c in rds.client_list()):
            break
    else:
        pytest.fail("the BLPOP never reached Redis")

    def child() -> object:
        got = be.acquire("p", keys, pol)
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return got.fingerprint, be._redis.ping(), be.snapshot("p", keys, pol).keys[0].in_flight

    try:
        assert in_forked_child(child) == ("a", True, 0)
        rds.rpush(f"{redis_prefix}:list", "parent's")
        waiting.join(60)
        assert popped == [(f"{redis_prefix}:list", "parent's")]
    finally:
        be.close()


def test_a_child_forked_while_a_thread_was_in_the_memory_state_acquires_and_releases(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A request of another thread inside the state's lock at the fork (a server forking its
    workers after loading the app): the child's copy of the lock stayed held, and its first
    acquire waited for ever."""
    be = InMemoryPoolState()
    keys = [KeySpec("a")]

    def child() -> object:
        res = be.acquire("p", keys, PoolPolicy())
        be.release("p", "a", Outcome("ok"), PoolPolicy(), lease=res.lease)
        return res.fingerprint, be.snapshot("p", keys, PoolPolicy()).keys[0].in_flight

    with held_by_a_thread(be._lock):
        got = in_forked_child(child)
    assert got == ("a", 0)


def test_a_forked_child_counts_only_its_own_requests_in_flight(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """In-memory state is each process's own: a request in flight in the parent at the fork is
    the parent's to release, so the child's copy of it was never released there, and a key at
    ``max_in_flight: 1`` stayed busy in the child for good. The child counts its own requests in
    flight; the window (requests really sent this minute) it keeps."""
    be = InMemoryPoolState()
    keys, policy = [KeySpec("a")], PoolPolicy(max_in_flight=1)
    parent = be.acquire("p", keys, policy)
    assert parent.fingerprint == "a"

    def child() -> object:
        res = be.acquire("p", keys, policy)
        snap = be.snapshot("p", keys, policy).keys[0]
        return res.fingerprint, snap.in_flight, snap.requests_in_window

    assert in_forked_child(child) == ("a", 1, 2)
    assert be.snapshot("p", keys, policy).keys[0].in_flight == 1   # the parent's, still open
