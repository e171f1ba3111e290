"""Tests of ``hermes_core/agent/pool/worker_slot.py``: a worker's slot among the fleet, on a real
redis-server with an injected monotonic clock; the shares it gives while Redis is away."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.agent.pool.worker_slot import WorkerSlot, slot_keys
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer
from tests.agent.pool.conftest import born_a_ttl_ago


@pytest.fixture
def rds(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


def _slots(client: redis.Redis, prefix: str, workers: int, clock: FakeClock,
           count: int) -> list[WorkerSlot]:
    """``count`` slots of a fleet whose slots were born a TTL ago (:func:`born_a_ttl_ago`)."""
    redis_clock = born_a_ttl_ago(client, prefix, workers)
    return [WorkerSlot(client, prefix, workers, ttl_s=60.0, monotonic=clock, clock=redis_clock)
            for _ in range(count)]


def _fleet_of_two(server: RedisServer, prefix: str) -> Callable[[], RedisPoolState]:
    """What starts a worker of a fleet of two (all on one pair of clocks), each probing Redis
    again only after a minute, so a Redis stopped by the test stays away for its sends. The
    fleet's slots were first claimed a TTL before (by a worker since closed): no worker that
    has not heard of a restart may still believe the slots they claim."""
    opts = RedisPoolOptions(key_prefix=prefix, workers=2, reconnect_interval_s=60.0)
    monotonic, clock = FakeClock(100.0), FakeClock(5000.0)
    founder = RedisPoolState(server.url, monotonic=monotonic, options=opts, clock=clock)
    founder.acquire("p", [KeySpec("founding")], PoolPolicy())
    founder.close()
    clock.t += opts.slot_ttl_s
    return lambda: RedisPoolState(server.url, monotonic=monotonic, options=opts, clock=clock)


def _two_holding_0_and_1(own_redis: RedisServer, redis_prefix: str) -> tuple[
        Callable[[], RedisPoolState], RedisPoolState, RedisPoolState, PoolPolicy]:
    """A fleet of two (:func:`_fleet_of_two`) whose workers ``a`` and ``b`` have each acquired
    once and hold slots 0 and 1, the policy they used, and the fleet's worker maker."""
    worker = _fleet_of_two(own_redis, redis_prefix)
    a, b = worker(), worker()
    pol = PoolPolicy(window_s=10.0)
    for be in (a, b):
        assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert (a._slot.index, b._slot.index) == (0, 1)
    return worker, a, b, pol


def _sent_while_redis_is_away(pol: PoolPolicy, **workers: RedisPoolState) -> dict[str, int]:
    """How many requests of a key of 5 a minute each worker sends, in turn, from its fallback
    share once Redis has gone away (each ends refused by its share, degraded)."""
    sent = {}
    for name, be in workers.items():
        sent[name] = 0
        while be.acquire("p", [KeySpec("k", max_rpm=5)], pol).fingerprint == "k":
            sent[name] += 1
        assert be.degraded
    return sent


def _sent_in_an_outage(own_redis: RedisServer, pol: PoolPolicy, also: tuple[RedisPoolState, ...] = (),
                       **workers: RedisPoolState) -> dict[str, int]:
    """:func:`_sent_while_redis_is_away` with Redis stopped for it and started again after;
    every worker (and ``also``) closed whatever the count."""
    own_redis.stop()
    try:
        return _sent_while_redis_is_away(pol, **workers)
    finally:
        own_redis.start()
        for be in (*workers.values(), *also):
            be.close()


def test_a_claim_is_renewed_a_third_of_its_ttl_apart_and_lapses_locally_at_its_ttl(
        rds: redis.Redis, redis_prefix: str) -> None:
    clock = FakeClock(100.0)
    slot, = _slots(rds, redis_prefix, 4, clock, 1)
    assert slot.due() and slot.held() is None and slot.share(10) == 2   # never claimed: floor
    slot.claim()
    assert slot.index == 0 and slot.held() == 0 and slot.share(10) == 3
    assert not slot.due()
    clock.t += 20.0                        # a third of the TTL: the next acquire renews
    assert slot.due() and slot.held() == 0
    clock.t += 40.0                        # the TTL since the last renewal: lapsed here too
    assert slot.held() is None and slot.share(10) == 2
    slot.claim()
    assert slot.held() == 0 and 0 < rds.pttl(slot_keys(redis_prefix, 4)[0]) <= 60_000


def test_a_lone_worker_claims_no_slot_and_keeps_each_key_whole(rds: redis.Redis,
                                                               redis_prefix: str) -> None:
    slot, = _slots(rds, redis_prefix, 1, FakeClock(100.0), 1)
    keys = [KeySpec("a", max_rpm=10, max_tpm=1000), KeySpec("b")]
    assert not slot.due() and slot.share(10) == 10
    assert slot.local_keys(keys) == keys


def test_each_key_s_local_budget_is_the_slot_s_share_of_it(rds: redis.Redis,
                                                          redis_prefix: str) -> None:
    clock = FakeClock(100.0)
    first, second = _slots(rds, redis_prefix, 4, clock, 2)
    first.claim()
    second.claim()
    keys = [KeySpec("a", max_rpm=10, max_tpm=1001), KeySpec("b")]
    assert [(k.max_rpm, k.max_tpm) for k in first.local_keys(keys)] == [(3, 251), (None, None)]
    assert [(k.max_rpm, k.max_tpm) for k in second.local_keys(keys)] == [(3, 250), (None, None)]


def test_each_worker_s_local_in_flight_cap_is_the_slot_s_share_of_max_in_flight(
        rds: redis.Redis, redis_prefix: str) -> None:
    """10 in flight over 4 workers: 3, 3, 2 by slot, the floor without one; at least 1 for a cap
    below the workers; no cap and a lone worker's policy stay as they are."""
    clock = FakeClock(100.0)
    slots = _slots(rds, redis_prefix, 4, clock, 4)
    for slot in slots[:3]:
        slot.claim()
    pol = PoolPolicy(max_in_flight=10)
    assert [s.local_policy(pol).max_in_flight for s in slots] == [3, 3, 2, 2]
    assert [s.local_policy(PoolPolicy(max_in_flight=1)).max_in_flight for s in slots] == [1] * 4
    assert slots[0].local_policy(PoolPolicy()) == PoolPolicy()
    lone, = _slots(rds, f"{redis_prefix}:lone", 1, clock, 1)
    assert lone.local_policy(pol) == pol


def test_a_slot_lost_with_redis_is_claimed_again_at_the_index_held_before(
        rds: redis.Redis, redis_prefix: str) -> None:
    clock = FakeClock(100.0)
    first, second = _slots(rds, redis_prefix, 2, clock, 2)
    first.claim()
    second.claim()
    assert (first.index, second.index) == (0, 1)
    rds.delete(*slot_keys(redis_prefix, 2))        # as a Redis that restarted empty
    second.lost()
    assert second.due()
    second.claim()                                  # index 0 is free, but 1 was its own
    assert second.index == 1 and not second.due()


def test_workers_claim_distinct_slots_and_their_outage_shares_add_up_to_the_limit(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Four workers, a key of 10 per window: while Redis is away they send 3 + 3 + 2 + 2 (their
    slots' shares), not 2 each (a fifth of the budget unused for the whole outage)."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=4, reconnect_interval_s=60.0)
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    restart_clock = born_a_ttl_ago(client, redis_prefix, 4)
    client.close()
    fleet = [RedisPoolState(own_redis.url, monotonic=FakeClock(100.0), options=opts,
                            clock=restart_clock)
             for _ in range(4)]
    keys = [KeySpec("a", max_rpm=10)]
    pol = PoolPolicy(window_s=10.0)
    for be in fleet:
        assert be.acquire("p", [KeySpec("b")], pol).fingerprint == "b"   # each claims a slot
    assert sorted(be._slot.index for be in fleet if be._slot.index is not None) == [0, 1, 2, 3]
    own_redis.stop()
    try:
        sent = 0
        for be in fleet:
            while be.acquire("p", keys, pol).fingerprint == "a":
                sent += 1
        assert sent == 10 and all(be.degraded for be in fleet)
    finally:
        own_redis.start()
        for be in fleet:
            be.close()


def test_a_worker_past_the_slots_takes_the_floor_share(rds: redis.Redis, redis_url: str,
                                                       redis_prefix: str) -> None:
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    clock = born_a_ttl_ago(rds, redis_prefix, 2)
    fleet = [RedisPoolState(redis_url, options=opts, clock=clock) for _ in range(3)]
    for be in fleet:
        be.acquire("p", [KeySpec("b")], PoolPolicy())
    assert [be._slot.index for be in fleet] == [0, 1, None]
    assert [be._slot.share(5) for be in fleet] == [3, 2, 2]
    for be in fleet:
        be.close()


FORK = multiprocessing.get_context("fork")
#: A guard against a hung child only (never a timing).
JOIN_S = 60


def _forked_worker(be: RedisPoolState, out: Any) -> None:
    """In a child: one acquire through the backend it inherited (which claims a slot), then what
    it holds: its slot, its share of a key of 10, its place's ticket in the fleet's queue."""
    try:
        be.acquire("p", [KeySpec("b")], PoolPolicy())
        fleet = be._fleet
        out.send((be._slot.index, be._slot.share(10), fleet.args()[0] if fleet else ""))
    finally:
        out.close()


def test_workers_forked_from_one_backend_claim_distinct_slots(rds: redis.Redis, redis_url: str,
                                                             redis_prefix: str) -> None:
    """A server that builds its pool before forking its workers (a preloaded app): each child
    inherited the parent's random id, so every one of them found "its" slot held and took
    index 0, with the larger share: 4 + 4 + 4 of a key of 10 while Redis is away, and one
    place in the fleet's queue for three processes. Each forked worker is its own: distinct
    slots whose shares add up to the limit, a ticket of its own."""
    be = RedisPoolState(redis_url, options=RedisPoolOptions(key_prefix=redis_prefix, workers=3),
                        clock=born_a_ttl_ago(rds, redis_prefix, 3))
    pipes = [FORK.Pipe(duplex=False) for _ in range(3)]
    kids = [FORK.Process(target=_forked_worker, args=(be, send)) for _, send in pipes]
    for kid in kids:
        kid.start()
    try:
        got = [recv.recv() if recv.poll(JOIN_S) else None for recv, _ in pipes]
    finally:
        for kid in kids:
            kid.join(JOIN_S)
        be.close()
    assert None not in got, got
    assert sorted(index for index, _, _ in got) == [0, 1, 2]
    assert sum(share for _, share, _ in got) == 10
    assert len({ticket for _, _, ticket in got}) == 3


def test_a_worker_that_sees_redis_restarted_empty_claims_its_slot_again_at_once(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Redis restarts empty; ``a`` notices with its next acquire (the pool state's epoch) but
    claimed again only with the acquire after that. A worker started meanwhile (``c``, replacing
    ``b``) took the first free slot, a's 0, and once Redis went away both served a's larger
    share: 3 + 3 of a key of 5. Claimed again at once, ``a`` keeps 0 and ``c`` takes 1. Both
    claimed within a TTL of the slots' birth (the restart), so both give the floor share: 2 + 2
    (a taken-back index may have been another's in between, see WorkerSlot.serving)."""
    worker, a, b, pol = _two_holding_0_and_1(own_redis, redis_prefix)
    own_redis.stop()
    own_redis.start()                                  # empty: every slot lost
    assert a.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    c = worker()                                       # b's process replaced
    assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert (a._slot.index, c._slot.index) == (0, 1)
    assert _sent_in_an_outage(own_redis, pol, also=(b,), a=a, c=c) == {"a": 2, "c": 2}


def test_close_gives_the_worker_s_slot_back(rds: redis.Redis, redis_url: str,
                                            redis_prefix: str) -> None:
    """A worker restarted by its server closes its backend: its slot is free at once for the one
    that replaces it, not held to its TTL while that one takes the floor share."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    clock = born_a_ttl_ago(rds, redis_prefix, 2)
    a, b = (RedisPoolState(redis_url, options=opts, clock=clock) for _ in range(2))
    for be in (a, b):
        be.acquire("p", [KeySpec("other")], PoolPolicy())
    assert (a._slot.index, b._slot.index) == (0, 1)
    a.close()
    assert rds.get(slot_keys(redis_prefix, 2)[0]) is None
    assert rds.get(slot_keys(redis_prefix, 2)[1]) == b._slot.worker_id
    c = RedisPoolState(redis_url, options=opts, clock=clock)
    c.acquire("p", [KeySpec("other")], PoolPolicy())
    assert c._slot.index == 0 and c._slot.share(5) == 3
    a.acquire("p", [KeySpec("other")], PoolPolicy())   # used again after close: claims anew
    assert a._slot.index is None and a._slot.share(5) == 2
    for be in (b, c, a):
        be.close()


def test_close_during_an_outage_returns_and_the_slot_lapses(own_redis: RedisServer,
                                                           redis_prefix: str) -> None:
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0)
    be = RedisPoolState(own_redis.url, options=opts)
    be.acquire("p", [KeySpec("other")], PoolPolicy())
    assert be._slot.index == 0
    own_redis.stop()
    try:
        be.close()                                     # neither raises nor waits for Redis
        assert be._slot.held() is None
        be.acquire("p", [KeySpec("other")], PoolPolicy())
        assert be.degraded
    finally:
        own_redis.start()
        be.close()


def test_a_claim_answered_after_close_gave_the_slot_back_holds_no_slot(
        rds: redis.Redis, redis_url: str, redis_prefix: str) -> None:
    """``close()`` in one thread while another thread's acquire renews the claim: the renewal
    ran in Redis, then close() gave the slot back (Redis deleted it, and the worker replacing
    ``a`` took index 0), then the renewal's reply set the index here. ``a`` believed slot 0 for
    the claim's TTL with ``c`` holding it: 3 + 3 of a key of 5 once Redis went away."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    monotonic = FakeClock(100.0)
    a = RedisPoolState(redis_url, options=opts, monotonic=monotonic)
    a.acquire("p", [KeySpec("other")], PoolPolicy())
    assert a._slot.held() == 0
    monotonic.t += 25.0                    # past a third of the TTL: the next acquire renews
    real = a._slot._claim
    answered, go = threading.Event(), threading.Event()

    def claim(**kwargs: Any) -> Any:
        got = real(**kwargs)
        answered.set()                     # run in Redis; its reply not yet read here
        go.wait(JOIN_S)
        return got

    a._slot._claim = claim
    acquiring = threading.Thread(target=a.acquire, args=("p", [KeySpec("other")], PoolPolicy()))
    acquiring.start()
    try:
        assert answered.wait(JOIN_S)
        a.close()
    finally:
        go.set()
        acquiring.join(JOIN_S)
    c = RedisPoolState(redis_url, options=opts, monotonic=monotonic)
    c.acquire("p", [KeySpec("other")], PoolPolicy())
    try:
        keys = slot_keys(redis_prefix, 2)
        for be in (a, c):                  # what each believes, Redis holds under its id
            held = be._slot.held()
            assert held is None or rds.get(keys[held]) == be._slot.worker_id, (held, be)
        assert a._slot.share(5) + c._slot.share(5) <= 5
    finally:
        a.close()
        c.close()


@pytest.mark.parametrize("contact", ["release", "snapshot"])
def test_a_worker_whose_first_contact_after_redis_restarted_empty_is_not_an_acquire_claims_again(
        own_redis: RedisServer, redis_prefix: str, contact: str) -> None:
    """Redis restarts empty while ``a`` has a request in flight; ``c`` (replacing ``b``) starts
    and takes the first free slot, a's 0. ``a``'s next contacts are that request's release, or
    a status read: they told it nothing of the restart, and once Redis went away ``a`` and ``c``
    both served slot 0's larger share, 3 + 3 of a key of 5. Told by either, ``a`` claims again
    (slot 1, free since ``b`` left): 2, and ``c``, which cannot know that ``a`` heard, gives
    the floor share for the TTL after the restart (WorkerSlot.serving): 2 + 2."""
    worker = _fleet_of_two(own_redis, redis_prefix)
    a, b = worker(), worker()
    pol = PoolPolicy(window_s=10.0)
    in_flight = a.acquire("p", [KeySpec("other")], pol)
    assert in_flight.fingerprint == "other"
    assert b.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert (a._slot.index, b._slot.index) == (0, 1)
    own_redis.stop()
    own_redis.start()                                  # empty: every slot lost
    c = worker()                                       # b's process replaced
    assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert c._slot.index == 0
    if contact == "release":
        a.release("p", "other", Outcome("ok"), pol, lease=in_flight.lease)
    else:
        a.snapshot("p", [KeySpec("other")], pol)
    assert not a.degraded
    assert _sent_in_an_outage(own_redis, pol, also=(b,), a=a, c=c) == {"a": 2, "c": 2}


@pytest.mark.parametrize("contact", ["release", "snapshot"])
def test_a_worker_that_only_releases_or_reads_status_renews_its_slot(
        rds: redis.Redis, redis_url: str, redis_prefix: str, contact: str) -> None:
    """A worker whose requests run long asks Redis only through their releases (or a status
    read) for a while: those renew its claim as an acquire does, a third of the TTL apart, so
    it does not lapse to the floor share, or to another worker, while the worker is busy. (The
    fleet is a TTL old, and Redis's clock moves with this worker's: a renewal within a TTL of
    the slots' birth gives the floor share until then, see WorkerSlot.serving.)"""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    monotonic, clock = FakeClock(100.0), born_a_ttl_ago(rds, redis_prefix, 2)
    a = RedisPoolState(redis_url, options=opts, monotonic=monotonic, clock=clock)
    pol = PoolPolicy()
    leases = [a.acquire("p", [KeySpec("other")], pol).lease for _ in range(3)]
    assert a._slot.held() == 0
    try:
        for lease in leases:
            monotonic.t += 25.0             # past a third of the TTL: due for renewal
            clock.t += 25.0
            if contact == "release":
                a.release("p", "other", Outcome("ok"), pol, lease=lease)
            else:
                a.snapshot("p", [KeySpec("other")], pol)
            assert not a._slot.due()
        assert a._slot.held() == 0 and a._slot.share(5) == 3
        assert 55_000 < rds.pttl(slot_keys(redis_prefix, 2)[0]) <= 60_000
    finally:
        a.close()


def test_a_process_that_only_reads_status_claims_no_slot(rds: redis.Redis, redis_url: str,
                                                         redis_prefix: str) -> None:
    """``keys status`` reads the fleet's state through a backend of its own: it is no worker,
    and a slot it claimed would leave a worker of the fleet the floor share for the claim's TTL."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    viewer = RedisPoolState(redis_url, options=opts)
    try:
        viewer.snapshot("p", [KeySpec("k")], PoolPolicy())
        assert viewer._slot.held() is None
        assert [rds.get(k) for k in slot_keys(redis_prefix, 2)] == [None, None]
    finally:
        viewer.close()


def test_a_worker_whose_due_renewal_finds_redis_away_takes_the_floor_share(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """``a`` was idle while Redis restarted empty and ``c`` (replacing ``b``) took the first free
    slot, a's 0; Redis then went away. ``a``'s next acquire is due to renew its claim and cannot:
    it served the slot it last confirmed, 3 + 3 of a key of 5 with ``c``. A claim it could not
    renew when due is held no more: the floor share, 2 (and 2 for ``c``, whose slot was taken
    within the TTL after the restart: WorkerSlot.serving)."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0)
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    clock = born_a_ttl_ago(client, redis_prefix, 2)
    client.close()
    idle, busy = FakeClock(100.0), FakeClock(100.0)
    a = RedisPoolState(own_redis.url, monotonic=idle, options=opts, clock=clock)
    b = RedisPoolState(own_redis.url, monotonic=busy, options=opts, clock=clock)
    pol = PoolPolicy(window_s=10.0)
    for be in (a, b):
        assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert (a._slot.index, b._slot.index) == (0, 1)
    own_redis.stop()
    own_redis.start()                                  # empty: every slot lost
    c = RedisPoolState(own_redis.url, monotonic=busy, options=opts, clock=clock)
    assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert c._slot.index == 0
    idle.t += 25.0                                     # a third of the TTL: a's renewal is due
    assert _sent_in_an_outage(own_redis, pol, also=(b,), a=a, c=c) == {"a": 2, "c": 2}


def _forked_viewer(be: RedisPoolState, out: Any) -> None:
    """In a child: a status read through the backend it inherited, then its id and slot."""
    try:
        be.snapshot("p", [KeySpec("k")], PoolPolicy())
        out.send((be._slot.worker_id, be._slot.held()))
    finally:
        out.close()


def test_a_forked_child_that_only_reads_status_after_an_empty_restart_claims_no_slot(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """A worker forks a child that only reads status (it knows the parent's epoch). Redis had
    restarted empty: the child's status read resynced and claimed a slot, which left a worker
    of the fleet the floor share for the claim's TTL. A process holding no slot claims none."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2)
    be = RedisPoolState(own_redis.url, options=opts)
    assert be.acquire("p", [KeySpec("k")], PoolPolicy()).fingerprint == "k"
    assert be._slot.index == 0
    own_redis.restart()                                  # empty: every slot lost
    recv, send = FORK.Pipe(duplex=False)
    kid = FORK.Process(target=_forked_viewer, args=(be, send))
    kid.start()
    try:
        got = recv.recv() if recv.poll(JOIN_S) else None
    finally:
        kid.join(JOIN_S)
    assert got is not None
    child_id, held = got
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    try:
        slots = [client.get(k) for k in slot_keys(redis_prefix, 2)]
    finally:
        client.close()
    be.close()
    assert held is None and child_id not in slots, slots


def test_a_slot_claimed_after_an_empty_restart_gives_the_floor_share_while_another_may_believe_it(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """``a`` and ``b`` hold 0 and 1; Redis restarts empty; ``c`` (replacing ``b``) takes the
    first free slot, a's 0. ``a`` asks nothing before Redis goes away, its renewal not yet due
    (it cannot hear of the restart): ``a`` and ``c`` both served slot 0's larger share, 3 + 3 of
    a key of 5. A slot taken within a TTL of the slots' loss may still be believed by a worker
    that has not heard: its new holder takes the floor share until then, 3 + 2."""
    worker, a, b, pol = _two_holding_0_and_1(own_redis, redis_prefix)
    own_redis.restart()                                # empty: every slot lost
    c = worker()                                       # b's process replaced
    assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert c._slot.index == 0
    assert _sent_in_an_outage(own_redis, pol, also=(b,), a=a, c=c) == {"a": 3, "c": 2}


def test_a_slot_claimed_after_an_empty_restart_gives_its_share_once_every_old_claim_has_lapsed(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """The floor share of a slot taken after the slots' loss lasts a TTL from that loss (Redis's
    clock), no longer: by then a worker that has not heard has let its own claim lapse (the
    floor share too), and the new holder, renewing meanwhile, sends its slot's share: 2 + 3."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0)
    clock = FakeClock(5000.0)
    idle, busy = FakeClock(100.0), FakeClock(100.0)
    a = RedisPoolState(own_redis.url, monotonic=idle, options=opts, clock=clock)
    pol = PoolPolicy(window_s=10.0)
    assert a.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    own_redis.restart()                                # empty: every slot lost
    c = RedisPoolState(own_redis.url, monotonic=busy, options=opts, clock=clock)
    assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert c._slot.index == 0 and c._slot.share(5) == 2
    for _ in range(3):                                 # c renews its claim as it goes
        clock.t += 21.0
        busy.t += 21.0
        idle.t += 21.0
        assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert _sent_in_an_outage(own_redis, pol, a=a, c=c) == {"a": 2, "c": 3}


def test_a_slot_taken_back_after_its_claim_lapsed_gives_the_floor_share_after_an_empty_restart(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """``a`` held 0, then went idle past the TTL: its claim lapsed, and ``d``, started since,
    took the free 0. Redis restarts empty; ``a`` asks first and takes "its" 0 back (the index it
    held before), while ``d``, its renewal not yet due, asks nothing before Redis goes away. A
    slot taken back is exempt from the floor share, but this one was d's for a minute: both
    served slot 0's larger share, 3 + 3 of a key of 5. Only a claim still current when Redis
    lost it is a worker's own to take back; ``a`` takes the floor share, 2 + 3."""
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0)
    rds = redis.Redis.from_url(own_redis.url, decode_responses=True)
    clock = born_a_ttl_ago(rds, redis_prefix, 2)
    idle, busy = FakeClock(100.0), FakeClock(100.0)
    a = RedisPoolState(own_redis.url, monotonic=idle, options=opts, clock=clock)
    pol = PoolPolicy(window_s=10.0)
    assert a.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert a._slot.index == 0
    idle.t += opts.slot_ttl_s + 1                      # a idle past the TTL: lapsed here...
    clock.t += opts.slot_ttl_s + 1
    rds.delete(slot_keys(redis_prefix, 2)[0])          # ...and in Redis (its PX, a minute real)
    d = RedisPoolState(own_redis.url, monotonic=busy, options=opts, clock=clock)
    assert d.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert d._slot.index == 0 and d._slot.share(5) == 3
    own_redis.restart()                                # empty: every slot lost
    assert a.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
    assert a._slot.index == 0
    assert _sent_in_an_outage(own_redis, pol, a=a, d=d) == {"a": 2, "d": 3}
    rds.close()



def _a_back_on_the_slot_c_took(server: RedisServer, prefix: str, *, saved: Callable[[], None],
                               back: Callable[[], None]) -> dict[str, int]:
    """``a`` and ``b`` hold 0 and 1 (``saved()`` runs then); Redis restarts empty; ``b`` claims
    (the birth) and ``c`` takes the free 0 45 s later (the floor share until 60 s). ``back()``
    (5 s on) brings Redis back some other way before c's renewal is due, and ``a``, silent since
    before the empty restart, asks again and holds 0. What ``a`` and ``c`` send of a key of 5
    once Redis goes away at 62 s, c's floor over, its claim still held, its renewal not due."""
    opts = RedisPoolOptions(key_prefix=prefix, workers=2, reconnect_interval_s=60.0)
    rds = redis.Redis.from_url(server.url, decode_responses=True)
    clock = born_a_ttl_ago(rds, prefix, 2)
    rds.close()
    monos = [FakeClock(100.0) for _ in range(3)]
    a, b, c = (RedisPoolState(server.url, monotonic=m, options=opts, clock=clock) for m in monos)

    def later(seconds: float) -> None:
        for m in (*monos, clock):
            m.t += seconds

    pol = PoolPolicy(window_s=10.0)
    try:
        for be in (a, b):
            assert be.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
        assert (a._slot.index, b._slot.index) == (0, 1)
        saved()
        server.restart()                               # empty: every slot lost
        assert b.acquire("p", [KeySpec("other")], pol).fingerprint == "other"   # the birth
        later(45.0)
        assert c.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
        assert c._slot.index == 0 and c._slot.share(5) == 2
        later(5.0)
        back()
        later(2.0)
        assert a.acquire("p", [KeySpec("other")], pol).fingerprint == "other"
        assert a._slot.index == 0
        later(10.0)
        assert c._slot.share(5) == 3                   # a TTL after the empty restart
        server.stop()
        try:
            return _sent_while_redis_is_away(a=a, c=c, pol=pol)
        finally:
            server.start()
    finally:
        for be in (a, b, c):
            be.close()


def test_a_slot_taken_back_after_a_second_empty_restart_gives_the_floor_share(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """Redis restarts empty twice within a TTL (a crash loop). After the second, ``a`` takes
    "its" 0 back, its own claim not yet lapsed here, while ``c``, which took 0 in between,
    still believes it past its floor: 3 + 3 of a key of 5. A take-back is a claim like any
    other within a TTL of the birth: 2 + 3."""
    sent = _a_back_on_the_slot_c_took(own_redis, redis_prefix, saved=lambda: None,
                                      back=own_redis.restart)
    assert sent == {"a": 2, "c": 3}


def test_a_claim_restored_from_an_older_snapshot_gives_the_floor_share(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """After the empty restart, Redis restarts from a snapshot taken before it, which still
    holds ``a``'s claim on 0: ``a`` renews it (found under its id) while ``c``, which took 0
    in the empty run, still believes it past its floor: 3 + 3 of a key of 5. A renewal within
    a TTL of a birth (the restore is one) may be of a claim from before it: 2 + 3."""
    dump, kept = Path(own_redis.workdir) / "dump.rdb", Path(own_redis.workdir) / "kept.rdb"

    def save() -> None:
        rds = redis.Redis.from_url(own_redis.url)
        rds.save()
        rds.close()
        dump.rename(kept)

    def restore() -> None:
        own_redis.stop()
        kept.replace(dump)
        own_redis.start()
        dump.unlink()                                  # loaded: the later restarts are empty

    assert _a_back_on_the_slot_c_took(own_redis, redis_prefix, saved=save,
                                      back=restore) == {"a": 2, "c": 3}
