"""Tests of ``hermes_core/agent/pool/state.py``.

Table tests for the pool's pure decisions and the in-memory state backend.
"""

from __future__ import annotations

from collections import Counter

import pytest

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.state import (
    CLOSED,
    InMemoryPoolState,
    KeyLoad,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
    apply_outcome,
    choose_key,
    cooldown_until,
    evaluate_key,
    in_flight_cap,
    learn_limit,
    learned_after,
    pace_after,
    pace_free_at,
    sent_in_window,
    tokens_free_at,
    window_free_at,
)
from hermes_core.testing import FakeClock


@pytest.mark.parametrize(
    ("current", "now", "retry_after", "expected"),
    [
        (0.0, 100.0, 30.0, 130.0),
        (0.0, 100.0, None, 160.0),      # no signal: the default cool-down
        (200.0, 100.0, 30.0, 200.0),    # only moves later
        (120.0, 100.0, 30.0, 130.0),
        (0.0, 100.0, -5.0, 100.0),      # a negative signal is clamped
        (0.0, 100.0, 0.0, 100.0),
    ],
)
def test_cooldown_until(current: float, now: float, retry_after: float | None,
                        expected: float) -> None:
    assert cooldown_until(current, now, retry_after, 60.0) == expected


@pytest.mark.parametrize(
    ("times", "limit", "expected"),
    [
        ([], 2, None),
        ([1.0], 2, None),
        ([1.0, 5.0], 2, 61.0),
        ([1.0, 5.0, 7.0], 2, 65.0),
        ([1.0, 5.0], None, None),
    ],
)
def test_window_free_at(times: list[float], limit: int | None, expected: float | None) -> None:
    assert window_free_at([(t, 0) for t in times], limit, 60.0) == expected


@pytest.mark.parametrize(
    ("entries", "limit", "need", "expected"),
    [
        ([], 100, 500, None),                        # oversize request on an empty window
        ([(1.0, 50)], 100, 50, None),
        ([(1.0, 50), (2.0, 40)], 100, 50, 61.0),
        ([(1.0, 10), (2.0, 80)], 100, 50, 62.0),
        ([(1.0, 50)], None, 10_000, None),
    ],
)
def test_tokens_free_at(entries: list[tuple[float, int]], limit: int | None, need: int,
                        expected: float | None) -> None:
    assert tokens_free_at(entries, limit, need, 60.0) == expected


POLICY = PoolPolicy(breaker_cooldown_s=30.0)


@pytest.mark.parametrize(
    ("removed", "blocked", "breaker", "times", "ok", "free_at", "probe"),
    [
        (False, 0.0, CLOSED, [], True, None, False),
        (True, 0.0, CLOSED, [], False, None, False),
        (False, 150.0, CLOSED, [], False, 150.0, False),
        (False, 100.0, CLOSED, [], True, None, False),                 # deadline == now: free
        (False, 0.0, BreakerState("open", 5, 90.0), [], False, 120.0, False),
        (False, 0.0, BreakerState("open", 5, 60.0), [], True, None, True),
        (False, 0.0, CLOSED, [50.0, 60.0], False, 110.0, False),       # at max_rpm=2
        (False, 0.0, CLOSED, [50.0], True, None, False),
    ],
)
def test_evaluate_key(removed: bool, blocked: float, breaker: BreakerState, times: list[float],
                      ok: bool, free_at: float | None, probe: bool) -> None:
    spec = KeySpec("k", max_rpm=2)
    av = evaluate_key(spec, removed, blocked, breaker, [(t, 0) for t in times], 0, 100.0, POLICY)
    assert (av.ok, av.free_at, av.probe) == (ok, free_at, probe)


def test_smooth_weighted_round_robin_interleaves() -> None:
    keys = [KeyLoad("a", 5, 0, 0), KeyLoad("b", 1, 0, 0), KeyLoad("c", 1, 0, 0)]
    rr: dict[str, float] = {}
    picks = []
    for _ in range(7):
        i, rr = choose_key("round_robin", keys, rr, 0.0)
        picks.append(keys[i].fingerprint)
    # nginx's published sequence for weights 5/1/1
    assert picks == ["a", "a", "b", "a", "c", "a", "a"]


@pytest.mark.parametrize(
    ("strategy", "loads", "rand", "expected"),
    [
        ("least_loaded", [(1, 0), (0, 9), (0, 3)], 0.0, 2),
        ("least_loaded", [(0, 3), (0, 3)], 0.0, 0),
        ("fill_first", [(9, 9), (0, 0)], 0.0, 0),
        ("random", [(0, 0), (0, 0)], 0.0, 0),
        ("random", [(0, 0), (0, 0)], 0.49, 0),
        ("random", [(0, 0), (0, 0)], 0.5, 1),
        ("random", [(0, 0), (0, 0)], 0.99999, 1),
    ],
)
def test_choose_key_table(strategy: str, loads: list[tuple[int, int]], rand: float,
                          expected: int) -> None:
    keys = [KeyLoad(f"k{i}", 1.0, f, u) for i, (f, u) in enumerate(loads)]
    assert choose_key(strategy, keys, {}, rand)[0] == expected  # type: ignore[arg-type]


def test_choose_key_rejects_unknown_strategy_and_empty() -> None:
    with pytest.raises(ValueError, match="unknown rotation strategy"):
        choose_key("fastest", [KeyLoad("a", 1, 0, 0)], {}, 0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one"):
        choose_key("round_robin", [], {}, 0.0)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (Outcome("ok"), (0.0, False, CLOSED, False)),
        (Outcome("rate_limited", 30.0), (130.0, False, CLOSED, True)),
        (Outcome("removed"), (0.0, True, CLOSED, True)),
        (Outcome("failure"), (0.0, False, BreakerState("closed", 1, 0.0), False)),
        (Outcome("released"), (0.0, False, CLOSED, False)),
    ],
)
def test_apply_outcome(outcome: Outcome, expected: tuple[object, ...]) -> None:
    assert apply_outcome(outcome, 0.0, False, CLOSED, 100.0, POLICY) == expected


def test_in_memory_is_a_backend() -> None:
    assert isinstance(InMemoryPoolState(), PoolStateBackend)


def test_acquire_respects_rpm_window_and_reports_free_time() -> None:
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=2), KeySpec("b", max_rpm=1)]
    got = [st.acquire("p", keys, POLICY).fingerprint for _ in range(3)]
    assert Counter(got) == {"a": 2, "b": 1}
    clock.t = 1010.0
    res = st.acquire("p", keys, POLICY)
    assert res.fingerprint is None and res.available_at == 1060.0
    clock.t = 1060.0
    assert st.acquire("p", keys, POLICY).fingerprint is not None


def test_rate_limited_key_skipped_until_deadline() -> None:
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a"), KeySpec("b")]
    first = st.acquire("p", keys, POLICY).fingerprint
    assert first == "a"
    st.release("p", "a", Outcome("rate_limited", 30.0), POLICY)
    for _ in range(5):
        r = st.acquire("p", keys, POLICY)
        assert r.fingerprint == "b"
        st.release("p", "b", Outcome("ok"), POLICY)
    st.release("p", "a", Outcome("rate_limited", 5.0), POLICY)  # never moves earlier
    snap = st.snapshot("p", keys, POLICY)
    assert snap.keys[0].blocked_until == 1030.0
    st.release("p", "b", Outcome("rate_limited", 10.0), POLICY)
    res = st.acquire("p", keys, POLICY)
    assert res.fingerprint is None and res.available_at == 1010.0
    clock.t = 1030.0
    assert st.acquire("p", keys, POLICY).fingerprint in ("a", "b")


def test_removed_keys_never_come_back_and_alert_once() -> None:
    st = InMemoryPoolState(FakeClock(1000.0))
    keys = [KeySpec("a")]
    one = PoolPolicy(auth_max_strikes=1)      # removed at the first rejection
    assert st.acquire("p", keys, one).fingerprint == "a"
    assert st.release("p", "a", Outcome("removed"), one).changed
    assert not st.release("p", "a", Outcome("removed"), one).changed
    res = st.acquire("p", keys, one)
    assert res.fingerprint is None and res.available_at is None


def test_breaker_opens_then_single_probe() -> None:
    clock = FakeClock(1000.0)
    policy = PoolPolicy(breaker_failures=2, breaker_cooldown_s=10.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a")]
    for _ in range(2):
        assert st.acquire("p", keys, policy).fingerprint == "a"
        st.release("p", "a", Outcome("failure"), policy)
    res = st.acquire("p", keys, policy)
    assert res.fingerprint is None and res.available_at == 1010.0
    clock.t = 1010.0
    probe = st.acquire("p", keys, policy)
    assert probe.fingerprint == "a" and probe.probe
    assert st.acquire("p", keys, policy).fingerprint is None  # one probe only
    st.release("p", "a", Outcome("ok"), policy)
    snap = st.snapshot("p", keys, policy)
    assert snap.breaker.mode == "closed" and snap.keys[0].breaker.mode == "closed"
    assert st.acquire("p", keys, policy).fingerprint == "a"


def test_provider_breaker_blocks_every_key() -> None:
    clock = FakeClock(1000.0)
    policy = PoolPolicy(breaker_failures=3, breaker_cooldown_s=10.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a"), KeySpec("b"), KeySpec("c")]
    for _ in range(3):  # one failure per key: no key breaker opens, the provider's does
        fp = st.acquire("p", keys, policy).fingerprint
        assert fp is not None
        st.release("p", fp, Outcome("failure"), policy)
    res = st.acquire("p", keys, policy)
    assert res.fingerprint is None and res.available_at == 1010.0


def test_in_flight_counts_and_least_loaded() -> None:
    st = InMemoryPoolState(FakeClock(1000.0))
    policy = PoolPolicy(strategy="least_loaded")
    keys = [KeySpec("a"), KeySpec("b")]
    a = st.acquire("p", keys, policy).fingerprint
    b = st.acquire("p", keys, policy).fingerprint
    assert {a, b} == {"a", "b"}
    snap = st.snapshot("p", keys, policy)
    assert [k.in_flight for k in snap.keys] == [1, 1]
    st.release("p", "b", Outcome("ok"), policy)
    assert st.acquire("p", keys, policy).fingerprint == "b"


def test_tpm_limit() -> None:
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_tpm=1000)]
    assert st.acquire("p", keys, POLICY, tokens=600).fingerprint == "a"
    res = st.acquire("p", keys, POLICY, tokens=600)
    assert res.fingerprint is None and res.available_at == 1060.0
    assert st.acquire("p", keys, POLICY, tokens=400).fingerprint == "a"


def test_in_flight_cap_grows_by_one_per_round_trip_while_the_limit_is_unknown() -> None:
    pol = PoolPolicy(learn_limits=True, max_in_flight=8)
    # 1 + isqrt(2 * successes): 1 | 2 | 3 after 1 + 2 | 4 after 1 + 2 + 3 | ...
    assert [in_flight_cap(KeySpec("a"), None, n, pol)
            for n in (0, 1, 2, 3, 5, 6, 10, 24, 25, 50)] == [1, 2, 3, 3, 4, 4, 5, 7, 8, 8]
    assert in_flight_cap(KeySpec("a"), 5, 0, pol) == 8                  # learned: the cap
    assert in_flight_cap(KeySpec("a", max_rpm=5), None, 0, pol) == 8    # configured: the cap
    assert in_flight_cap(KeySpec("a"), None, 0, PoolPolicy(max_in_flight=8)) == 8  # not learning
    unbounded = PoolPolicy(learn_limits=True, max_in_flight=None)
    assert in_flight_cap(KeySpec("a"), None, 50, unbounded) == 11
    assert in_flight_cap(KeySpec("a"), 3, 9, unbounded) is None


def test_a_429_teaches_what_went_out_in_the_refused_requests_window_not_refused() -> None:
    """A headerless server's window was full when it refused a request: the key's other requests
    sent in that window are at most its limit, those still in flight included (those that reached
    the server first were admitted). Requests refused already do not count, so the stragglers of
    a burst coming back refused lower the count to what the server admitted."""
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True, window_s=100.0, max_in_flight=32)
    for _ in range(18):                                           # cap 1 + isqrt(36): 7
        r = st.acquire("p", keys, pol)
        clock.t += 0.1
        st.release("p", "a", Outcome("ok"), pol, lease=r.lease)
    sent = [st.acquire("p", keys, pol).lease for _ in range(6)]   # A1 A2 R B1 B2 B3
    st.release("p", "a", Outcome("rate_limited", 5.0), pol, lease=sent[2])
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 23  # 18 answered + 5 in flight
    st.release("p", "a", Outcome("ok"), pol, lease=sent[0])
    for lease in sent[3:]:                                        # B1-B3 come back refused
        st.release("p", "a", Outcome("rate_limited", 5.0), pol, lease=lease)
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 20  # 18 + A1 + A2: admitted
    clock.t += 200.0                          # a window later, 3 answered and one refused
    for _ in range(3):
        r = st.acquire("p", keys, pol)
        st.release("p", "a", Outcome("ok"), pol, lease=r.lease)
    clock.t += 20.0
    r = st.acquire("p", keys, pol)
    st.release("p", "a", Outcome("rate_limited", 5.0), pol, lease=r.lease)
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 3   # a second 429 lowers it
    st.release("p", "a", Outcome("rate_limited", 5.0), pol, lease="unknown")
    assert st.snapshot("p", keys, pol).keys[0].learned_rpm == 3   # never raises it


@pytest.mark.parametrize(("sends", "refused", "window", "expected"), [
    ([(1.0, "a"), (2.0, "b"), (3.0, "r"), (3.5, "c")], "r", 10.0, 3),
    ([(1.0, "a"), (2.0, "b"), (3.0, "r"), (3.5, "c")], "r", 1.5, 2),   # a left R's window
    ([(3.0, "r")], "r", 10.0, 0),
    ([(1.0, "a")], "x", 10.0, None),                                    # not among them
])
def test_sent_in_window(sends: list[tuple[float, str]], refused: str, window: float,
                     expected: int | None) -> None:
    assert sent_in_window(sends, refused, window) == expected


def test_headerless_sliding_window_server_is_never_sent_over_its_limit_once_a_429_taught_it(
        ) -> None:
    """A proxy with a sliding window of 5 per 10 s that states nothing and answers 429 with
    Retry-After: the pool starts slow, learns the limit from the first 429 and from then on
    sends no request the server refuses and never more than 5 in any 10 s, counting refused
    ones (some proxies count them)."""
    clock = FakeClock(0.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy(learn_limits=True, window_s=10.0, max_in_flight=32, burst=0.1,
                     strategy="least_loaded")
    limit, window, latency = 5, 10.0, 0.05
    admitted: dict[str, list[float]] = {"a": [], "b": []}
    arrivals: dict[str, list[tuple[float, int]]] = {"a": [], "b": []}
    pending: list[tuple[float, str, str, int, float]] = []
    heard_429: dict[str, float] = {}

    def send() -> bool:
        r = st.acquire("p", keys, pol)
        if r.fingerprint is None:
            return False
        hits = [t for t in admitted[r.fingerprint] if t > clock.t - window]
        admitted[r.fingerprint] = hits
        if len(hits) >= limit:
            status, wait = 429, hits[len(hits) - limit] + window - clock.t
        else:
            status, wait = 200, 0.0
            hits.append(clock.t)
        arrivals[r.fingerprint].append((clock.t, status))
        pending.append((clock.t + (latency if status == 200 else 0.001), r.fingerprint, r.lease,
                        status, wait))
        clock.t += 0.0005                           # requests go out one after another
        return True

    for step in range(6000):
        clock.t = max(clock.t, step * 0.01)
        for due in sorted(p for p in pending if p[0] <= clock.t):
            pending.remove(due)
            _, fp, lease, status, wait = due
            if status == 429:
                heard_429.setdefault(fp, clock.t)
                st.release("p", fp, Outcome("rate_limited", wait), pol, lease=lease)
            else:
                st.release("p", fp, Outcome("ok"), pol, lease=lease)
            send()                                  # the waiter its release woke asks at once
        while send():                               # and the rest of the callers, always waiting
            pass
    for fp in keys:
        learned_at = heard_429[fp.fingerprint]
        late = [(t, s) for t, s in arrivals[fp.fingerprint] if t >= learned_at]
        assert [t for t, s in late if s == 429] == []
        times = [t for t, _ in arrivals[fp.fingerprint]]
        for t, _ in late:
            assert sum(1 for u in times if t - window < u <= t) <= limit
        assert sum(1 for _, s in late if s == 200) >= limit * 5 - 1  # and it keeps the pace


@pytest.mark.parametrize(("outcome", "learned", "admitted", "expected"), [
    (Outcome("rate_limited"), None, 7, 7),
    (Outcome("rate_limited"), 4, 7, 4),          # never up without a statement
    (Outcome("rate_limited"), 9, 7, 7),
    (Outcome("rate_limited", limit=12), 4, 7, 12),
    (Outcome("ok", limit=12), 4, 7, 12),
    (Outcome("ok"), 4, 7, 4),
    (Outcome("failure", limit=12), 4, 7, 4),
    (Outcome("rate_limited"), None, 0, None),    # refused before any other went out
    (Outcome("rate_limited"), 4, 0, 4),
])
def test_learned_after(outcome: Outcome, learned: int | None, admitted: int,
                       expected: int | None) -> None:
    assert learned_after(outcome, learned, admitted) == expected


def test_a_finished_request_counts_from_when_it_finished() -> None:
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=1)]
    pol = PoolPolicy(window_s=10.0)
    lease = st.acquire("p", keys, pol).lease
    clock.t += 4.0   # the server counted it somewhere in these 4 s
    st.release("p", "a", Outcome("ok"), pol, lease=lease)
    clock.t += 7.0   # 11 s after sending, 7 s after it finished: the server may still count it
    res = st.acquire("p", keys, pol)
    assert res.fingerprint is None and res.available_at == 1014.0


def test_a_refused_request_counts_in_the_window_from_when_it_was_refused() -> None:
    """The server saw it, and a limiter that counts before it checks (many proxies) counts it:
    the pool does not send it again inside the same window."""
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a", max_rpm=2)]
    pol = PoolPolicy(window_s=10.0)
    lease = st.acquire("p", keys, pol).lease
    clock.t += 1.0
    st.release("p", "a", Outcome("rate_limited", 0.0), pol, lease=lease)
    assert st.snapshot("p", keys, pol).keys[0].requests_in_window == 1
    clock.t = 1010.5
    assert st.snapshot("p", keys, pol).keys[0].requests_in_window == 1
    clock.t = 1011.0
    assert st.snapshot("p", keys, pol).keys[0].requests_in_window == 0


def test_pacing_spreads_the_budget_across_the_window() -> None:
    clock = FakeClock(1000.0)
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
    assert learn_limit(7, None) == 7 and learn_limit(7, 30) == 30 and learn_limit(0, None) is None


def test_a_key_without_max_rpm_learns_its_limit_from_a_429() -> None:
    clock = FakeClock(1000.0)
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
    clock = FakeClock(1000.0)
    st = InMemoryPoolState(clock)
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy(max_in_flight=2, strategy="least_loaded")
    got = [st.acquire("p", keys, pol).fingerprint for _ in range(5)]
    assert got.count("a") == got.count("b") == 2 and got[-1] is None
    st.release("p", "a", Outcome("ok"), pol)
    assert st.acquire("p", keys, pol).fingerprint == "a"
