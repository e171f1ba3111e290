"""Tests of ``hermes_core/agent/pool/quarantine.py``: the pure decisions about a key the provider
rejected (the backends' behaviour is in the contract tests of ``test_state_contract.py``)."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.breaker import CLOSED, BreakerState
from hermes_core.agent.pool.quarantine import (
    Standing,
    after_auth_failure,
    auth_recheck_after,
    merge_standing,
)
from hermes_core.agent.pool.state import KeySpec, PoolPolicy, evaluate_key

AUTH = PoolPolicy(breaker_cooldown_s=30.0, auth_recheck_s=60.0, auth_recheck_max_s=300.0,
                  auth_max_strikes=4)


@pytest.mark.parametrize(("strikes", "expected"), [
    (1, 60.0), (2, 120.0), (3, 240.0), (4, 300.0), (9, 300.0), (2000, 300.0)])
def test_auth_recheck_grows_to_its_cap(strikes: int, expected: float) -> None:
    assert auth_recheck_after(strikes, AUTH) == expected


@pytest.mark.parametrize(
    ("strikes", "removed", "breaker", "probe", "expected"),
    [
        # the first rejection quarantines: one request rechecks the key 60 s later
        (0, False, CLOSED, False, (1, False, BreakerState("open", 0, 1030.0), True)),
        # a request that was in flight when the key was quarantined: no second strike
        (1, False, BreakerState("open", 0, 1030.0), False,
         (1, False, BreakerState("open", 0, 1030.0), False)),
        # the recheck rejected again: twice as long
        (1, False, BreakerState("half_open", 0, 1060.0), True,
         (2, False, BreakerState("open", 0, 1090.0), True)),
        (3, False, BreakerState("half_open", 0, 1060.0), True,
         (4, True, BreakerState("half_open", 0, 1060.0), True)),   # the 4th: removed for good
        (4, True, CLOSED, True, (4, True, CLOSED, False)),        # removed stays removed
    ],
)
def test_after_auth_failure(strikes: int, removed: bool, breaker: BreakerState, probe: bool,
                            expected: tuple[object, ...]) -> None:
    assert after_auth_failure(strikes, removed, breaker, 1000.0, probe, AUTH) == expected


def test_one_strike_removes_at_once_as_before() -> None:
    one = PoolPolicy(auth_max_strikes=1)
    assert after_auth_failure(0, False, CLOSED, 1000.0, False, one) == (1, True, CLOSED, True)


def test_a_quarantined_key_is_never_waited_for_and_names_its_recheck() -> None:
    av = evaluate_key(KeySpec("a"), False, 0.0, BreakerState("open", 0, 1030.0), [], 0, 1000.0,
                      AUTH, auth_strikes=1)
    assert not av.ok and av.free_at is None and av.recheck_at == 1060.0
    due = evaluate_key(KeySpec("a"), False, 0.0, BreakerState("open", 0, 1030.0), [], 0, 1060.0,
                       AUTH, auth_strikes=1)
    assert due.ok and due.probe


OPEN_1 = BreakerState("open", 0, 1030.0)     # strike 1: rechecked at 1060
OPEN_2 = BreakerState("open", 0, 1090.0)     # strike 2: rechecked at 1120


@pytest.mark.parametrize(("a", "b", "merged"), [
    # nothing known on one side (a Redis that restarted empty): the other's view whole
    (Standing(), Standing(1, OPEN_1), Standing(1, OPEN_1)),
    # more strikes and the later recheck win, whichever side holds them
    (Standing(1, OPEN_1), Standing(2, OPEN_2), Standing(2, OPEN_2)),
    (Standing(2, OPEN_1), Standing(1, OPEN_2), Standing(2, OPEN_2)),
    # a recheck in flight (half-open) on one side, a quarantine on the other: out until recheck
    (Standing(1, BreakerState("half_open", 0, 1065.0)), Standing(2, OPEN_2), Standing(2, OPEN_2)),
    # a breaker opened by 5xx (no strike) and a quarantine: the quarantine and its recheck
    (Standing(0, BreakerState("open", 5, 1100.0)), Standing(1, OPEN_1),
     Standing(1, BreakerState("open", 5, 1100.0))),
    # removal wins and keeps the most strikes
    (Standing(8, OPEN_2, removed=True), Standing(3, OPEN_1), Standing(8, OPEN_2, removed=True)),
    (Standing(), Standing(1, CLOSED, removed=True), Standing(1, CLOSED, removed=True)),
])
def test_merge_standing_keeps_the_stricter_view(a: Standing, b: Standing,
                                                merged: Standing) -> None:
    assert merge_standing(a, b) == merged
    assert merge_standing(b, a) == merged       # whichever side is the fleet's


def test_a_standing_moves_onto_another_clock_with_its_recheck() -> None:
    assert Standing(1, OPEN_1).shifted(-7.5) == Standing(1, BreakerState("open", 0, 1022.5))
    assert Standing().shifted(100.0) == Standing()        # a closed breaker has no time
