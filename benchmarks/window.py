"""TPM/RPM window accounting: one acquire + success with 100 vs 100,000 requests in the window.

    python benchmarks/window.py --json [--sizes 100,100000]

An in-memory credential pool, one key with ``max_rpm`` and ``max_tpm`` far above the load (so the
window only grows) and a window longer than the run. For each size the window is filled with that
many requests, then ``acquire(tokens=...)`` + ``success`` is timed (median microseconds). Beside it,
in the same run, the accounting it replaced: summing the tokens of every entry in the window
(``sum_window_us``). Reported: ``acquire_us_p50`` per size, ``growth`` (largest / smallest; O(1)
amortised accounting keeps it near 1) and the summing baseline's growth.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.cli.argtypes import positive_int
from hermes_core.config import load_settings

KEY = "sk-bench-window-000000000000"


def one_size(n: int, samples: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings({
            "home": home,
            "credentials": {"openai": {"keys": [{"key": KEY, "max_rpm": 10**9, "max_tpm": 10**9}]}},
            "credential_pool": {"window_s": 10**6}}, env={})
        pool = CredentialPool.from_settings(settings)
        for _ in range(n):
            pool.success(pool.acquire("openai", tokens=100))
        times = []
        for _ in range(samples):
            t = time.perf_counter()
            pool.success(pool.acquire("openai", tokens=100))
            times.append((time.perf_counter() - t) * 1e6)
        entries = [(float(i), 100) for i in range(n)]
        sums = []
        for _ in range(max(5, samples // 20)):
            t = time.perf_counter()
            sum(tok for _, tok in entries)
            sums.append((time.perf_counter() - t) * 1e6)
    return {"in_window": n, "acquire_us_p50": round(statistics.median(times), 2),
            "sum_window_us": round(statistics.median(sums), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="100,100000")
    ap.add_argument("--samples", type=positive_int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        sizes = [positive_int(s) for s in args.sizes.split(",") if s.strip()]
    except argparse.ArgumentTypeError as e:
        ap.error(f"--sizes: {e}")
    if not sizes:
        ap.error("--sizes: give at least one size")
    rows = [one_size(n, args.samples) for n in sizes]
    report: dict[str, Any] = {"sizes": rows,
                              "growth": round(rows[-1]["acquire_us_p50"] / rows[0]["acquire_us_p50"], 3),
                              "sum_window_growth": round(rows[-1]["sum_window_us"]
                                                         / max(rows[0]["sum_window_us"], 1e-9), 1)}
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
