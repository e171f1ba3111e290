"""The shared backend contract suite (tests/test_pool_backend_contract.py), run against Redis.

Every ``test_*`` function of the contract module is collected here too, where the ``backend``
fixture below hands it a :class:`RedisPoolState` on a real ``redis-server``: contract cases added
later run against both backends without touching this file.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import test_pool_backend_contract as contract
from redis_server import redis_prefix, redis_url  # noqa: F401

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState

globals().update({name: getattr(contract, name) for name in dir(contract)
                  if name.startswith("test_") and callable(getattr(contract, name))})


@pytest.fixture
def backend(redis_url: str, redis_prefix: str) -> Iterator[RedisPoolState]:  # noqa: F811
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix))
    yield be
    assert not be.degraded, "the contract ran against the local fallback, not Redis"
    be.close()


def test_redis_contract_suite_is_collected() -> None:
    names = [n for n in globals() if n.startswith("test_backend_contract")]
    assert len(names) >= 5
