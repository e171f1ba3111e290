"""Tests of ``hermes_core/agent/pool/redis.py``.

RedisPoolState on a real redis-server: the Lua port matches the pure decisions, windows slide,
leases expire, every key has a TTL, no secret reaches Redis, bad config is a clear error.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from operator import attrgetter
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from hermes_core.agent.credential_pool import CredentialPool, backend_from_settings
from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.quarantine import Standing, merge_standing
from hermes_core.agent.pool.redis import (
    RedisPoolOptions,
    RedisPoolState,
)
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
from hermes_core.testing.redis_server import RedisServer, free_port
from hermes_core.types import Credential, Message, Prompt
from tests.agent.pool.conftest import ReplyLost


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_700_000_000.25)


@pytest.fixture
def rds(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


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


class Mono:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hermes_core.agent.pool.redis"]


def test_redis_stopped_mid_run_falls_back_then_recovers(
        own_redis: RedisServer, redis_prefix: str,
        caplog: pytest.LogCaptureFixture) -> None:
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, workers=4, reconnect_interval_s=5.0))
    keys = [KeySpec("a", max_rpm=8), KeySpec("b", max_rpm=8)]
    pol = PoolPolicy(strategy="fill_first")
    held = be.acquire("p", keys, pol)
    assert held.fingerprint == "a" and not be.degraded

    own_redis.stop()
    caplog.set_level(logging.WARNING, logger="hermes_core.agent.pool.redis")
    got = [be.acquire("p", keys, pol).fingerprint for _ in range(6)]
    assert be.degraded and be.outages == 1
    # each key's budget is divided by the 4 workers: 8 // 4 = 2 requests per window per key,
    # and the request this worker sent through Redis a moment ago still counts
    assert got == ["a", "b", "b", None, None, None]
    msgs = _messages(caplog)
    assert len(msgs) == 1 and "unreachable" in msgs[0] and "4 workers" in msgs[0]
    assert "ConnectionError" in msgs[0]
    # outcomes keep working locally, including the release of a lease taken from Redis
    be.release("p", "a", Outcome("ok"), pol)
    moved = be.release("p", "b", Outcome("rate_limited", 100.0), pol)
    assert moved.changed

    own_redis.start()
    mono.t += 4.9  # the probe is not due yet: still local, no new warning
    assert be.acquire("p", keys, pol).fingerprint is None
    assert be.degraded
    mono.t += 0.2
    back = be.acquire("p", keys, pol)
    # back on Redis, which lost its data on restart; until the others have noticed (one
    # reconnect interval) this worker keeps to its share, already spent
    assert not be.degraded and back.fingerprint is None
    assert any("reachable again" in m for m in _messages(caplog)[1:])  # after the outage warning
    # the 429 and the requests sent while Redis was away were merged into the shared state,
    # so the restarted (empty) Redis does not hand out the window's budget a second time
    snap = be.snapshot("p", keys, pol)
    assert 95.0 < snap.keys[1].blocked_until - snap.now <= 100.5
    assert [k.requests_in_window for k in snap.keys] == [2, 2]
    other = RedisPoolState(own_redis.url, options=RedisPoolOptions(key_prefix=redis_prefix))
    assert [other.acquire("p", keys, pol).fingerprint for _ in range(8)] == ["a"] * 6 + [None] * 2
    other.close()
    be.close()


def test_redis_still_down_probes_once_per_interval(own_redis: RedisServer,
                                                   redis_prefix: str) -> None:
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=5.0))
    own_redis.stop()
    pings = 0
    real_ping = be._redis.ping

    def counting_ping() -> bool:
        nonlocal pings
        pings += 1
        return bool(real_ping())

    be._redis.ping = counting_ping
    keys = [KeySpec("a")]
    for _ in range(5):
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    assert be.degraded and pings == 0
    mono.t += 5.0
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    assert be.degraded and pings == 1  # failed probe: next one in another interval
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    assert pings == 1
    be.close()


@contextlib.contextmanager
def _stuck(server: RedisServer) -> Iterator[None]:
    """``server`` paused (SIGSTOP): it still accepts connections (the kernel does) and answers
    nothing, as a Redis frozen by a VM pause or a swap storm; resumed on leaving."""
    import os
    import signal

    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


def _probing_backend(server: RedisServer, prefix: str) -> tuple[Mono, RedisPoolState]:
    """A backend on ``server`` whose reconnect probe is due 5 s (of its fake clock) after an
    outage is noticed, with a 1 s socket timeout."""
    mono = Mono()
    return mono, RedisPoolState(server.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=prefix, reconnect_interval_s=5.0, socket_timeout_s=1.0))


def test_a_stuck_redis_stalls_no_request_with_its_reconnect_probe(own_redis: RedisServer,
                                                                  redis_prefix: str) -> None:
    """The probe of a degraded backend ran in the caller's request: against a Redis that
    accepts and never answers, one request per reconnect interval waited out PING and its one
    retry (2 x the socket timeout) before being served locally anyway."""
    mono, be = _probing_backend(own_redis, redis_prefix)
    keys = [KeySpec("a")]
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    with _stuck(own_redis):
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"   # the call that notices
        assert be.degraded
        mono.t += 5.0   # the probe is due
        t0 = time.perf_counter()
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
        took = time.perf_counter() - t0
        assert be.degraded
    # the probe's own wait is bounded, far below one socket timeout (the stall was 2 of them)
    assert took < 0.5, took
    # resumed: the probe running, or the next one due, brings the backend back
    deadline = time.monotonic() + 10.0
    while be.degraded and time.monotonic() < deadline:
        mono.t += 5.0
        be.acquire("p", keys, PoolPolicy())
        time.sleep(0.05)
    assert not be.degraded
    be.close()


def _probes() -> list[threading.Thread]:
    return [t for t in threading.enumerate()
            if t.name == "hermes-pool-redis-probe" and t.is_alive()]


def test_a_closed_backend_leaves_no_probe_talking_to_a_stuck_redis(own_redis: RedisServer,
                                                                    redis_prefix: str) -> None:
    """``close()`` closed the client's connections but not the probe under way: its thread,
    blocked in PING on a stuck Redis, outlived the close (redis-py reconnects a connection cut
    under it), and, had Redis answered, would have rejoined it and merged the outage after it."""
    mono, be = _probing_backend(own_redis, redis_prefix)
    keys = [KeySpec("a")]
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    with _stuck(own_redis):
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"   # the call that notices
        mono.t += 5.0
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"   # starts the probe
        assert _probes(), "the probe is under way, blocked on the stuck Redis"
        t0 = time.perf_counter()
        be.close()
        took = time.perf_counter() - t0
        left = _probes()
    assert not left, "a probe thread outlived close()"
    # waited for at most the one socket timeout in progress (1 s): no retry while closing
    assert took < 1.5, took
    # resumed, nothing of this worker's reaches Redis: no probe mark, no merge
    time.sleep(0.2)
    probe = redis.Redis.from_url(own_redis.url)
    assert probe.keys(f"{redis_prefix}:probe:*") == []
    probe.close()


def test_redis_scripts_reload_after_restart(own_redis: RedisServer,
                                            redis_prefix: str) -> None:
    be = RedisPoolState(own_redis.url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys = [KeySpec("a", max_rpm=5)]
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    sha = be._acquire.sha
    own_redis.restart()
    probe = redis.Redis.from_url(own_redis.url)
    assert probe.script_exists(sha) == [False]
    res = be.acquire("p", keys, PoolPolicy())  # EVALSHA -> NOSCRIPT -> SCRIPT LOAD -> EVALSHA
    assert res.fingerprint == "a"
    assert not be.degraded and be.outages == 0
    assert probe.script_exists(sha) == [True]
    probe.script_flush()
    assert be.release("p", "a", Outcome("rate_limited", 30.0), PoolPolicy()).changed
    assert be.acquire("p", keys, PoolPolicy()).fingerprint is None
    assert not be.degraded
    probe.close()
    be.close()


def test_redis_password_never_in_warning(redis_prefix: str,
                                         caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # nobody listens there
    url = f"redis://:hunter2-secret@127.0.0.1:{port}/0"
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=redis_prefix))
    caplog.set_level(logging.WARNING, logger="hermes_core.agent.pool.redis")
    assert be.acquire("p", [KeySpec("a")], PoolPolicy()).fingerprint == "a"
    assert be.degraded
    text = "\n".join(_messages(caplog)) + repr(be.url)
    assert "hunter2" not in text and "***@127.0.0.1" in text
    be.close()


def test_redis_read_only_replica_falls_back(own_redis: RedisServer,
                                            redis_prefix: str) -> None:
    """After a failover leaves the URL on a read-only replica, the pool serves locally."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=1.0))
    admin = redis.Redis.from_url(own_redis.url)
    admin.replicaof("127.0.0.1", free_port())  # a replica of a master that is not there
    try:
        assert be.acquire("p", [KeySpec("a")], PoolPolicy()).fingerprint == "a"
        assert be.degraded
    finally:
        admin.replicaof("NO", "ONE")
    mono.t += 1.0
    assert be.acquire("p", [KeySpec("a")], PoolPolicy()).fingerprint == "a"
    assert not be.degraded
    admin.close()
    be.close()


def test_redis_bad_url_in_yaml_names_file_and_key(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("credential_pool:\n  backend: redis\n  redis_url: 'http://:pw-9@127.0.0.1:1/0'\n")
    with pytest.raises(ConfigError) as err:
        backend_from_settings(load_settings(str(cfg), env={}))
    msg = str(err.value)
    assert str(cfg) in msg and "credential_pool.redis_url" in msg and "pw-9" not in msg


def test_redis_release_is_the_first_call_to_notice_the_outage(own_redis: RedisServer,
                                                              redis_prefix: str) -> None:
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=1.0))
    keys = [KeySpec("a", max_rpm=5)]
    pol = PoolPolicy()
    assert be.acquire("p", keys, pol).fingerprint == "a"
    own_redis.stop()
    res = be.release("p", "a", Outcome("rate_limited", 40.0), pol)  # served locally
    assert be.degraded and res.changed
    own_redis.start()
    mono.t += 1.0
    assert be.acquire("p", keys, pol).fingerprint is None  # the 429 was merged into Redis
    assert not be.degraded
    snap = be.snapshot("p", keys, pol)
    assert 35.0 < snap.keys[0].blocked_until - snap.now <= 40.5
    be.close()


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


# --------------------------------------------------------------------------- refusing writes

def _wait_for(check: Callable[[], bool], what: str) -> None:
    """Poll a server-side condition (not a timing assertion: the deadline only ends a hang)."""
    deadline = time.monotonic() + 20.0
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"redis-server never reached: {what}")
        time.sleep(0.02)


def _refuse_oom(admin: redis.Redis, server: RedisServer) -> Callable[[], None]:
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", "1")
    return lambda: admin.config_set("maxmemory", "0")


def _refuse_misconf(admin: redis.Redis, server: RedisServer) -> Callable[[], None]:
    """A snapshot that cannot be written (``/proc`` takes no files, not even root's) while save
    points are configured: Redis refuses writes with MISCONF until a snapshot succeeds."""
    admin.config_set("save", "3600 1")
    admin.config_set("stop-writes-on-bgsave-error", "yes")
    admin.config_set("dir", "/proc")
    admin.bgsave()
    _wait_for(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "err",
              "a failed snapshot")

    def undo() -> None:
        admin.config_set("dir", server.workdir)
        _wait_for(lambda: not admin.info("persistence")["rdb_bgsave_in_progress"],
                  "the failed snapshot's end")
        admin.bgsave()
        _wait_for(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "ok",
                  "a good snapshot")
    return undo


def _refuse_busy(admin: redis.Redis, server: RedisServer) -> Callable[[], None]:
    """A script that never ends, past the busy threshold: every other command answers BUSY
    until SCRIPT KILL."""
    admin.config_set("lua-time-limit", "10")
    runner = redis.Redis.from_url(server.url)
    thread = threading.Thread(target=lambda: _run_forever(runner))
    thread.start()

    def busy() -> bool:
        try:
            admin.ping()
        except redis.exceptions.ResponseError as e:
            return str(e).startswith("BUSY")
        return False
    _wait_for(busy, "a busy script")

    def undo() -> None:
        admin.script_kill()
        thread.join()
        runner.close()
    return undo


def _run_forever(client: redis.Redis) -> None:
    with contextlib.suppress(redis.exceptions.ResponseError):   # killed by SCRIPT KILL
        client.eval("while true do end", 0)


REFUSALS = {"OOM": _refuse_oom, "MISCONF": _refuse_misconf, "BUSY": _refuse_busy}


@pytest.mark.parametrize("condition", sorted(REFUSALS))
def test_redis_refusing_commands_degrades_to_the_fallback_and_rejoins(
        own_redis: RedisServer, redis_prefix: str, caplog: pytest.LogCaptureFixture,
        condition: str) -> None:
    """A Redis that answers an error instead of going away (out of memory, failing snapshots,
    a script hogging it) is an outage: no Redis traceback out of a turn, one warning naming the
    condition, and back on Redis (with what was learned meanwhile) once it accepts writes."""
    mono = Mono()
    be = RedisPoolState(own_redis.url, monotonic=mono, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=1.0))
    keys = [KeySpec("a", max_rpm=5)]
    pol = PoolPolicy()
    # scripts loaded, connection made; provider "p" is new to Redis (under maxmemory, Redis 6
    # lets a script through whose first write may not grow memory: a key seen before may pass)
    first = be.acquire("warm", keys, pol)
    be.release("warm", "a", Outcome("ok"), pol, lease=first.lease)
    admin = redis.Redis.from_url(own_redis.url, decode_responses=True)
    caplog.set_level(logging.WARNING, logger="hermes_core.agent.pool.redis")
    undo = REFUSALS[condition](admin, own_redis)
    try:
        held = be.acquire("p", keys, pol)
        assert held.fingerprint == "a" and be.degraded
        be.release("p", "a", Outcome("rate_limited", 30.0), pol, lease=held.lease)
        mono.t += 1.0     # the probe is due, but Redis still refuses writes: stay local
        assert be.acquire("p", keys, pol).fingerprint is None
        assert be.degraded and be.outages == 1
    finally:
        undo()
    msgs = _messages(caplog)
    assert len(msgs) == 1 and condition in msgs[0], msgs
    mono.t += 1.0
    assert be.acquire("p", keys, pol).fingerprint is None    # the 429 was merged into Redis
    assert not be.degraded and be.outages == 1
    snap = be.snapshot("p", keys, pol)
    assert 25.0 < snap.keys[0].blocked_until - snap.now <= 30.5
    admin.close()
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
    msgs = _messages(caplog)
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


@pytest.mark.parametrize("resumed", ["before the close ends", "after it"])
def test_a_backend_closed_during_a_probe_rejoins_redis_when_used_again(
        own_redis: RedisServer, redis_prefix: str, resumed: str) -> None:
    """``close()`` says the backend may still be used: a probe stopped by it must leave the next
    one free to start, the client its retry back, and the fleet's keys counted in Redis again."""
    mono, be = _probing_backend(own_redis, redis_prefix)
    keys = [KeySpec("a", max_rpm=3)]
    assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"
    with _stuck(own_redis):
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"   # the call that notices
        mono.t += 5.0
        assert be.acquire("p", keys, PoolPolicy()).fingerprint == "a"   # starts the probe
        assert _probes()
        if resumed == "before the close ends":
            threading.Timer(0.1, lambda: os.kill(own_redis.proc.pid, signal.SIGCONT)).start()
        be.close()
    assert be._retry is not None and be._retry.get_retries() == 1   # its retry given back
    deadline = time.monotonic() + 10.0
    while be.degraded and time.monotonic() < deadline:
        mono.t += 5.0
        be.acquire("p", keys, PoolPolicy())
        time.sleep(0.05)
    assert not be.degraded and not _probes()
    other = RedisPoolState(own_redis.url, options=RedisPoolOptions(key_prefix=redis_prefix))
    # the three requests of the minute (one through Redis, two local during the outage) count
    assert other.acquire("p", keys, PoolPolicy()).fingerprint is None
    other.close()
    be.close()


def _lose_the_pool_state(rds: redis.Redis, prefix: str) -> None:
    """What a Redis that restarted empty holds of ``prefix``: nothing (the epoch too, so the next
    acquire of every process resyncs)."""
    for name in rds.scan_iter(match=f"{prefix}:*"):
        rds.delete(name)


@pytest.mark.parametrize("lock", ["_lock", "_resync_lock", "_leases._lock"])
def test_a_child_forked_while_a_thread_held_a_backend_lock_acquires_and_releases(
        redis_url: str, redis_prefix: str, rds: redis.Redis, lock: str,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A thread of the parent inside one of the backend's locks at the fork (a request; a
    merge-back into a Redis that lost the state, which holds ``_resync_lock`` throughout; a
    lease being remembered): the child's copy stayed held, and its first acquire (which here
    resyncs too) waited for ever."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    _lose_the_pool_state(rds, redis_prefix)

    def child() -> object:
        got = be.acquire("p", keys, pol)
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return got.fingerprint, be.degraded

    try:
        with held_by_a_thread(attrgetter(lock)(be)):
            assert in_forked_child(child) == ("a", False)
    finally:
        be.close()


def test_a_forked_child_does_not_end_the_parent_s_lease(
        redis_url: str, redis_prefix: str,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """The parent's open leases are its own: the child's copy let a release naming no lease end
    the parent's lease in Redis, and the key looked free to the fleet while the parent's request
    still ran."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    held = be.acquire("p", keys, pol)                # in flight in the parent across the fork

    def child() -> object:
        be.release("p", "a", Outcome("ok"), pol)     # names no lease: none of the child's
        return be.snapshot("p", keys, pol).keys[0].in_flight

    try:
        assert in_forked_child(child) == 1
        be.release("p", "a", Outcome("ok"), pol, lease=held.lease)
        assert be.snapshot("p", keys, pol).keys[0].in_flight == 0
    finally:
        be.close()


def test_a_redis_that_lost_the_window_gets_the_parent_s_requests_back_once(
        redis_url: str, redis_prefix: str, rds: redis.Redis,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A Redis that restarted empty gets back from each process what it sent in the window
    (its resync). The child's copy of what the parent sent went back from the child too: the
    parent's request counted twice, 4 in a window of 3."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    _lose_the_pool_state(rds, redis_prefix)

    def child() -> object:
        got = be.acquire("p", keys, pol)            # resyncs: merges back what it sent
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return be.snapshot("p", keys, pol).keys[0].requests_in_window

    try:
        assert in_forked_child(child) == 1
        be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
        # the parent's first request (merged back by the parent only), the child's, its second
        assert be.snapshot("p", keys, pol).keys[0].requests_in_window == 3
    finally:
        be.close()


def test_a_forked_child_talks_to_redis_on_connections_of_its_own(
        redis_url: str, redis_prefix: str, rds: redis.Redis,
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """Checked, not assumed: redis-py's pool notices the new pid and makes the child new
    connections, so a command a parent's thread has under way at the fork (here a ``BLPOP``
    waiting) shares its socket with no command of the child's: each side reads its own reply."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix,
                                                            socket_timeout_s=60.0))
    keys, pol = [KeySpec("a")], PoolPolicy()
    be.release("p", "a", Outcome("ok"), pol, lease=be.acquire("p", keys, pol).lease)
    popped: list[object] = []
    waiting = threading.Thread(target=lambda: popped.append(
        be._redis.blpop([f"{redis_prefix}:list"], timeout=30)))
    waiting.start()
    for _ in range(10_000):   # until Redis has the BLPOP (counted, not timed)
        if any(c.get("cmd") == "blpop" for c in rds.client_list()):
            break
    else:
        pytest.fail("the BLPOP never reached Redis")

    def child() -> object:
        got = be.acquire("p", keys, pol)
        be.release("p", "a", Outcome("ok"), pol, lease=got.lease)
        return got.fingerprint, be._redis.ping(), be.snapshot("p", keys, pol).keys[0].in_flight

    try:
        assert in_forked_child(child) == ("a", True, 0)
        rds.rpush(f"{redis_prefix}:list", "parent's")
        waiting.join(60)
        assert popped == [(f"{redis_prefix}:list", "parent's")]
    finally:
        be.close()
