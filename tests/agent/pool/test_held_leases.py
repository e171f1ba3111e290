"""Tests of ``hermes_core/agent/pool/held_leases.py``: which of this process's Redis leases a
release ends, on an injected monotonic clock; the leases left in Redis during an outage ended
there, on a real redis-server, when it answers again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis

from hermes_core.agent.pool.held_leases import HeldLeases
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer

KEY = ("p", "a")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


@pytest.fixture
def leases(clock: FakeClock) -> HeldLeases:
    held = HeldLeases(clock)
    held.hold(KEY, "first", 60.0, 10)
    held.hold(KEY, "second", 60.0, 20)
    return held


def test_a_release_ends_the_lease_it_names(leases: HeldLeases) -> None:
    assert leases.take(KEY, "second") == ("second", 20)
    assert leases.take(KEY, "first") == ("first", 10)


def test_a_lease_released_already_ends_no_other_in_its_place(leases: HeldLeases) -> None:
    assert leases.take(KEY, "second") == ("second", 20)
    assert leases.take(KEY, "second") is None
    assert leases.take(KEY, "first") == ("first", 10)


def test_a_release_naming_no_lease_ends_the_key_s_oldest(leases: HeldLeases) -> None:
    assert leases.take(KEY, "") == ("first", 10)
    assert leases.take(KEY, "") == ("second", 20)
    assert leases.take(KEY, "") is None


def test_a_lease_of_another_key_is_not_taken(leases: HeldLeases) -> None:
    assert leases.take(("p", "b"), "first") is None
    assert leases.take(("q", "a"), "") is None


def test_leases_never_released_are_forgotten_at_their_expiry(leases: HeldLeases,
                                                              clock: FakeClock) -> None:
    clock.t += 60.0
    leases.hold(KEY, "third", 60.0, 30)
    assert leases.take(KEY, "first") is None and leases.take(KEY, "second") is None
    assert leases.take(KEY, "") == ("third", 30)


def _names(provider: str, fingerprint: str) -> list[str]:
    return [f"t:{{{provider}}}:k:{fingerprint}", f"t:{{{provider}}}:w:{fingerprint}",
            f"t:{{{provider}}}:l:{fingerprint}"]


def test_leases_left_in_redis_during_an_outage_are_ended_there_once_it_answers(
        own_redis: RedisServer, clock: FakeClock) -> None:
    """A request that ended while Redis was unreachable, and an acquire whose reply never came
    (it may have run there, holding each key it asked about and counting its request): ended in
    Redis when it answers; a Redis still away keeps them for the next time."""
    client = redis.Redis.from_url(own_redis.url, decode_responses=True, socket_timeout=2.0)
    leases = HeldLeases(clock)
    leases.ended_away(("p", "a"), "done")
    leases.unanswered("p", ["a", "b"], "lost", 40)
    own_redis.stop()
    with pytest.raises(redis.exceptions.ConnectionError):
        leases.settle(client, _names)
    own_redis.start()
    client.zadd(_names("p", "a")[2], {"done": 1.0, "live": 2.0})
    for fp in ("a", "b"):
        client.zadd(_names("p", fp)[2], {"lost": 3.0})
        client.zadd(_names("p", fp)[1], {"lost:40": 3.0, "other:5": 4.0})
    leases.settle(client, _names)
    assert client.zrange(_names("p", "a")[2], 0, -1) == ["live"]
    assert client.zrange(_names("p", "b")[2], 0, -1) == []
    assert [client.zrange(_names("p", fp)[1], 0, -1) for fp in ("a", "b")] == [["other:5"]] * 2
    client.zadd(_names("p", "a")[2], {"done": 1.0})
    leases.settle(client, _names)               # settled once: nothing is ended twice
    assert client.zrange(_names("p", "a")[2], 0, -1) == ["done", "live"]
    client.close()


def test_a_forked_child_holds_none_of_the_parent_s_leases(
        leases: HeldLeases, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """The parent's open leases (and those it must still end in Redis) are the parent's: the
    child's copy let a release naming no lease end the parent's oldest lease in Redis, which
    the parent still counted in flight, and a thread of the parent's inside the lock at the fork
    left it held in the child for ever. The child starts with none and a lock of its own."""
    leases.ended_away(KEY, "gone")

    def child() -> object:
        leases.hold(KEY, "mine", 60.0, 5)
        return leases.take(KEY, ""), leases.take(KEY, ""), leases._ended

    with held_by_a_thread(leases._lock):
        got = in_forked_child(child)
    assert got == (("mine", 5), None, [])
    assert leases.take(KEY, "") == ("first", 10)   # the parent's are still its own
