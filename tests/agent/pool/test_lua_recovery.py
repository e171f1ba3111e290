"""Tests of ``hermes_core/agent/pool/lua_recovery.py``: MERGE's arguments from what a worker did
and learned on its local clock; what a merge hands back to a real Redis that restarted empty
(more of the script runs against Redis in test_redis.py)."""

from __future__ import annotations

import redis

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.lua_recovery import merge_args
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer


def test_merge_args_give_times_as_ages_and_drop_requests_out_of_their_window() -> None:
    sent = [(900.0, 5, 60.0, ""), (950.0, 7, 60.0, "l7"), (990.0, 9, 30.0, "")]
    args = merge_args(-1.0, 1000.0, (1030.0, False), Standing(), None, sent, 604800.0, "u")
    # the window is the widest of the requests kept (the one at 900 has left its 60 s); one
    # sent under a Redis lease names it
    assert args == [-1.0, 30.0, "0", 604800.0, 60.0, "u", "", 0, 0.0, "", 0, 0.0, 0,
                    50.0, 7, "l7", 10.0, 9, ""]


def test_merge_args_carry_a_removal_strikes_and_the_breakers_not_closed() -> None:
    standing = Standing(2, BreakerState("open", 3, 980.0), True)
    args = merge_args(5.0, 1000.0, (0.0, False), standing, BreakerState("half_open", 1, 995.0),
                      [], 60.0, "u")
    assert args == [5.0, -1000.0, "1", 60.0, 0.0, "u", "open", 3, 20.0, "half_open", 1, 5.0, 2]
    closed = merge_args(5.0, 1000.0, (0.0, True), Standing(), BreakerState("closed", 0, 0.0),
                        [], 60.0, "u")
    assert closed[2] == "1" and closed[6:12] == ["", 0, 0.0, "", 0, 0.0]


def test_a_request_in_flight_across_a_restart_that_lost_the_state_is_counted_once(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """The first request is in flight when Redis restarts empty: the next acquire hands it
    back (MERGE) and its release moves its window entry to its end, as for any request. Handed
    back under a name of its own, the release found no entry of its lease and added one: 3 in
    the window for 2 requests sent."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix, workers=2))
    pol = PoolPolicy(window_s=60.0)
    key = [KeySpec("k", max_rpm=10)]
    first = be.acquire("p", key, pol, tokens=7)
    assert first.fingerprint == "k"
    own_redis.stop()
    own_redis.start()                                  # empty: the window and leases lost
    clock.t += 1.0
    second = be.acquire("p", key, pol)
    assert second.fingerprint == "k"
    clock.t += 1.0
    be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
    be.release("p", "k", Outcome("ok"), pol, lease=second.lease)
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    try:
        window = client.zrange(be._key_names("p", "k")[1], 0, -1, withscores=True)
    finally:
        client.close()
    assert len(window) == 2, window
    assert sorted(m.rsplit(":", 1)[1] for m, _ in window) == ["0", "7"]
    assert not be.degraded
    be.close()


def test_a_request_that_ended_before_redis_restarted_empty_counts_until_a_window_after_its_end(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A release moves the request's window entry to its end (the server counted it until then):
    a key of 1 per 10 s, sent at 0 and ended at 8, frees at 18. Redis restarts empty at 9; the
    next acquire hands the request back at its send time, so at 11 it had left the window and a
    second request went out 7 s before the server's slot freed."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix))
    pol = PoolPolicy(window_s=10.0)
    key = [KeySpec("k", max_rpm=1)]
    first = be.acquire("p", key, pol)
    assert first.fingerprint == "k"
    clock.t += 8.0
    be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
    clock.t += 3.0
    kept = be.acquire("p", key, pol)                   # Redis kept it: refused until 18
    assert kept.fingerprint is None and kept.available_at == clock.t + 7.0
    own_redis.stop()
    own_redis.start()                                  # empty: the window lost
    again = be.acquire("p", key, pol)
    assert again.fingerprint is None and again.available_at == clock.t + 7.0
    assert not be.degraded
    be.close()


def test_a_refused_request_handed_back_to_a_redis_that_restarted_empty_stays_marked_refused(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A 429's window entry is marked ``r:``, so the limit a later 429 teaches counts only the
    requests the server admitted. Handed back unmarked after a restart, the refused request
    counted as admitted and the learned limit came out one over."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix))
    pol = PoolPolicy(window_s=60.0)
    refused = be.acquire("p", [KeySpec("k")], pol)
    clock.t += 1.0
    be.release("p", "k", Outcome("rate_limited", retry_after=1.0), pol, lease=refused.lease)
    own_redis.stop()
    own_redis.start()                                  # empty: the window lost
    clock.t += 2.0
    assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"   # hands k back
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    try:
        window = client.zrange(be._key_names("p", "k")[1], 0, -1)
    finally:
        client.close()
    assert window == [f"r:{refused.lease}:0"]
    be.close()


def test_a_request_in_flight_across_a_restart_that_lost_the_state_still_holds_its_place(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A key of one request in flight at a time: the first is in flight when Redis restarts
    empty. Handed back to the window but not to the key's leases, it no longer counted in
    flight, and a second request went out beside it."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix))
    pol = PoolPolicy(window_s=60.0, max_in_flight=1)
    key = [KeySpec("k")]
    first = be.acquire("p", key, pol)
    assert first.fingerprint == "k"
    assert be.acquire("p", key, pol).fingerprint is None      # one in flight: busy
    own_redis.stop()
    own_redis.start()                                  # empty: the window and leases lost
    clock.t += 1.0
    assert be.acquire("p", key, pol).fingerprint is None
    be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
    assert be.acquire("p", key, pol).fingerprint == "k"       # its release frees the place
    assert not be.degraded
    be.close()


def test_a_request_that_ended_while_redis_was_away_and_restarted_empty_counts_from_its_end(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Sent at 0 through Redis, ended at 8 while Redis was away; Redis came back empty. The
    recovery handed the request back at its send time, so at 11 it had left the window of 10 s
    and a second request of a key of 1 went out 7 s before the server's slot freed."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock,
                        options=RedisPoolOptions(key_prefix=redis_prefix,
                                                 reconnect_interval_s=0.0))
    pol = PoolPolicy(window_s=10.0)
    key = [KeySpec("k", max_rpm=1)]
    first = be.acquire("p", key, pol)
    assert first.fingerprint == "k"
    own_redis.stop()
    try:
        clock.t += 8.0
        be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
        assert be.degraded
    finally:
        own_redis.start()                              # empty: the window lost
    clock.t += 3.0
    again = be.acquire("p", key, pol)
    assert not be.degraded
    assert again.fingerprint is None and again.available_at == clock.t + 7.0
    be.close()
