"""Processes sharing a Redis pool are served in the order they started waiting, on a real
redis-server: a waiter that dies leaves a place that expires, and a Redis that lost the queue
(restarted empty) serves as if there were none."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized

import httpx
import pytest
import redis

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState, options_from_settings
from hermes_core.agent.pool.state import AcquireResult, KeySpec, Outcome, PoolPolicy
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.resilience_policy import LoopPolicy
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import AllProvidersFailed, Attempt, NoCredentialAvailable
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    FakeClock,
    anthropic_message,
    openai_chat_completion,
)
from hermes_core.testing.redis_server import RedisServer
from hermes_core.types import (
    Candidate,
    Credential,
    Message,
    Prompt,
    RouteDecision,
    fingerprint,
)
from tests.agent.conftest import SlowRedis

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


def test_a_process_that_stops_waiting_lets_the_next_be_served_at_once(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    process, clock = fleet
    a, gone, c = process(), process(), process()
    assert served(a).fingerprint is not None
    refused = served(gone)                                  # first in line
    assert refused.fingerprint is None and refused.available_at is not None
    assert served(c).fingerprint is None                    # behind it
    gone.leave(P)                      # its request failed over, timed out, was cancelled
    gone.leave(P)                      # leaving twice is leaving once
    clock.t += refused.available_at - refused.now + 0.1     # the slot frees
    assert served(c).fingerprint == KEY.fingerprint         # not held up by a ghost


def test_a_request_refused_but_not_yet_in_its_wait_keeps_its_process_place(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    """Between a refusal and the wait queue a request is in neither: another request's giving up
    then must not take the place it just got."""
    process, clock = fleet
    b, c = process(), process()
    cred = Credential("openai", "sk-fleet-pool-SECRET-0001", max_rpm=1)
    a = CredentialPool({P: [cred]}, policy=POLICY, backend=process())
    key = KeySpec(cred.fingerprint, max_rpm=1)
    assert b.acquire(P, [key], POLICY).fingerprint is not None
    for _ in range(2):                                      # two requests of a refused
        with pytest.raises(NoCredentialAvailable):
            a.acquire(P)
        a.note_refused(P)
    a.leave(P)                                              # one gives up
    clock.t += 11.0
    assert c.acquire(P, [key], POLICY).fingerprint is None  # a is still first
    a.leave(P)                                              # the other too
    assert c.acquire(P, [key], POLICY).fingerprint == key.fingerprint


def test_an_acquire_is_one_round_trip_whether_the_queue_lets_it_through_or_not(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """The queue's turn, joining and leaving run inside the acquire script."""
    clock = FakeClock(1000.0)
    a, b, c = (RedisPoolState(own_redis.url, clock=clock,
                              options=RedisPoolOptions(key_prefix=redis_prefix))
               for _ in range(3))
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)

    def scripts_run() -> int:      # the commands a script runs inside count too elsewhere
        stats = client.info("commandstats")
        return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("evalsha", "eval"))

    def round_trips(be: RedisPoolState) -> tuple[int, AcquireResult]:
        before = scripts_run()
        res = be.acquire(P, [KEY], POLICY)
        return scripts_run() - before, res

    for be in (a, b, c):      # each loads the script and learns the pool's epoch first
        be.acquire(P, [KeySpec("key-warm-up")], POLICY)
    trips = [round_trips(be) for be in (a, b, c)]   # served; refused: joins; behind b: refused
    clock.t += 11.0
    trips.append(round_trips(b))                    # b's turn: served, leaves
    assert [(n, res.fingerprint) for n, res in trips] == [
        (1, KEY.fingerprint), (1, None), (1, None), (1, KEY.fingerprint)]
    client.close()
def test_the_queue_is_tuned_by_the_credential_pool_settings(redis_url: str) -> None:
    settings = load_settings({"credential_pool": {
        "backend": "redis", "redis_url": redis_url, "redis_fleet_queue": False,
        "redis_queue_grace_s": 5, "redis_queue_poll_s": 0.2}}, env={})
    opts = options_from_settings(settings.credential_pool)
    assert (opts.fleet_queue, opts.queue_grace_s, opts.queue_poll_s) == (False, 5.0, 0.2)
    default = options_from_settings(load_settings({}, env={}).credential_pool)
    assert (default.fleet_queue, default.queue_grace_s, default.queue_poll_s) == (
        RedisPoolOptions().fleet_queue, RedisPoolOptions().queue_grace_s,
        RedisPoolOptions().queue_poll_s)


# ------------------------------------------------------------- through the call loop

PRIMARY_KEY, BACKUP_KEY = "sk-fleet-primary-SECRET-0001", "sk-ant-fleet-backup-SECRET-0003"
PRIMARY_URL = "https://primary.test/v1/chat/completions"
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=5)


def one_key_settings(url: str, prefix: str, pool: dict[str, object] | None = None,
                     **llm: object) -> Settings:
    """A primary with one key of one request a minute, and a backup; ``pool``: more
    ``credential_pool`` settings."""
    return load_settings({
        "llm": {"deadline_s": 120, **llm, "routing": {
            "default_model": "gpt-4o",
            "providers": [
                {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                 "endpoint": "https://primary.test/v1"},
                {"name": "backup", "type": "anthropic", "priority": 2,
                 "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": PRIMARY_KEY, "max_rpm": 1}]},
                        "backup": {"keys": [{"key": BACKUP_KEY}]}},
        "credential_pool": {"backend": "redis", "redis_key_prefix": prefix, **(pool or {})},
    }, env={"HERMES_REDIS_URL": url})


@pytest.fixture
def loops(respx_mock: object, redis_url: str, redis_prefix: str) -> Iterator[
        tuple[Callable[..., CallLoop], FakeClock, Router]]:
    """Call loops standing for processes of one fleet (each its own Redis backend), one clock;
    both providers answer."""
    settings = one_key_settings(redis_url, redis_prefix)
    clock = FakeClock()
    made: list[RedisPoolState] = []
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, json=openai_chat_completion("primary ok")))
    respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, json=anthropic_message("backup ok")))

    def process(deadline_s: float = 120.0, url: str = redis_url,
                pool: dict[str, object] | None = None, **kw: object) -> CallLoop:
        made.append(RedisPoolState(url, clock=clock, options=RedisPoolOptions(
            key_prefix=redis_prefix, socket_timeout_s=10.0)))
        own = one_key_settings(redis_url, redis_prefix, pool, deadline_s=deadline_s)
        pool = CredentialPool.from_settings(own, made[-1], rng=random.Random(1))
        args: dict[str, object] = {"clock": clock, "sleep": clock.sleep, "asleep": clock.asleep,
                                   "rng": random.Random(2), **kw}
        return CallLoop(build_providers(own), pool, own, **args)  # type: ignore[arg-type]

    yield process, clock, Router.from_settings(settings)
    for be in made:
        assert not be.degraded, "the test ran against the local fallback, not Redis"
        be.close()


def primary_only(router: Router) -> RouteDecision:
    decision = router.select("hi")
    return replace(decision, candidates=decision.candidates[:1])


def served_at_once(loop: CallLoop, router: Router, clock: FakeClock) -> None:
    """Once the key's minute is over, ``loop``'s request is served by it with no wait (not
    polling behind another process's place meanwhile)."""
    clock.t += 61.0
    _, attempts = loop.complete(PROMPT, primary_only(router), OPTS)
    assert [(x.provider, x.status) for x in attempts] == [("primary", "ok")]
    assert clock.sleeps == []


def test_a_request_that_fails_over_gives_its_process_place_up(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    process, clock, router = loops
    a, b = process(), process()
    done, _ = b.complete(PROMPT, router.select("hi"), OPTS)      # the minute's one request
    assert done.text == "primary ok"
    _, attempts = a.complete(PROMPT, router.select("hi"), OPTS)
    assert [(x.provider, x.status) for x in attempts] == [
        ("primary", "all_keys_blocked"), ("backup", "ok")]         # a minute: too long to wait
    served_at_once(b, router, clock)


def test_a_request_interrupted_while_it_waits_gives_its_process_place_up(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    process, clock, router = loops

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    a, b = process(sleep=interrupted), process()
    b.complete(PROMPT, router.select("hi"), OPTS)
    with pytest.raises(KeyboardInterrupt):           # a waits for the key: Ctrl-C
        a.complete(PROMPT, primary_only(router), OPTS)
    assert a.pool.waiters.waiting("primary") == 0
    served_at_once(b, router, clock)


def test_a_request_past_its_deadline_gives_its_process_place_up(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    process, clock, router = loops
    a, b = process(deadline_s=30.0), process()
    b.complete(PROMPT, router.select("hi"), OPTS)
    with pytest.raises(AllProvidersFailed):          # waiting a minute would pass the deadline
        a.complete(PROMPT, primary_only(router), OPTS)
    served_at_once(b, router, clock)


def test_a_cancelled_task_gives_its_process_place_up(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    process, clock, router = loops
    forever = asyncio.Event()

    async def stuck(seconds: float) -> None:
        await forever.wait()

    a, b = process(asleep=stuck), process()
    b.complete(PROMPT, router.select("hi"), OPTS)

    async def cancel_while_waiting() -> None:
        task = asyncio.create_task(a.acomplete(PROMPT, primary_only(router), OPTS))
        while a.pool.waiters.waiting("primary") == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_waiting())
    served_at_once(b, router, clock)


def test_a_cancelled_task_gives_its_place_up_while_the_loop_serves_other_tasks(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router], slow_redis: SlowRedis) -> None:
    """Giving the place up is a round trip to Redis: a slow Redis must not hold the event loop
    while it is on its way, and it arrives even though the loop has closed by then."""
    process, clock, router = loops
    forever = asyncio.Event()

    async def stuck(seconds: float) -> None:
        await forever.wait()

    a, b = process(asleep=stuck, url=slow_redis.url), process()
    b.complete(PROMPT, router.select("hi"), OPTS)

    async def cancel_while_waiting() -> int:
        task = asyncio.create_task(a.acomplete(PROMPT, primary_only(router), OPTS))
        while a.pool.waiters.waiting("primary") == 0:
            await asyncio.sleep(0.01)
        slow_redis.delay = 2.0                       # Redis is slow from here
        task.cancel()
        turns = 0                                    # another task's turns on the loop...
        while turns < 50 and slow_redis.held == 0:   # ...while the leave has not reached Redis
            await asyncio.sleep(0)
            turns += 1
        with pytest.raises(asyncio.CancelledError):
            await task
        return turns

    assert asyncio.run(cancel_while_waiting()) == 50
    assert a.pool.drain(30.0)                        # the loop is closed: the leave still went
    assert slow_redis.held > 0
    slow_redis.delay = 0.0
    served_at_once(b, router, clock)


def test_a_request_refused_after_queueing_for_another_provider_keeps_its_process_place(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    """A request of a queues behind another request of a for the backup's key, which is
    rejected meanwhile; it goes on to the primary, is refused there and waits. Its process keeps
    the place the refusal took in the primary's queue, so it is served when the key frees, before
    b, refused after it. It used to give that place up on its way into the wait (taking it for
    the backup's), and went to the back of the line behind b."""
    process, clock, router = loops

    def b_asks_meanwhile(seconds: float) -> None:
        if not clock.sleeps:                         # a's first wait for the primary's key
            with pytest.raises(NoCredentialAvailable):
                b.pool.acquire("primary")            # refused: in line behind a (or before it)
        clock.sleep(seconds)

    b = process()
    a = process(sleep=b_asks_meanwhile)
    b.complete(PROMPT, router.select("hi"), OPTS)    # the primary's one request this minute
    a.pool.waiters.wait("backup", 0.0, 0.0, lambda s: None, hold=True)   # a's other request
    backup_key = a.pool.credentials("backup")[0]

    def rejected_while_a_queues() -> None:
        for _ in range(5000):
            if a.pool.waiters.waiting("backup") == 2:
                break
            time.sleep(0.001)
        a.pool.remove(backup_key, "after HTTP 401")  # another request's 401: wakes the queue

    primary, backup = router.select("hi").candidates
    helper = threading.Thread(target=rejected_while_a_queues)
    helper.start()
    try:
        _, attempts = a.complete(PROMPT, RouteDecision(backup.model, (backup, primary), "test"),
                                 OPTS)
    finally:
        helper.join(10)
        a.pool.waiters.done("backup")
    assert [(x.provider, x.status) for x in attempts] == [("backup", "no_key"),
                                                          ("primary", "ok")]
    assert len(clock.sleeps) == 1                    # served at once when the key freed


def test_a_request_that_fails_over_to_another_model_of_the_same_provider_keeps_its_process_place(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    """A request's candidates are two models of one provider. Refused for the first, whose
    wait is longer than ``max_wait_s`` allows while another candidate remains, it goes on to
    the second, is refused by the same keys and waits. Its process keeps the place its first
    refusal took, so it is served when the key frees, before b, refused between the two. The
    failover gave every place up, though the next candidate wanted the same provider's keys,
    and the request went to the back of the line behind b."""
    process, clock, router = loops

    def b_asks_meanwhile(attempt: Attempt) -> None:
        if attempt.status == "all_keys_blocked":     # a fails over from its first model
            with pytest.raises(NoCredentialAvailable):
                b.pool.acquire("primary")            # refused: in line behind a (or before it)

    b = process()
    a = process(on_attempt=b_asks_meanwhile)
    b.complete(PROMPT, router.select("hi"), OPTS)    # the primary's one request this minute
    two_models = RouteDecision("gpt-4o", (Candidate("primary", "gpt-4o"),
                                          Candidate("primary", "gpt-4o-mini")), "test")
    _, attempts = a.complete(PROMPT, two_models, OPTS)
    assert [(x.model, x.status) for x in attempts] == [("gpt-4o", "all_keys_blocked"),
                                                       ("gpt-4o-mini", "ok")]
    assert len(clock.sleeps) == 1                    # served at once when the key freed


def test_a_request_whose_provider_lost_its_keys_while_it_waited_gives_its_process_place_up(
        loops: tuple[Callable[..., CallLoop], FakeClock, Router]) -> None:
    """While a request of a waits for the primary's key, another request of a has the key
    rejected for good; the waiter goes on to the backup, and its process's place in the
    primary's queue goes with it: b learns at once that no key can serve and fails over. The
    backup's grant was taken for the primary's (it said the grant had left the line already),
    and b polled behind the place until its grace ran out."""
    process, clock, router = loops

    def rejected_meanwhile(seconds: float) -> None:
        a.pool.remove(a.pool.credentials("primary")[0], "after HTTP 401")
        clock.sleep(seconds)

    a = process(sleep=rejected_meanwhile, policy=LoopPolicy(max_wait_s=90.0),
                pool={"auth_max_strikes": 1})
    b = process()
    b.complete(PROMPT, router.select("hi"), OPTS)    # the primary's one request this minute
    _, attempts = a.complete(PROMPT, router.select("hi"), OPTS)
    assert [(x.provider, x.status) for x in attempts] == [("primary", "no_key"),
                                                          ("backup", "ok")]
    clock.sleeps.clear()
    _, attempts = b.complete(PROMPT, router.select("hi"), OPTS)
    assert [(x.provider, x.status) for x in attempts] == [("primary", "no_key"),
                                                          ("backup", "ok")]
    assert clock.sleeps == []


def test_a_process_with_another_request_still_waiting_keeps_its_place(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    """Only the process's last waiter to stop waiting gives its place up."""
    process, clock = fleet
    b, c = process(), process()
    cred = Credential("openai", "sk-fleet-pool-SECRET-0001", max_rpm=1)
    a = CredentialPool({P: [cred]}, policy=POLICY, backend=process())
    key = KeySpec(cred.fingerprint, max_rpm=1)
    first = b.acquire(P, [key], POLICY)
    assert first.fingerprint is not None
    with pytest.raises(NoCredentialAvailable):
        a.acquire(P)                                        # a's process is first in line
    asleep, go = threading.Event(), threading.Event()

    def sleep(seconds: float) -> None:
        asleep.set()
        go.wait(10)

    waiter = threading.Thread(target=a.waiters.wait, args=(P, 5.0, 5.0, sleep))
    waiter.start()                                          # another request of a waits on
    assert asleep.wait(10)
    a.leave(P)                                              # one request of a gives up
    clock.t += 11.0
    assert c.acquire(P, [key], POLICY).fingerprint is None  # a is still first
    go.set()
    waiter.join(10)
    a.leave(P)                                              # the last gives up
    assert c.acquire(P, [key], POLICY).fingerprint == key.fingerprint


def test_a_direct_caller_that_stops_waiting_in_its_place_lets_the_next_be_served_at_once(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock]) -> None:
    """Code of its own calling ``acquire`` (not the call loop) waits in ``pool.place``: when it
    stops waiting, sync or as a cancelled task, its process's place goes with it."""
    process, clock = fleet
    cred = Credential("openai", "sk-fleet-direct-SECRET-0001", max_rpm=1)
    key = KeySpec(cred.fingerprint, max_rpm=1)
    b, c = process(), process()
    a = CredentialPool({P: [cred]}, policy=POLICY, backend=process())
    forever = asyncio.Event()

    async def waits_in_a_task() -> None:
        async with a.place(P) as place:
            while True:
                try:
                    a.release(await place.aacquire())
                    return
                except NoCredentialAvailable:
                    await forever.wait()            # its own sleep until the key frees

    async def cancelled_while_it_waits() -> None:
        task = asyncio.create_task(waits_in_a_task())
        while a.waiters.waiting(P) == 0 and not a._refused[P]:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    for gives_up in ("sync", "async"):
        assert b.acquire(P, [key], POLICY).fingerprint is not None   # the window's one request
        if gives_up == "sync":
            with a.place(P) as place, pytest.raises(NoCredentialAvailable):
                place.acquire()                     # refused: its process is first in line
        else:
            asyncio.run(cancelled_while_it_waits())
        assert a.drain(10.0)
        assert c.acquire(P, [key], POLICY).fingerprint is None       # still the window's
        clock.t += 11.0
        assert c.acquire(P, [key], POLICY).fingerprint == key.fingerprint   # not behind a
        clock.t += 11.0


def test_a_direct_caller_served_in_its_place_leaves_none_behind(
        fleet: tuple[Callable[[], RedisPoolState], FakeClock], redis_url: str,
        redis_prefix: str) -> None:
    process, clock = fleet
    cred = Credential("openai", "sk-fleet-direct-SECRET-0002", max_rpm=1)
    b = process()
    a = CredentialPool({P: [cred]}, policy=POLICY, backend=process())
    assert b.acquire(P, [KeySpec(cred.fingerprint, max_rpm=1)], POLICY).fingerprint is not None
    with a.place(P) as place:
        with pytest.raises(NoCredentialAvailable):
            place.acquire()
        clock.t += 11.0
        a.success(place.acquire())
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    queued = [k for k in client.scan_iter(f"{redis_prefix}:*")
              if k.endswith((":q", ":qx")) and client.zcard(k)]
    client.close()
    assert queued == [] and a._refused[P] == 0


#: The key's window in the spawned-children test, on the test's clock (:class:`SharedClock`).
#: Long next to Redis's own real-time expiries of the window (its length plus a second): a
#: child slowed by load asks while the test's clock stands still, its window still there.
CHILD_WINDOW = PoolPolicy(window_s=60.0)


class SharedClock:
    """Redis ``TIME`` as the test sets it (the backends' ``clock``), one value read by the test
    and its spawned children alike: the key's window and the queue's places end when the test
    moves it, not when the wall clock does. On wall time, a child that a loaded machine held
    up past the key's window asked after it had freed, and was served."""

    def __init__(self, value: Synchronized[float]) -> None:
        self.value = value

    def __call__(self) -> float:
        return float(self.value.value)


def _waits_by_hand(url: str, prefix: str, conn: Connection, now: Synchronized[float]) -> None:
    """A process whose own code (no call loop) waits in its place for the key, gives up, and
    stays alive until told to end."""
    pool = CredentialPool({P: [Credential(P, PRIMARY_KEY, max_rpm=1)]}, policy=CHILD_WINDOW,
                          backend=RedisPoolState(url, clock=SharedClock(now),
                                                 options=RedisPoolOptions(key_prefix=prefix)))
    conn.send("ready")
    conn.recv()                                       # the key's one request is taken
    try:
        with pool.place(P) as place:
            place.acquire()
        conn.send("served")
    except NoCredentialAvailable:
        conn.send(["all_keys_blocked"])               # it stops waiting here
    except Exception as e:                            # say it, or the test waits for nothing
        conn.send(repr(e))
    conn.recv()


def _gives_up(url: str, prefix: str, conn: Connection, now: Synchronized[float]) -> None:
    """A process whose one request gives up on the key (waiting would pass its deadline), then
    stays alive until told to end: its place must go with the request, not with the process.
    Its deadline runs on a clock of its own that stands still: however slow the child, it is
    the wait the pool names that passes the deadline."""
    settings = load_settings({
        "llm": {"deadline_s": 1, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": P, "type": "openai", "models": ["gpt-4o"],
             "endpoint": "http://127.0.0.1:9/v1"}]}},        # never reached: no key is free
        "credentials": {P: {"keys": [{"key": PRIMARY_KEY, "max_rpm": 1}]}},
        "credential_pool": {"backend": "redis", "redis_key_prefix": prefix,
                            "window_s": CHILD_WINDOW.window_s},
    }, env={"HERMES_REDIS_URL": url})
    backend = RedisPoolState(url, clock=SharedClock(now),
                             options=options_from_settings(settings.credential_pool))
    own = FakeClock()
    loop = CallLoop.from_settings(settings, pool=CredentialPool.from_settings(settings, backend),
                                  clock=own, sleep=own.sleep, asleep=own.asleep)
    conn.send("ready")
    conn.recv()                                       # the key's one request is taken
    try:
        loop.complete(PROMPT, Router.from_settings(settings).select("hi"), OPTS)
        conn.send("served")
    except AllProvidersFailed as e:
        conn.send([a.status for a in e.attempts])
    conn.recv()


def _dies_waiting(url: str, prefix: str, conn: Connection, now: Synchronized[float]) -> None:
    be = RedisPoolState(url, clock=SharedClock(now),
                        options=RedisPoolOptions(key_prefix=prefix, queue_grace_s=0.5))
    conn.send("ready")
    conn.recv()
    res = be.acquire(P, [KeySpec(fingerprint(PRIMARY_KEY), max_rpm=1)], CHILD_WINDOW)
    conn.send(res.fingerprint)                        # refused: queued, then killed -9
    conn.recv()


def test_real_processes_a_request_that_gives_up_frees_the_place_one_killed_holds_it_a_bounded_time(
        redis_url: str, redis_prefix: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    now = ctx.Value("d", 1_700_000_000.0)
    key, policy = KeySpec(fingerprint(PRIMARY_KEY), max_rpm=1), CHILD_WINDOW
    here = RedisPoolState(redis_url, clock=SharedClock(now),
                          options=RedisPoolOptions(key_prefix=redis_prefix))

    def take() -> AcquireResult:
        res = here.acquire(P, [key], policy)
        if res.fingerprint is not None:
            here.release(P, res.fingerprint, Outcome("ok"), policy, lease=res.lease)
        return res

    for target in (_gives_up, _waits_by_hand, _dies_waiting):
        mine, theirs = ctx.Pipe()
        child = ctx.Process(target=target, args=(redis_url, redis_prefix, theirs, now))
        child.start()
        try:
            assert mine.poll(120) and mine.recv() == "ready"
            first = take()
            assert first.fingerprint is not None
            mine.send("go")
            assert mine.poll(60)
            said = mine.recv()
            assert said in (["all_keys_blocked"], None)   # it waited for nothing / is queued
            if target is _dies_waiting:
                os.kill(child.pid, signal.SIGKILL)          # type: ignore[arg-type]
            now.value += policy.window_s + 0.1              # the key's window is over
            if target is not _dies_waiting:
                assert child.is_alive()                     # the request left, not the process
                assert take().fingerprint == key.fingerprint    # at once
            else:
                assert take().fingerprint is None           # the dead one's place holds...
                now.value += 0.7                            # ...until its grace runs out
                assert take().fingerprint == key.fingerprint
            now.value += policy.window_s + 0.1              # the next round starts free
        finally:
            if child.is_alive():
                mine.send("end")
            child.join(30)
    here.close()


def test_a_process_the_queue_refused_keeps_to_its_share_once_redis_goes(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A process refused by the queue (another waits first) heard nothing of the key's window,
    and while Redis was then away it spent its share from the window as its last grant showed
    it: a's 1 of 4, then b filled the window, then a was turned away by the queue; Redis stopped,
    a sent another and the fleet 5 in a window of 4 (no queue: 4). The queue's refusal now says
    the keys' windows as the pool's refusal does."""
    clock = FakeClock(1000.0)
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0)
    key = KeySpec("key-fleet", max_rpm=4)
    a, b = (RedisPoolState(own_redis.url, clock=clock, options=opts) for _ in range(2))
    sent = {"a": 0, "b": 0}

    def take(name: str, be: RedisPoolState) -> bool:
        res = be.acquire(P, [key], POLICY)
        if res.fingerprint is None:
            return False
        be.release(P, res.fingerprint, Outcome("ok"), POLICY, lease=res.lease)
        sent[name] += 1
        return True

    assert take("a", a)
    while take("b", b):                  # b fills the window, then waits in the queue
        assert sent["b"] <= 4
    assert not take("a", a)              # the queue's refusal: b waits first
    own_redis.stop()
    for name, be in (("a", a), ("b", b)):
        while take(name, be):
            assert sum(sent.values()) <= 8
        assert be.degraded
    assert sent == {"a": 1, "b": 3}
    for be in (a, b):
        be.close()
