"""One contract suite for every PoolStateBackend (convention 9).

Add a backend by extending ``BACKENDS``; the cases use the backend's own clock and never need time
to pass, so a Redis backend (which uses Redis ``TIME``) runs the same assertions unchanged.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pytest

from hermes_core.agent.pool.state import (
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
)

BACKENDS: dict[str, Callable[[], PoolStateBackend]] = {"memory": InMemoryPoolState}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> PoolStateBackend:
    return BACKENDS[request.param]()


def test_backend_contract_deadline_moves_only_later(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy()
    assert backend.acquire("p1", keys, pol).fingerprint == "a"
    r1 = backend.release("p1", "a", Outcome("rate_limited", 300.0), pol)
    r2 = backend.release("p1", "a", Outcome("rate_limited", 1.0), pol)
    assert r1.changed and not r2.changed and r2.blocked_until == r1.blocked_until
    assert backend.acquire("p1", keys, pol).fingerprint == "b"
    backend.release("p1", "b", Outcome("rate_limited", 100.0), pol)
    res = backend.acquire("p1", keys, pol)
    assert res.fingerprint is None
    assert res.available_at is not None
    assert 99.0 <= res.available_at - backend.now() <= 100.5


def test_backend_contract_removal_is_permanent(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy()
    assert backend.acquire("p2", keys, pol).fingerprint == "a"
    assert backend.release("p2", "a", Outcome("removed"), pol).changed
    res = backend.acquire("p2", keys, pol)
    assert res.fingerprint is None and res.available_at is None
    assert backend.snapshot("p2", keys, pol).keys[0].removed


def test_backend_contract_rpm_window_never_exceeded_under_threads(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a", max_rpm=50), KeySpec("b", max_rpm=30, weight=2.0)]
    pol = PoolPolicy(strategy="least_loaded")
    got: list[str | None] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(20):
            fp = backend.acquire("p3", keys, pol).fingerprint
            with lock:
                got.append(fp)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = Counter(got)
    assert counts == {"a": 50, "b": 30, None: 80}
    snap = backend.snapshot("p3", keys, pol)
    assert [k.requests_in_window for k in snap.keys] == [50, 30]
    assert [k.in_flight for k in snap.keys] == [50, 30]


def test_backend_contract_round_robin_cursor_is_shared(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a", weight=3.0), KeySpec("b", weight=1.0)]
    pol = PoolPolicy(strategy="round_robin")
    picks = []
    for _ in range(8):
        fp = backend.acquire("p4", keys, pol).fingerprint
        assert fp is not None
        backend.release("p4", fp, Outcome("ok"), pol)
        picks.append(fp)
    assert Counter(picks) == {"a": 6, "b": 2}
    assert picks[:4] == ["a", "a", "b", "a"]


def test_backend_contract_breaker_single_probe(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy(breaker_failures=1, breaker_cooldown_s=0.001)
    fp = backend.acquire("p5", keys, pol).fingerprint
    assert fp == "a"
    backend.release("p5", "a", Outcome("failure"), pol)
    snap = backend.snapshot("p5", keys, pol)
    assert snap.keys[0].breaker.mode == "open" and snap.breaker.mode == "open"
