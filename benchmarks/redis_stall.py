"""Acquire latency of the Redis pool backend with a healthy Redis and with a stuck one.

A stuck Redis accepts connections and answers nothing (here: a real ``redis-server`` paused with
SIGSTOP, as a frozen VM or a swap storm leaves it). The backend notices at the first call (which
waits out its own socket timeout and falls back: reported apart as ``first_call_s``), then
serves locally and probes Redis every ``reconnect_interval_s``. Two probe modes, same run, same
server:

* ``in_request``: the request that finds the probe due waits for the whole probe (the
  behaviour before decision 227; here ``probe_wait_s`` = 60 s, which waits for it whole);
* ``background``: the default ``probe_wait_s`` (the request waits at most that for PING).

Per mode and phase (``healthy``, ``stuck``): acquire+release pairs paced ``--pace-ms`` apart for
``--seconds``; acquire latency p50, p99, p99.9, max (ms) and the requests over 100 ms.

Usage: ``python benchmarks/redis_stall.py --json`` (about 45 s).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import time
import uuid
from typing import Any

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy
from hermes_core.testing.redis_server import RedisServer


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _phase(be: RedisPoolState, seconds: float, pace_s: float) -> dict[str, Any]:
    keys = [KeySpec("a", max_rpm=10**6), KeySpec("b", max_rpm=10**6)]
    pol = PoolPolicy()
    took: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        res = be.acquire("p", keys, pol)
        took.append(time.perf_counter() - t0)
        if res.fingerprint is not None:
            be.release("p", res.fingerprint, Outcome("ok"), pol, lease=res.lease)
        time.sleep(pace_s)
    ms = [t * 1000 for t in took]
    return {"requests": len(ms), "p50_ms": round(statistics.median(ms), 3),
            "p99_ms": round(_quantile(ms, 0.99), 3), "p999_ms": round(_quantile(ms, 0.999), 3),
            "max_ms": round(max(ms), 1), "over_100ms": sum(1 for t in ms if t > 100)}


def run(seconds: float, pace_ms: float, interval_s: float, timeout_s: float) -> dict[str, Any]:
    server = RedisServer()
    server.start()
    out: dict[str, Any] = {"seconds": seconds, "pace_ms": pace_ms,
                           "reconnect_interval_s": interval_s, "socket_timeout_s": timeout_s}
    try:
        for mode, wait in (("in_request", 60.0), ("background", RedisPoolOptions().probe_wait_s)):
            be = RedisPoolState(server.url, options=RedisPoolOptions(
                key_prefix=f"bench:{uuid.uuid4().hex[:8]}", reconnect_interval_s=interval_s,
                socket_timeout_s=timeout_s, probe_wait_s=wait))
            healthy = _phase(be, seconds, pace_ms / 1000)
            assert server.proc is not None
            os.kill(server.proc.pid, signal.SIGSTOP)
            try:
                t0 = time.perf_counter()
                be.acquire("p", [KeySpec("a")], PoolPolicy())
                first = time.perf_counter() - t0
                stuck = _phase(be, seconds, pace_ms / 1000)
            finally:
                os.kill(server.proc.pid, signal.SIGCONT)
            out[mode] = {"healthy": healthy, "first_call_s": round(first, 3), "stuck": stuck,
                         "probes": be._prober.runs}
            be.close()
            time.sleep(2 * timeout_s)   # the last probe's thread ends against the resumed server
    finally:
        server.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--pace-ms", type=float, default=5.0)
    ap.add_argument("--interval", type=float, default=1.0, help="reconnect_interval_s")
    ap.add_argument("--timeout", type=float, default=0.5, help="socket_timeout_s")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.seconds, a.pace_ms, a.interval, a.timeout)
    print(json.dumps(res, indent=2) if a.json else res)


if __name__ == "__main__":
    main()
