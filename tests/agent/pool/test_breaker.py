"""Tests of ``hermes_core/agent/pool/breaker.py``.

Table tests for the pure circuit-breaker state machine.
"""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.breaker import (
    CLOSED,
    BreakerState,
    breaker_check,
    breaker_failure,
    breaker_merge,
    breaker_success,
)


@pytest.mark.parametrize(
    ("state", "now", "allowed", "probe", "mode_after", "retry_at"),
    [
        (CLOSED, 100.0, True, False, "closed", None),
        (BreakerState("closed", 4, 0.0), 100.0, True, False, "closed", None),
        (BreakerState("open", 5, 90.0), 100.0, False, False, "open", 120.0),
        (BreakerState("open", 5, 90.0), 119.99, False, False, "open", 120.0),
        (BreakerState("open", 5, 90.0), 120.0, True, True, "half_open", None),
        (BreakerState("half_open", 5, 110.0), 115.0, False, False, "half_open", 140.0),
        # a probe that never reported back is replaced after another cool-down
        (BreakerState("half_open", 5, 110.0), 140.0, True, True, "half_open", None),
    ],
)
def test_breaker_check(state: BreakerState, now: float, allowed: bool, probe: bool,
                       mode_after: str, retry_at: float | None) -> None:
    chk = breaker_check(state, now, cooldown=30.0)
    assert (chk.allowed, chk.probe, chk.state.mode, chk.retry_at) == (allowed, probe, mode_after,
                                                                      retry_at)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (CLOSED, BreakerState("closed", 1, 0.0)),
        (BreakerState("closed", 2, 0.0), BreakerState("open", 3, 50.0)),
        (BreakerState("half_open", 3, 40.0), BreakerState("open", 4, 50.0)),
        (BreakerState("open", 3, 40.0), BreakerState("open", 3, 40.0)),
    ],
)
def test_breaker_failure(state: BreakerState, expected: BreakerState) -> None:
    assert breaker_failure(state, 50.0, threshold=3) == expected


@pytest.mark.parametrize("state", [CLOSED, BreakerState("closed", 2, 0.0),
                                   BreakerState("half_open", 3, 1.0)])
def test_breaker_success_closes(state: BreakerState) -> None:
    assert breaker_success(state) == CLOSED


def test_only_one_probe_after_cooldown() -> None:
    state = BreakerState("open", 5, 0.0)
    first = breaker_check(state, 31.0, 30.0)
    second = breaker_check(first.state, 31.5, 30.0)
    assert first.allowed and first.probe
    assert not second.allowed and second.retry_at == 61.0


@pytest.mark.parametrize(("a", "b", "expected"), [
    (CLOSED, BreakerState("open", 5, 100.0), BreakerState("open", 5, 100.0)),
    (BreakerState("open", 5, 100.0), CLOSED, BreakerState("open", 5, 100.0)),
    (BreakerState("open", 5, 100.0), BreakerState("open", 6, 90.0), BreakerState("open", 6, 100.0)),
    (BreakerState("half_open", 5, 100.0), BreakerState("open", 5, 90.0),
     BreakerState("open", 5, 90.0)),
    (BreakerState("closed", 3, 0.0), BreakerState("closed", 1, 0.0), BreakerState("closed", 3, 0.0)),
    (CLOSED, CLOSED, CLOSED),
])
def test_breaker_merge_keeps_the_more_cautious_view(a: BreakerState, b: BreakerState,
                                                    expected: BreakerState) -> None:
    """Two views of one breaker (the outage's local one and Redis's) as one: the more cautious
    mode wins, the same mode keeps the later opening and the most failures; order-free."""
    assert breaker_merge(a, b) == expected == breaker_merge(b, a)
