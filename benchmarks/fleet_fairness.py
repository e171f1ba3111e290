"""Fairness between processes on one Redis pool: per-process grants in a storm, queue off vs on.

    python benchmarks/fleet_fairness.py [--json] [--processes 8] [--threads 4] [--repeats 3]
                                        [--seconds 8] [--limit 16] [--window 2] [--restart]
                                        [--baseline /work/main]

A real redis-server (``hermes_core.testing.RedisServer``) and real worker processes (spawned), each
with its own :class:`RedisPoolState` on 3 keys with sliding-window limits (``--limit`` per
``--window`` seconds). Every thread loops as the call loop does: acquire through a
:class:`CredentialPool`; when refused, wait in the process's queue (``pool.waiters``: one timed
head sleeping until the time the pool named, plus the loop's jitter; the others woken by freed
slots); when granted, hold the key for ``--latency`` and report a success. All processes start
at one instant (once every one is connected) and run ``--seconds``.

Modes, alternated in one run (``--repeats`` times each; medians reported):

* ``main``: ``fleet_queue=False``, the pool as it was (whoever asks first after a slot frees);
* ``queue``: the fleet queue (processes take turns in the order they started waiting);
* ``main-restart``, ``queue-restart`` (``--restart``): each with Redis restarted empty half-way;
* ``baseline`` (``--baseline TREE``): the fleet queue of another source tree (its workers import
  hermes_core from TREE), to compare two versions of the queue in one run.

Reported per mode: ``grants`` (total), per-process ``min`` / ``max``, ``jain`` (Jain's fairness
index, (sum x)^2 / (n * sum x^2): 1 when every process got the same), ``over_limit`` (grants past
a key's limit in any window, on Redis's clock; goal 0), ``acquire_ms_p50`` (every acquire,
refusals included) and ``acquire_ms_p99``. ``solo_acquire_ms_p50`` / ``_p99``: one process with
nobody waiting, queue off vs on (vs the baseline tree's). Ratios ``queue / main`` (and
``queue / baseline``) compare modes measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

HERE = str(Path(__file__).resolve().parents[1])
PROVIDER = "openai"
CTX = mp.get_context("spawn")
SECRETS = [f"sk-bench-fleet-{i:032d}" for i in range(3)]   # never sent anywhere


def _tree(tree: str) -> None:
    """hermes_core from ``tree`` in this process (a spawned worker imports it only after this:
    the module imports none at its top, so a baseline tree's workers run the baseline's code)."""
    sys.path.insert(0, tree)


def worker(tree: str, url: str, prefix: str, queue_on: bool, limit: int, window: float,
           workers: int, threads: int, latency: float, seconds: float, ready: Any, go: Any,
           out: Any) -> None:
    _tree(tree)
    from hermes_core.agent.credential_pool import CredentialPool
    from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
    from hermes_core.agent.pool.state import PoolPolicy
    from hermes_core.errors import NoCredentialAvailable
    from hermes_core.types import Credential

    be = RedisPoolState(url, options=RedisPoolOptions(
        key_prefix=prefix, workers=workers, fleet_queue=queue_on, reconnect_interval_s=0.5))
    pool = CredentialPool({PROVIDER: [Credential(PROVIDER, SECRETS[i], max_rpm=limit)
                                      for i in range(3)]},
                          policy=PoolPolicy(window_s=window), backend=be)
    be.now()      # connected before the start
    ready.put(1)
    go.wait(120)
    end = time.time() + seconds
    lock = threading.Lock()
    grants: list[tuple[str, float]] = []
    acquire_ms: list[float] = []

    def loop() -> None:
        """What the call loop does (resilience_run._Run): a newcomer queues behind this process's
        waiters; one timed head sleeps until the time the pool named (plus the loop's jitter),
        the others wait to be woken by a freed slot (pool.waiters)."""
        rng = random.Random()
        mine: list[tuple[str, float]] = []
        times: list[float] = []
        waiting = False
        while time.time() < end:
            left = end - time.time()
            if not waiting and pool.waiters.waiting(PROVIDER):
                pool.waiters.wait(PROVIDER, 0.0, left, time.sleep, hold=True)
                waiting = True
            t0 = time.perf_counter()
            try:
                lease = pool.acquire(PROVIDER)
            except NoCredentialAvailable as e:
                times.append((time.perf_counter() - t0) * 1000)
                wait = 0.05 if e.available_at is None else max(0.0, e.available_at - (e.now or 0))
                jitter = rng.uniform(0.0, min(0.05, max(0.001, wait * 0.02)))
                pool.waiters.wait(PROVIDER, min(wait + jitter, left), left, time.sleep,
                                  front=waiting, hold=True)
                waiting = True
                continue
            times.append((time.perf_counter() - t0) * 1000)
            if waiting:
                pool.waiters.done(PROVIDER)
                waiting = False
            mine.append((lease.credential.fingerprint, be.now()))
            time.sleep(latency)
            pool.success(lease)
        if waiting:
            pool.waiters.done(PROVIDER)
        with lock:
            grants.extend(mine)
            acquire_ms.extend(times)

    ts = [threading.Thread(target=loop) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put({"grants": grants, "acquire_ms": acquire_ms, "degraded": be.degraded,
             "outages": be.outages})


def over_limit(grants: list[tuple[str, float]], limit: int, window: float) -> int:
    """Grants past ``limit`` in any window of ``window`` seconds, per key, summed."""
    over = 0
    for key in {k for k, _ in grants}:
        ts = sorted(t for k, t in grants if k == key)
        lo = 0
        for hi, t in enumerate(ts):
            while ts[lo] <= t - window:
                lo += 1
            over = max(over, hi - lo + 1 - limit) if hi - lo + 1 > limit else over
    return over


def jain(xs: list[int]) -> float:
    total = sum(xs)
    squares = sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if squares else 0.0


def run_mode(mode: str, server: Any, args: argparse.Namespace) -> dict[str, Any]:
    out, ready, go = CTX.Queue(), CTX.Queue(), CTX.Event()
    prefix = f"hermes-bench:{uuid.uuid4().hex[:8]}"
    tree = args.baseline if mode == "baseline" else HERE
    procs = [CTX.Process(target=worker, args=(
        tree, server.url, prefix, not mode.startswith("main"), args.limit, args.window,
        args.processes,
        args.threads, args.latency,
        args.seconds, ready, go, out)) for _ in range(args.processes)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=300)
    go.set()
    start = time.time()
    restart = None
    if mode.endswith("-restart"):
        def bounce() -> None:
            time.sleep(max(0.0, start + args.seconds / 2 - time.time()))
            server.restart()
        restart = threading.Thread(target=bounce)
        restart.start()
    results = [out.get(timeout=args.seconds + 120) for _ in procs]
    for p in procs:
        p.join(30)
    if restart is not None:
        restart.join()
    per = sorted(len(r["grants"]) for r in results)
    lat = [x for r in results for x in r["acquire_ms"]]
    return {
        "grants": sum(per), "min": per[0], "max": per[-1], "jain": round(jain(per), 4),
        "per_process": per,
        # the clock restarts with Redis: a window is only counted within one server's life
        "over_limit": over_limit([g for r in results for g in r["grants"]], args.limit,
                                 args.window) if not mode.endswith("-restart") else None,
        "acquire_ms_p50": round(statistics.median(lat), 3) if lat else None,
        "acquire_ms_p99": round(statistics.quantiles(lat, n=100)[98], 3) if len(lat) > 1 else None,
        "degraded_workers": sum(1 for r in results if r["degraded"]),
        "fallbacks": sum(r["outages"] for r in results),
    }


def solo_worker(tree: str, url: str, queue_on: bool, n: int, out: Any) -> None:
    """One process, nobody waiting: ``n`` acquires (+ releases), each timed."""
    _tree(tree)
    from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
    from hermes_core.agent.pool.state import KeySpec, Outcome, PoolPolicy

    policy = PoolPolicy(window_s=2.0)
    keys = [KeySpec("key-solo", max_rpm=10**6)]
    be = RedisPoolState(url, options=RedisPoolOptions(
        key_prefix=f"hermes-bench:{uuid.uuid4().hex[:8]}", fleet_queue=queue_on))
    be.acquire(PROVIDER, [KeySpec("key-warm-up")], policy)    # scripts loaded, epoch known
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        res = be.acquire(PROVIDER, keys, policy)
        times.append((time.perf_counter() - t0) * 1000)
        assert res.fingerprint is not None
        be.release(PROVIDER, res.fingerprint, Outcome("ok"), policy, lease=res.lease)
    be.close()
    out.put(times)


def solo_acquire_ms(url: str, modes: list[str], baseline: str, rounds: int = 5,
                    n: int = 300) -> dict[str, dict[str, float]]:
    """One process with nobody waiting, per mode (queue off, on, the baseline tree's), alternated
    ``rounds`` times: what the queue costs an acquire when there is no storm."""
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(rounds):
        for mode in times:
            out = CTX.Queue()
            proc = CTX.Process(target=solo_worker, args=(
                baseline if mode == "baseline" else HERE, url, mode != "main", n, out))
            proc.start()
            times[mode] += out.get(timeout=300)
            proc.join(30)
    return {m: {"p50": round(statistics.median(v), 3),
                "p99": round(statistics.quantiles(v, n=100)[98], 3)} for m, v in times.items()}


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in runs[0]:
        values = [r[k] for r in runs if isinstance(r[k], int | float)]
        out[k] = round(statistics.median(values), 4) if len(values) == len(runs) else None
    out["runs"] = runs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--limit", type=int, default=16, help="grants per key per window")
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--restart", action="store_true", help="also the -restart modes")
    ap.add_argument("--only", default="", help="comma list of modes to run (default: all)")
    ap.add_argument("--baseline", default="", help="another tree's queue as a mode too")
    args = ap.parse_args(argv)
    modes = ["main", "queue"] + (["baseline"] if args.baseline else []) + (
        ["main-restart", "queue-restart"] if args.restart else [])
    modes = [m for m in modes if not args.only or m in args.only.split(",")]
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    sys.path.insert(0, HERE)
    from hermes_core.testing.redis_server import RedisServer

    server = RedisServer()
    server.start()
    try:
        solo = solo_acquire_ms(server.url, [m for m in ("main", "queue", "baseline")
                                            if m in modes], args.baseline)
        for _ in range(max(1, args.repeats)):
            for m in modes:     # alternated: the baseline meets the same machine load
                runs[m].append(run_mode(m, server, args))
    finally:
        server.close()
    results = {m: medians(r) for m, r in runs.items()}
    base, new = results.get("main"), results.get("queue")
    if base is None or new is None:
        print(json.dumps(results, indent=2))
        return 0
    report = {
        "processes": args.processes, "threads_per_process": args.threads, "keys": 3,
        "limit_per_window": args.limit, "window_s": args.window, "seconds": args.seconds,
        "repeats": max(1, args.repeats), "figures": "medians over the repeats",
        "modes": results,
        "spread_main": [base["min"], base["max"]], "spread_queue": [new["min"], new["max"]],
        "jain_main": base["jain"], "jain_queue": new["jain"],
        "grants_ratio_queue_vs_main": round(new["grants"] / base["grants"], 3)
        if base["grants"] else None,
        "solo_acquire_ms": solo,
        "solo_acquire_ratio_queue_vs_main": round(solo["queue"]["p50"] / solo["main"]["p50"], 3),
        "acquire_ms_ratio_queue_vs_main": round(new["acquire_ms_p50"] / base["acquire_ms_p50"], 3)
        if base["acquire_ms_p50"] else None,
    }
    old = results.get("baseline")
    if old is not None:
        report |= {
            "spread_baseline": [old["min"], old["max"]], "jain_baseline": old["jain"],
            "solo_ratio_queue_vs_baseline": {q: round(solo["queue"][q] / solo["baseline"][q], 3)
                                             for q in ("p50", "p99")},
            "storm_ratio_queue_vs_baseline": {
                q: round(new[f"acquire_ms_{q}"] / old[f"acquire_ms_{q}"], 3)
                for q in ("p50", "p99") if new[f"acquire_ms_{q}"] and old[f"acquire_ms_{q}"]},
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for m, r in results.items():
            print(f"{m:14s} grants={r['grants']} min={r['min']} max={r['max']} "
                  f"jain={r['jain']} over_limit={r['over_limit']} "
                  f"acquire_ms_p50={r['acquire_ms_p50']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
