"""Tests of ``hermes_core/agent/credential_pool.py``: one key listed under several provider names.

The names that list one key share its window, cool-down and limits (the stricter one); the state
is kept under a name of the group, and an alias added, edited, undone or dropped across a
restart keeps the requests made under the former names, on a real redis-server.
"""

from __future__ import annotations

import logging

import pytest

from hermes_core.agent.credential_pool import CredentialPool, former_names, state_names
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import InMemoryPoolState, KeySpec, Outcome, PoolPolicy
from hermes_core.errors import NoCredentialAvailable
from hermes_core.testing import FakeClock
from hermes_core.types import Credential, fingerprint


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_key_under_two_provider_names_keeps_one_window_and_one_cooldown(
        kind: str, request: pytest.FixtureRequest) -> None:
    """The same key listed under two provider names (two aliases of one endpoint: "zhipu" and
    "glm") had a window under each, so the pool sent it twice its limit, and a 429 one alias
    heard left the other sending to the cooling key."""
    clock = FakeClock(1000.0)
    backend = (InMemoryPoolState(clock) if kind == "memory" else RedisPoolState(
        request.getfixturevalue("redis_url"), clock=clock,
        options=RedisPoolOptions(key_prefix=request.getfixturevalue("redis_prefix"))))
    shared = "sk-shared-0123456789"
    pool = CredentialPool({"zhipu": [Credential("zhipu", shared, max_rpm=2)],
                           "glm": [Credential("glm", shared, max_rpm=2)]}, backend=backend)
    got = []
    for provider in ("zhipu", "glm", "zhipu", "glm"):
        try:
            lease = pool.acquire(provider)
        except NoCredentialAvailable:
            got.append(None)
            continue
        got.append(lease.credential.provider)
        pool.success(lease)
    assert got == ["zhipu", "glm", None, None]   # two in the window, whoever asked
    assert [r.requests_last_window for r in pool.status()] == [2, 2]
    clock.advance(61.0)   # a new window
    lease = pool.acquire("glm")
    assert lease.credential.provider == "glm"   # the key is named by the alias that asked
    pool.cool_down(lease, 30.0)
    with pytest.raises(NoCredentialAvailable):   # a 429 heard through one name cools both
        pool.acquire("zhipu")
    assert [r.state for r in pool.status()] == ["blocked", "blocked"]


def test_a_group_formed_says_where_its_state_is_kept_and_what_is_read_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """Adding an alias moves the keys' state to the group's name: the log says under which
    (named by a key's fingerprint, never the key), that state under a former name is read once
    (by a shared backend), and that processes not yet restarted keep counting under it."""
    shared = "sk-shared-rename-0123456789"
    with caplog.at_level(logging.INFO, logger="hermes_core.pool"):
        CredentialPool({"zhipu": [Credential("zhipu", shared)],
                        "glm": [Credential("glm", shared)]})
    name = f"shared:{fingerprint(shared)}"
    said = [r.getMessage() for r in caplog.records if name in r.getMessage()]
    assert len(said) == 1
    assert "read once" in said[0] and "not yet restarted" in said[0]
    assert shared not in caplog.text


_SHARED = "sk-shared-restart-0123456789"


def _full_window(url: str, prefix: str, clock: FakeClock, before: tuple[str, ...] | str) -> None:
    """Two requests to the shared key (``max_rpm: 2``) by a process of the config before the
    edit: listed by the providers ``before``, or (a string) kept under that state name as an
    older release kept it."""
    backend = RedisPoolState(url, clock=clock, options=RedisPoolOptions(key_prefix=prefix))
    cred = Credential("zhipu", _SHARED, max_rpm=2)
    for _ in range(2):
        if isinstance(before, str):
            res = backend.acquire(before, [KeySpec(cred.fingerprint, max_rpm=2)], PoolPolicy())
            backend.release(before, cred.fingerprint, Outcome("success"), PoolPolicy(),
                            lease=res.lease)
        else:
            pool = CredentialPool({p: [Credential(p, _SHARED, max_rpm=2)] for p in before},
                                  backend=backend)
            pool.success(pool.acquire(before[0]))
    backend.close()


@pytest.mark.parametrize("before,after", [
    (("zhipu", "glm"), ("zhipu", "glm", "bigmodel")),   # an alias added
    (("zhipu", "glm", "bigmodel"), ("zhipu", "glm")),   # an alias removed
    (("zhipu",), ("zhipu", "glm")),                     # a provider's first alias
    (("zhipu", "glm"), ("zhipu",)),                     # its last alias removed
    ("glm+zhipu", ("zhipu", "glm")),                    # state as decision 227 named it
])
def test_a_restart_after_an_alias_edit_keeps_the_shared_key_s_window(
        before: tuple[str, ...] | str, after: tuple[str, ...], redis_url: str,
        redis_prefix: str) -> None:
    """The group's state name joined its members' names, so adding or removing an alias renamed
    it and the restarted fleet started the key from an empty window (and cooldowns, removals,
    breakers): twice the key's limit in that minute."""
    clock = FakeClock(1000.0)
    _full_window(redis_url, redis_prefix, clock, before)
    _restart_finds_the_window_full(redis_url, redis_prefix, clock, after)


def _restart_finds_the_window_full(url: str, prefix: str, clock: FakeClock,
                                   after: tuple[str, ...]) -> None:
    """A process of the config ``after`` counts the key's two requests of the minute: `keys
    status` first, as an operator checks a deploy, then a third request is refused."""
    backend = RedisPoolState(url, clock=clock, options=RedisPoolOptions(key_prefix=prefix))
    pool = CredentialPool({p: [Credential(p, _SHARED, max_rpm=2)] for p in after},
                          backend=backend)
    assert [r.requests_last_window for r in pool.status()] == [2] * len(after)
    with pytest.raises(NoCredentialAvailable):
        pool.acquire(after[-1])
    backend.close()


@pytest.mark.parametrize("first,second,third", [
    (("zhipu",), ("zhipu", "glm"), ("zhipu",)),          # an alias tried, then taken back
    (("zhipu", "glm"), ("zhipu",), ("zhipu", "glm")),   # an alias taken out, then put back
])
def test_an_alias_edit_undone_keeps_the_requests_made_meanwhile(
        first: tuple[str, ...], second: tuple[str, ...], third: tuple[str, ...],
        redis_url: str, redis_prefix: str) -> None:
    """The carry-over read a former name only where the current one held nothing: after an edit
    undone within the state's TTL (7 days) the current name still held the key's state from
    before the edit, and the requests made under the edit's name were not counted: twice the
    key's limit in that minute. A window is the requests sent with the key under any name: the
    former names' are added to it (by request, so twice read is counted once)."""
    clock = FakeClock(1000.0)
    _full_window(redis_url, redis_prefix, clock, first)     # the key's state under the first name
    clock.advance(61.0)                                       # a minute later: that window is over
    _full_window(redis_url, redis_prefix, clock, second)    # the edit: two requests under its name
    _restart_finds_the_window_full(redis_url, redis_prefix, clock, third)


def test_a_request_in_flight_across_an_alias_edit_frees_its_slot_under_the_new_name(
        redis_url: str, redis_prefix: str) -> None:
    """An alias removed while a request of the old config is in flight: the restarted process
    reads the group's state (its window, cooldowns) under its own name, but the request's
    lease stays where its process releases it. Carried over too, it held the key's slot under
    the new name until the lease expired (300 s), with ``max_in_flight_per_key: 1`` the key
    refused all that time."""
    clock = FakeClock(1000.0)

    def pool(*providers: str) -> CredentialPool:
        backend = RedisPoolState(redis_url, clock=clock,
                                 options=RedisPoolOptions(key_prefix=redis_prefix))
        return CredentialPool({p: [Credential(p, _SHARED)] for p in providers},
                              policy=PoolPolicy(max_in_flight=1), backend=backend)

    old = pool("zhipu", "glm")
    in_flight = old.acquire("glm")
    new = pool("zhipu")                        # glm removed from the config, a process restarted
    assert [r.requests_last_window for r in new.status()] == [1]   # the window came along
    old.success(in_flight)                     # the old process ends its request under its name
    new.success(new.acquire("zhipu"))          # and the slot is free under the new one
    assert [r.requests_last_window for r in new.status()] == [2]


@pytest.mark.parametrize("order", [("zhipu", "glm"), ("glm", "zhipu")])
def test_a_key_under_two_names_with_two_limits_keeps_the_stricter(
        order: tuple[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """One window for the key, but each name checked it against its own ``max_rpm``: the alias
    with the larger one filled the window past the smaller (5 requests a minute to a key one
    entry said takes 2), whichever asked first."""
    clock = FakeClock(1000.0)
    shared = "sk-shared-limits-0123456789"
    pool = CredentialPool({"zhipu": [Credential("zhipu", shared, max_rpm=2, max_tpm=1000)],
                           "glm": [Credential("glm", shared, max_rpm=5)]},
                          backend=InMemoryPoolState(clock))
    granted = 0
    for provider in order * 3:
        try:
            lease = pool.acquire(provider)
        except NoCredentialAvailable:
            continue
        granted += 1
        pool.success(lease)
    assert granted == 2
    assert {r.max_rpm for r in pool.status()} == {2}
    assert "max_rpm 2 and 5" in caplog.text and shared not in caplog.text


@pytest.mark.parametrize("keys,expected", [
    ({"a": ["k1"], "b": ["k2"]}, {"a": "a", "b": "b"}),
    ({"zhipu": ["k1"], "glm": ["k1", "k2"]}, {"zhipu": "shared:k1", "glm": "shared:k1"}),
    # an alias added or removed: the name stays
    ({"zhipu": ["k1"], "glm": ["k1", "k2"], "bigmodel": ["k1"]},
     {"zhipu": "shared:k1", "glm": "shared:k1", "bigmodel": "shared:k1"}),
    # linked through a third: one state for the three, named by the least shared key; an
    # unrelated one keeps its own
    ({"c": ["k1"], "a": ["k2"], "b": ["k1", "k2"], "d": ["k3"]},
     {"a": "shared:k1", "b": "shared:k1", "c": "shared:k1", "d": "d"}),
    # a key only one member lists does not name the group
    ({"a": ["k0", "k5"], "b": ["k5"]}, {"a": "shared:k5", "b": "shared:k5"}),
    ({"a": [], "b": []}, {"a": "a", "b": "b"}),
])
def test_state_names_join_the_providers_that_list_one_key(keys: dict[str, list[str]],
                                                          expected: dict[str, str]) -> None:
    assert {p: name for p, (name, _) in state_names(keys).items()} == expected


@pytest.mark.parametrize("name,group,fps,expected", [
    ("shared:k1", ("glm", "zhipu"), ["k2", "k1"],
     ["glm+zhipu", "shared:k2", "glm", "zhipu"]),
    ("zhipu", ("zhipu",), ["k1", "k2"], ["shared:k1", "shared:k2"]),
    ("solo", ("solo",), [], []),
])
def test_former_names_are_tried_most_recent_first(name: str, group: tuple[str, ...],
                                                  fps: list[str], expected: list[str]) -> None:
    assert former_names(name, group, fps) == expected


_ROT = ("sk-rotate-aaaa-0123456789", "sk-rotate-bbbb-0123456789", "sk-rotate-cccc-0123456789")


def _config_pool(url: str, prefix: str, clock: FakeClock,
                 config: dict[str, tuple[int, ...]]) -> tuple[CredentialPool, RedisPoolState]:
    """A process of ``config``: each provider lists those of :data:`_ROT` (``max_rpm: 2``)."""
    backend = RedisPoolState(url, clock=clock, options=RedisPoolOptions(key_prefix=prefix))
    return CredentialPool({p: [Credential(p, _ROT[i], max_rpm=2) for i in keys]
                           for p, keys in config.items()}, backend=backend), backend


def _least(*keys: int) -> int:
    """Which of :data:`_ROT`'s keys names a group listing ``keys``: the least fingerprint."""
    return min(keys, key=lambda i: fingerprint(_ROT[i]))


@pytest.mark.parametrize("edit", ["the naming key rotated out", "the group split"])
def test_a_key_keeps_its_window_when_its_group_s_name_goes(
        edit: str, redis_url: str, redis_prefix: str) -> None:
    """A group is named by its least shared key: rotating that key out of the config, or
    splitting the group, renames it to a name none of the former ones listed (the old one names
    a key the config no longer lists), and the restarted fleet started the other keys afresh."""
    clock = FakeClock(1000.0)
    naming = _least(0, 1)
    other = 1 - naming
    before = {"zhipu": (0, 1), "glm": (0, 1)}
    after = ({"zhipu": (other, 2), "glm": (other, 2)} if edit.startswith("the naming")
             else {"zhipu": (naming,), "glm": (other,), "bigmodel": (other,)})
    old, old_backend = _config_pool(redis_url, redis_prefix, clock, before)
    for _ in range(2):   # the other key's window full: two requests by name of that key
        lease = old.acquire("zhipu")
        while lease.credential.secret != _ROT[other]:
            old.release(lease)
            lease = old.acquire("zhipu")
        old.success(lease)
    old_backend.close()
    new, new_backend = _config_pool(redis_url, redis_prefix, clock, after)
    holder = "zhipu" if edit.startswith("the naming") else "glm"
    assert {r.requests_last_window for r in new.status()
            if r.fingerprint == fingerprint(_ROT[other]) and r.provider == holder} == {2}
    new_backend.close()
