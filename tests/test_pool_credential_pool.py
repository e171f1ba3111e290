"""CredentialPool: settings wiring, per-provider strategies, alerts, status, backend selection."""

from __future__ import annotations

import asyncio

import pytest
from routing_doubles import FakeClock

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState, Outcome, PoolPolicy
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError, NoCredentialAvailable
from hermes_core.types import Credential


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


def test_alert_hook_fires_once_with_fingerprint_only() -> None:
    alerts: list[tuple[str, str, str]] = []
    cred = Credential("p", "sk-alert-secret")
    pool = CredentialPool({"p": [cred]}, on_alert=lambda *a: alerts.append(a))
    pool.remove(pool.acquire("p"), "after HTTP 401")
    pool.remove(cred, "after HTTP 401")
    assert alerts == [("p", cred.fingerprint, "after HTTP 401")]


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
        "removed", "blocked", "breaker_open", "breaker_open", "breaker_open"]
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
