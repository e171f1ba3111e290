"""Shared credential pool benchmark (issue 8): many worker processes, one set of rate-limited keys.

    python benchmarks/shared_pool.py [--json] [--processes 4] [--threads 8] [--window 6]

Setup, all on loopback: a mock provider (stdlib ``ThreadingHTTPServer`` in its own process) that
knows 3 API keys and enforces each key's limit in a sliding window exactly like a provider's RPM
limit (over the limit -> 429 + ``Retry-After``), and N worker processes x M threads that each loop:
``pool.acquire`` -> one HTTP request with the chosen key -> ``pool.release`` (ok, or rate_limited
with the server's Retry-After). The client side calls the pool directly plus a plain
``http.client`` request, not the full agent call loop.

Modes, side by side in one run, each against a fresh mock server:

* ``redis``: every process uses :class:`RedisPoolState` on one Redis (shared windows/deadlines).
* ``memory``: the baseline: each process has its own :class:`InMemoryPoolState` and believes it
  owns every key's whole budget (what issue 8 fixes).
* ``redis-outage``: like ``redis``, but the benchmark stops its Redis 1.5 windows into the run and
  restarts it (empty) 1.5 windows later: the workers fall back to local state (budgets divided
  by the number of processes, seeded with their own recent requests), then merge back.

Time is scaled so the run takes about a minute: the "minute" is ``--window`` seconds (default 6,
so 10x faster) and the limits are per window (``--limits``, default 30,45,60 per 6 s = 300, 450
and 600 RPM at real scale). The pool's window is ``window + --margin`` (default 0.1 s): the
server stamps a request when it arrives, a little after the pool stamped it with Redis TIME, and
that delay jitters; without a margin a slot reused exactly one window later can reach the server
a hair early. The margin costs ~window/(window+margin) of the throughput.

Printed: ``rpm_violations`` (requests the server had to refuse for exceeding a key's limit; goal 0),
``goodput_ratio`` (successful requests / the keys' combined capacity over the run; goal >= 0.90),
``acquire_ms_p50`` (median latency of one acquire, one Redis round trip), each for the Redis mode
at the top level and for both modes under ``modes``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_core.agent.pool.redis import RedisPoolOptions, RedisPoolState
from hermes_core.agent.pool.state import (
    InMemoryPoolState,
    KeySpec,
    Outcome,
    PoolPolicy,
    PoolStateBackend,
)
from hermes_core.errors import parse_retry_after
from hermes_core.types import fingerprint

CTX = mp.get_context("spawn")
PROVIDER = "mock"


# --------------------------------------------------------------------------- mock provider

def serve_mock(limits: dict[str, int], window: float, latency: float, ready: Any) -> None:
    """A provider enforcing ``limits[secret]`` requests per sliding ``window`` per key."""
    lock = threading.Lock()
    logs: dict[str, deque[float]] = {k: deque() for k in limits}
    stats = {"ok": 0, "violations": 0, "unauthorized": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
                  ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            with lock:
                self._send(200, dict(stats))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            now = time.monotonic()
            with lock:
                if key not in limits:
                    stats["unauthorized"] += 1
                    status, wait = 401, 0.0
                else:
                    log = logs[key]
                    while log and log[0] <= now - window:
                        log.popleft()
                    if len(log) >= limits[key]:
                        stats["violations"] += 1
                        status, wait = 429, log[0] + window - now
                    else:
                        log.append(now)
                        stats["ok"] += 1
                        status, wait = 200, 0.0
            if status == 429:
                self._send(429, {"error": {"type": "rate_limit_error"}},
                           {"retry-after-ms": str(int(wait * 1000) + 1),
                            "retry-after": str(int(wait) + 1)})
                return
            if status == 401:
                self._send(401, {"error": {"type": "authentication_error"}})
                return
            time.sleep(latency)
            self._send(200, {"choices": [{"message": {"content": "ok"}}]})

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # 32 clients connect at once; the default backlog of 5 resets

    server = Server(("127.0.0.1", 0), Handler)
    ready.put(server.server_address[1])
    server.serve_forever()


# --------------------------------------------------------------------------- workers

def run_worker(mode: str, redis_url: str | None, prefix: str, port: int,
               secrets: list[str], limits: list[int], policy: PoolPolicy, threads: int,
               processes: int, start: float, end: float, out: Any) -> None:
    backend: PoolStateBackend
    if mode.startswith("redis"):
        assert redis_url is not None
        backend = RedisPoolState(redis_url, options=RedisPoolOptions(
            key_prefix=prefix, workers=processes, reconnect_interval_s=1.0))
    else:
        backend = InMemoryPoolState()
    by_fp = {fingerprint(s): s for s in secrets}
    keys = [KeySpec(fingerprint(s), max_rpm=lim) for s, lim in zip(secrets, limits, strict=True)]
    lock = threading.Lock()
    acquire_ms: list[float] = []
    counts = {"ok": 0, "rate_limited": 0, "errors": 0, "waits": 0}

    def loop() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine: list[float] = []
        local = {"ok": 0, "rate_limited": 0, "errors": 0, "waits": 0}
        while time.time() < end:
            t0 = time.perf_counter()
            res = backend.acquire(PROVIDER, keys, policy)
            mine.append((time.perf_counter() - t0) * 1000)
            if res.fingerprint is None:
                local["waits"] += 1
                wait = 0.05 if res.available_at is None else res.available_at - res.now
                time.sleep(max(0.0, min(wait, end - time.time(), 0.5)))
                continue
            try:
                conn.request("POST", "/v1/chat/completions", body=b"{}",
                             headers={"Authorization": "Bearer " + by_fp[res.fingerprint],
                                      "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                status = resp.status
                headers = {k.lower(): v for k, v in resp.getheaders()}
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                local["errors"] += 1
                backend.release(PROVIDER, res.fingerprint, Outcome("failure"), policy)
                continue
            if status == 200:
                local["ok"] += 1
                outcome = Outcome("ok")
            elif status == 429:
                local["rate_limited"] += 1
                outcome = Outcome("rate_limited", parse_retry_after(headers))
            else:
                local["errors"] += 1
                outcome = Outcome("failure")
            backend.release(PROVIDER, res.fingerprint, outcome, policy)
        conn.close()
        with lock:
            acquire_ms.extend(mine)
            for k, v in local.items():
                counts[k] += v

    time.sleep(max(0.0, start - time.time()))
    ts = [threading.Thread(target=loop) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    degraded = bool(getattr(backend, "degraded", False))
    out.put({"acquire_ms": acquire_ms, "counts": counts, "degraded": degraded,
             "outages": int(getattr(backend, "outages", 0))})


# --------------------------------------------------------------------------- orchestration

class LocalRedis:
    """A throwaway redis-server on a free loopback port, when no --redis-url is given."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server not found: run .ci/redis.sh or pass --redis-url")
        self.binary = binary
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.dir = tempfile.mkdtemp(prefix="hermes-bench-redis-")
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _outage(redis_server: LocalRedis, at: float, seconds: float) -> None:
    time.sleep(max(0.0, at - time.time()))
    redis_server.stop()
    time.sleep(seconds)
    redis_server.start()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run_mode(mode: str, args: argparse.Namespace, redis_url: str | None,
             local: LocalRedis | None) -> dict[str, Any]:
    secrets = [f"sk-bench-{uuid.uuid4().hex}" for _ in args.limits]
    ready = CTX.Queue()
    server = CTX.Process(target=serve_mock, daemon=True, args=(
        dict(zip(secrets, args.limits, strict=True)), args.window, args.latency, ready))
    server.start()
    port = ready.get(timeout=30)
    policy = PoolPolicy(strategy=args.strategy, window_s=args.window + args.margin)
    out = CTX.Queue()
    start = time.time() + args.startup
    end = start + args.window * args.windows
    prefix = f"hermes-bench:{uuid.uuid4().hex[:8]}"
    workers = [CTX.Process(target=run_worker, args=(
        mode, redis_url, prefix, port, secrets, args.limits, policy, args.threads,
        args.processes, start, end, out)) for _ in range(args.processes)]
    for w in workers:
        w.start()
    outage = None
    if mode == "redis-outage":
        if local is None:
            raise SystemExit("the redis-outage mode stops Redis: run it without --redis-url")
        # Redis goes away 1.5 windows in and comes back (empty) 1.5 windows later
        outage = threading.Thread(target=_outage, args=(local, start + 1.5 * args.window,
                                                        1.5 * args.window))
        outage.start()
    results = [out.get(timeout=args.startup + args.window * args.windows + 120) for _ in workers]
    for w in workers:
        w.join(30)
    if outage is not None:
        outage.join()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/stats")
    stats = json.loads(conn.getresponse().read())
    conn.close()
    server.terminate()
    server.join(10)
    lat = [x for r in results for x in r["acquire_ms"]]
    capacity = sum(args.limits) * args.windows
    return {
        "rpm_violations": stats["violations"],
        "goodput_ratio": round(stats["ok"] / capacity, 4),
        "acquire_ms_p50": round(statistics.median(lat), 4) if lat else None,
        "acquire_ms_p95": round(percentile(lat, 95), 4),
        "acquires": len(lat),
        "server_ok": stats["ok"],
        "capacity": capacity,
        "client_errors": sum(r["counts"]["errors"] for r in results),
        "degraded_workers": sum(1 for r in results if r["degraded"]),
        "fallbacks": sum(r["outages"] for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--limits", type=lambda s: [int(x) for x in s.split(",")],
                    default=[30, 45, 60], help="per-key requests per window (one per key)")
    ap.add_argument("--window", type=float, default=6.0, help="the scaled 'minute', seconds")
    ap.add_argument("--windows", type=int, default=5, help="run length in windows, per mode")
    ap.add_argument("--margin", type=float, default=0.1,
                    help="added to the pool's window (arrival-time jitter at the server)")
    ap.add_argument("--latency", type=float, default=0.02, help="mock provider latency, seconds")
    ap.add_argument("--startup", type=float, default=2.5, help="seconds for workers to spawn")
    ap.add_argument("--strategy", default="round_robin")
    ap.add_argument("--modes", default="redis,memory,redis-outage",
                    help="comma list of redis, memory (baseline) and redis-outage (Redis stopped "
                         "for 1.5 windows mid-run: local fallback, then recovery)")
    ap.add_argument("--redis-url", default=os.environ.get("HERMES_REDIS_URL"))
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    local = None
    if any(m.startswith("redis") for m in modes) and not args.redis_url:
        local = LocalRedis()
        args.redis_url = local.url
    try:
        results = {m: run_mode(m, args, args.redis_url, local) for m in modes}
    finally:
        if local is not None:
            local.close()
    scale = 60.0 / args.window
    report: dict[str, Any] = {
        "processes": args.processes, "threads_per_process": args.threads,
        "keys": len(args.limits), "strategy": args.strategy,
        "server_window_s": args.window, "pool_window_s": args.window + args.margin,
        "limits_per_window": args.limits,
        "equivalent_max_rpm": [round(lim * scale) for lim in args.limits],
        "duration_s_per_mode": args.window * args.windows,
        "time_scale": (f"the 60 s RPM window is scaled to {args.window:g} s ({scale:g}x faster); "
                       f"limits are per scaled window; the pool's window has +{args.margin:g} s "
                       "for arrival jitter at the server"),
        "client": "pool.acquire/release + plain http.client request (not the agent call loop)",
        "modes": results,
    }
    if "redis" in results:
        for k in ("rpm_violations", "goodput_ratio", "acquire_ms_p50"):
            report[k] = results["redis"][k]
    if "redis" in results and "memory" in results:
        report["baseline"] = "memory: per-process in-memory pools, each assuming the whole budget"
        report["violations_baseline"] = results["memory"]["rpm_violations"]
    if "redis-outage" in results:
        report["outage"] = ("redis-outage: Redis stopped 1.5 windows into the run for 1.5 windows, "
                            "restarted empty; workers fall back to local state with budgets / "
                            "processes and merge back on recovery")
        report["outage_rpm_violations"] = results["redis-outage"]["rpm_violations"]
        report["outage_goodput_ratio"] = results["redis-outage"]["goodput_ratio"]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for m, r in results.items():
            print(f"{m:8s} violations={r['rpm_violations']:5d} goodput={r['goodput_ratio']:.3f} "
                  f"acquire_ms_p50={r['acquire_ms_p50']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
