"""RedisPoolState on a real redis-server: the Lua port matches the pure decisions, windows slide,
leases expire, every key has a TTL, no secret reaches Redis, bad config is a clear error."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
import redis
from redis_server import redis_prefix, redis_url  # noqa: F401

from hermes_core.agent.credential_pool import backend_from_settings
from hermes_core.agent.pool.redis import (
    RedisPoolOptions,
    RedisPoolState,
    redact_url,
)
from hermes_core.agent.pool.state import (
    STRATEGIES,
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
)
from hermes_core.config import CredentialPoolSettings, load_settings
from hermes_core.errors import ConfigError
from hermes_core.types import Credential


class Clock:
    def __init__(self, t: float = 1_700_000_000.25) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def rds(redis_url: str) -> Iterator[redis.Redis]:  # noqa: F811
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def pool(redis_url: str, redis_prefix: str, clock: Clock) -> Iterator[RedisPoolState]:  # noqa: F811
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix, lease_ttl_s=120),
                        clock=clock)
    yield be
    assert not be.degraded
    be.close()


def test_redis_uses_server_time_by_default(redis_url: str, redis_prefix: str) -> None:  # noqa: F811
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    res = be.acquire("p", [KeySpec("a")], PoolPolicy())
    assert res.fingerprint == "a"
    assert abs(res.now - time.time()) < 5.0
    assert abs(be.now() - res.now) < 5.0
    be.close()


def test_redis_rpm_window_slides(pool: RedisPoolState, clock: Clock) -> None:
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


def test_redis_tpm_window(pool: RedisPoolState, clock: Clock) -> None:
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


def test_redis_leases_of_a_crashed_worker_expire(pool: RedisPoolState, clock: Clock) -> None:
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
                                                 redis_prefix: str) -> None:  # noqa: F811
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


def test_redis_breaker_half_open_single_probe(pool: RedisPoolState, clock: Clock) -> None:
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
def test_redis_lua_matches_the_pure_decisions(redis_url: str, redis_prefix: str,  # noqa: F811
                                              strategy: str) -> None:
    """A seeded random walk of acquires, outcomes and clock steps gives identical answers from the
    Lua scripts and the in-memory backend (which calls the pure functions)."""
    clock = Clock()
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


def test_redis_backend_from_settings(redis_url: str) -> None:  # noqa: F811
    assert isinstance(backend_from_settings(load_settings({}, env={})), InMemoryPoolState)
    settings = load_settings({"credential_pool": {
        "backend": "redis", "redis_key_prefix": "hermes-test:build", "workers": 3,
        "redis_lease_ttl_s": 42.0}}, env={"HERMES_REDIS_URL": redis_url})
    be = backend_from_settings(settings)
    assert isinstance(be, RedisPoolState)
    assert be.options.workers == 3 and be.options.lease_ttl_s == 42.0
    assert be.options.key_prefix == "hermes-test:build"
    assert be.acquire("p", [KeySpec("a")], PoolPolicy()).fingerprint == "a"
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


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:s3cret@10.0.0.5:6379/0", "redis://***@10.0.0.5:6379/0"),
    ("redis://user:s3cret@cache/1", "redis://***@cache/1"),
    ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
])
def test_redis_url_redaction(url: str, shown: str) -> None:
    assert redact_url(url) == shown
