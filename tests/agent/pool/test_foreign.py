"""Tests of ``hermes_core/agent/pool/foreign.py``: which keys under the pool's prefix hold another
kind of value than the layout's (the fallback they cause runs in test_redis.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from hermes_core.agent.pool.foreign import describe, expected_type, misplaced_keys


@pytest.fixture
def rds(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.mark.parametrize(("key", "kind"), [
    ("hp:{openai}:p", "hash"),
    ("hp:{openai}:rr", "hash"),
    ("hp:{openai}:k:key-0123abcd", "hash"),
    ("hp:{openai}:w:key-0123abcd", "zset"),
    ("hp:{openai}:l:key-0123abcd", "zset"),
    ("hp:{homes}:h:key-0123abcd", "zset"),    # the names a key's state was kept under
    ("hp:{openai}:e", "string"),
    ("hp:{workers}:slot:3", "string"),
    ("hp:probe:0a1b2c3d4e5f6789", "string"),
    ("hp:{openai}:v9:keys", None),            # a later version's own name: none of ours
    ("hp:stats", None),
    ("other:{openai}:p", None),               # another prefix
    ("hpx:{openai}:p", None),                 # a prefix that merely starts the same
])
def test_each_name_of_the_layout_has_one_kind(key: str, kind: str | None) -> None:
    assert expected_type(key, "hp") == kind


def test_only_names_of_the_layout_holding_another_kind_are_named(
        rds: redis.Redis, redis_prefix: str) -> None:
    pre = redis_prefix + "[x]*"               # glob characters in a prefix match themselves
    rds.hset(f"{pre}:{{p}}:k:key-a", "rm", "0")
    rds.set(f"{pre}:{{p}}:k:key-b", "v9")     # another kind where the scripts keep a hash
    rds.set(f"{pre}:{{p}}:v9:index", "1")     # another version's own name: left alone
    rds.set(f"{redis_prefix}[y]:{{p}}:k:key-c", "not under the prefix")
    try:
        found = misplaced_keys(rds, pre)
        assert found == [f"{pre}:{{p}}:k:key-b holds a string (this version keeps a hash there)"]
        assert "credential_pool.redis_key_prefix" in describe(found) and found[0] in describe(found)
    finally:
        for key in rds.scan_iter(match=redis_prefix + "*"):
            rds.delete(key)


def test_a_prefix_holding_only_the_pools_kinds_names_nothing(
        rds: redis.Redis, redis_prefix: str) -> None:
    assert misplaced_keys(rds, redis_prefix) == []
    rds.zadd(f"{redis_prefix}:{{p}}:w:key-a", {"lease:5": 1.0})
    try:
        assert misplaced_keys(rds, redis_prefix) == []
    finally:
        rds.delete(f"{redis_prefix}:{{p}}:w:key-a")
