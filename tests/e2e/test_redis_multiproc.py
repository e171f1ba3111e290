"""Pools in separate processes share one Redis state: a 429 deadline or a removal seen by one is
seen by the next acquire of the other, and the RPM window holds across 4 processes x 4 threads.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections import Counter
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pytest

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy

CTX = mp.get_context("spawn")  # a fresh interpreter per worker, like separate agent processes


def _serve_pool(url: str, prefix: str, conn: Connection) -> None:
    """A pool in another process, driven call by call over a pipe."""
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        method, args = msg
        conn.send(getattr(be, method)(*args))
    be.close()


class RemotePool:
    def __init__(self, url: str, prefix: str) -> None:
        self.conn, child = CTX.Pipe()
        self.proc = CTX.Process(target=_serve_pool, args=(url, prefix, child), daemon=True)
        self.proc.start()

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any) -> Any:
            self.conn.send((method, args))
            if not self.conn.poll(30):
                raise TimeoutError(f"pool process did not answer {method}")
            return self.conn.recv()
        return call

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join(10)


@pytest.fixture
def remote(redis_url: str, redis_prefix: str) -> Iterator[RemotePool]:
    pool = RemotePool(redis_url, redis_prefix)
    yield pool
    pool.close()


def test_redis_two_processes_see_deadlines_and_removals_at_once(
        remote: RemotePool, redis_url: str, redis_prefix: str) -> None:
    here = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys = [KeySpec("key-aaa"), KeySpec("key-bbb"), KeySpec("key-ccc")]
    pol = PoolPolicy(strategy="fill_first", auth_max_strikes=1)   # a rejection removes for good

    assert remote.acquire("openai", keys, pol).fingerprint == "key-aaa"
    hit = remote.release("openai", "key-aaa", Outcome("rate_limited", 120.0), pol)
    assert hit.changed
    # this process's very next acquire already avoids the key the other one saw a 429 on
    mine = here.acquire("openai", keys, pol)
    assert mine.fingerprint == "key-bbb"
    assert here.snapshot("openai", keys, pol).keys[0].blocked_until == hit.blocked_until

    assert here.release("openai", "key-bbb", Outcome("removed"), pol).changed
    theirs = remote.acquire("openai", keys, pol)
    assert theirs.fingerprint == "key-ccc"
    assert remote.snapshot("openai", keys, pol).keys[1].removed
    # a removal is reported as a change once, whichever process sees it second
    assert not remote.release("openai", "key-bbb", Outcome("removed"), pol).changed

    late = remote.release("openai", "key-ccc", Outcome("rate_limited", 5.0), pol)
    none = here.acquire("openai", keys, pol)
    assert none.fingerprint is None and none.available_at == late.blocked_until
    assert not here.degraded
    here.close()


def _hammer(url: str, prefix: str, keys: list[KeySpec], policy: PoolPolicy, threads: int,
            attempts: int, out: Any) -> None:
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix))
    got: Counter[str] = Counter()
    lock = threading.Lock()

    def run() -> None:
        for _ in range(attempts):
            res = be.acquire("p", keys, policy)
            if res.fingerprint is not None:
                be.release("p", res.fingerprint, Outcome("ok"), policy)
            with lock:
                got[res.fingerprint or "-"] += 1

    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((dict(got), be.degraded))
    be.close()


def _slide(url: str, prefix: str, keys: list[KeySpec], policy: PoolPolicy, seconds: float,
           out: Any) -> None:
    """Take slots as they free, for real, for ``seconds``; report the Redis times taken."""
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix))
    until = time.time() + seconds
    taken: list[tuple[str, float]] = []
    lock = threading.Lock()

    def run() -> None:
        while time.time() < until:
            res = be.acquire("p", keys, policy)
            if res.fingerprint is not None:
                with lock:
                    taken.append((res.fingerprint, res.now))
                be.release("p", res.fingerprint, Outcome("ok"), policy)
            elif res.available_at is not None:
                time.sleep(min(0.05, max(0.001, res.available_at - res.now)))

    ts = [threading.Thread(target=run) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((taken, be.degraded))
    be.close()


def _collect(procs: list[Any], out: Any) -> list[Any]:
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(10)
        assert p.exitcode == 0
    return results


def test_redis_rpm_never_exceeded_across_4_processes(redis_url: str,
                                                     redis_prefix: str) -> None:
    keys = [KeySpec("a", max_rpm=25), KeySpec("b", 2.0, max_rpm=15), KeySpec("c", max_rpm=10)]
    pol = PoolPolicy(strategy="least_loaded")
    out = CTX.Queue()
    procs = [CTX.Process(target=_hammer, args=(redis_url, redis_prefix, keys, pol, 4, 15, out))
             for _ in range(4)]
    for p in procs:
        p.start()
    results = _collect(procs, out)
    total: Counter[str] = Counter()
    for got, degraded in results:
        assert not degraded
        total.update(got)
    # 240 attempts inside one 60 s window: exactly the budgets succeed, never one more
    assert total == {"a": 25, "b": 15, "c": 10, "-": 190}
    check = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    snap = check.snapshot("p", keys, pol)
    assert [k.requests_in_window for k in snap.keys] == [25, 15, 10]
    assert [k.in_flight for k in snap.keys] == [0, 0, 0]
    check.close()


def test_redis_sliding_window_holds_across_4_processes_in_real_time(
        redis_url: str, redis_prefix: str) -> None:
    window, limit = 0.5, 4
    keys = [KeySpec("a", max_rpm=limit), KeySpec("b", max_rpm=limit)]
    pol = PoolPolicy(strategy="round_robin", window_s=window)
    out = CTX.Queue()
    procs = [CTX.Process(target=_slide, args=(redis_url, redis_prefix, keys, pol, 1.5, out))
             for _ in range(4)]
    for p in procs:
        p.start()
    results = _collect(procs, out)
    per_key: dict[str, list[float]] = {"a": [], "b": []}
    for taken, degraded in results:
        assert not degraded
        for fp, t in taken:
            per_key[fp].append(t)
    for fp, times in per_key.items():
        times.sort()
        assert len(times) >= 2 * limit, fp  # slots kept being taken as they freed
        for i in range(len(times) - limit):
            # any limit+1 consecutive requests span more than one window
            assert times[i + limit] - times[i] >= window, (fp, i)
