"""Tests of ``hermes_core/agent/credential_pool.py``.

CredentialPool: settings wiring, per-provider strategies, alerts, status, backend selection.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from hermes_core.agent.credential_pool import CredentialPool, Lease
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import (
    MAX_COOLDOWN_S,
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
    cooldown_until,
)
from hermes_core.agent.resilience import CallLoop, LoopPolicy
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError, NoCredentialAvailable, RateLimited, parse_retry_after
from hermes_core.testing import FakeClock, ScriptedProvider
from hermes_core.types import Candidate, Credential, Message, Prompt, RouteDecision


def test_from_settings_reads_keys_limits_and_strategies() -> None:
    s = load_settings({
        "llm": {"routing": {"providers": [{"name": "openai", "endpoint": "http://127.0.0.1:1/v1"}]}},
        "credentials": {
            "openai": {"rotation_strategy": "least_loaded",
                       "keys": [{"key": "sk-one-secret", "weight": 2, "max_rpm": 5},
                                {"key": "sk-two-secret", "max_tpm": 1000}]},
            "anthropic": {"keys": [{"key": "sk-ant-secret"}]}},
        "credential_pool": {"rotation": "fill_first", "window_s": 10, "breaker_failures": 2}})
    pool = CredentialPool.from_settings(s)
    assert pool.providers == ("openai", "anthropic")
    creds = pool.credentials("openai")
    assert [(c.weight, c.max_rpm, c.max_tpm, c.endpoint) for c in creds] == [
        (2.0, 5, None, "http://127.0.0.1:1/v1"), (1.0, None, 1000, "http://127.0.0.1:1/v1")]
    assert pool._policies["openai"].strategy == "least_loaded"
    assert pool._policies["anthropic"].strategy == "fill_first"
    assert pool.policy.window_s == 10 and pool.policy.breaker_failures == 2


def test_env_key_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret")
    pool = CredentialPool.from_settings(load_settings({"llm": {"routing": {
        "providers": [{"name": "openai"}]}}}))
    assert pool.acquire("openai").secret == "sk-env-secret"


def test_no_keys_and_all_removed_say_so() -> None:
    pool = CredentialPool({"p": [Credential("p", "sk-x-secret")]})
    with pytest.raises(NoCredentialAvailable, match="none configured or all removed"):
        pool.acquire("other")
    c = pool.acquire("p")
    pool.remove(c, "HTTP 401")
    with pytest.raises(NoCredentialAvailable) as ei:
        pool.acquire("p")
    assert ei.value.available_at is None


def test_blocked_pool_says_when_the_earliest_key_frees() -> None:
    clock = FakeClock(500.0)
    pool = CredentialPool({"p": [Credential("p", "sk-a-secret"), Credential("p", "sk-b-secret")]},
                          backend=InMemoryPoolState(clock))
    pool.cool_down(pool.acquire("p"), 30.0)
    pool.cool_down(pool.acquire("p"), 12.0)
    with pytest.raises(NoCredentialAvailable, match=r"earliest frees in 12\.0s") as ei:
        pool.acquire("p")
    assert ei.value.available_at == 512.0
    assert sorted(s.state for s in pool.status()) == ["blocked", "blocked"]


def test_duplicate_keys_are_used_once(caplog: pytest.LogCaptureFixture) -> None:
    pool = CredentialPool({"p": [Credential("p", "sk-dup-secret"), Credential("p", "sk-dup-secret")]})
    assert len(pool.credentials("p")) == 1
    assert "twice" in caplog.text and "sk-dup-secret" not in caplog.text


def _lease_expiries(url: str, prefix: str, name: str, fp: str) -> list[float]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return [score for _, score in client.zrange(f"{prefix}:{{{name}}}:l:{fp}", 0, -1,
                                                    withscores=True)]
    finally:
        client.close()


def test_a_request_s_lease_lasts_its_deadline_not_the_backend_s_whole_ttl(
        redis_url: str, redis_prefix: str) -> None:
    """Every lease lived the backend's TTL, max(redis_lease_ttl_s, deadline_s + 30): 300 s under
    the default 120 s deadline. A process killed (``kill -9``) with requests in flight held their
    slots of ``max_in_flight_per_key`` that long (measured: the slot frees exactly the TTL after
    the acquire), 150 s past any request the loop could still be running. A request the loop
    makes holds its lease for what is left of its deadline and 30 s; one without (a caller's own
    ``pool.acquire``) keeps the TTL."""
    clock = FakeClock(1000.0)
    backend = RedisPoolState(redis_url, clock=clock, options=RedisPoolOptions(
        key_prefix=redis_prefix, lease_ttl_s=300.0))
    a1 = Credential("a", "sk-lease-a1-0123456789")
    pool = CredentialPool({"a": [a1]}, backend=backend)
    a = ScriptedProvider("a", script=[["he", "llo"]])
    loop = CallLoop({"a": a}, pool, clock=FakeClock(0.0), sleep=lambda s: None,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy(deadline_s=20.0))
    s = loop.stream(PROMPT, RouteDecision("m", (Candidate("a", "m"),), "t"))
    it = iter(s)
    assert next(it).text == "he"   # the stream's request is in flight: its lease is open
    assert _lease_expiries(redis_url, redis_prefix, "a", a1.fingerprint) == [1000.0 + 20 + 30]
    assert "".join(d.text for d in it) == "llo"
    lease = pool.acquire("a")      # a caller's own acquire: no deadline known, the whole TTL
    assert _lease_expiries(redis_url, redis_prefix, "a", a1.fingerprint) == [1000.0 + 300]
    pool.release(lease)
    backend.close()


def test_alert_hook_fires_once_with_fingerprint_only() -> None:
    alerts: list[tuple[str, str, str]] = []
    cred = Credential("p", "sk-alert-secret")
    pool = CredentialPool({"p": [cred]}, on_alert=lambda *a: alerts.append(a))
    pool.remove(pool.acquire("p"), "after HTTP 401")
    pool.remove(cred, "after HTTP 401")     # not the recheck: the same news again
    assert alerts == [("p", cred.fingerprint, "after HTTP 401; quarantined, rechecked in 60s")]


def test_an_alert_reason_quoting_a_pool_key_reaches_neither_the_hook_nor_the_log(
        caplog: pytest.LogCaptureFixture) -> None:
    """The reason is the caller's words (a server's error text, say): a key of any shape the pool
    holds, quoted in it, went to the alert hook (a pager, a chat channel) as it was."""
    alerts: list[tuple[str, str, str]] = []
    rejected, other = Credential("p", "correct-horse-battery-staple"), Credential("p", "zq9.Other.Key.77")
    pool = CredentialPool({"p": [rejected, other]}, on_alert=lambda *a: alerts.append(a))
    with caplog.at_level(logging.WARNING):
        pool.remove(rejected, f"server said: key {rejected.secret} refused (try {other.secret})")
    [(_, fp, reason)] = alerts
    assert fp == rejected.fingerprint and "refused" in reason
    for text in (reason, caplog.text):
        assert rejected.secret not in text and other.secret not in text


def test_the_alert_log_line_says_where_the_rejected_key_came_from(caplog: pytest.LogCaptureFixture) -> None:
    """When a backup answers, this warning is all a person sees of a rejected key: it must say
    which setting to fix, as the error does when every provider fails."""
    cred = Credential("openai", "sk-alert-secret-0123456789", source="OPENAI_API_KEY")
    pool = CredentialPool({"openai": [cred]})
    with caplog.at_level(logging.WARNING):
        pool.remove(pool.acquire("openai"), "after HTTP 401")
    assert cred.fingerprint in caplog.text and "OPENAI_API_KEY" in caplog.text
    assert "rejected" in caplog.text and "sk-alert-secret" not in caplog.text


def test_status_states_and_in_flight() -> None:
    clock = FakeClock(0.0)
    creds = [Credential("p", f"sk-{i}-secret", max_rpm=1 if i == 3 else None) for i in range(5)]
    pool = CredentialPool({"p": creds}, policy=PoolPolicy(strategy="round_robin",
                                                          breaker_failures=1),
                          backend=InMemoryPoolState(clock))
    got = [pool.acquire("p") for _ in range(4)]
    assert [g.credential for g in got] == creds[:4]
    pool.remove(got[0])
    pool.cool_down(got[1], 5.0)
    pool.failure(got[2])     # key breaker opens (threshold 1); provider's too
    rows = {r.fingerprint: r for r in pool.status()}
    assert [rows[c.fingerprint].state for c in creds] == [
        "quarantined", "blocked", "breaker_open", "breaker_open", "breaker_open"]
    assert rows[creds[3].fingerprint].in_flight == 1
    assert rows[creds[1].fingerprint].blocked_for_s == 5.0
    assert rows[creds[3].fingerprint].as_dict()["requests_last_minute"] == 1


def test_unknown_strategy_rejected() -> None:
    with pytest.raises(ValueError, match="unknown rotation strategy"):
        CredentialPool({"p": [Credential("p", "sk-secret")]},
                       strategies={"p": "fastest"})  # type: ignore[dict-item]


def test_redis_backend_missing_is_a_clear_error() -> None:
    s = load_settings({"credential_pool": {"backend": "redis"}})
    try:
        import hermes_core.agent.pool.redis  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ConfigError, match=r"credential_pool\.backend"):
            CredentialPool.from_settings(s)
    else:  # once the Redis backend exists, this test's job is done by its own suite
        assert CredentialPool.from_settings(s, InMemoryPoolState()).backend is not None


async def test_async_acquire_and_report() -> None:
    pool = CredentialPool({"p": [Credential("p", "sk-async-secret")]})
    creds = await asyncio.gather(*(pool.aacquire("p") for _ in range(20)))
    assert pool.status()[0].in_flight == 20
    await asyncio.gather(*(pool.areport(c, Outcome("ok")) for c in creds))
    assert pool.status()[0].in_flight == 0


def test_weighted_round_robin_evenness_over_10000_picks() -> None:
    creds = [Credential("p", f"sk-{i}-secret", weight=w) for i, w in enumerate((1, 2, 3, 4))]
    pool = CredentialPool({"p": creds}, policy=PoolPolicy(strategy="round_robin"))
    counts: Counter[str] = Counter()
    longest_run, run, last = 0, 0, None
    for _ in range(10_000):
        c = pool.acquire("p")
        pool.success(c)
        counts[c.fingerprint] += 1
        run = run + 1 if c.fingerprint == last else 1
        last = c.fingerprint
        longest_run = max(longest_run, run)
    assert [counts[c.fingerprint] for c in creds] == [1000, 2000, 3000, 4000]
    assert longest_run <= 2          # smooth: the heaviest key never bursts


def test_random_strategy_follows_weights_with_seeded_rng() -> None:
    creds = [Credential("p", "sk-a-secret", weight=1), Credential("p", "sk-b-secret", weight=3)]
    pool = CredentialPool({"p": creds}, policy=PoolPolicy(strategy="random"), rng=random.Random(42))
    counts = Counter(pool.acquire("p").fingerprint for _ in range(10_000))
    share = counts[creds[1].fingerprint] / 10_000
    assert 0.72 < share < 0.78


A = Credential("p", "sk-probe-key-secret")


POLICY = PoolPolicy(strategy="fill_first", breaker_failures=1, breaker_cooldown_s=10.0)


def _scenario(backend: PoolStateBackend, clock: FakeClock, ending: str) -> None:
    pool = CredentialPool({"p": [A]}, policy=POLICY, backend=backend)
    old1 = pool.acquire("p")
    old2 = pool.acquire("p")          # a long stream, still running
    pool.failure(old1)                # the breaker opens (key and provider)
    clock.t += 10.0
    probe = pool.acquire("p")         # the one half-open probe
    if ending == "released":
        pool.release(old2)            # the old call ends without a health signal
    else:
        pool.cool_down(old2, 0.0)
    with pytest.raises(NoCredentialAvailable):
        pool.acquire("p")             # still only one probe out
    pool.release(probe)               # the probe itself ends without a signal: slot freed
    second = pool.acquire("p")
    pool.success(second)
    assert [k.state for k in pool.status()] == ["ok"]
    assert [k.in_flight for k in pool.status()] == [0]


@pytest.mark.parametrize("ending", ["released", "rate_limited"])
def test_in_memory_old_call_does_not_free_the_probe_slot(ending: str) -> None:
    clock = FakeClock(1_700_000_000.0)
    _scenario(InMemoryPoolState(clock), clock, ending)


@pytest.fixture
def redis_backend(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisPoolState, FakeClock]]:
    clock = FakeClock(1_700_000_000.0)
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix), clock=clock)
    yield be, clock
    assert not be.degraded
    be.close()


@pytest.mark.parametrize("ending", ["released", "rate_limited"])
def test_redis_old_call_does_not_free_the_probe_slot(
        redis_backend: tuple[RedisPoolState, FakeClock], ending: str) -> None:
    be, clock = redis_backend
    _scenario(be, clock, ending)


NOW = 1_700_000_000.25


PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


A1, A2 = Credential("a", "sk-a-one-secret"), Credential("a", "sk-a-two-secret")


@pytest.mark.parametrize(("retry_after", "expected"), [
    (0.0, NOW), (-5.0, NOW), (30.0, NOW + 30.0), (600.0, NOW + 600.0), (3600.0, NOW + MAX_COOLDOWN_S),
    (3 * 86_400.0, NOW + MAX_COOLDOWN_S),
    (1e12, NOW + MAX_COOLDOWN_S), (math.inf, NOW + MAX_COOLDOWN_S), (math.nan, NOW + 60.0),
    (None, NOW + 60.0)])
def test_cooldown_until_is_finite_and_bounded(retry_after: float | None, expected: float) -> None:
    assert cooldown_until(0.0, NOW, retry_after, 60.0) == expected


def test_an_infinite_retry_after_blocks_until_the_cap_and_audits_strict_json(tmp_path: Path) -> None:
    """A provider saying ``retry_after=inf`` (a header parser of its own): the key is blocked
    until the cap (not forever) and the audit line stays strict JSON (no ``Infinity``). The headers
    themselves never give infinity: "Retry-After: 1e400" is unsaid (tests/test_errors.py)."""
    assert parse_retry_after({"Retry-After": "1e400"}, now=NOW) is None
    a = ScriptedProvider("a", script=[RateLimited(retry_after=math.inf), "ok"])
    clock = FakeClock(0.0)
    pool = CredentialPool({"a": [A1, A2]}, policy=PoolPolicy(strategy="fill_first"),
                          backend=InMemoryPoolState(clock))
    audit = tmp_path / "audit.jsonl"
    loop = CallLoop({"a": a}, pool, clock=clock, sleep=lambda s: None, audit_path=audit,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    completion, attempts = loop.complete(PROMPT, RouteDecision("m", (Candidate("a", "m"),), "t"))
    assert completion.text == "ok" and attempts[0].retry_after == MAX_COOLDOWN_S
    st = {k.fingerprint: k for k in pool.status()}
    assert st[A1.fingerprint].blocked_until == MAX_COOLDOWN_S
    for line in audit.read_text().splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))


def _check_retry_after(backend: PoolStateBackend, clock: FakeClock) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy()
    for ra in (math.inf, 1e15, 10 * 365 * 86_400.0):
        res = backend.acquire("p", keys, pol)
        assert res.fingerprint == "a", ra
        rel = backend.release("p", "a", Outcome("rate_limited", ra), pol)
        assert rel.blocked_until == pytest.approx(clock.t + MAX_COOLDOWN_S)
        clock.t += MAX_COOLDOWN_S + 1.0   # the key is usable again after the cap


def test_a_sole_key_a_proxy_told_to_wait_years_is_tried_again_within_a_quarter_hour() -> None:
    """``Retry-After: 99999999`` from a proxy took the only key out for the one-day cap, so every
    turn of a chat failed until the next day. A wait that long is checked again by one request
    every quarter hour: a key that is really exhausted answers 429 again (not billed), one a
    proxy lied about serves."""
    clock = FakeClock(NOW)
    backend = InMemoryPoolState(clock)
    keys, pol = [KeySpec("a")], PoolPolicy()
    got = backend.acquire("p", keys, pol)
    backend.release("p", "a", Outcome("rate_limited", 99_999_999.0), pol, lease=got.lease)
    assert backend.acquire("p", keys, pol).fingerprint is None
    clock.t += 15 * 60.0
    assert backend.acquire("p", keys, pol).fingerprint == "a"


def test_in_memory_huge_retry_after_is_capped() -> None:
    clock = FakeClock(NOW)
    _check_retry_after(InMemoryPoolState(clock), clock)


@pytest.fixture
def redis_pool(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisPoolState, FakeClock]]:
    clock = FakeClock(NOW)
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix), clock=clock)
    yield be, clock
    assert not be.degraded
    be.close()


def test_redis_huge_retry_after_is_capped(redis_pool: tuple[RedisPoolState, FakeClock]) -> None:
    be, clock = redis_pool
    _check_retry_after(be, clock)


def test_acquire_hands_out_a_frozen_lease_and_marks_the_probe() -> None:
    clock = FakeClock(1000.0)
    cred = Credential("p", "sk-only-key-SECRET-000001")
    pool = CredentialPool({"p": [cred]}, policy=PoolPolicy(breaker_failures=1,
                                                           breaker_cooldown_s=5.0),
                          backend=InMemoryPoolState(clock))
    first = pool.acquire("p")
    assert isinstance(first, Lease) and first.credential == cred and not first.probe
    assert first.lease_id and "SECRET" not in repr(first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.probe = True  # type: ignore[misc]
    pool.failure(first)                 # the breaker opens
    clock.t += 5.0
    probe = pool.acquire("p")
    assert probe.probe and probe.credential == cred
    pool.release(probe)                 # the probe ended without a signal: slot freed
    assert pool.acquire("p").probe


def test_a_removed_only_key_means_no_keys_and_status_takes_one_name() -> None:
    pool = CredentialPool({"openai": [Credential("openai", "sk-openai-SECRET-00000001")],
                           "anthropic": [Credential("anthropic", "sk-ant-SECRET-000000001")]},
                          policy=PoolPolicy(auth_max_strikes=1))   # removed at the first 401
    pool.remove(pool.acquire("openai"), "after HTTP 401")
    assert not pool.has_keys("openai") and pool.configured("openai")
    assert pool.has_keys("anthropic")
    rows = pool.status("openai")
    assert [(r.provider, r.state) for r in rows] == [("openai", "removed")]
    assert len(pool.status(["openai", "anthropic"])) == 2
    assert pool.status([]) == [] and len(pool.status()) == 2   # no names: none; None: all


def test_credentials_say_where_they_were_configured() -> None:
    s = load_settings({"credentials": {"openai": {"keys": [{"key": "sk-one-SECRET-0000000001"},
                                                           {"key": "sk-two-SECRET-0000000002"}]}}},
                      env={})
    assert [c.source for c in s.credentials_for("openai")] == [
        "credentials.openai.keys[0]", "credentials.openai.keys[1]"]
    env = load_settings({}, env={"OPENAI_API_KEY": "sk-env-SECRET-0000000001"})
    assert [c.source for c in env.credentials_for("openai")] == ["OPENAI_API_KEY"]


def test_a_pool_from_hand_made_settings_registers_its_keys_for_log_scrubbing(
        caplog: pytest.LogCaptureFixture) -> None:
    """Settings built without load_settings (an author's own Settings(...)) still hand the pool's
    keys to the one redactor, so SDK debug lines never show them."""
    import logging
    import uuid

    from hermes_core.config import Settings

    secret = f"house-{uuid.uuid4().hex}"   # no key shape, never registered before this test
    settings = Settings.model_validate({"credentials": {"house": {"keys": [{"key": secret}]}}})
    CredentialPool.from_settings(settings)
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("httpx._client").debug("HTTP Request headers %s", {"x-api-key": secret})
    assert "HTTP Request headers" in caplog.text
    assert secret not in caplog.text


# --------------------------------------------------------------------------- auth quarantine

QUARANTINE = PoolPolicy(breaker_cooldown_s=30.0, auth_recheck_s=60.0, auth_recheck_max_s=600.0,
                        auth_max_strikes=3)


def test_a_rejected_key_is_quarantined_then_restored_by_one_recheck(
        caplog: pytest.LogCaptureFixture) -> None:
    """One 401 from a flaky proxy no longer empties the pool for good: the key sits out, one
    request rechecks it when due, and a success puts it back; alerts name the fingerprint only."""
    clock = FakeClock(1000.0)
    alerts: list[tuple[str, str, str]] = []
    cred = Credential("p", "sk-quarantine-SECRET-0001")
    pool = CredentialPool({"p": [cred]}, policy=QUARANTINE, backend=InMemoryPoolState(clock),
                          on_alert=lambda *a: alerts.append(a))
    with caplog.at_level(logging.INFO, logger="hermes_core.pool"):
        pool.remove(pool.acquire("p"), "after HTTP 401")
        assert pool.has_keys("p")            # not removed: the provider is not out of keys
        with pytest.raises(NoCredentialAvailable, match=r"quarantined.*recheck in 60s") as ei:
            pool.acquire("p")
        assert ei.value.available_at is None    # not waited for: the request fails over
        [row] = pool.status("p")
        assert row.state == "quarantined" and row.recheck_at == 1060.0
        assert row.as_dict()["auth_failures"] == 1
        clock.t = 1060.0
        probe = pool.acquire("p")
        assert probe.probe
        pool.success(probe)
    assert [r.state for r in pool.status("p")] == ["ok"]
    assert alerts == [("p", cred.fingerprint, "after HTTP 401; quarantined, rechecked in 60s")]
    assert "back in rotation" in caplog.text and cred.fingerprint in caplog.text
    assert cred.secret not in caplog.text


def test_a_key_rejected_at_every_recheck_is_removed_for_good_with_a_second_alert() -> None:
    clock = FakeClock(1000.0)
    alerts: list[tuple[str, str, str]] = []
    cred = Credential("p", "sk-revoked-SECRET-000001")
    pool = CredentialPool({"p": [cred]}, policy=QUARANTINE, backend=InMemoryPoolState(clock),
                          on_alert=lambda *a: alerts.append(a))
    pool.remove(pool.acquire("p"), "after HTTP 401")
    clock.t += 60.0
    pool.remove(pool.acquire("p"), "after HTTP 401")
    clock.t += 120.0
    pool.remove(pool.acquire("p"), "after HTTP 401")
    assert not pool.has_keys("p") and [r.state for r in pool.status("p")] == ["removed"]
    assert [a[2] for a in alerts] == ["after HTTP 401; quarantined, rechecked in 60s",
                                      "after HTTP 401; quarantined, rechecked in 120s",
                                      "after HTTP 401; removed after 3 rejections in a row"]
    with pytest.raises(NoCredentialAvailable, match="all removed"):
        pool.acquire("p")


def test_the_quarantine_knobs_come_from_settings_and_are_validated() -> None:
    settings = load_settings({"credential_pool": {"auth_recheck_s": 30, "auth_recheck_max_s": 900,
                                                  "auth_max_strikes": 2}})
    pol = CredentialPool.from_settings(settings).policy
    assert (pol.auth_recheck_s, pol.auth_recheck_max_s, pol.auth_max_strikes) == (30, 900, 2)
    for bad in ({"auth_max_strikes": 0}, {"auth_recheck_s": 0},
                {"auth_recheck_s": 600, "auth_recheck_max_s": 60}):
        with pytest.raises(ConfigError, match=r"credential_pool\.auth_"):
            load_settings({"credential_pool": bad})


def test_keys_of_a_pool_built_by_hand_are_scrubbed_from_every_writer(
        caplog: pytest.LogCaptureFixture) -> None:
    """A library user may build the pool from their own credentials, never loading settings: the
    pool is where keys start to flow into the SDKs, whose debug lines echo response headers."""
    from hermes_core.redact import redact

    key = "hand built key 77"   # no shape to recognise it by
    CredentialPool({"custom": [Credential("custom", key)]})
    with caplog.at_level(logging.DEBUG, logger="httpx"):
        logging.getLogger("httpx").debug("response headers: %s", {"x-received-key": key})
    assert key not in caplog.text and key not in redact(f"echoed: {key}")
