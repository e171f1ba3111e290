"""Tests of ``hermes_core/agent/pool/lua_release.py``: RELEASE's arguments (the script itself
runs against Redis in test_redis.py and the contract suite of test_state_contract.py)."""

from __future__ import annotations

import math

import pytest

from hermes_core.agent.pool.lua_release import release_args
from hermes_core.agent.pool.state import Outcome, PoolPolicy


def test_release_args_follow_the_script_s_argv() -> None:
    pol = PoolPolicy(window_s=60.0, learn_limits=True)
    args = release_args(-1.0, Outcome("rate_limited", 12.5, limit=100, remaining=0, reset_s=30.0),
                        pol, lease="l1", tokens=40, state_ttl_s=600.0, new_epoch="e2")
    assert args == [-1.0, "rate_limited", 12.5, "l1", pol.breaker_cooldown_s,
                    pol.default_cooldown_s, pol.breaker_failures, 600.0, "0", 40, 60.0, 100, "1",
                    0, 30.0, pol.auth_recheck_s, pol.auth_recheck_max_s, pol.auth_max_strikes,
                    "e2"]


@pytest.mark.parametrize("retry_after", [math.inf, math.nan, None])
def test_release_args_send_no_number_lua_cannot_read(retry_after: float | None) -> None:
    args = release_args(-1.0, Outcome("ok", retry_after, limit=None, remaining=None),
                        PoolPolicy(), lease="", tokens=0, state_ttl_s=60.0, new_epoch="e2")
    assert all(not (isinstance(a, float) and not math.isfinite(a)) for a in args)
    assert args[2] in ("", 900.0) and args[11] == "" and args[13] == "" and args[14] == ""
