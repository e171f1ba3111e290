"""Tests of ``hermes_core/agent/pool/redis.py`` when Redis comes back: what a worker learned or
held while Redis was away or after it lost its data (cool-downs, removals, quarantines, breakers,
leases, requests counted locally, each worker's share of a full window) reaches Redis once, on a
real redis-server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
import redis

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import AcquireResult, KeySpec, Outcome, PoolPolicy
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer, free_port
from tests.agent.pool.conftest import Mono


@pytest.fixture
def restart_clock() -> FakeClock:
    return FakeClock(5000.0)


def test_a_cool_down_and_a_removal_survive_a_restart_that_loses_them(
        own_redis: RedisServer, restart_clock: FakeClock) -> None:
    opts = RedisPoolOptions(key_prefix="restart", reconnect_interval_s=0.0)
    learner = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    other = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    keys = [KeySpec("a"), KeySpec("b"), KeySpec("c")]
    pol = PoolPolicy(strategy="fill_first", auth_max_strikes=1)   # b's rejection removes it
    a = learner.acquire("p", keys, pol)
    assert a.fingerprint == "a"
    learner.release("p", "a", Outcome("rate_limited", 100.0), pol, lease=a.lease)
    b = learner.acquire("p", keys, pol)
    learner.release("p", "b", Outcome("removed"), pol, lease=b.lease)
    seen = other.acquire("p", keys, pol)      # the other worker hears of both through Redis
    assert seen.fingerprint == "c"
    other.release("p", "c", Outcome("ok"), pol, lease=seen.lease)

    own_redis.restart()                       # an empty Redis: the state is gone
    restart_clock.t += 10.0
    for backend in (other, learner):
        got = [backend.acquire("p", keys, pol) for _ in range(2)]
        assert got[0].fingerprint == "c"     # never a (cooling) nor b (removed)
        for g in got:
            if g.fingerprint:
                backend.release("p", g.fingerprint, Outcome("ok"), pol, lease=g.lease)
    snap = other.snapshot("p", keys, pol)
    assert snap.keys[0].blocked_until == 5100.0 and snap.keys[1].removed


def test_breakers_opened_during_an_outage_are_merged_back(own_redis: RedisServer,
                                                          redis_prefix: str) -> None:
    """The local fallback's breaker states reach the restarted Redis with its deadlines: a key
    that failed during the outage stays out for every worker; a learned limit stated during the
    outage is kept whole for the fleet (the worker itself used its share of it)."""
    mono = Mono()
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=5.0)
    be = RedisPoolState(own_redis.url, monotonic=mono, options=opts)
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy(strategy="fill_first", breaker_failures=2, breaker_cooldown_s=300.0,
                     learn_limits=True)
    first = be.acquire("p", keys, pol)
    be.release("p", "a", Outcome("ok"), pol, lease=first.lease)
    own_redis.stop()
    pol_b = replace(pol, strategy="round_robin")
    for want, outcome in (("a", Outcome("failure")), ("b", Outcome("ok", limit=8, remaining=7)),
                          ("a", Outcome("failure"))):
        got = be.acquire("p", keys, pol_b)
        assert got.fingerprint == want
        be.release("p", want, outcome, pol, lease=got.lease)
    assert be.degraded
    assert be.acquire("p", keys, pol).fingerprint == "b"      # a's breaker is open locally
    assert be.snapshot("p", keys, pol).keys[1].learned_rpm == 4    # this worker's share: 8 // 2
    own_redis.start()
    mono.t += 5.1
    assert be.acquire("p", keys, pol).fingerprint == "b" and not be.degraded
    other = RedisPoolState(own_redis.url, options=RedisPoolOptions(key_prefix=redis_prefix))
    snap = other.snapshot("p", keys, pol)
    assert snap.keys[0].breaker.mode == "open" and snap.keys[0].breaker.failures == 2
    assert snap.keys[1].learned_rpm == 8
    assert other.acquire("p", keys, pol).fingerprint == "b"   # never a, still open
    other.close()
    be.close()


def test_a_worker_that_sent_little_does_not_spend_a_full_share_of_a_full_window(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """Redis goes away while the fleet's window for a key is full. Each worker's fallback budget
    is its share (limit / workers), and it counts its share of the fleet's window as Redis last
    showed it, not only its own requests: a worker that happened to send none of them must not
    add a share on top. When Redis returns empty, that share of the window goes back into it,
    and for a reconnect interval the worker keeps to its share while the others may still be local.
    A Redis that restarted empty gets back from each worker what that worker sent."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=1.0)
    mono_x, mono_y = Mono(), Mono()
    x = RedisPoolState(own_redis.url, monotonic=mono_x, options=opts, clock=restart_clock)
    y = RedisPoolState(own_redis.url, monotonic=mono_y, options=opts, clock=restart_clock)
    keys = [KeySpec("a", max_rpm=4)]
    pol = PoolPolicy(window_s=10.0)
    for _ in range(4):
        got = x.acquire("p", keys, pol)
        assert got.fingerprint == "a"
        x.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        restart_clock.t += 1.0
    assert y.acquire("p", keys, pol).fingerprint is None     # y sees the full window
    own_redis.stop()
    assert y.acquire("p", keys, pol).fingerprint is None     # not 2 more on top of 4
    assert y.degraded
    restart_clock.t += 4.5          # the two newest entries of the window are still in it
    assert y.acquire("p", keys, pol).fingerprint is None
    own_redis.start()
    mono_y.t += 1.1
    back = y.acquire("p", keys, pol)      # Redis (empty) would admit; y's share is still used
    assert not y.degraded and back.fingerprint is None
    assert x.acquire("p", keys, pol).fingerprint is None   # x gives Redis back what it sent
    viewer = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    assert viewer.snapshot("p", keys, pol).keys[0].requests_in_window == 4
    viewer.close()
    restart_clock.t += 4.0          # 5001 has left y's share (5001, 5003): one request fits
    assert y.acquire("p", keys, pol).fingerprint == "a"
    assert y.acquire("p", keys, pol).fingerprint is None
    x.close()
    y.close()


def test_a_worker_that_sent_few_tokens_does_not_spend_a_full_token_share_of_a_full_window(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """As with requests, so with tokens: a worker falling back counts its share of the tokens in
    the fleet's window as Redis last showed it, not zero tokens per request (which let it spend
    a whole TPM share on top of a window the others had nearly filled)."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=1.0)
    x = RedisPoolState(own_redis.url, monotonic=Mono(), options=opts, clock=restart_clock)
    y = RedisPoolState(own_redis.url, monotonic=Mono(), options=opts, clock=restart_clock)
    keys = [KeySpec("a", max_tpm=1000)]
    pol = PoolPolicy(window_s=60.0)
    for _ in range(4):
        got = x.acquire("p", keys, pol, tokens=200)
        assert got.fingerprint == "a"
        x.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        restart_clock.t += 1.0
    got = y.acquire("p", keys, pol, tokens=100)          # 900 of 1000 in the window now
    assert got.fingerprint == "a"
    y.release("p", "a", Outcome("ok"), pol, lease=got.lease)
    own_redis.stop()
    # y's share: 500 tokens, of which its half of the window's 900 is spent
    assert y.acquire("p", keys, pol, tokens=300).fingerprint is None
    assert y.degraded
    assert y.acquire("p", keys, pol, tokens=40).fingerprint == "a"
    x.close()
    y.close()


def test_a_redis_lease_released_during_an_outage_leaves_local_requests_counted(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A request taken from Redis that ends while the local fallback serves was never counted
    locally: its release must not end a local request still in flight (the local in-flight cap
    would let one too many out), and a local request's own release ends that request."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=60.0))
    keys = [KeySpec("a")]
    pol = PoolPolicy(max_in_flight=2)
    remote = be.acquire("p", keys, pol)
    assert remote.fingerprint == "a"
    own_redis.stop()
    try:
        first = be.acquire("p", keys, pol)                  # served locally
        assert be.degraded and first.fingerprint == "a"
        be.release("p", "a", Outcome("ok"), pol, lease=remote.lease)
        assert be.snapshot("p", keys, pol).keys[0].in_flight == 1    # `first` is still out
        second = be.acquire("p", keys, pol)
        assert second.fingerprint == "a"
        assert be.acquire("p", keys, pol).fingerprint is None         # cap 2: first, second
        be.release("p", "a", Outcome("ok"), pol, lease=second.lease)
        assert be.snapshot("p", keys, pol).keys[0].in_flight == 1    # first, not second
        be.release("p", "a", Outcome("ok"), pol, lease=first.lease)
        assert be.snapshot("p", keys, pol).keys[0].in_flight == 0
    finally:
        own_redis.start()
        be.close()


def test_a_local_request_that_ends_after_redis_returns_frees_its_local_slot(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A request the fallback handed out that ends once Redis is back is released in Redis, and
    its local lease must end too: otherwise the local in-flight count never drops, and the
    probation after the outage (and the next outage) refuses the key at its cap for good."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=5.0))
    keys = [KeySpec("a")]
    pol = PoolPolicy(max_in_flight=1)
    assert be.acquire("p", keys, pol).fingerprint == "a"
    be.release("p", "a", Outcome("ok"), pol)
    own_redis.stop()
    local = be.acquire("p", keys, pol)
    assert be.degraded and local.fingerprint == "a"
    own_redis.start()
    mono.t += 5.1
    be.release("p", "a", Outcome("ok"), pol, lease=local.lease)   # Redis is back: served there
    assert not be.degraded
    assert be.acquire("p", keys, pol).fingerprint == "a"          # nothing is in flight
    be.close()


def test_a_redis_lease_released_during_an_outage_is_ended_in_redis_when_it_returns(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Redis kept running while this worker could not reach it: a request it had taken there and
    that ended meanwhile must not stay in flight in Redis until its lease expires (minutes), or
    every worker finds the key at its in-flight cap after the outage."""
    mono = Mono()
    opts = RedisPoolOptions(key_prefix=redis_prefix, reconnect_interval_s=5.0)
    be = RedisPoolState(own_redis.url, monotonic=mono, options=opts)
    keys = [KeySpec("a")]
    pol = PoolPolicy(max_in_flight=1)
    held = be.acquire("p", keys, pol)
    assert held.fingerprint == "a"
    script = be._release

    def timed_out(*args: object, **kwargs: object) -> object:
        raise redis.exceptions.TimeoutError("Timeout reading from socket")

    be._release = timed_out  # type: ignore[assignment,method-assign]
    be.release("p", "a", Outcome("ok"), pol, lease=held.lease)  # served locally
    assert be.degraded
    be._release = script  # type: ignore[method-assign]
    mono.t += 5.1
    other = RedisPoolState(own_redis.url, options=opts)
    assert be.acquire("p", keys, pol).fingerprint == "a" and not be.degraded
    assert other.snapshot("p", keys, pol).keys[0].in_flight == 1       # the new one only
    other.close()
    be.close()


def test_a_request_served_locally_while_the_outage_is_merged_back_reaches_redis(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Another thread keeps serving from the fallback while one thread merges the outage into
    Redis: the request it sends meanwhile must reach Redis too, or the key's window there is one
    short and the next acquire breaks its max_rpm."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=5.0))
    keys = [KeySpec("a", max_rpm=3)]
    pol = PoolPolicy()
    own_redis.stop()
    assert be.acquire("p", keys, pol).fingerprint == "a"          # served locally
    assert be.degraded
    own_redis.start()
    mono.t += 5.1
    merge = be._merge
    during: list[str | None] = []

    def merge_while_another_thread_acquires(*args: object, **kwargs: object) -> object:
        if not during:       # the other thread's call is still served locally meanwhile
            during.append(be.acquire("p", keys, pol).fingerprint)
        return merge(*args, **kwargs)

    be._merge = merge_while_another_thread_acquires  # type: ignore[assignment,method-assign]
    assert be.acquire("p", keys, pol).fingerprint == "a" and not be.degraded
    be._merge = merge  # type: ignore[method-assign]
    assert during == ["a"]
    assert be.snapshot("p", keys, pol).keys[0].requests_in_window == 3
    assert be.acquire("p", keys, pol).fingerprint is None          # max_rpm 3 holds
    be.close()


@pytest.mark.parametrize("skew", [-50.0, 50.0])
def test_a_cool_down_keeps_its_length_across_an_outage_whatever_the_clocks_skew(
        own_redis: RedisServer, redis_prefix: str, skew: float) -> None:
    """Redis TIME and this machine's clock disagree by ``skew`` seconds. Redis's deadlines are on
    its clock and the fallback runs on the local one: a 30 s cool-down stays 30 s in the fallback
    (not 30 - skew: a key still cooling handed out) and when merged back into a restarted Redis
    (not 30 + skew: a key kept out for nothing)."""
    redis_clock, local, mono = FakeClock(5000.0), FakeClock(5000.0 + skew), Mono()
    be = RedisPoolState(own_redis.url, clock=redis_clock, local_clock=local, monotonic=mono,
                        options=RedisPoolOptions(key_prefix=redis_prefix,
                                                 reconnect_interval_s=1.0))
    keys = [KeySpec("a")]
    pol = PoolPolicy()
    r = be.acquire("p", keys, pol)
    be.release("p", "a", Outcome("rate_limited", 30.0), pol, lease=r.lease)

    own_redis.stop()
    for c in (redis_clock, local):
        c.t += 10.0
    down = be.acquire("p", keys, pol)
    assert be.degraded and down.fingerprint is None
    assert down.available_at is not None
    assert down.available_at - down.now == pytest.approx(20.0)

    own_redis.start()                         # restarted empty: the deadline is merged back
    mono.t += 1.5
    for c in (redis_clock, local):
        c.t += 1.0
    back = be.acquire("p", keys, pol)
    assert not be.degraded and back.fingerprint is None
    assert back.available_at is not None
    assert back.available_at - back.now == pytest.approx(19.0)
    snap = be.snapshot("p", keys, pol)
    assert snap.keys[0].blocked_until - snap.now == pytest.approx(19.0)
    be.close()


def test_a_waiter_refused_by_its_outage_share_asks_again_at_the_next_probe(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """The local share frees late (the fleet's window as Redis last showed it): a refusal during
    the outage names the next probe, so the waiter rejoins Redis's whole budget when it returns
    instead of sleeping through it; a cooling key keeps its own deadline."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, clock=restart_clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix, workers=2,
                                                 reconnect_interval_s=1.0))
    keys = [KeySpec("a", max_rpm=2), KeySpec("c", max_rpm=2)]
    pol = PoolPolicy(window_s=30.0, strategy="fill_first")
    for _ in range(4):
        assert be.acquire("p", keys, pol).fingerprint is not None
    r = be.acquire("p", [KeySpec("d")], pol)
    be.release("p", "d", Outcome("rate_limited", 20.0), pol, lease=r.lease)
    own_redis.stop()
    try:
        down = be.acquire("p", keys, pol)
        assert be.degraded and down.fingerprint is None and down.available_at is not None
        assert down.available_at - down.now == pytest.approx(1.0)     # the next probe, not 30 s
        cooling = be.acquire("p", [KeySpec("d")], pol)
        assert cooling.available_at is not None
        assert cooling.available_at - cooling.now == pytest.approx(20.0)
    finally:
        own_redis.start()
    mono.t += 1.0
    restart_clock.t += 1.0
    back = be.acquire("p", keys, pol)          # on probation: the local share still binds...
    assert not be.degraded and back.fingerprint is None and back.available_at is not None
    assert back.available_at - back.now == pytest.approx(1.0)   # ...until the probation ends
    be.close()


AUTH_POL = PoolPolicy(strategy="fill_first", breaker_cooldown_s=30.0, auth_recheck_s=60.0,
                      auth_recheck_max_s=3600.0, auth_max_strikes=8)


def test_a_key_quarantined_through_redis_stays_out_of_the_local_fallback(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """Redis goes away while a key is quarantined (rejected by this worker, or by another one):
    the fallback does not put it back into rotation; its recheck comes when Redis said, and a
    rejected recheck counts as the key's next strike (twice the wait), not its first."""
    mono = Mono()
    opts = RedisPoolOptions(key_prefix=redis_prefix, reconnect_interval_s=5.0)
    be = RedisPoolState(own_redis.url, options=opts, clock=restart_clock, monotonic=mono)
    other = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    keys = [KeySpec("a"), KeySpec("b"), KeySpec("c")]
    got = be.acquire("p", keys, AUTH_POL)
    assert got.fingerprint == "a"
    be.release("p", "a", Outcome("removed"), AUTH_POL, lease=got.lease)   # rejected here
    got = other.acquire("p", keys, AUTH_POL)
    assert got.fingerprint == "b"
    other.release("p", "b", Outcome("removed"), AUTH_POL, lease=got.lease)  # rejected there
    got = be.acquire("p", keys, AUTH_POL)          # this worker hears of b through Redis
    assert got.fingerprint == "c"
    be.release("p", "c", Outcome("ok"), AUTH_POL, lease=got.lease)
    other.close()

    own_redis.stop()
    restart_clock.t += 10.0
    served = [be.acquire("p", keys, AUTH_POL) for _ in range(3)]
    assert be.degraded
    assert [s.fingerprint for s in served] == ["c", "c", "c"]
    for s in served:
        be.release("p", "c", Outcome("ok"), AUTH_POL, lease=s.lease)
    status = {k.fingerprint: k for k in be.snapshot("p", keys, AUTH_POL).keys}
    assert status["a"].auth_strikes == 1 and status["b"].auth_strikes == 1

    restart_clock.t += 51.0                       # a's and b's rechecks are due (60 s)
    probe = be.acquire("p", keys, AUTH_POL)
    assert probe.fingerprint == "a" and probe.probe
    be.release("p", "a", Outcome("removed", probe=True), AUTH_POL, lease=probe.lease)
    snap = be.snapshot("p", keys, AUTH_POL)
    assert snap.keys[0].auth_strikes == 2
    assert snap.keys[0].breaker.opened_at + AUTH_POL.breaker_cooldown_s == snap.now + 120.0
    be.close()


def test_a_quarantine_learned_during_an_outage_reaches_a_restarted_redis(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """Strikes and quarantines are carried across a Redis restart: those this worker knew
    before the outage and those it recorded during it are in the restarted Redis, for every
    worker, with their recheck times and counts."""
    mono = Mono()
    opts = RedisPoolOptions(key_prefix=redis_prefix, reconnect_interval_s=5.0)
    be = RedisPoolState(own_redis.url, options=opts, clock=restart_clock, monotonic=mono)
    keys = [KeySpec("a"), KeySpec("b"), KeySpec("c")]
    got = be.acquire("p", keys, AUTH_POL)
    be.release("p", "a", Outcome("removed"), AUTH_POL, lease=got.lease)     # a: strike 1
    own_redis.stop()
    got = be.acquire("p", keys, AUTH_POL)
    assert be.degraded and got.fingerprint == "b"
    be.release("p", "b", Outcome("removed"), AUTH_POL, lease=got.lease)     # b: strike 1, local
    own_redis.start()                                                       # empty
    mono.t += 5.1
    got = be.acquire("p", keys, AUTH_POL)
    assert not be.degraded and got.fingerprint == "c"
    be.release("p", "c", Outcome("ok"), AUTH_POL, lease=got.lease)
    other = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    snap = other.snapshot("p", keys, AUTH_POL)
    a, b = snap.keys[0], snap.keys[1]
    assert (a.auth_strikes, b.auth_strikes) == (1, 1)
    assert a.breaker.mode == b.breaker.mode == "open"
    assert a.breaker.opened_at + 30.0 == 5060.0 and b.breaker.opened_at + 30.0 == 5060.0
    assert other.acquire("p", keys, AUTH_POL).fingerprint == "c"
    # the recheck, rejected again, is the second strike for the whole fleet
    restart_clock.t += 60.0
    probe = other.acquire("p", keys, AUTH_POL)
    assert probe.fingerprint == "a" and probe.probe
    other.release("p", "a", Outcome("removed", probe=True), AUTH_POL, lease=probe.lease)
    assert other.snapshot("p", keys, AUTH_POL).keys[0].auth_strikes == 2
    other.close()
    be.close()


def test_a_quarantine_known_before_a_restart_is_handed_back_to_the_empty_redis(
        own_redis: RedisServer, redis_prefix: str, restart_clock: FakeClock) -> None:
    """Redis restarts empty between two calls (no outage is noticed): the next acquire resyncs,
    and the key quarantined before is still quarantined, with its strikes."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, reconnect_interval_s=0.0)
    be = RedisPoolState(own_redis.url, options=opts, clock=restart_clock)
    keys = [KeySpec("a"), KeySpec("b")]
    for _ in range(2):              # two strikes: the recheck was rejected too
        got = be.acquire("p", keys, AUTH_POL)
        assert got.fingerprint == "a"
        be.release("p", "a", Outcome("removed", probe=got.probe), AUTH_POL, lease=got.lease)
        restart_clock.t += 60.0     # the recheck is due
    # now 60 s into the second wait (120 s)
    own_redis.restart()
    got = be.acquire("p", keys, AUTH_POL)
    assert got.fingerprint == "b" and not be.degraded
    be.release("p", "b", Outcome("ok"), AUTH_POL, lease=got.lease)
    snap = be.snapshot("p", keys, AUTH_POL)
    assert snap.keys[0].auth_strikes == 2
    assert snap.keys[0].breaker.opened_at + 30.0 == 5000.0 + 60.0 + 120.0
    be.close()


def _read_only(server: RedisServer) -> Callable[[], None]:
    """Redis refuses this worker's writes (a replica of a master that is not there) but keeps
    its data: away without a restart. Returns the undo."""
    admin = redis.Redis.from_url(server.url)
    admin.replicaof("127.0.0.1", free_port())

    def undo() -> None:
        admin.replicaof("NO", "ONE")
        admin.close()

    return undo


def _window(server: RedisServer, be: RedisPoolState, fingerprint: str) -> list[tuple[str, float]]:
    client = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        return [(m, s) for m, s in client.zrange(be._key_names("p", fingerprint)[1], 0, -1,
                                                  withscores=True)]
    finally:
        client.close()


def _worker(server: RedisServer, prefix: str) -> tuple[RedisPoolState, FakeClock]:
    """A backend probing at every call, on a clock of its own."""
    clock = FakeClock(1_700_000_000.0)
    return RedisPoolState(server.url, clock=clock, options=RedisPoolOptions(
        key_prefix=prefix, reconnect_interval_s=0.0)), clock


def _sent_by_the_fallback_and_merged_back(
        server: RedisServer, prefix: str) -> tuple[RedisPoolState, FakeClock, AcquireResult]:
    """A request of a key of 1 per 10 s the fallback sent at 0 while Redis was away (read-only,
    its data kept), merged back when it returned at 1."""
    be, clock = _worker(server, prefix)
    assert be.acquire("p", [KeySpec("other")], PoolPolicy(window_s=10.0)).fingerprint == "other"
    back = _read_only(server)
    try:
        first = be.acquire("p", [KeySpec("k", max_rpm=1)], PoolPolicy(window_s=10.0))
        assert be.degraded and first.fingerprint == "k"
    finally:
        back()
    clock.t += 1.0
    assert be.acquire("p", [KeySpec("other")], PoolPolicy(window_s=10.0)).fingerprint == "other"
    assert not be.degraded
    return be, clock, first


def _counted_from_its_end(server: RedisServer, be: RedisPoolState, clock: FakeClock, *,
                          refused: bool) -> None:
    """The request :func:`_sent_by_the_fallback_and_merged_back` made ended 3 s ago, at 8: at
    11 the key of 1 per 10 s serves again only from 18, and Redis's window holds the request
    at its end, ``r:``-marked if ``refused``."""
    clock.t += 3.0
    again = be.acquire("p", [KeySpec("k", max_rpm=1)], PoolPolicy(window_s=10.0))
    assert not be.degraded
    assert again.fingerprint is None and again.available_at == clock.t + 7.0
    window = _window(server, be, "k")
    assert [(m.startswith("r:"), s) for m, s in window] == [(refused, clock.t - 3.0)]
    be.close()


@pytest.mark.parametrize("sent_through", ["redis", "fallback"])
def test_a_request_that_ended_while_redis_was_away_counts_from_its_end_once_it_is_back(
        own_redis: RedisServer, redis_prefix: str, sent_through: str) -> None:
    """A release moves its request's window entry to the request's end (the server counted it
    until then). Sent at 0 (through Redis, or by the fallback while Redis was away) and ended at
    8 while Redis was away, with its data kept: the entry stayed at (or went back at) its send
    time, and at 11 a second request of a key of 1 per 10 s went out 7 s before the server's
    slot freed."""
    be, clock = _worker(own_redis, redis_prefix)
    pol = PoolPolicy(window_s=10.0)
    key = [KeySpec("k", max_rpm=1)]
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    first = be.acquire("p", key, pol) if sent_through == "redis" else None
    back = _read_only(own_redis)
    try:
        first = first or be.acquire("p", key, pol)
        assert first.fingerprint == "k"
        clock.t += 8.0
        be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
        assert be.degraded
    finally:
        back()
    clock.t += 3.0
    again = be.acquire("p", key, pol)
    assert not be.degraded
    assert again.fingerprint is None and again.available_at == clock.t + 7.0
    assert [s for _, s in _window(own_redis, be, "k")] == [clock.t - 3.0]
    be.close()


@pytest.mark.parametrize("sent_through", ["redis", "fallback"])
def test_a_request_refused_while_redis_was_away_goes_back_marked_refused(
        own_redis: RedisServer, redis_prefix: str, sent_through: str) -> None:
    """A 429's window entry is marked ``r:`` (RELEASE), so the limit a later 429 teaches counts
    only what the server admitted. A request refused while Redis was away (sent through Redis
    before, or by the fallback) went back unmarked: Redis counted it as admitted, and the
    limit it learned next came out one over."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix,
                                                 reconnect_interval_s=0.0))
    pol = PoolPolicy(window_s=60.0)
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    admitted = be.acquire("p", [KeySpec("k")], pol) if sent_through == "redis" else None
    refused = be.acquire("p", [KeySpec("k")], pol) if sent_through == "redis" else None
    back = _read_only(own_redis)
    try:
        admitted = admitted or be.acquire("p", [KeySpec("k")], pol)
        refused = refused or be.acquire("p", [KeySpec("k")], pol)
        assert admitted.fingerprint == refused.fingerprint == "k"
        clock.t += 1.0
        be.release("p", "k", Outcome("ok"), pol, lease=admitted.lease)
        be.release("p", "k", Outcome("rate_limited", retry_after=1.0), pol, lease=refused.lease)
        assert be.degraded
    finally:
        back()
    clock.t += 2.0
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"   # merged back
    assert not be.degraded
    window = _window(own_redis, be, "k")
    assert sorted(m.startswith("r:") for m, _ in window) == [False, True], window
    assert [s for _, s in window] == [clock.t - 2.0] * 2
    be.close()


@pytest.mark.parametrize("outcome", ["ok", "rate_limited"])
def test_a_request_the_fallback_sent_that_ends_once_redis_is_back_moves_to_its_end(
        own_redis: RedisServer, redis_prefix: str, outcome: str) -> None:
    """Sent by the fallback at 0 while Redis was away, merged back at its send time when Redis
    returned at 1, ended at 8 through Redis: its release moved nothing in Redis's window (it
    named no Redis lease), so at 11 a second request of a key of 1 per 10 s went out 7 s before
    the server's slot freed; refused, it stayed counted as admitted."""
    be, clock, first = _sent_by_the_fallback_and_merged_back(own_redis, redis_prefix)
    pol = PoolPolicy(window_s=10.0)
    clock.t += 7.0
    be.release("p", "k", Outcome(outcome, retry_after=0.0), pol, lease=first.lease)
    _counted_from_its_end(own_redis, be, clock, refused=outcome != "ok")


@pytest.mark.parametrize("sent_through", ["redis", "fallback"])
def test_a_request_merged_back_after_an_outage_is_handed_back_again_after_a_later_restart(
        own_redis: RedisServer, redis_prefix: str, sent_through: str) -> None:
    """Sent at 0 (through Redis before an outage, or by the fallback during it), merged back
    when Redis returned at 1 with its data; Redis then restarted empty at 2. The recovery had
    dropped the request from what this worker hands back to a Redis that lost its window, so
    at 2 a second request of a key of 1 per 60 s went out."""
    be, clock = _worker(own_redis, redis_prefix)
    pol = PoolPolicy(window_s=60.0)
    key = [KeySpec("k", max_rpm=1)]
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    first = be.acquire("p", key, pol) if sent_through == "redis" else None
    back = _read_only(own_redis)
    try:
        first = first or be.acquire("p", key, pol)
        assert first.fingerprint == "k"
        be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
        assert be.degraded
    finally:
        back()
    clock.t += 1.0
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"   # merged back
    assert not be.degraded
    own_redis.restart()                       # empty
    clock.t += 1.0
    again = be.acquire("p", key, pol)
    assert not be.degraded
    assert again.fingerprint is None and again.available_at == clock.t + 58.0
    be.close()


@pytest.mark.parametrize("outcome", ["ok", "rate_limited"])
def test_a_request_the_fallback_sent_that_ends_in_a_later_outage_moves_to_its_end(
        own_redis: RedisServer, redis_prefix: str, outcome: str) -> None:
    """Sent by the fallback at 0, merged back at its send time when Redis returned at 1, ended
    at 8 while Redis was away again (data kept): its release was not found among the requests
    to merge back (it had been merged already), so the entry stayed at its send time, unmarked,
    and at 11 a second request of a key of 1 per 10 s went out 7 s before the server's slot
    freed."""
    be, clock, first = _sent_by_the_fallback_and_merged_back(own_redis, redis_prefix)
    pol = PoolPolicy(window_s=10.0)
    back = _read_only(own_redis)
    try:
        clock.t += 7.0
        be.release("p", "k", Outcome(outcome, retry_after=0.0), pol, lease=first.lease)
        assert be.degraded
    finally:
        back()
    _counted_from_its_end(own_redis, be, clock, refused=outcome != "ok")


@pytest.mark.parametrize("noticed", ["at_once", "after_an_outage"])
def test_a_redis_restored_from_an_older_snapshot_gets_the_requests_it_lost_back(
        own_redis: RedisServer, redis_prefix: str, noticed: str) -> None:
    """Redis snapshotted (RDB) after the first of two requests of a key of 2 per 60 s, then
    restarted from that snapshot: the epoch came back as the worker knew it, so nothing was
    handed back and a third request went out in the window. ``after_an_outage``: a call met
    Redis down (the fallback refused the key) before it came back."""
    be, clock = _worker(own_redis, redis_prefix)
    pol = PoolPolicy(window_s=60.0)
    key = [KeySpec("k", max_rpm=2)]
    admin = redis.Redis.from_url(own_redis.url)
    first = be.acquire("p", key, pol)
    be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
    admin.save()
    admin.close()
    clock.t += 1.0
    second = be.acquire("p", key, pol)
    be.release("p", "k", Outcome("ok"), pol, lease=second.lease)
    assert first.fingerprint == second.fingerprint == "k"
    if noticed == "after_an_outage":
        own_redis.stop()
        clock.t += 1.0
        assert be.acquire("p", key, pol).fingerprint is None and be.degraded
        own_redis.start()
    else:
        own_redis.restart()
    assert len(_window(own_redis, be, "k")) == 1   # the snapshot's
    clock.t += 1.0
    third = be.acquire("p", key, pol)
    assert not be.degraded
    assert third.fingerprint is None, "a third request of a key of 2 went out in the window"
    be.close()
