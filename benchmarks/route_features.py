"""Routing's feature extraction on large requests: does its cost grow with the text, and how fast?

``extract_features`` runs on every request before a model is chosen. For each kind of text (English
and Chinese prose, a log, and inputs written against the patterns: one cue word repeated, blank
lines, one long line) at 100 KB and 1 MB it times ``extract_features`` and, as the baseline in the
same run, ``count_tokens`` on the same text (what every route pays anyway to measure the request).
``ratio`` is features over counting; ``growth`` is the 1 MB time over the 100 KB time (10 is
linear; far above 10 would be quadratic). Medians of ``--reps`` interleaved runs, in CPU time of
this process (a shared machine's wall clock mostly measures its other jobs).

To compare two versions of the package, run this file with each on ``PYTHONPATH``:

    PYTHONPATH=. python benchmarks/route_features.py --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

from hermes_core.agent.routing.rules import extract_features
from hermes_core.tokens import count_tokens

SIZES = {"100KB": 100_000, "1MB": 1_000_000}


def _fill(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def texts(chars: int) -> dict[str, str]:
    return {
        "english": _fill("Economists think that changes in interest rates shape saving. ", chars),
        "chinese": _fill("经济学家认为，利率的变化会影响居民的消费和储蓄。", chars),
        "log": _fill("2026-12-04T19:00:00Z INFO worker[3] GET /api/v1/items?id=7 200 3ms\n", chars),
        "cue_words": _fill("prove step by step why solve derive analyse trade-offs ", chars),
        "zh_cue_words": _fill("证明一步一步分析推理解释这个函数", chars),
        "blank_lines": "Explain this step by step" + "\n" * (chars - 25),
        "one_line": _fill("write ", chars),
    }


def _time(fn: Callable[[str], object], text: str) -> float:
    """CPU seconds of one call: on a shared machine wall time mostly measures the other jobs."""
    start = time.process_time()
    fn(text)
    return time.process_time() - start


def measure(reps: int, sizes: dict[str, int]) -> dict[str, object]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for size_name, chars in sizes.items():
        for kind, text in texts(chars).items():
            feats: list[float] = []
            base: list[float] = []
            for _ in range(reps):   # interleaved, so load on the machine falls on both alike
                feats.append(_time(extract_features, text))
                base.append(_time(count_tokens, text + str(len(feats))))   # no count cache hit
            f, b = statistics.median(feats), statistics.median(base)
            out.setdefault(kind, {})[size_name] = {
                "features_ms": round(f * 1000, 2), "count_tokens_ms": round(b * 1000, 2),
                "ratio": round(f / b, 3) if b else 0.0}
    growth = {}
    if {"100KB", "1MB"} <= sizes.keys():
        growth = {kind: round(v["1MB"]["features_ms"] / v["100KB"]["features_ms"], 2)
                  for kind, v in out.items() if v["100KB"]["features_ms"]}
    return {"reps": reps, "sizes": sizes, "kinds": out, "growth": growth}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="10 KB and 100 KB, one rep (smoke)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sizes = {"10KB": 10_000, "100KB": 100_000} if args.small else SIZES
    result = measure(1 if args.small else args.reps, sizes)
    if args.json:
        print(json.dumps(result))
    else:
        for kind, by_size in result["kinds"].items():   # type: ignore[attr-defined]
            for size, v in by_size.items():
                print(f"{kind:13} {size:6} features {v['features_ms']:9.2f} ms  "
                      f"count_tokens {v['count_tokens_ms']:9.2f} ms  ratio {v['ratio']}")
        print("growth 1MB/100KB:", result["growth"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
