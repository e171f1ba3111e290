"""Tests of ``hermes_core/agent/pool/fallback.py``: a worker's share of a key while Redis is away
(the outage behaviour itself runs on a real redis-server in test_redis.py)."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.fallback import worker_share


@pytest.mark.parametrize(("limit", "workers", "slot", "share"), [
    (10, 4, 0, 3), (10, 4, 1, 3), (10, 4, 2, 2), (10, 4, 3, 2),   # 3 + 3 + 2 + 2 = 10
    (10, 4, None, 2),            # no slot: the floor, never more than a slot holder's
    (8, 4, 3, 2), (7, 1, 0, 7), (2, 4, 3, 1), (10, 4, 9, 2),
])
def test_worker_share_by_slot_adds_up_to_the_limit(limit: int, workers: int, slot: int | None,
                                                  share: int) -> None:
    assert worker_share(limit, workers, slot) == share
