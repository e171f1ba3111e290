"""Tests of ``hermes_core/agent/pool/lua_recovery.py``: MERGE's arguments from what a worker did
and learned on its local clock (the script itself runs against Redis in test_redis.py)."""

from __future__ import annotations

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.lua_recovery import merge_args
from hermes_core.agent.pool.quarantine import Standing


def test_merge_args_give_times_as_ages_and_drop_requests_out_of_their_window() -> None:
    sent = [(900.0, 5, 60.0), (950.0, 7, 60.0), (990.0, 9, 30.0)]
    args = merge_args(-1.0, 1000.0, (1030.0, False), Standing(), None, sent, 604800.0, "u")
    # the window is the widest of the requests kept (the one at 900 has left its 60 s)
    assert args == [-1.0, 30.0, "0", 604800.0, 60.0, "u", "", 0, 0.0, "", 0, 0.0, 0,
                    50.0, 7, 10.0, 9]


def test_merge_args_carry_a_removal_strikes_and_the_breakers_not_closed() -> None:
    standing = Standing(2, BreakerState("open", 3, 980.0), True)
    args = merge_args(5.0, 1000.0, (0.0, False), standing, BreakerState("half_open", 1, 995.0),
                      [], 60.0, "u")
    assert args == [5.0, -1000.0, "1", 60.0, 0.0, "u", "open", 3, 20.0, "half_open", 1, 5.0, 2]
    closed = merge_args(5.0, 1000.0, (0.0, True), Standing(), BreakerState("closed", 0, 0.0),
                        [], 60.0, "u")
    assert closed[2] == "1" and closed[6:12] == ["", 0, 0.0, "", 0, 0.0]
