"""Redis going away and coming back: fallback with a warning and divided budgets, recovery on the
reconnect probe (with what was learned meanwhile merged in), and Lua scripts reloaded after a
restart wiped them (NOSCRIPT)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import redis
from redis_server import RedisServer, free_port, own_redis, redis_prefix  # noqa: F401

from hermes_core.agent.credential_pool import backend_from_settings
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError


class Mono:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "hermes_core.agent.pool.redis"]


def test_redis_stopped_mid_run_falls_back_then_recovers(
        own_redis: RedisServer, redis_prefix: str,  # noqa: F811
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
    assert not be.degraded and back.fingerprint == "a"  # Redis lost its data on restart
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


def test_redis_still_down_probes_once_per_interval(own_redis: RedisServer,  # noqa: F811
                                                   redis_prefix: str) -> None:  # noqa: F811
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


def test_redis_scripts_reload_after_restart(own_redis: RedisServer,  # noqa: F811
                                            redis_prefix: str) -> None:  # noqa: F811
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


def test_redis_password_never_in_warning(redis_prefix: str,  # noqa: F811
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


def test_redis_read_only_replica_falls_back(own_redis: RedisServer,  # noqa: F811
                                            redis_prefix: str) -> None:  # noqa: F811
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


def test_redis_release_is_the_first_call_to_notice_the_outage(own_redis: RedisServer,  # noqa: F811
                                                              redis_prefix: str) -> None:  # noqa: F811
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
