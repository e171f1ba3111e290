"""Tests of ``hermes_core/agent/pool/lua_acquire.py``: ACQUIRE's arguments (the script itself
runs against Redis in test_redis.py and the contract suite of test_state.py)."""

from __future__ import annotations

from hermes_core.agent.pool.lua_acquire import acquire_args
from hermes_core.agent.pool.state import KeySpec, PoolPolicy


def test_acquire_args_give_the_request_then_each_key_with_what_the_caller_knows() -> None:
    pol = PoolPolicy(strategy="fill_first", window_s=60.0, max_in_flight=None)
    keys = [KeySpec("a", weight=2, max_rpm=10), KeySpec("b", max_tpm=500)]
    args = acquire_args(-1.0, pol, keys, tokens=-3, rand=0.25, lease="l1", ttl=150.0,
                        state_ttl_s=600.0, epoch="e0", new_epoch="e1", workers=4,
                        known={"a": (1030.0, False), "b": (0.0, True)},
                        learned={"a": 0, "b": 8})
    assert args == [-1.0, "fill_first", 60.0, pol.breaker_cooldown_s, 0, 0.25, "l1", 150.0,
                    600.0, 2, pol.burst, 0, "e0", "e1", "0", 4,
                    "a", 2, 10, 0, 1030.0, "0", 0,
                    "b", 1, 0, 500, 0.0, "1", 8]
