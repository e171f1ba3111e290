"""Async throughput at 64 concurrent requests: hermes-core's call loop and Agent.achat vs bare AsyncOpenAI.

    python benchmarks/async_throughput.py --json [--concurrency 64] [--seconds 3] [--min-requests 600]
                                          [--rounds 5] [--variants bare,provider,loop,achat]

The loopback server (``hermes_core.testing.MockLLMServer``, keep-alive, in a process of its own so
it does not share the client's interpreter) answers every request after ``--latency-ms``, stating
a generous request limit in every answer as the real APIs do (OpenAI's ``x-ratelimit-*``): the
pool then knows the key's limit from its first answer, as it would in production. A server that
states none puts a key of unknown limit in the pool's slow start (one more request in flight per
round trip until a limit is known), which is a different measurement. In one
event loop per measurement, ``--concurrency`` tasks send requests back to back for ``--seconds``;
each variant's throughput is the requests completed inside the window per second (a timer closes
the window; requests still in flight then are not counted, and a window lasts until at least
``--min-requests`` completed). Variants, interleaved round by round (the order rotates) so a busy
machine slows each alike:

* ``bare``: ``openai.AsyncOpenAI(...).chat.completions.create`` (the baseline);
* ``provider`` (on request: ``--variants bare,provider,loop``): the OpenAI provider alone, its SDK
  client as hermes-core builds it, no pool, routing or audit;
* ``loop``: ``CallLoop.acomplete`` with a credential pool of one key (its in-flight cap off, as
  the bare SDK has none), routing, the audit log on;
* ``achat``: ``Agent.achat``, one Agent per task (a session each, sharing the loop, pool, router and
  prompt builder, as a server would), each turn a new one-message session (history cleared).

Same HTTP work on both sides: one loopback server, keep-alive, the same connection limits (the
SDK's defaults, 1000/100, which hermes-core's transport is built with), every answer parsed into
the SDK's ``ChatCompletion``. hermes-core's requests are if anything larger: they carry
``max_tokens`` (``CallOptions``' 1024), and ``achat``'s the built system prompt and the per-turn
context part (about 560 bytes of JSON against about 150). hermes-core posts its already rendered
payload with the client's ``post`` rather than ``chat.completions.create`` (whose walk over the
typed request schema leaves such a payload unchanged); the baseline is ``create`` as a user calls it.

Reported: each variant's median requests/s over the rounds, and ``loop_vs_bare`` /
``achat_vs_bare``: the median of the per-round ratios (goal >= 0.95 for both), with every round's
ratio and their quartiles (the spread says how far one run can be trusted); the client process's
CPU milliseconds per request, ``..._cpu_vs_bare`` (bare's CPU per request over the variant's, with
quartiles) and ``..._extra_cpu_us_per_request`` (the variant's CPU per request less bare's), which
a busy machine disturbs less than throughput: the server shares the same two cores. ``loadavg_1m``
is the machine's load at the start of each round: quote it beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hermes_core.cli.argtypes import positive_int  # noqa: E402

KEY = "sk-bench-async-0000000000000000"
VARIANTS = ("bare", "provider", "loop", "achat")
MODEL = "gpt-4o-mini"
SERVER = """
import sys
from hermes_core.testing.server import KeyBehaviour, MockLLMServer
srv = MockLLMServer(reply="ok", keep_alive=True)
srv.set_key(sys.argv[1], KeyBehaviour(latency_s=float(sys.argv[2]), rpm=100_000_000,
                                      rate_headers=True))
srv.__enter__()
print(srv.url, flush=True)
sys.stdin.read()
"""


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SERVER, KEY, str(latency_s)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        raise SystemExit("the loopback server did not start")
    return proc, url


async def drive(call: Callable[[int], Awaitable[object]], tasks: int, seconds: float,
                min_requests: int = 0) -> tuple[float, float, int]:
    """Requests per second, the client process's CPU milliseconds per request (every thread:
    the audit writer and prompt-building workers count) and the requests counted: ``tasks``
    workers calling back to back (after one call each to open connections) for ``seconds``, or
    longer until ``min_requests`` have completed. The window is closed by a timer: what completes
    inside it counts, the requests still in flight when it closes do not (their tail, up to
    ``tasks`` requests waiting on the server, would otherwise be a share of every window that
    grows as the rate falls). The garbage of the previous variant and of this one's setup is
    collected before the window (every variant alike), so no variant pays a collection of
    another's objects inside its timed window."""
    await asyncio.gather(*(call(i) for i in range(tasks)))
    gc.collect()
    done = 0
    stop = asyncio.Event()

    async def worker(i: int) -> None:
        nonlocal done
        while not stop.is_set():
            await call(i)
            done += 1

    async def window() -> tuple[float, float, int]:
        await asyncio.sleep(seconds)
        while done < min_requests:
            await asyncio.sleep(0.05)
        counted, elapsed, used = done, time.perf_counter() - t, time.process_time() - cpu
        stop.set()
        return counted / elapsed, used * 1000 / max(counted, 1), counted

    t, cpu = time.perf_counter(), time.process_time()
    workers = [asyncio.ensure_future(worker(i)) for i in range(tasks)]
    measured = await window()
    await asyncio.gather(*workers)
    return measured


def bare(url: str, tasks: int, seconds: float, min_requests: int = 0) -> tuple[float, float, int]:
    from openai import AsyncOpenAI

    async def main() -> tuple[float, float, int]:
        client = AsyncOpenAI(api_key=KEY, base_url=url + "/v1", max_retries=0)

        async def call(i: int) -> object:
            resp = await client.chat.completions.create(
                model=MODEL, messages=[{"role": "system", "content": "You are Hermes."},
                                       {"role": "user", "content": f"hello {i}"}])
            return resp.choices[0].message.content

        try:
            return await drive(call, tasks, seconds, min_requests)
        finally:
            await client.close()

    return asyncio.run(main())


def provider_only(url: str, tasks: int, seconds: float,
                  min_requests: int = 0) -> tuple[float, float, int]:
    """hermes-core's OpenAI provider alone: its SDK client (the deadline transport), the payload
    ``render`` produces, the per-attempt budget and header capture; no pool, routing or audit.
    Between ``bare`` and ``loop``: says which side of the provider an overhead is on."""
    from hermes_core.providers.base import CallOptions
    from hermes_core.providers.observed import capture
    from hermes_core.providers.openai import OpenAIProvider
    from hermes_core.types import Credential, Message, Prompt

    provider, cred, options = OpenAIProvider("openai", url + "/v1"), Credential("openai", KEY), \
        CallOptions()

    async def main() -> tuple[float, float, int]:
        async def call(i: int) -> object:
            prompt = Prompt(system="You are Hermes.", messages=(Message("user", f"hello {i}"),))
            with capture():
                done = await provider.acomplete(prompt, MODEL, cred, options)
            return done.text

        return await drive(call, tasks, seconds, min_requests)

    return asyncio.run(main())


def settings_for(url: str, home: Path) -> Any:
    from hermes_core.config import load_settings

    return load_settings({
        "home": str(home),
        "llm": {"routing": {"default_model": MODEL, "providers": [
            {"name": "openai", "type": "openai", "priority": 1, "models": [MODEL],
             "endpoint": url + "/v1"}]}},
        "credentials": {"openai": {"keys": [{"key": KEY}]}},
        # the pool's protective in-flight cap (32 per key by default) would hold half of 64
        # concurrent requests back on this single key: the bare SDK has none, and the point here
        # is what the library's code costs, so both send all 64
        "credential_pool": {"max_in_flight_per_key": None},
        "skill_utils": {"embeddings": False}}, env={})


def call_loop(url: str, home: Path, tasks: int, seconds: float,
              min_requests: int = 0) -> tuple[float, float, int]:
    from hermes_core.agent.resilience import CallLoop
    from hermes_core.agent.smart_routing import Router
    from hermes_core.types import Message, Prompt

    settings = settings_for(url, home)
    router, loop = Router.from_settings(settings), CallLoop.from_settings(settings)

    async def main() -> tuple[float, float, int]:
        async def call(i: int) -> object:
            prompt = Prompt(system="You are Hermes.", messages=(Message("user", f"hello {i}"),))
            done, _ = await loop.acomplete(prompt, router.select(prompt))
            return done.text

        return await drive(call, tasks, seconds, min_requests)

    try:
        return asyncio.run(main())
    finally:
        loop.audit.close()


def achat(url: str, home: Path, tasks: int, seconds: float,
          min_requests: int = 0) -> tuple[float, float, int]:
    from hermes_core.agent.agent import Agent

    settings = settings_for(url, home)
    first = Agent(settings)
    agents = [first] + [Agent(settings, call_loop=first.loop, pool=first.pool, router=first.router,
                              retriever=first.retriever, context_engine=first.context_engine,
                              prompt_builder=first.builder) for _ in range(tasks - 1)]

    async def main() -> tuple[float, float, int]:
        async def call(i: int) -> object:
            agent = agents[i]
            agent.history.clear()
            reply = await agent.achat(f"hello {i}")
            return reply.text

        return await drive(call, tasks, seconds, min_requests)

    try:
        return asyncio.run(main())
    finally:
        first.loop.audit.close()


def quartiles(xs: list[float]) -> list[float]:
    """The first and third quartile (the spread of the per-round ratios; one value: itself)."""
    if len(xs) < 2:
        return [round(xs[0], 3), round(xs[0], 3)] if xs else []
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return [round(q[0], 3), round(q[2], 3)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--concurrency", type=positive_int, default=64)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--min-requests", type=positive_int, default=600,
                    help="a window lasts until at least this many requests completed")
    ap.add_argument("--rounds", type=positive_int, default=5)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--variants", default="bare,loop,achat", help=f"of {','.join(VARIANTS)}")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        ap.error(f"--variants: unknown {', '.join(unknown) or '(none given)'}; use {','.join(VARIANTS)}")
    if not 0 < args.seconds < float("inf") or not 0 <= args.latency_ms < float("inf"):
        ap.error("--seconds must be positive and --latency-ms at least 0")
    server, url = start_server(args.latency_ms / 1000)
    rates: dict[str, list[float]] = {v: [] for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    counted: dict[str, list[int]] = {v: [] for v in variants}
    load: list[float] = []
    n, secs, least = args.concurrency, args.seconds, args.min_requests
    try:
        with tempfile.TemporaryDirectory(prefix="hermes-async-bench-") as tmp:
            for r in range(args.rounds):
                load.append(round(os.getloadavg()[0], 2))
                order = variants[r % len(variants):] + variants[:r % len(variants)]
                for v in order:
                    home = Path(tmp) / f"{v}-{r}"
                    home.mkdir()
                    if v == "bare":
                        rate, cpu, k = bare(url, n, secs, least)
                    elif v == "provider":
                        rate, cpu, k = provider_only(url, n, secs, least)
                    elif v == "loop":
                        rate, cpu, k = call_loop(url, home, n, secs, least)
                    else:
                        rate, cpu, k = achat(url, home, n, secs, least)
                    rates[v].append(rate)
                    cpus[v].append(cpu)
                    counted[v].append(k)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
    report: dict[str, Any] = {"concurrency": args.concurrency, "seconds": args.seconds,
                              "min_requests": least, "rounds": args.rounds,
                              "server_latency_ms": args.latency_ms,
                              # other work on the machine, at the start of each round
                              "loadavg_1m": load}
    for v, xs in rates.items():
        report[f"{v}_rps_median"] = round(statistics.median(xs), 1)
        report[f"{v}_rps"] = [round(x, 1) for x in xs]
        report[f"{v}_cpu_ms_per_request_median"] = round(statistics.median(cpus[v]), 3)
        report[f"{v}_requests_fewest"] = min(counted[v])
    for v in variants:
        if v != "bare" and "bare" in rates:
            ratios = [a / b for a, b in zip(rates[v], rates["bare"], strict=True)]
            report[f"{v}_vs_bare"] = round(statistics.median(ratios), 3)
            report[f"{v}_vs_bare_rounds"] = [round(x, 3) for x in ratios]
            report[f"{v}_vs_bare_quartiles"] = quartiles(ratios)
            # the same overhead as CPU: bare's CPU per request over this variant's (1.0 = as cheap)
            cpu_ratios = [b / a for a, b in zip(cpus[v], cpus["bare"], strict=True)]
            report[f"{v}_cpu_vs_bare"] = round(statistics.median(cpu_ratios), 3)
            report[f"{v}_cpu_vs_bare_quartiles"] = quartiles(cpu_ratios)
            # the CPU a request costs on top of bare's, in microseconds (median of the rounds)
            report[f"{v}_extra_cpu_us_per_request"] = round(statistics.median(
                (a - b) * 1000 for a, b in zip(cpus[v], cpus["bare"], strict=True)), 1)
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
