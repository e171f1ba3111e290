"""The real call loop and CredentialPool of two workers over one Redis: a 429 or a 401 seen by one
worker steers the other's very next request (the SDKs behind respx; injected clock and sleeps)."""

from __future__ import annotations

import random

import httpx
import pytest
from redis_server import redis_prefix, redis_url  # noqa: F401
from routing_doubles import FakeClock

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    anthropic_message,
    openai_chat_completion,
    openai_error,
)
from hermes_core.types import Message, Prompt

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
        respx_mock, redis_url: str, redis_prefix: str,  # noqa: F811
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
    # worker A goes straight to the backup: K1 still blocked, K2 removed by worker B
    assert done.provider == "backup"
    assert [(x.provider, x.status, x.key_fingerprint is None) for x in attempts] == [
        ("primary", "all_keys_blocked", True), ("backup", "ok", False)]
    assert [key_of(c.request) for c in primary.calls].count(K2) == 5
    assert backup.call_count == 2 and clock.sleeps == []
    states = {s.state for s in a.pool.status(["primary"])}
    assert states == {"blocked", "removed"}
    alerts = [r for r in caplog.records if "credential alert" in r.getMessage()]
    assert len(alerts) == 1  # the removal alerts once across both workers
    assert all(k not in caplog.text for k in (K1, K2, K3))
    assert not backend_a.degraded and not backend_b.degraded
