"""Tests of ``hermes_core/agent/pool/fallback.py``: a worker's share of a key while Redis is away
(the outage behaviour itself runs on a real redis-server in test_redis_outage.py)."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.fallback import LocalPoolState, share, worker_share
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.testing import FakeClock


@pytest.mark.parametrize(("limit", "workers", "slot", "share"), [
    (10, 4, 0, 3), (10, 4, 1, 3), (10, 4, 2, 2), (10, 4, 3, 2),   # 3 + 3 + 2 + 2 = 10
    (10, 4, None, 2),            # no slot: the floor, never more than a slot holder's
    (8, 4, 3, 2), (7, 1, 0, 7), (2, 4, 3, 1), (10, 4, 9, 2),
])
def test_worker_share_by_slot_adds_up_to_the_limit(limit: int, workers: int, slot: int | None,
                                                  share: int) -> None:
    assert worker_share(limit, workers, slot) == share


def test_the_workers_token_shares_add_up_to_the_tokens_in_the_window() -> None:
    # five requests in the window, newest first 100, 200, 200, 200, 200 tokens; two workers
    raw = "4|0|996:200,997:200,998:200,999:200"
    mine = share(raw, 1000.0, 50.0, 60.0, workers=2, sent=True, slot=0, tokens=100)
    other = share(raw.replace("4|", "5|", 1) + ",1000:100", 1000.0, 50.0, 60.0, workers=2,
                  sent=False, slot=1)
    assert sum(tok for _, tok in mine) == 450    # (100+200)/2 + (200+200)/2 + 200/2
    assert sum(tok for _, tok in mine) * 2 >= 900 and sum(tok for _, tok in other) * 2 >= 900
    assert [t for t, _ in mine] == [46.0, 48.0, 50.0]   # local times, oldest first


def test_a_share_past_the_listed_times_counts_the_listed_mean() -> None:
    # 70 requests in the window, only the newest 2 listed (100 tokens each)
    got = share("70|0|999:100,1000:100", 1000.0, 1000.0, 60.0, workers=2, sent=False, slot=0)
    assert len(got) == 35 and sum(tok for _, tok in got) == 3500


@pytest.mark.parametrize("freed_by", ["its_end", "redis_back"])
def test_requests_in_flight_through_redis_hold_their_places_until_they_end_or_redis_is_back(
        freed_by: str) -> None:
    local, pol = LocalPoolState(FakeClock(100.0)), PoolPolicy(max_in_flight=1)
    local.hold_elsewhere("p", {"k": [("lease-1", 30.0)]})
    local.hold_elsewhere("p", {"k": [("lease-1", 30.0)]})     # told twice: counted once
    assert local.acquire("p", [KeySpec("k")], pol).fingerprint is None
    local.release("p", "k", Outcome("ok"), pol, lease="lease-1")   # names no local request
    assert local.acquire("p", [KeySpec("k")], pol).fingerprint is None
    if freed_by == "its_end":
        local.end_elsewhere("p", "k", "lease-1")
    else:
        local.drop_elsewhere()
    local.end_elsewhere("p", "k", "lease-1")                   # ended already: frees no other
    got = local.acquire("p", [KeySpec("k")], pol)
    assert got.fingerprint == "k"
    local.drop_elsewhere()
    assert local.acquire("p", [KeySpec("k")], pol).fingerprint is None   # got's place holds
