"""Tests of ``hermes_core/agent/pool/rename.py``: a key's state read once from a former state
name, on a real redis-server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from hermes_core.agent.pool.rename import _copy


class _ExpiresBetweenReads(redis.Redis):
    """A real client on which the key a copy reads expires between its two reads (``DUMP`` and
    ``PTTL``, in whichever order the copy makes them): the second read finds it gone."""

    reads = 0

    def _read(self, name: str) -> None:
        self.reads += 1
        if self.reads == 2:
            self.delete(name)

    def dump(self, name: Any) -> Any:
        self._read(name)
        return super().dump(name)

    def pttl(self, name: Any) -> Any:
        self._read(name)
        return super().pttl(name)


@pytest.fixture
def expiring(redis_url: str) -> Iterator[_ExpiresBetweenReads]:
    client = _ExpiresBetweenReads.from_url(redis_url, decode_responses=True)
    assert isinstance(client, _ExpiresBetweenReads)
    yield client
    client.close()


def test_a_state_expiring_during_its_copy_is_not_restored_for_good(
        expiring: _ExpiresBetweenReads, redis_prefix: str) -> None:
    """``DUMP`` then ``PTTL`` of a state hash expiring between them read its value, then -2
    (gone): ``RESTORE`` with 0 (no TTL) kept a key's cooldown or removal under the new name with
    no expiry at all, past the state's 7 days."""
    src, dst = f"{redis_prefix}:{{old}}:k:fp", f"{redis_prefix}:{{new}}:k:fp"
    expiring.hset(src, "rm", "1")
    expiring.pexpire(src, 60_000)
    _copy(expiring, src, dst)
    assert expiring.pttl(dst) != -1, "restored with no expiry"
