"""Tests of ``hermes_core/agent/pool/redis.py`` when Redis goes away: RedisPoolState on a real
redis-server that is stopped, stuck, restarted, read-only or refusing writes (OOM, MISCONF, BUSY)
falls back to this worker's local share, probes once per interval off the requests' path, and
rejoins, with no password in any warning.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from hermes_core.agent.credential_pool import backend_from_settings
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer, free_port
from tests.agent.pool.conftest import Mono, born_a_ttl_ago, logged_messages


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
    msgs = logged_messages(caplog)
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
    assert any("reachable again" in m for m in logged_messages(caplog)[1:])  # after the outage warning
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
    text = "\n".join(logged_messages(caplog)) + repr(be.url)
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
    msgs = logged_messages(caplog)
    assert len(msgs) == 1 and condition in msgs[0], msgs
    mono.t += 1.0
    assert be.acquire("p", keys, pol).fingerprint is None    # the 429 was merged into Redis
    assert not be.degraded and be.outages == 1
    snap = be.snapshot("p", keys, pol)
    assert 25.0 < snap.keys[0].blocked_until - snap.now <= 30.5
    admin.close()
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


def test_a_request_in_flight_through_redis_as_it_goes_away_holds_its_place_in_the_fallback(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """``max_in_flight: 1``: a request went out through Redis, and Redis went away (read-only,
    its data kept) while it ran. The fallback counted none of this worker's requests in flight
    and handed the key out beside it: two at once. It holds its place until its release, and
    the key serves again after that."""
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(own_redis.url, clock=clock, options=RedisPoolOptions(
        key_prefix=redis_prefix, reconnect_interval_s=60.0))
    pol = PoolPolicy(max_in_flight=1)
    key = [KeySpec("k")]
    first = be.acquire("p", key, pol)
    assert first.fingerprint == "k"
    admin = redis.Redis.from_url(own_redis.url)
    admin.replicaof("127.0.0.1", free_port())
    try:
        beside = be.acquire("p", key, pol)
        assert be.degraded
        assert beside.fingerprint is None, "a second request went out beside the first"
        be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
        after = be.acquire("p", key, pol)
        assert after.fingerprint == "k"
        be.release("p", "k", Outcome("ok"), pol, lease=after.lease)
    finally:
        admin.replicaof("NO", "ONE")
        admin.close()
    be.close()


def _in_flight_during_outage(server: RedisServer, prefix: str, cap: int,
                             fleet: int = 2) -> list[int]:
    """``fleet`` workers (two by default) on one key with ``max_in_flight: cap``: each claims
    its slot through Redis (slots born a TTL before), then Redis stops and each acquires until
    its fallback refuses; how many requests each has in flight at once, by slot."""
    pol = PoolPolicy(max_in_flight=cap)
    key = [KeySpec("k")]
    client = redis.Redis.from_url(server.url, decode_responses=True)
    clock = born_a_ttl_ago(client, prefix, fleet)
    client.close()
    workers = [RedisPoolState(server.url, monotonic=Mono(), clock=clock, options=RedisPoolOptions(
        key_prefix=prefix, workers=fleet, reconnect_interval_s=60.0)) for _ in range(fleet)]
    for be in workers:
        first = be.acquire("p", key, pol)
        be.release("p", "k", Outcome("ok"), pol, lease=first.lease)
    server.stop()
    held = []
    assert [be._slot.index for be in workers] == list(range(fleet))
    for be in workers:
        got = [be.acquire("p", key, pol).fingerprint for _ in range(cap + 1)]
        assert be.degraded
        held.append(got.count("k"))
        be.close()
    return held


def test_a_fleet_keeps_max_in_flight_split_by_slot_while_redis_is_away(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Two workers, ``max_in_flight: 2``, Redis stopped: each fallback applied the whole cap on
    its own, 4 requests in flight on the key at once. Split by slot like the rate limit: 1 each."""
    assert _in_flight_during_outage(own_redis, redis_prefix, 2) == [1, 1]


def test_a_max_in_flight_below_the_workers_still_lets_each_worker_send_one(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """``max_in_flight: 1`` over two workers: the share is at least 1 (as the rate share), so no
    worker's waiters hang for the whole outage, whatever slot it holds or lost; the fleet passes
    such a cap by at most one request per worker, by design."""
    assert _in_flight_during_outage(own_redis, redis_prefix, 1) == [1, 1]


@pytest.mark.parametrize(("cap", "by_slot"), [(6, [2, 2, 1, 1]), (4, [1, 1, 1, 1]),
                                               (2, [1, 1, 1, 1]), (1, [1, 1, 1, 1])])
def test_a_fleet_passes_a_max_in_flight_below_its_workers_by_one_request_a_worker_at_most(
        own_redis: RedisServer, redis_prefix: str, cap: int, by_slot: list[int]) -> None:
    """Four workers while Redis is away: a cap of at least four is split exactly by slot; below
    four each worker keeps one request (the fleet has four in flight, never more), whatever its
    slot. Decided for liveness: a share of 0 would shut the key for that worker for the whole
    outage (every worker takes the floor once its slot lapses, and the floor is the same for
    all), where one request over a concurrency cap costs at most the server's 429, which cools
    the key as any 429 does."""
    assert _in_flight_during_outage(own_redis, redis_prefix, cap, fleet=4) == by_slot
