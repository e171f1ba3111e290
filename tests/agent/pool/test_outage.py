"""Tests of ``hermes_core/agent/pool/outage.py``: which Redis errors are an outage the pool
serves around (the fallback itself runs on a real redis-server in test_redis_outage.py)."""

from __future__ import annotations

import pytest
import redis

from hermes_core.agent.pool.outage import redis_unavailable


@pytest.mark.parametrize(("error", "condition"), [
    (redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
     "OOM"),
    (redis.exceptions.ResponseError("Error running script (call to f_1): @user_script:85: "
                                    "@user_script: 85: -OOM command not allowed"), "OOM"),
    (redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots"),
     "MISCONF"),
    (redis.exceptions.ReadOnlyError("You can't write against a read only replica."), "READONLY"),
    (redis.exceptions.ResponseError("Error running script (call to f_2): @user_script:9: "
                                    "-READONLY You can't write against a read only replica."),
     "READONLY"),
    (redis.exceptions.ResponseError("BUSY Redis is busy running a script."), "BUSY"),
    (redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"), "LOADING"),
    (redis.exceptions.ResponseError("MASTERDOWN Link with MASTER is down"), "MASTERDOWN"),
    (redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write."),
     "NOREPLICAS"),
    (redis.exceptions.ConnectionError("Connection refused"), "unreachable"),
    (redis.exceptions.TimeoutError("Timeout reading from socket"), "unreachable"),
    # the pool's scripts write one kind per name: another kind there is someone else's data
    (redis.exceptions.ResponseError("WRONGTYPE Operation against a key holding the wrong kind"),
     "WRONGTYPE"),
    (redis.exceptions.ResponseError("Error running script (call to f_3): @user_script:139: "
                                    "WRONGTYPE Operation against a key holding the wrong kind"),
     "WRONGTYPE"),
    (redis.exceptions.ResponseError("Error running script: @user_script:3: Script attempted "
                                    "to access nonexistent global variable 'x'"), None),
    (redis.exceptions.NoScriptError("No matching script."), None),
])
def test_redis_errors_that_mean_not_now_are_told_from_bugs(error: Exception,
                                                            condition: str | None) -> None:
    why = redis_unavailable(error)
    if condition is None:
        assert why is None
    else:
        assert why is not None and condition in why
