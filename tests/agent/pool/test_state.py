"""Tests of ``hermes_core/agent/pool/state.py``.

Table tests for the pool's pure decisions and the in-memory state backend.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.state import (
    CLOSED,
    MAX_LIMIT,
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


def test_backend_contract_a_success_stating_the_limit_teaches_it(backend: PoolStateBackend) -> None:
    """The limit a 200 states (``x-ratelimit-limit-requests``) is learned before any 429."""
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True)
    first = backend.acquire("p7", keys, pol)
    backend.release("p7", "a", Outcome("ok", limit=2, remaining=1), pol, lease=first.lease)
    assert backend.snapshot("p7", keys, pol).keys[0].learned_rpm == 2
    second = backend.acquire("p7", keys, pol)
    assert second.fingerprint == "a"
    backend.release("p7", "a", Outcome("ok", limit=2, remaining=0), pol, lease=second.lease)
    third = backend.acquire("p7", keys, pol)
    assert third.fingerprint is None and third.available_at is not None   # 2 in the window


def test_backend_contract_a_success_with_nothing_remaining_blocks_until_reset(
        backend: PoolStateBackend) -> None:
    keys = [KeySpec("a", max_rpm=100)]
    pol = PoolPolicy(learn_limits=True)
    got = backend.acquire("p8", keys, pol)
    res = backend.release("p8", "a", Outcome("ok", limit=100, remaining=0, reset_s=5.0), pol,
                          lease=got.lease)
    assert not res.changed                     # not a 429: nothing to alert about
    after = backend.acquire("p8", keys, pol)
    assert after.fingerprint is None and after.available_at is not None
    assert 4.0 <= after.available_at - backend.now() <= 5.5
    # requests left: no block; a later reset never shortens a deadline already set
    backend.release("p8", "a", Outcome("ok", remaining=0, reset_s=1.0), pol)
    assert backend.acquire("p8", keys, pol).available_at == after.available_at


def test_backend_contract_a_success_blocks_a_key_at_most_one_window(
        backend: PoolStateBackend) -> None:
    """A 200 saying nothing remains with a reset a day away (a proxy's garbage, a far
    RFC 3339 time) must not take the key out for a day: the next request may only be refused,
    and that 429 says how long for real."""
    keys = [KeySpec("a", max_rpm=100)]
    pol = PoolPolicy(window_s=60.0)
    got = backend.acquire("p12", keys, pol)
    backend.release("p12", "a", Outcome("ok", limit=100, remaining=0, reset_s=86_400.0), pol,
                    lease=got.lease)
    after = backend.acquire("p12", keys, pol)
    assert after.fingerprint is None and after.available_at is not None
    assert after.available_at - backend.now() <= 60.5


def test_backend_contract_a_key_of_unknown_limit_sends_one_request_until_it_answers(
        backend: PoolStateBackend) -> None:
    """Slow start: nothing says how much a key admits until its first answer (whose headers
    usually say), so a burst of callers does not land a whole in-flight cap on it first; an
    answer that says nothing lets one more go out per round trip."""
    keys = [KeySpec("a"), KeySpec("b", max_rpm=100)]
    pol = PoolPolicy(learn_limits=True, max_in_flight=32, strategy="fill_first")
    first = backend.acquire("p9", keys, pol)
    assert first.fingerprint == "a"
    assert [backend.acquire("p9", keys, pol).fingerprint for _ in range(2)] == ["b", "b"]
    backend.release("p9", "a", Outcome("ok"), pol, lease=first.lease)   # answered, no limit said
    two = [backend.acquire("p9", keys, pol) for _ in range(3)]
    assert [r.fingerprint for r in two] == ["a", "a", "b"]                # 2 in flight, not 32
    for r in two[:2]:
        backend.release("p9", "a", Outcome("ok"), pol, lease=r.lease)
    assert [backend.acquire("p9", keys, pol).fingerprint
            for _ in range(4)] == ["a", "a", "a", "b"]                  # 3 successes: 3
    unlearned = PoolPolicy(max_in_flight=32)                            # not learning: no gate
    assert [backend.acquire("p10", keys[:1], unlearned).fingerprint
            for _ in range(2)] == ["a", "a"]


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


def test_backend_contract_a_429_that_states_nothing_only_lowers_the_learned_limit(
        backend: PoolStateBackend) -> None:
    """A 429 that states no limit teaches at most what the window held when refused, so it can
    tighten the estimate, never loosen it."""
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True, window_s=600.0)
    for _ in range(5):                                                  # 5 answered: cap 6
        r = backend.acquire("p11", keys, pol)
        backend.release("p11", "a", Outcome("ok"), pol, lease=r.lease)
    leases = [backend.acquire("p11", keys, pol).lease for _ in range(3)]
    backend.release("p11", "a", Outcome("rate_limited", 0.0, limit=3), pol, lease=leases[0])
    assert backend.snapshot("p11", keys, pol).keys[0].learned_rpm == 3    # stated: taken as is
    backend.release("p11", "a", Outcome("rate_limited", 0.0), pol, lease=leases[1])
    assert backend.snapshot("p11", keys, pol).keys[0].learned_rpm == 3    # 5+ in the window: not 5
    backend.release("p11", "a", Outcome("ok", limit=9), pol, lease=leases[2])
    assert backend.snapshot("p11", keys, pol).keys[0].learned_rpm == 9    # stated again


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


def test_backend_contract_leaving_a_queue_never_joined_changes_nothing(
        backend: PoolStateBackend) -> None:
    keys = [KeySpec("a", max_rpm=1)]
    pol = PoolPolicy()
    backend.leave("p3")                      # before anything was asked, and twice
    backend.leave("p3")
    assert backend.acquire("p3", keys, pol).fingerprint == "a"
    backend.leave("p3")                      # served: no place held
    refused = backend.acquire("p3", keys, pol)
    assert refused.fingerprint is None and refused.available_at is not None
    assert backend.snapshot("p3", keys, pol).keys[0].requests_in_window == 1


def test_backend_contract_removal_is_permanent(backend: PoolStateBackend) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy(auth_max_strikes=1)
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


def test_the_contract_suite_runs_against_memory_and_redis(backend_kinds: tuple[str, ...]) -> None:
    names = [n for n in globals() if n.startswith("test_backend_contract")]
    assert len(names) >= 5
    assert {"memory", "redis"} <= set(backend_kinds)


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


def test_backend_contract_a_lease_released_twice_does_not_end_another_request(
        backend: PoolStateBackend) -> None:
    """A second release of the same lease (or of one the state never handed out) must not drop
    the in-flight count of a request still running: the cap would let one too many out."""
    st = backend
    keys = [KeySpec("a")]
    pol = PoolPolicy(max_in_flight=2)
    first = st.acquire("p", keys, pol)
    second = st.acquire("p", keys, pol)
    assert second.fingerprint == "a"
    st.release("p", "a", Outcome("ok"), pol, lease=first.lease)
    st.release("p", "a", Outcome("ok"), pol, lease=first.lease)      # twice
    st.release("p", "a", Outcome("released"), pol, lease="never-handed-out")
    snap = st.snapshot("p", keys, pol)
    assert snap.keys[0].in_flight == 1                                # `second` is still out
    assert st.acquire("p", keys, pol).fingerprint == "a"
    assert st.acquire("p", keys, pol).fingerprint is None             # the cap holds at 2


def test_backend_contract_a_huge_stated_limit_is_learned_not_a_crash(
        backend: PoolStateBackend) -> None:
    """A proxy stating an absurd limit (``x-ratelimit-limit-requests: 100000000000000000000``)
    is a big limit (at most MAX_LIMIT), not an error on every later acquire of the provider."""
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True)
    first = backend.acquire("p8", keys, pol)
    backend.release("p8", "a", Outcome("ok", limit=10**20, remaining=10**20), pol,
                    lease=first.lease)
    assert backend.snapshot("p8", keys, pol).keys[0].learned_rpm == MAX_LIMIT
    again = backend.acquire("p8", keys, pol)
    assert again.fingerprint == "a"
    backend.release("p8", "a", Outcome("ok", limit=10**400), pol, lease=again.lease)  # > a double
    assert backend.snapshot("p8", keys, pol).keys[0].learned_rpm == MAX_LIMIT
    assert backend.acquire("p8", keys, pol).fingerprint == "a"


def test_backend_contract_a_negative_remaining_counts_as_nothing_remaining(
        backend: PoolStateBackend) -> None:
    """``x-ratelimit-remaining-requests: -3`` (a proxy counting past the limit) says the key is
    over its limit: blocked until the reset like ``0``, the same in both backends."""
    keys = [KeySpec("a", max_rpm=100)]
    pol = PoolPolicy(learn_limits=True)
    got = backend.acquire("p11", keys, pol)
    backend.release("p11", "a", Outcome("ok", limit=100, remaining=-3, reset_s=5.0), pol,
                    lease=got.lease)
    after = backend.acquire("p11", keys, pol)
    assert after.fingerprint is None and after.available_at is not None
    assert 4.0 <= after.available_at - backend.now() <= 5.5


def test_backend_contract_a_429_on_a_keys_first_request_teaches_no_limit(
        backend: PoolStateBackend) -> None:
    """Refused before it sent anything else in the window, a key learned a limit of one per window
    and stayed blocked for the whole window, whatever Retry-After said: the budget was spent by
    someone else (another client of the key), so only the Retry-After holds it back."""
    keys = [KeySpec("a")]
    pol = PoolPolicy(learn_limits=True, window_s=60.0)
    r = backend.acquire("p12", keys, pol)
    backend.release("p12", "a", Outcome("rate_limited", 4.0), pol, lease=r.lease)
    snap = backend.snapshot("p12", keys, pol)
    assert snap.keys[0].learned_rpm is None
    assert snap.keys[0].blocked_until is not None
    assert 3.5 <= snap.keys[0].blocked_until - snap.now <= 4.5          # the Retry-After, no more


# --------------------------------------------------------------------------- auth quarantine

AUTH = PoolPolicy(breaker_cooldown_s=30.0, auth_recheck_s=60.0, auth_recheck_max_s=300.0,
                  auth_max_strikes=4)

def test_backend_contract_a_rejected_key_is_quarantined_rechecked_and_restored(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    backend, clock = clocked_backend
    keys = [KeySpec("a")]
    first = backend.acquire("q1", keys, AUTH)
    stale = backend.acquire("q1", keys, AUTH)       # in flight when the key is rejected
    res = backend.release("q1", "a", Outcome("removed"), AUTH, lease=first.lease)
    assert res.changed and not res.removed and res.recheck_at == pytest.approx(clock.t + 60.0)
    assert not backend.release("q1", "a", Outcome("removed"), AUTH, lease=stale.lease).changed
    none = backend.acquire("q1", keys, AUTH)
    # not worth waiting for (this request fails over), yet not removed: rechecked when due
    assert none.fingerprint is None and none.available_at is None
    assert none.recheck_at == pytest.approx(clock.t + 60.0)
    snap = backend.snapshot("q1", keys, AUTH).keys[0]
    assert snap.auth_strikes == 1 and not snap.removed
    clock.t += 60.0
    probe = backend.acquire("q1", keys, AUTH)
    assert probe.fingerprint == "a" and probe.probe
    assert backend.acquire("q1", keys, AUTH).fingerprint is None    # one request only
    back = backend.release("q1", "a", Outcome("ok", probe=True), AUTH, lease=probe.lease)
    assert back.restored
    assert backend.acquire("q1", keys, AUTH).fingerprint == "a"
    assert backend.snapshot("q1", keys, AUTH).keys[0].auth_strikes == 0


def test_backend_contract_a_success_sent_before_the_rejection_does_not_lift_the_quarantine(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    """A request in flight when its key was rejected authenticated before the rejection: its
    success is old news, as its own 401 would be (no second strike). It lifted the quarantine
    and reset the strikes, so with overlapping long requests a revoked key came straight back
    and its recheck wait never doubled. Only the recheck's success restores the key."""
    backend, clock = clocked_backend
    keys = [KeySpec("a")]
    first = backend.acquire("q3", keys, AUTH)
    stale = backend.acquire("q3", keys, AUTH)       # in flight when the key is rejected
    res = backend.release("q3", "a", Outcome("removed"), AUTH, lease=first.lease)
    assert res.changed and res.recheck_at == pytest.approx(clock.t + 60.0)
    late = backend.release("q3", "a", Outcome("ok"), AUTH, lease=stale.lease)
    assert not late.restored
    assert backend.acquire("q3", keys, AUTH).fingerprint is None      # still quarantined
    assert backend.snapshot("q3", keys, AUTH).keys[0].auth_strikes == 1
    clock.t += 60.0
    probe = backend.acquire("q3", keys, AUTH)
    assert probe.fingerprint == "a" and probe.probe
    again = backend.release("q3", "a", Outcome("removed", probe=True), AUTH, lease=probe.lease)
    assert again.recheck_at == pytest.approx(clock.t + 120.0)          # the wait doubled
    assert backend.snapshot("q3", keys, AUTH).keys[0].auth_strikes == 2


def test_backend_contract_a_key_rejected_at_every_recheck_is_removed_after_the_last(
        clocked_backend: tuple[PoolStateBackend, FakeClock]) -> None:
    backend, clock = clocked_backend
    keys = [KeySpec("a")]
    start = clock.t
    rechecks: list[float] = []
    res = backend.release("q2", "a", Outcome("removed"),
                          AUTH, lease=backend.acquire("q2", keys, AUTH).lease)
    while not res.removed:
        assert res.recheck_at is not None
        rechecks.append(res.recheck_at - start)
        clock.t = res.recheck_at - 0.5
        assert backend.acquire("q2", keys, AUTH).fingerprint is None   # not before it is due
        clock.t = res.recheck_at
        probe = backend.acquire("q2", keys, AUTH)
        assert probe.probe
        res = backend.release("q2", "a", Outcome("removed", probe=True), AUTH, lease=probe.lease)
    assert res.changed and rechecks == [60.0, 180.0, 420.0]       # 60, 120, 240 s apart
    gone = backend.acquire("q2", keys, AUTH)
    assert gone.fingerprint is None and gone.available_at is None and gone.recheck_at is None
    assert backend.snapshot("q2", keys, AUTH).keys[0].removed


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
