"""Pool accounting that matches what the server sees: requests count while in flight and until
they finish, refused ones leave the window, pacing spreads a key's budget across the window,
limits are learned from 429s, and requests in flight per key are capped."""

from __future__ import annotations

from hermes_core.agent.pool.state import (
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    learn_limit,
    pace_after,
    pace_free_at,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_finished_request_counts_from_when_it_finished() -> None:
    clock = Clock()
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=1)]
    pol = PoolPolicy(window_s=10.0)
    lease = st.acquire("p", keys, pol).lease
    clock.t += 4.0   # the server counted it somewhere in these 4 s
    st.release("p", "a", Outcome("ok"), pol, lease=lease)
    clock.t += 7.0   # 11 s after sending, 7 s after it finished: the server may still count it
    res = st.acquire("p", keys, pol)
    assert res.fingerprint is None and res.available_at == 1014.0


def test_a_refused_request_leaves_the_window() -> None:
    clock = Clock()
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=2)]
    pol = PoolPolicy(window_s=10.0)
    lease = st.acquire("p", keys, pol).lease
    st.release("p", "a", Outcome("rate_limited", 0.0), pol, lease=lease)
    assert st.snapshot("p", keys, pol).keys[0].requests_in_window == 0


def test_pacing_spreads_the_budget_across_the_window() -> None:
    clock = Clock()
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=10)]
    pol = PoolPolicy(window_s=10.0, burst=0.2)     # 2 back to back, then one per second
    got = [st.acquire("p", keys, pol).fingerprint for _ in range(3)]
    assert got == ["a", "a", None]
    assert st.acquire("p", keys, pol).available_at == 1001.0
    clock.t = 1001.0
    assert st.acquire("p", keys, pol).fingerprint == "a"


def test_pace_functions() -> None:
    assert pace_free_at(0.0, 5.0, 10, 10.0, 1.0) is None          # burst 1.0: no pacing
    tat = pace_after(0.0, 5.0, 10, 10.0)
    assert tat == 6.0 and pace_free_at(tat, 5.0, 10, 10.0, 0.1) == 6.0
    assert learn_limit(7, None) == 7 and learn_limit(7, 30) == 30 and learn_limit(0, None) == 1


def test_a_key_without_max_rpm_learns_its_limit_from_a_429() -> None:
    clock = Clock()
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a")]
    pol = PoolPolicy(window_s=10.0, learn_limits=True)
    for _ in range(3):
        r = st.acquire("p", keys, pol)
        st.release("p", "a", Outcome("ok"), pol, lease=r.lease)
    r = st.acquire("p", keys, pol)
    st.release("p", "a", Outcome("rate_limited", 1.0), pol, lease=r.lease)
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 3
    clock.t += 1.0
    res = st.acquire("p", keys, pol)
    assert res.fingerprint is None and res.available_at is not None   # 3 in the window already
    stated = st.release("p", "a", Outcome("rate_limited", 0.0, limit=50), pol)
    assert stated.blocked_until >= clock.t
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 50


def test_requests_in_flight_per_key_are_capped() -> None:
    clock = Clock()
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy(max_in_flight=2, strategy="least_loaded")
    got = [st.acquire("p", keys, pol).fingerprint for _ in range(5)]
    assert got.count("a") == got.count("b") == 2 and got[-1] is None
    st.release("p", "a", Outcome("ok"), pol)
    assert st.acquire("p", keys, pol).fingerprint == "a"
