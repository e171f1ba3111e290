"""A half-open breaker hands out exactly one probe. A call that was already in flight when the
breaker opened, and ends later without a health signal (429, cancelled, bad request), must not
free the probe slot while the real probe is still out: that let a second probe through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis_server import redis_prefix, redis_url  # noqa: F401

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy, PoolStateBackend
from hermes_core.errors import NoCredentialAvailable
from hermes_core.types import Credential

A = Credential("p", "sk-probe-key-secret")
POLICY = PoolPolicy(strategy="fill_first", breaker_failures=1, breaker_cooldown_s=10.0)


class Clock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _scenario(backend: PoolStateBackend, clock: Clock, ending: str) -> None:
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
    clock = Clock()
    _scenario(InMemoryPoolState(clock), clock, ending)


@pytest.fixture
def redis_backend(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisPoolState, Clock]]:  # noqa: F811
    clock = Clock()
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix), clock=clock)
    yield be, clock
    assert not be.degraded
    be.close()


@pytest.mark.parametrize("ending", ["released", "rate_limited"])
def test_redis_old_call_does_not_free_the_probe_slot(
        redis_backend: tuple[RedisPoolState, Clock], ending: str) -> None:
    be, clock = redis_backend
    _scenario(be, clock, ending)
