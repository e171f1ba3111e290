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
