"""Processes sharing a Redis pool are served in the order they started waiting, on a real
redis-server: a waiter that dies leaves a place that expires, and a Redis that lost the queue
(restarted empty) serves as if there were none."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator

import pytest
import redis

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import AcquireResult, KeySpec, Outcome, PoolPolicy
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer
from hermes_core.types import fingerprint

KEY = KeySpec("key-fleet", max_rpm=1)
POLICY = PoolPolicy(window_s=10.0)
P = "openai"


@pytest.fixture
def fleet(redis_url: str, redis_prefix: str) -> Iterator[tuple[Callable[[], RedisPoolState],
                                                                FakeClock]]:
    """Backends standing for processes of one fleet (each its own worker id), on one clock."""
    clock = FakeClock(1000.0)
    made: list[RedisPoolState] = []

    def process() -> RedisPoolState:
        made.append(RedisPoolState(redis_url, clock=clock,
                                   options=RedisPoolOptions(key_prefix=redis_prefix)))
        return made[-1]

    yield process, clock
    for be in made:
        assert not be.degraded, "the test ran against the local fallback, not Redis"
        be.close()


def served(be: RedisPoolState) -> AcquireResult:
    res = be.acquire(P, [KEY], POLICY)
    if res.fingerprint is not None:
        be.release(P, res.fingerprint, Outcome("ok"), POLICY, lease=res.lease)
    return res


def test_the_process_that_waited_first_is_served_first_whoever_asks_first(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    process, clock = fleet
    a, b, c = process(), process(), process()
    assert served(a).fingerprint == KEY.fingerprint         # the window's one request
    assert served(b).fingerprint is None                    # b waits from here
    assert served(c).fingerprint is None                    # c after b
    clock.t += 11.0                                         # the slot frees
    early = served(c)                                       # c polls first: not its turn
    assert early.fingerprint is None and early.available_at is not None
    assert early.available_at - early.now < 1.0             # it asks again soon
    assert served(b).fingerprint == KEY.fingerprint
    clock.t += 11.0
    assert served(c).fingerprint == KEY.fingerprint         # then c, not a newcomer
    clock.t += 11.0
    assert served(a).fingerprint == KEY.fingerprint         # nobody waits: straight through


def test_a_waiter_that_died_holds_its_place_a_bounded_time(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    process, clock = fleet
    a, dead, c = process(), process(), process()
    assert served(a).fingerprint is not None
    refused = served(dead)                                  # queued; never asks again
    assert refused.fingerprint is None and refused.available_at is not None
    assert served(c).fingerprint is None
    clock.t += refused.available_at - refused.now + 0.1     # the slot is free, dead's turn
    assert served(c).fingerprint is None
    grace = RedisPoolOptions().queue_grace_s
    clock.t += grace + 0.1                                  # past what dead's place was held for
    assert served(c).fingerprint == KEY.fingerprint


def test_a_redis_restarted_empty_loses_the_queue_and_serves_as_before(
        own_redis: RedisServer, redis_prefix: str) -> None:
    clock = FakeClock(1000.0)
    opts = RedisPoolOptions(key_prefix=redis_prefix, reconnect_interval_s=0.0)
    a, b, c = (RedisPoolState(own_redis.url, clock=clock, options=opts) for _ in range(3))
    assert served(a).fingerprint is not None
    assert served(b).fingerprint is None                    # b queued
    own_redis.restart()
    clock.t += 11.0
    assert served(c).fingerprint == KEY.fingerprint         # the queue went with the restart
    assert not c.degraded
    clock.t += 11.0
    assert served(b).fingerprint == KEY.fingerprint         # b is not stuck behind anything
    for be in (a, b, c):
        be.close()


def test_a_process_whose_request_got_a_key_leaves_no_place_behind(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock], redis_url: str,
        redis_prefix: str) -> None:
    process, clock = fleet
    a, b = process(), process()
    assert served(a).fingerprint is not None
    assert served(b).fingerprint is None
    clock.t += 11.0
    assert served(b).fingerprint is not None
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    queued = [k for k in client.scan_iter(f"{redis_prefix}:*") if client.type(k) == "zset"
              and client.zcard(k) and k.endswith((":q", ":qx"))]
    client.close()
    assert queued == []


def _storm(url: str, prefix: str, secret: str, rounds: int, out: object) -> None:
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix, workers=3))
    key = KeySpec(fingerprint(secret), max_rpm=4)
    got = 0
    deadline = time.monotonic() + 60
    while got < rounds and time.monotonic() < deadline:
        res = be.acquire(P, [key], PoolPolicy(window_s=0.5))
        if res.fingerprint is None:
            time.sleep(min(0.2, max(0.0, (res.available_at or res.now) - res.now)))
            continue
        got += 1
        be.release(P, res.fingerprint, Outcome("ok"), PoolPolicy(window_s=0.5), lease=res.lease)
    out.put(got)  # type: ignore[attr-defined]


def test_real_processes_in_a_storm_each_get_their_grants_and_redis_holds_no_secret(
        redis_url: str, redis_prefix: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    secret = "sk-fleet-" + "s3cr3t" * 6
    procs = [ctx.Process(target=_storm, args=(redis_url, redis_prefix, secret, 6, out))
             for _ in range(3)]
    for p in procs:
        p.start()
    got = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert got == [6, 6, 6]
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for k in client.scan_iter(f"{redis_prefix}:*"):
            assert "s3cr3t" not in k
            kind = client.type(k)
            values = (client.zrange(k, 0, -1) if kind == "zset" else
                      list(client.hgetall(k).items()) if kind == "hash" else [client.get(k)])
            assert "s3cr3t" not in repr(values)
    finally:
        client.close()


def test_one_behind_is_told_when_the_first_in_line_asks_again_not_to_poll_meanwhile(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    """A process behind others must see the key's real wait (its call loop fails over at once
    when that is too long), not a short poll."""
    process, _clock = fleet
    a, b, c = process(), process(), process()
    assert served(a).fingerprint is not None
    first = served(b)                                       # b waits ~10 s for the window
    assert first.available_at is not None and first.available_at - first.now > 5.0
    behind = served(c)
    assert behind.fingerprint is None and behind.available_at == pytest.approx(
        first.available_at, abs=0.01)
