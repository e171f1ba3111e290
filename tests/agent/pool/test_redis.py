"""Tests of ``hermes_core/agent/pool/redis.py``.

RedisPoolState on a real redis-server: the Lua port matches the pure decisions, windows slide,
leases expire, every key has a TTL, no secret reaches Redis, bad config is a clear error.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
import redis

from hermes_core.agent.credential_pool import CredentialPool, backend_from_settings
from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.quarantine import Standing, merge_standing
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import STRATEGIES, InMemoryPoolState, KeySpec, Outcome, PoolPolicy
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import CredentialPoolSettings, Settings, load_settings
from hermes_core.errors import ConfigError
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    FakeClock,
    anthropic_message,
    openai_chat_completion,
    openai_error,
)
from hermes_core.types import Credential, Message, Prompt
from tests.agent.pool.conftest import Mono, ReplyLost, logged_messages


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_700_000_000.25)


@pytest.fixture
def pool(redis_url: str, redis_prefix: str, clock: FakeClock) -> Iterator[RedisPoolState]:
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix, lease_ttl_s=120),
                        clock=clock)
    yield be
    assert not be.degraded
    be.close()


def test_redis_uses_server_time_by_default(redis_url: str, redis_prefix: str) -> None:
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    res = be.acquire("p", [KeySpec("a")], PoolPolicy())
    assert res.fingerprint == "a"
    assert abs(res.now - time.time()) < 5.0
    assert abs(be.now() - res.now) < 5.0
    be.close()


def test_redis_rpm_window_slides(pool: RedisPoolState, clock: FakeClock) -> None:
    keys = [KeySpec("a", max_rpm=2)]
    pol = PoolPolicy(window_s=60.0)
    t0 = clock.t
    assert pool.acquire("p", keys, pol).fingerprint == "a"
    clock.t += 10
    assert pool.acquire("p", keys, pol).fingerprint == "a"
    clock.t += 1
    res = pool.acquire("p", keys, pol)
    assert res.fingerprint is None and res.available_at == t0 + 60.0
    clock.t = t0 + 59.999
    assert pool.acquire("p", keys, pol).fingerprint is None
    clock.t = t0 + 60.0  # the first request leaves the window exactly now
    assert pool.acquire("p", keys, pol).fingerprint == "a"
    assert pool.snapshot("p", keys, pol).keys[0].requests_in_window == 2


def test_redis_tpm_window(pool: RedisPoolState, clock: FakeClock) -> None:
    keys = [KeySpec("a", max_tpm=100)]
    pol = PoolPolicy(window_s=60.0)
    t0 = clock.t
    assert pool.acquire("p", keys, pol, tokens=60).fingerprint == "a"
    clock.t += 5
    assert pool.acquire("p", keys, pol, tokens=30).fingerprint == "a"
    res = pool.acquire("p", keys, pol, tokens=20)
    assert res.fingerprint is None and res.available_at == t0 + 60.0
    assert pool.acquire("p", keys, pol, tokens=10).fingerprint == "a"
    assert pool.snapshot("p", keys, pol).keys[0].tokens_in_window == 100


def test_redis_leases_of_a_crashed_worker_expire(pool: RedisPoolState, clock: FakeClock) -> None:
    keys = [KeySpec("a"), KeySpec("b")]
    pol = PoolPolicy(strategy="least_loaded")
    assert pool.acquire("p", keys, pol).fingerprint == "a"  # never released: the worker "died"
    assert pool.acquire("p", keys, pol).fingerprint == "b"
    pool.release("p", "b", Outcome("ok"), pol)
    assert [k.in_flight for k in pool.snapshot("p", keys, pol).keys] == [1, 0]
    assert pool.acquire("p", keys, pol).fingerprint == "b"  # a still looks busy
    pool.release("p", "b", Outcome("ok"), pol)
    clock.t += 121  # past lease_ttl_s
    assert [k.in_flight for k in pool.snapshot("p", keys, pol).keys] == [0, 0]


def test_redis_every_key_has_a_ttl_and_no_secret(pool: RedisPoolState, rds: redis.Redis,
                                                 redis_prefix: str) -> None:
    secrets = ["sk-live-0123456789abcdefSECRET", "sk-live-zyxwvutsrqSECRET2"]
    creds = [Credential("openai", s, max_rpm=10, max_tpm=1000) for s in secrets]
    keys = [KeySpec(c.fingerprint, c.weight, c.max_rpm, c.max_tpm) for c in creds]
    pol = PoolPolicy(breaker_failures=3)
    for outcome in (Outcome("ok"), Outcome("failure"), Outcome("rate_limited", 30.0),
                    Outcome("removed")):
        res = pool.acquire("openai", keys, pol, tokens=5)
        assert res.fingerprint is not None
        pool.release("openai", res.fingerprint, outcome, pol)
    names = sorted(rds.scan_iter(match=f"{redis_prefix}:*"))
    assert len(names) >= 6
    dump = []
    for name in names:
        assert rds.pttl(name) > 0, f"{name} has no TTL"
        kind = rds.type(name)
        if kind == "hash":
            dump.append(repr(rds.hgetall(name)))
        elif kind == "zset":
            dump.append(repr(rds.zrange(name, 0, -1, withscores=True)))
    blob = "\n".join(names + dump)
    for secret in secrets:
        assert secret not in blob and secret[:12] not in blob
    assert all(c.fingerprint in blob for c in creds)


def test_redis_breaker_half_open_single_probe(pool: RedisPoolState, clock: FakeClock) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy(breaker_failures=2, breaker_cooldown_s=30.0)
    for _ in range(2):
        assert pool.acquire("p", keys, pol).fingerprint == "a"
        pool.release("p", "a", Outcome("failure"), pol)
    res = pool.acquire("p", keys, pol)
    assert res.fingerprint is None and res.available_at == clock.t + 30.0
    clock.t += 30.0
    probe = pool.acquire("p", keys, pol)
    assert probe.fingerprint == "a" and probe.probe
    assert pool.acquire("p", keys, pol).fingerprint is None  # only one probe at a time
    pool.release("p", "a", Outcome("ok"), pol)
    snap = pool.snapshot("p", keys, pol)
    assert snap.keys[0].breaker.mode == "closed" and snap.breaker.mode == "closed"
    assert pool.acquire("p", keys, pol).fingerprint == "a"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_redis_lua_matches_the_pure_decisions(redis_url: str, redis_prefix: str,
                                              strategy: str) -> None:
    """A seeded random walk of acquires, outcomes and clock steps gives identical answers from the
    Lua scripts and the in-memory backend (which calls the pure functions)."""
    clock = FakeClock(1_700_000_000.25)
    mem = InMemoryPoolState(clock)
    red = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix), clock=clock)
    rng = random.Random(f"parity-{strategy}")
    keys = [KeySpec("a", 3.0, max_rpm=6), KeySpec("b", 1.0, max_rpm=4, max_tpm=400),
            KeySpec("c", 2.0, max_tpm=300), KeySpec("d", 0.5)]
    pol = PoolPolicy(strategy=strategy, window_s=20.0, breaker_failures=2,  # type: ignore[arg-type]
                     breaker_cooldown_s=7.0, default_cooldown_s=11.0)
    held: list[str] = []
    kinds = ["ok", "rate_limited", "failure", "released", "removed"]
    weights = [55, 15, 15, 14, 1]
    for step in range(400):
        if rng.random() < 0.3:
            clock.t += rng.choice([0.25, 1.0, 3.5, 8.0])
        if held and rng.random() < 0.5:
            fp = held.pop(rng.randrange(len(held)))
            kind = rng.choices(kinds, weights)[0]
            ra = rng.choice([None, 0.0, 2.5, 15.0]) if kind == "rate_limited" else None
            out = Outcome(kind, ra)  # type: ignore[arg-type]
            assert red.release("p", fp, out, pol) == mem.release("p", fp, out, pol), step
        else:
            tokens, rand = rng.choice([0, 10, 120, 350]), rng.random()
            a = mem.acquire("p", keys, pol, tokens=tokens, rand=rand)
            b = red.acquire("p", keys, pol, tokens=tokens, rand=rand)
            assert replace(b, lease="") == replace(a, lease=""), step  # lease ids differ in kind
            if a.fingerprint is not None:
                held.append(a.fingerprint)
        if step % 50 == 0:
            assert red.snapshot("p", keys, pol) == mem.snapshot("p", keys, pol), step
    assert red.snapshot("p", keys, pol) == mem.snapshot("p", keys, pol)
    assert not red.degraded
    red.close()


def test_redis_backend_from_settings(redis_url: str) -> None:
    assert isinstance(backend_from_settings(load_settings({}, env={})), InMemoryPoolState)
    settings = load_settings({"llm": {"deadline_s": 10}, "credential_pool": {
        "backend": "redis", "redis_key_prefix": "hermes-test:build", "workers": 3,
        "redis_lease_ttl_s": 42.0}}, env={"HERMES_REDIS_URL": redis_url})
    be = backend_from_settings(settings)
    assert isinstance(be, RedisPoolState)
    assert be.options.workers == 3 and be.options.lease_ttl_s == 42.0
    assert be.options.key_prefix == "hermes-test:build"
    assert be.acquire("p", [KeySpec("a")], PoolPolicy()).fingerprint == "a"
    be.close()


@pytest.mark.parametrize(("deadline_s", "lease_ttl_s"), [(600.0, None), (120.0, 60.0),
                                                        (3600.0, 900.0)])
def test_a_lease_outlives_the_request_deadline_it_was_taken_under(
        redis_url: str, deadline_s: float, lease_ttl_s: float | None) -> None:
    """A lease that expires while its request still runs stops counting it in flight: under
    ``deadline_s: 600`` the default 300 s lease let a key with ``max_in_flight_per_key`` take
    more requests than that for the last five minutes of a long call, fleet wide."""
    cp: dict[str, object] = {"backend": "redis", "redis_key_prefix": "hermes-test:lease"}
    if lease_ttl_s is not None:
        cp["redis_lease_ttl_s"] = lease_ttl_s
    settings = load_settings({"llm": {"deadline_s": deadline_s}, "credential_pool": cp},
                             env={"HERMES_REDIS_URL": redis_url})
    be = backend_from_settings(settings)
    assert isinstance(be, RedisPoolState)
    assert be.options.lease_ttl_s > deadline_s
    be.close()


def test_redis_missing_or_bad_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"credential_pool\.redis_url"):
        backend_from_settings(load_settings({"credential_pool": {"backend": "redis"}}, env={}))
    with pytest.raises(ConfigError, match=r"credential_pool\.redis_url") as err:
        RedisPoolState("http://:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(err.value)


def test_redis_bad_settings_name_the_key() -> None:
    with pytest.raises(ValueError, match="redis_lease_ttl_s"):
        CredentialPoolSettings(redis_lease_ttl_s=0)
    with pytest.raises(ValueError, match="redis_key_prefix"):
        CredentialPoolSettings(redis_key_prefix="")


def test_redis_unknown_strategy_is_refused(pool: RedisPoolState) -> None:
    with pytest.raises(ValueError, match="unknown rotation strategy"):
        pool.acquire("p", [KeySpec("a")], PoolPolicy(strategy="bogus"))  # type: ignore[arg-type]


K1, K2 = "sk-shared-one-SECRET-0001", "sk-shared-two-SECRET-0002"


K3 = "sk-ant-backup-SECRET-0003"


PRIMARY_URL = "https://primary.test/v1/chat/completions"


PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


OPTS = CallOptions(max_tokens=32, timeout_s=5)


def shared_settings(url: str) -> Settings:
    return load_settings({
        "llm": {"deadline_s": 120, "routing": {
            "default_model": "gpt-4o",
            "providers": [
                {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                 "endpoint": "https://primary.test/v1"},
                {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": K1}, {"key": K2}]},
                        "backup": {"keys": [{"key": K3}]}},
        "credential_pool": {"rotation": "fill_first", "backend": "redis", "workers": 2},
    }, env={"HERMES_REDIS_URL": url})


def worker(settings: Settings, prefix: str, clock: FakeClock) -> tuple[CallLoop, RedisPoolState]:
    backend = RedisPoolState(settings.credential_pool.redis_url, clock=clock,
                             options=RedisPoolOptions(key_prefix=prefix, workers=2))
    pool = CredentialPool.from_settings(settings, backend, rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2))
    return loop, backend


def key_of(request: httpx.Request) -> str:
    auth = request.headers.get("authorization", "")
    return auth.removeprefix("Bearer ").strip() or request.headers.get("x-api-key", "")


def test_redis_workers_share_429s_and_removals_through_the_call_loop(
        respx_mock, redis_url: str, redis_prefix: str,
        caplog: pytest.LogCaptureFixture) -> None:
    settings = shared_settings(redis_url)
    clock = FakeClock()
    a, backend_a = worker(settings, redis_prefix, clock)
    b, backend_b = worker(settings, redis_prefix, clock)
    router = Router.from_settings(settings)
    answers = {
        K1: lambda: httpx.Response(429, json=openai_error(429), headers={"retry-after": "30"}),
        K2: lambda: httpx.Response(200, json=openai_chat_completion("primary ok", model="gpt-4o")),
    }
    primary = respx_mock.post(PRIMARY_URL).mock(side_effect=lambda r: answers[key_of(r)]())
    backup = respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: httpx.Response(
        200, json=anthropic_message("backup ok", model="claude-haiku")))

    done, attempts = a.complete(PROMPT, router.select("hi"), OPTS)
    assert done.text == "primary ok" and [x.status for x in attempts] == ["429", "ok"]
    for _ in range(3):  # worker B never sends to the key worker A saw a 429 on
        done, attempts = b.complete(PROMPT, router.select("hi"), OPTS)
        assert done.text == "primary ok" and [x.status for x in attempts] == ["ok"]
    assert [key_of(c.request) for c in primary.calls] == [K1, K2, K2, K2, K2]

    answers[K2] = lambda: httpx.Response(401, json=openai_error(401, "Incorrect API key"))
    with caplog.at_level("WARNING"):
        done, _ = b.complete(PROMPT, router.select("hi"), OPTS)
        assert done.provider == "backup"
        done, attempts = a.complete(PROMPT, router.select("hi"), OPTS)
    # worker A goes straight to the backup: K1 still blocked, K2 quarantined by worker B
    assert done.provider == "backup"
    assert [(x.provider, x.status, x.key_fingerprint is None) for x in attempts] == [
        ("primary", "all_keys_blocked", True), ("backup", "ok", False)]
    assert [key_of(c.request) for c in primary.calls].count(K2) == 5
    assert backup.call_count == 2 and clock.sleeps == []
    states = {s.state for s in a.pool.status(["primary"])}
    assert states == {"blocked", "quarantined"}
    alerts = [r for r in caplog.records if "credential alert" in r.getMessage()]
    assert len(alerts) == 1  # the quarantine alerts once across both workers
    assert all(k not in caplog.text for k in (K1, K2, K3))
    assert not backend_a.degraded and not backend_b.degraded


OPEN_1 = BreakerState("open", 0, 1030.0)


OPEN_2 = BreakerState("open", 0, 1090.0)


@pytest.mark.parametrize(("held", "merged_in"), [
    (Standing(), Standing(1, OPEN_1)),
    (Standing(1, OPEN_1), Standing(2, OPEN_2)),
    (Standing(2, OPEN_2), Standing(1, OPEN_1)),
    (Standing(1, BreakerState("half_open", 0, 1065.0)), Standing(2, OPEN_2)),
    (Standing(0, BreakerState("open", 5, 1100.0)), Standing(1, OPEN_1)),
    (Standing(3, OPEN_1), Standing(8, OPEN_2, removed=True)),
    (Standing(1, OPEN_1), Standing()),
])
def test_redis_merge_of_a_standing_matches_merge_standing(
        redis_url: str, redis_prefix: str, held: Standing, merged_in: Standing) -> None:
    """MERGE (what a worker hands back to Redis) is the port of quarantine.merge_standing."""
    clock = FakeClock(1000.0)
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix),
                        clock=clock)
    keys = [KeySpec("a")]
    be._merge_back({}, {}, {("p", "a"): held})
    be._merge_back({}, {}, {("p", "a"): merged_in})
    k = be.snapshot("p", keys, PoolPolicy()).keys[0]
    assert Standing(k.auth_strikes, k.breaker, k.removed) == merge_standing(held, merged_in)
    be.close()


def test_an_acquire_run_twice_after_a_lost_reply_holds_one_key(lossy: RedisPoolState) -> None:
    """The first run took a key and moved the round-robin cursor; the retry took the next key.
    The first key stayed in flight, nobody to release it, until its lease expired (five
    minutes, with a cap of one in flight: the key out of use), and counted a request never sent."""
    keys = [KeySpec("a"), KeySpec("b")]
    policy = PoolPolicy(strategy="round_robin")
    first = lossy.acquire("p", keys, policy)      # learns the pool state's incarnation
    assert first.fingerprint is not None
    lossy.release("p", first.fingerprint, Outcome("ok"), policy, lease=first.lease)
    ReplyLost.lose = {lossy._acquire.sha: 1}
    got = lossy.acquire("p", keys, policy)
    assert got.fingerprint is not None and not lossy.degraded
    snap = {k.fingerprint: k for k in lossy.snapshot("p", keys, policy).keys}
    assert sum(k.in_flight for k in snap.values()) == 1
    assert sum(k.requests_in_window for k in snap.values()) == 2
    lossy.release("p", got.fingerprint, Outcome("ok"), policy, lease=got.lease)
    snap = {k.fingerprint: k for k in lossy.snapshot("p", keys, policy).keys}
    assert all(k.in_flight == 0 for k in snap.values())


def test_a_release_run_twice_after_a_lost_reply_counts_its_outcome_once(
        lossy: RedisPoolState) -> None:
    """One failure counted twice opened a breaker that needed two."""
    keys = [KeySpec("a")]
    policy = PoolPolicy(breaker_failures=2)
    got = lossy.acquire("p", keys, policy)
    assert got.fingerprint == "a"
    ReplyLost.lose = {lossy._release.sha: 1}
    lossy.release("p", "a", Outcome("failure"), policy, lease=got.lease)
    assert not lossy.degraded
    (key,) = lossy.snapshot("p", keys, policy).keys
    assert key.breaker.mode == "closed" and key.breaker.failures == 1
    assert lossy.acquire("p", keys, policy).fingerprint == "a"


def test_an_acquire_whose_reply_never_came_leaves_no_lease_in_redis(lossy: RedisPoolState) -> None:
    """Both runs' replies lost: the request is served by the local fallback, while the key
    Redis handed out stayed in flight until its lease expired, and its window counted the
    request twice once the fallback's requests were merged back."""
    keys = [KeySpec("a"), KeySpec("b")]
    policy = PoolPolicy()
    first = lossy.acquire("p", keys, policy)
    assert first.fingerprint is not None
    lossy.release("p", first.fingerprint, Outcome("ok"), policy, lease=first.lease)
    ReplyLost.lose = {lossy._acquire.sha: 2}
    got = lossy.acquire("p", keys, policy)
    assert lossy.degraded and got.fingerprint is not None
    lossy.release("p", got.fingerprint, Outcome("ok"), policy, lease=got.lease)
    assert not lossy.degraded                 # the release found Redis back
    snap = lossy.snapshot("p", keys, policy).keys
    assert [k.in_flight for k in snap] == [0, 0]
    assert sum(k.requests_in_window for k in snap) == 2


def test_data_of_another_kind_under_the_prefix_is_served_around_with_one_warning_naming_it(
        redis_url: str, redis_prefix: str, rds: redis.Redis,
        caplog: pytest.LogCaptureFixture) -> None:
    """Another program, or another hermes-core version, keeping other kinds of values under the
    pool's prefix: no Redis traceback out of a turn and no crash, the local fallback serves, one
    warning names the key and what to do, and the pool rejoins Redis once the key is gone."""
    mono = Mono()
    be = RedisPoolState(redis_url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=1.0))
    keys, pol = [KeySpec("key-a", max_rpm=5)], PoolPolicy()
    first = be.acquire("p", keys, pol)
    be.release("p", "key-a", Outcome("ok"), pol, lease=first.lease)
    state = f"{redis_prefix}:{{p}}:k:key-a"
    rds.delete(state)
    rds.set(state, '{"schema": 9, "blocked": false}')      # a later version's JSON string
    caplog.set_level(logging.WARNING, logger="hermes_core.agent.pool.redis")
    for _ in range(3):
        held = be.acquire("p", keys, pol)
        assert held.fingerprint == "key-a" and be.degraded
        be.release("p", "key-a", Outcome("ok"), pol, lease=held.lease)
        mono.t += 1.0      # each probe finds the key still there: not rejoined, not re-warned
    msgs = logged_messages(caplog)
    assert len(msgs) == 1 and be.outages == 1, msgs
    assert state in msgs[0] and "credential_pool.redis_key_prefix" in msgs[0], msgs[0]
    rds.delete(state)
    held = be.acquire("p", keys, pol)
    assert held.fingerprint == "key-a" and not be.degraded
    be.release("p", "key-a", Outcome("ok"), pol, lease=held.lease)
    be.close()


@pytest.mark.parametrize("first_hold,second_hold", [
    (None, 0.0),    # a caller's own acquire (the whole TTL), then a loop request near its deadline
    (60.0, 0.0),    # two loop requests, the later one with less of its deadline left
])
def test_a_short_lease_does_not_expire_the_longer_ones_beside_it(
        redis_url: str, redis_prefix: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
        first_hold: float | None, second_hold: float) -> None:
    """A key's leases are one sorted set, and each acquire set its expiry to the new lease's TTL.
    With every lease the backend's TTL that only ever moved it later; with a lease bounded by
    its request's deadline (decision 234), a request late in its deadline cut the set's expiry
    short, and when it passed Redis dropped every lease in it: the requests still running no
    longer counted, and ``max_in_flight`` let as many again out. The margin is shortened here so
    the set's expiry passes in a moment (Redis expires by its own clock)."""
    monkeypatch.setattr("hermes_core.agent.pool.state.LEASE_MARGIN_S", 0.2)
    be = RedisPoolState(redis_url, clock=clock, options=RedisPoolOptions(
        key_prefix=redis_prefix, lease_ttl_s=300.0))
    keys = [KeySpec("a")]
    pol = PoolPolicy(max_in_flight=2)
    assert be.acquire("p", keys, replace(pol, hold_s=first_hold)).fingerprint == "a"
    assert be.acquire("p", keys, replace(pol, hold_s=second_hold)).fingerprint == "a"
    time.sleep(1.4)   # the set's expiry, 0.2 s and the second Redis rounds on (ms()), is over
    clock.advance(1.4)
    # the second request's lease has run out, the first's has not: one slot, not two
    assert be.acquire("p", keys, pol).fingerprint == "a"
    assert be.acquire("p", keys, pol).fingerprint is None
    be.close()
