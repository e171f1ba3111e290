"""Tests of ``hermes_core/agent/pool/lua_acquire.py``: ACQUIRE's arguments, and what its
refusals report on a real redis-server (the script runs against Redis in test_redis.py and the
contract suite of test_state_contract.py too)."""

from __future__ import annotations

from hermes_core.agent.pool.lua_acquire import acquire_args
from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.testing import FakeClock
from hermes_core.testing.redis_server import RedisServer


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


def test_a_process_the_provider_breaker_refused_keeps_to_its_share_once_redis_goes(
        own_redis: RedisServer, redis_prefix: str) -> None:
    """The provider breaker's refusal answered before the keys were read, so the refused process
    kept the window as its last grant showed it: a's 1 of 4, then b filled the window and its
    failures on another key opened the provider's breaker, a was refused; Redis stopped, a sent
    another and the fleet 5 in a window of 4. The breaker's refusal now reports each key as the
    fleet queue's does (fingerprints, deadlines, windows: no secret)."""
    clock = FakeClock(1000.0)
    opts = RedisPoolOptions(key_prefix=redis_prefix, workers=2, reconnect_interval_s=60.0,
                            fleet_queue=False)
    pol = PoolPolicy(window_s=10.0, breaker_failures=2)
    key, other = KeySpec("key-fleet", max_rpm=4), KeySpec("key-other")
    a, b = (RedisPoolState(own_redis.url, clock=clock, options=opts) for _ in range(2))
    sent = {"a": 0, "b": 0}

    def take(name: str, be: RedisPoolState) -> bool:
        res = be.acquire("p", [key], pol)
        if res.fingerprint is None:
            return False
        be.release("p", res.fingerprint, Outcome("ok"), pol, lease=res.lease)
        sent[name] += 1
        return True

    assert take("a", a)
    for _ in range(3):
        assert take("b", b)
    for _ in range(2):                   # the provider's breaker opens
        res = b.acquire("p", [other], pol)
        assert res.fingerprint == "key-other"
        b.release("p", "key-other", Outcome("failure"), pol, lease=res.lease)
    refused = a.acquire("p", [key], pol)
    assert refused.fingerprint is None and refused.available_at is not None
    own_redis.stop()
    for name, be in (("a", a), ("b", b)):
        while take(name, be):
            assert sum(sent.values()) <= 8
        assert be.degraded
    assert sent == {"a": 1, "b": 3}
    for be in (a, b):
        be.close()
