"""Retry-After values a server (or a proxy) may really send: 0, negative, huge (days, years),
infinite. A key is never blocked forever or for years, and both backends agree."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_server import redis_prefix, redis_url  # noqa: F401
from routing_doubles import Scripted

from hermes_core.agent.credential_pool import CredentialPool
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
from hermes_core.errors import RateLimited, parse_retry_after
from hermes_core.types import Candidate, Credential, Message, Prompt, RouteDecision

NOW = 1_700_000_000.25
PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
A1, A2 = Credential("a", "sk-a-one-secret"), Credential("a", "sk-a-two-secret")


class Clock:
    def __init__(self, t: float = NOW) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize(("retry_after", "expected"), [
    (0.0, NOW), (-5.0, NOW), (30.0, NOW + 30.0), (3600.0, NOW + 3600.0), (3 * 86_400.0, NOW + MAX_COOLDOWN_S),
    (1e12, NOW + MAX_COOLDOWN_S), (math.inf, NOW + MAX_COOLDOWN_S), (math.nan, NOW + 60.0),
    (None, NOW + 60.0)])
def test_cooldown_until_is_finite_and_bounded(retry_after: float | None, expected: float) -> None:
    assert cooldown_until(0.0, NOW, retry_after, 60.0) == expected


def test_overflowing_retry_after_header_blocks_a_day_and_audits_strict_json(tmp_path: Path) -> None:
    """"Retry-After: 1e400" parses to infinity: the key is blocked a day (not forever) and the
    audit line stays strict JSON (no ``Infinity``)."""
    ra = parse_retry_after({"Retry-After": "1e400"}, now=NOW)
    a = Scripted("a", script=[RateLimited(retry_after=ra), "ok"])
    clock = Clock(0.0)
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


def _check(backend: PoolStateBackend, clock: Clock) -> None:
    keys = [KeySpec("a")]
    pol = PoolPolicy()
    for ra in (math.inf, 1e15, 10 * 365 * 86_400.0):
        res = backend.acquire("p", keys, pol)
        assert res.fingerprint == "a", ra
        rel = backend.release("p", "a", Outcome("rate_limited", ra), pol)
        assert rel.blocked_until == pytest.approx(clock.t + MAX_COOLDOWN_S)
        clock.t += MAX_COOLDOWN_S + 1.0   # the key is usable again after the cap


def test_in_memory_huge_retry_after_is_capped() -> None:
    clock = Clock()
    _check(InMemoryPoolState(clock), clock)


@pytest.fixture
def redis_pool(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisPoolState, Clock]]:  # noqa: F811
    clock = Clock()
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix), clock=clock)
    yield be, clock
    assert not be.degraded
    be.close()


def test_redis_huge_retry_after_is_capped(redis_pool: tuple[RedisPoolState, Clock]) -> None:
    be, clock = redis_pool
    _check(be, clock)
