"""Routing + credential pool + call loop under load, against a loopback mock OpenAI server.

Two measurements, side by side in one run:

1. ``overhead_ms_p50``: the median latency of the full path (Router.select + CallLoop.complete:
   pool acquire/release, the OpenAI provider's render and response conversion, the audit record)
   minus the median of a bare ``OpenAI(...).chat.completions.create`` to the same server, the two
   interleaved request by request so drift hits both equally. Goal <= 0.3 ms.

2. A 429 storm: keys with hidden per-minute limits (the pool is NOT told ``max_rpm``; it learns
   from 429 + Retry-After) and more client threads than the keys can serve. Time is scaled: the
   server's rate window is ``--window`` seconds (default 1 s) standing for one minute, so a key with
   ``rpm: 20`` takes 20 requests per second, and a ~20 s run covers 20 "minutes". Retry-After goes
   out as ``retry-after-ms`` (OpenAI's precise form), and the pool's own window is scaled the
   same way, as are the pool's other time constants (backoff, max wait). Outputs:

   * ``goodput_ratio``: successful requests / the keys' combined RPM over the run (goal >= 0.95);
   * ``sent_to_cooling``: keys handed out by an acquire that began after the pool had heard the
     key's 429 and before the server's Retry-After deadline (goal 0);
   * ``lost``: requests issued that neither returned nor raised (goal 0).

Usage: ``python benchmarks/pool.py --json`` (about a minute; ``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.errors import HermesError
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing.builders import openai_chat_completion, openai_error
from hermes_core.types import Credential, Message, Prompt, fingerprint


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024       # http.server's default backlog of 5 stalls concurrent clients


class MockServer:
    """OpenAI chat completions on 127.0.0.1 with a sliding-window limit per key (hidden from the
    client); a 429 says exactly when the window frees (``retry-after-ms``)."""

    def __init__(self, limits: dict[str, int], window_s: float) -> None:
        self.limits = limits
        self.window_s = window_s
        self.lock = threading.Lock()
        self.hits: dict[str, deque[float]] = defaultdict(deque)
        self.ok_times: list[float] = []
        self.rejections: dict[str, list[tuple[float, int]]] = defaultdict(list)   # (at, ms)
        body = json.dumps(openai_chat_completion("pong", model="gpt-4o")).encode()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"     # keep-alive, like a real API
            disable_nagle_algorithm = True    # else small writes wait on delayed ACKs (~40 ms)

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                key = self.headers.get("authorization", "").removeprefix("Bearer ").strip()
                status, headers, payload = server.decide(key, body)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        self._http = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def decide(self, key: str, ok_body: bytes) -> tuple[int, dict[str, str], bytes]:
        now = time.monotonic()
        limit = self.limits.get(key)
        with self.lock:
            if limit is not None:
                hits = self.hits[key]
                while hits and hits[0] <= now - self.window_s:
                    hits.popleft()
                if len(hits) >= limit:
                    wait = hits[0] + self.window_s - now
                    ms = max(1, math.ceil(wait * 1000))
                    self.rejections[key].append((now, ms))
                    err = json.dumps(openai_error(429, "Rate limit reached")).encode()
                    return 429, {"retry-after-ms": str(ms),
                                 "retry-after": str(max(1, math.ceil(ms / 1000)))}, err
                hits.append(now)
            self.ok_times.append(now)
        return 200, {}, ok_body

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> MockServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


PROMPT = Prompt(system="You are a benchmark.", messages=(Message("user", "ping"),))
OPTS = CallOptions(max_tokens=8, timeout_s=10)


def _settings(url: str, keys: list[str], *, window_s: float, deadline_s: float) -> Any:
    return load_settings({
        "llm": {"deadline_s": deadline_s, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "mock", "type": "openai", "models": ["gpt-4o"], "endpoint": url}]}},
        "credentials": {"mock": {"keys": [{"key": k} for k in keys]}},
        # every time constant scaled with the window (window_s stands for 60 s)
        "credential_pool": {"rotation": "least_loaded", "window_s": window_s,
                            "default_cooldown_s": window_s, "max_wait_s": 10 * window_s / 60,
                            "backoff_base_s": 0.5 * window_s / 60,
                            "backoff_max_s": 8 * window_s / 60}})


def p50(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


# --------------------------------------------------------------------------- overhead

def measure_overhead(n: int) -> dict[str, float]:
    keys = ["sk-bench-overhead-1", "sk-bench-overhead-2"]
    with MockServer({}, 60.0) as srv:
        settings = _settings(srv.url, keys, window_s=60.0, deadline_s=60.0)
        router = Router.from_settings(settings)
        pool = CredentialPool.from_settings(settings)
        loop = CallLoop(build_providers(settings), pool, settings, audit_path=False)
        bare = openai.OpenAI(api_key=keys[0], base_url=srv.url, max_retries=0, timeout=10)
        messages = [{"role": "system", "content": PROMPT.system},
                    {"role": "user", "content": PROMPT.messages[0].content}]
        for _ in range(30):                                       # warm both paths
            bare.chat.completions.create(model="gpt-4o", messages=messages, max_tokens=8)  # type: ignore[arg-type]
            loop.complete(PROMPT, router.select(PROMPT), OPTS)
        t_bare: list[float] = []
        t_full: list[float] = []
        for _ in range(n):
            t0 = time.perf_counter()
            bare.chat.completions.create(model="gpt-4o", messages=messages, max_tokens=8)  # type: ignore[arg-type]
            t1 = time.perf_counter()
            loop.complete(PROMPT, router.select(PROMPT), OPTS)
            t2 = time.perf_counter()
            t_bare.append((t1 - t0) * 1000)
            t_full.append((t2 - t1) * 1000)
        # the parts we add, timed alone
        t_route, t_pool = [], []
        for _ in range(2000):
            a = time.perf_counter()
            router.select(PROMPT)
            b = time.perf_counter()
            c = pool.acquire("mock")
            pool.success(c)
            d = time.perf_counter()
            t_route.append((b - a) * 1e6)
            t_pool.append((d - b) * 1e6)
    return {"overhead_ms_p50": round(p50(t_full) - p50(t_bare), 4),
            "bare_sdk_ms_p50": round(p50(t_bare), 4), "full_path_ms_p50": round(p50(t_full), 4),
            "router_us_p50": round(p50(t_route), 2), "pool_acquire_release_us_p50": round(p50(t_pool), 2),
            "overhead_samples": n}


# --------------------------------------------------------------------------- 429 storm

def storm(duration_s: float, window_s: float, threads: int, limits: list[int], *,
          honour_429: bool = True) -> dict[str, Any]:
    """``honour_429=False`` makes the pool ignore 429s: a control run showing the metric bites."""
    keys = [f"sk-bench-storm-{i}" for i in range(len(limits))]
    with MockServer(dict(zip(keys, limits, strict=True)), window_s) as srv:
        settings = _settings(srv.url, keys, window_s=window_s, deadline_s=10 * window_s)
        router = Router.from_settings(settings)
        pool = CredentialPool.from_settings(settings)
        registered: dict[str, list[tuple[float, float]]] = defaultdict(list)  # (heard, retry_after)
        picks: list[tuple[str, float]] = []                         # (key fp, acquire began)
        rec_lock = threading.Lock()
        real_cool_down, real_acquire = pool.cool_down, pool.acquire

        def cool_down(cred: Credential, retry_after: float | None) -> float:
            until = real_cool_down(cred, retry_after) if honour_429 else pool.release(cred) or 0.0
            with rec_lock:
                registered[cred.fingerprint].append((time.monotonic(), retry_after or 0.0))
            return until

        def acquire(provider: str, *, tokens: int = 0) -> Credential:
            began = time.monotonic()
            cred = real_acquire(provider, tokens=tokens)
            with rec_lock:
                picks.append((cred.fingerprint, began))
            return cred

        pool.cool_down = cool_down  # type: ignore[method-assign]
        pool.acquire = acquire  # type: ignore[method-assign]
        loop = CallLoop(build_providers(settings), pool, settings, audit_path=False)
        counts = {"issued": 0, "ok": 0, "failed": 0}
        count_lock = threading.Lock()
        t0 = time.monotonic()
        t_end = t0 + duration_s

        def worker() -> None:
            while time.monotonic() < t_end:
                with count_lock:
                    counts["issued"] += 1
                try:
                    loop.complete(PROMPT, router.select(PROMPT), OPTS)
                    outcome = "ok"
                except HermesError:
                    outcome = "failed"
                with count_lock:
                    counts[outcome] += 1

        ths = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
        for th in ths:
            th.start()
        for th in ths:
            th.join(timeout=duration_s + 30 * window_s)
        stuck = sum(th.is_alive() for th in ths)
        ok_in_run = sum(1 for t in srv.ok_times if t0 <= t < t_end)
        capacity = sum(limits) * duration_s / window_s
        # A key handed out by an acquire that began after the pool had heard one of the key's 429s
        # and before the deadline the server set in THAT response is a request sent to a cooling
        # key. (An acquire that began before the 429 was heard could not have known.) Each heard
        # 429 is paired with the server's latest earlier rejection carrying the same retry-after-ms.
        fps = {fingerprint(k): k for k in keys}
        cooling: dict[str, list[tuple[float, float]]] = defaultdict(list)    # (heard, deadline)
        for fp, heard in registered.items():
            rejections = srv.rejections[fps[fp]]
            for at_heard, retry_after in heard:
                ms = round(retry_after * 1000)
                sent = [at for at, r_ms in rejections if r_ms == ms and at <= at_heard]
                if sent:
                    cooling[fp].append((at_heard, max(sent) + ms / 1000))
        to_cooling = sum(
            1 for fp, began in picks
            if any(heard <= began < deadline - 0.002 for heard, deadline in cooling[fp]))
        rejected = sum(len(v) for v in srv.rejections.values())
    return {"goodput_ratio": round(ok_in_run / capacity, 4), "sent_to_cooling": to_cooling,
            "lost": counts["issued"] - counts["ok"] - counts["failed"] + stuck,
            "storm_requests_ok": counts["ok"], "storm_requests_failed": counts["failed"],
            "storm_429s": rejected, "storm_capacity": capacity, "storm_threads": threads,
            "storm_duration_s": duration_s, "storm_window_s": window_s,
            "storm_key_rpm": limits}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="a short smoke run")
    ap.add_argument("--samples", type=int, default=600, help="overhead request pairs")
    ap.add_argument("--duration", type=float, default=30.0, help="storm seconds")
    ap.add_argument("--window", type=float, default=1.0, help="seconds standing for one minute")
    ap.add_argument("--threads", type=int, default=24)
    ap.add_argument("--rpm", default="20,30,50", help="hidden per-window limits of the keys")
    ap.add_argument("--control", action="store_true",
                    help="also run a short storm with 429s ignored, to show sent_to_cooling bites")
    args = ap.parse_args()
    if args.quick:
        args.samples, args.duration = 100, 5.0
    result: dict[str, Any] = {}
    result.update(measure_overhead(args.samples))
    result.update(storm(args.duration, args.window, args.threads,
                        [int(x) for x in args.rpm.split(",")]))
    if args.control:
        ctl = storm(5.0, args.window, args.threads, [int(x) for x in args.rpm.split(",")],
                    honour_429=False)
        result["control_ignoring_429_sent_to_cooling"] = ctl["sent_to_cooling"]
    result["goals"] = {"overhead_ms_p50": "<= 0.3", "goodput_ratio": ">= 0.95",
                       "sent_to_cooling": "0", "lost": "0"}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for k, v in result.items():
            print(f"{k:32} {v}")


if __name__ == "__main__":
    main()
