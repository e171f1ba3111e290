"""Cool-downs survive a Redis restart: every worker hands back what it knows (deadlines only
move later, removals stay), and a worker seeing a new incarnation merges its recent requests."""

from __future__ import annotations

import pytest
from redis_server import RedisServer, own_redis  # noqa: F401

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy


class Clock:
    def __init__(self) -> None:
        self.t = 5000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_cool_down_and_a_removal_survive_a_restart_that_loses_them(
        own_redis: RedisServer, clock: Clock) -> None:  # noqa: F811
    opts = RedisPoolOptions(key_prefix="restart", reconnect_interval_s=0.0)
    learner = RedisPoolState(own_redis.url, options=opts, clock=clock)
    other = RedisPoolState(own_redis.url, options=opts, clock=clock)
    keys = [KeySpec("a"), KeySpec("b"), KeySpec("c")]
    pol = PoolPolicy(strategy="fill_first")
    a = learner.acquire("p", keys, pol)
    assert a.fingerprint == "a"
    learner.release("p", "a", Outcome("rate_limited", 100.0), pol, lease=a.lease)
    b = learner.acquire("p", keys, pol)
    learner.release("p", "b", Outcome("removed"), pol, lease=b.lease)
    seen = other.acquire("p", keys, pol)      # the other worker hears of both through Redis
    assert seen.fingerprint == "c"
    other.release("p", "c", Outcome("ok"), pol, lease=seen.lease)

    own_redis.restart()                       # an empty Redis: the state is gone
    clock.t += 10.0
    for backend in (other, learner):
        got = [backend.acquire("p", keys, pol) for _ in range(2)]
        assert got[0].fingerprint == "c"     # never a (cooling) nor b (removed)
        for g in got:
            if g.fingerprint:
                backend.release("p", g.fingerprint, Outcome("ok"), pol, lease=g.lease)
    snap = other.snapshot("p", keys, pol)
    assert snap.keys[0].blocked_until == 5100.0 and snap.keys[1].removed
