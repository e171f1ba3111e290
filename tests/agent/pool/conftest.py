"""The pool backends the contract suite (test_state.py) runs against."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import InMemoryPoolState, PoolStateBackend
from hermes_core.testing import FakeClock

BACKEND_KINDS = ("memory", "redis")


@pytest.fixture
def backend_kinds() -> tuple[str, ...]:
    return BACKEND_KINDS


@pytest.fixture(params=BACKEND_KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[PoolStateBackend]:
    """Each PoolStateBackend in turn; Redis on a real redis-server with a fresh key prefix."""
    if request.param == "memory":
        yield InMemoryPoolState()
        return
    url = request.getfixturevalue("redis_url")
    prefix = request.getfixturevalue("redis_prefix")
    be = RedisPoolState(url, options=RedisPoolOptions(key_prefix=prefix))
    yield be
    assert not be.degraded, "the contract ran against the local fallback, not Redis"
    be.close()


@pytest.fixture(params=BACKEND_KINDS)
def clocked_backend(request: pytest.FixtureRequest) -> Iterator[tuple[PoolStateBackend, FakeClock]]:
    """Each PoolStateBackend on an injected clock (Redis takes it in place of ``TIME``)."""
    clock = FakeClock(1000.0)
    if request.param == "memory":
        yield InMemoryPoolState(clock), clock
        return
    be = RedisPoolState(request.getfixturevalue("redis_url"), clock=clock,
                        options=RedisPoolOptions(key_prefix=request.getfixturevalue("redis_prefix")))
    yield be, clock
    assert not be.degraded, "the test ran against the local fallback, not Redis"
    be.close()
