"""Tests of ``hermes_core/agent/pool/state.py``'s backend protocol: the contract suite every
``PoolStateBackend`` must pass, run against the in-memory state and RedisPoolState on a real
redis-server (the ``backend`` fixture): deadlines, learned limits, removals, windows under threads,
the shared round-robin cursor, breakers and quarantines.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from hermes_core.agent.pool.state import MAX_LIMIT, KeySpec, Outcome, PoolPolicy, PoolStateBackend
from hermes_core.testing import FakeClock


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
