"""Tests of ``hermes_core/agent/pool/rename.py``: a key's state read once from a former state
name, on a real redis-server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from hermes_core.agent.pool.rename import HOMES, _copy, carry_over


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


def _names(prefix: str) -> tuple[Any, Any]:
    def key_names(name: str, fp: str) -> list[str]:
        return [f"{prefix}:{{{name}}}:{kind}:{fp}" for kind in ("k", "w", "l")]

    def provider_name(name: str, kind: str) -> str:
        return f"{prefix}:{{{name}}}:{kind}"
    return key_names, provider_name


def test_a_key_s_former_names_are_read_most_recent_first_and_kept_few(
        redis_url: str, redis_prefix: str) -> None:
    """Each name a key's state was kept under is recorded (for the state's TTL), read back most
    recent first by the next name, and at most :data:`HOMES` are kept: the eleventh name reads
    the last eight, not every one the key ever had."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    key_names, provider_name = _names(redis_prefix)
    client.zadd(key_names("n0", "fp")[1], {"lease-0:0": 1.0})   # a request under the first name
    client.pexpire(key_names("n0", "fp")[1], 60_000)
    read = [carry_over(client, f"n{i}", [], ["fp"], key_names, provider_name, 3600.0)
            for i in range(HOMES + 3)]
    assert read[1] == ["n0"] and read[2] == ["n1", "n0"]           # most recent first
    assert read[-1] == [f"n{i}" for i in range(HOMES + 1, 1, -1)]     # the oldest dropped
    homes = provider_name("homes", "h:fp")
    assert client.zcard(homes) == HOMES and 0 < client.pttl(homes) <= 3_600_000
    client.close()
