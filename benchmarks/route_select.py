"""``Router.select`` on short lines: CPU time per call, this tree against a baseline commit, in
the same run.

Every request is routed before a model is called, so the rules' cost on a plain line is paid on
every turn. The lines: a greeting, a plain question, plain prose, a code request, a Chinese code
request, a joke asked for about code, a library named with an everyday part (and, as a control,
the same named beside its newsroom's words, a line both sides route alike). Each side runs in
its own child process (two packages named ``hermes_core`` cannot share one): the tree from this
checkout, the baseline's ``hermes_core`` from ``git archive REF`` into a temporary directory. The
children alternate ``--rounds`` times so load on a shared machine falls on both alike; each
reports, per line, the median over ``--reps`` of the mean CPU time of ``--calls`` calls (the
router caches nothing per text). Printed: per line, the median over rounds for each side and
their ratio.

    PYTHONPATH=. python benchmarks/route_select.py [--baseline main] [--rounds 3] [--long] --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LINES = {
    "hi": "hi",
    "capital": "What is the capital of France?",
    "prose": ("My sister moved to Lisbon last spring. She found a small flat near the river and "
              "walks to work every day. The rent is high but the light is lovely. She wants us "
              "to visit in May."),
    "code_request": "Write a Python function that parses a CSV file and returns a list of dicts",
    "zh_code_request": "帮我写一个Python函数解析CSV",
    "joke_about_code": "Tell me a joke about a bash script",
    "library_everyday_part": "What was the Axios response to the hurricane?",
    # routed fast on both sides: what reading a thing-named library costs when the route is
    # the same
    "library_thing_word": "What was the Axios response to the election?",
}

# ``--long``: prose naming jokes, a shell and a thing-named library, repeated to 1 KB, 10 KB and
# 100 KB, to see that the joke and library looks cost in proportion to the text (review s55rF);
# each size is called fewer times, so every line costs about the same wall time.
LONG_UNITS = {
    "en": ("My uncle told a joke about a bash script at dinner, and the pandas series on the BBC "
           "was on. Then tell me a joke about the terminal, please. "),
    "zh": "讲一个关于bash脚本的笑话，然后大家都笑了。我的axios response拦截器没问题。",
    "ja": "コードについてのジョークを書いて、みんな笑った。pandasのmergeの話もした。",
}
LONG_SIZES = (1_000, 10_000, 100_000)


def _long_lines() -> dict[str, str]:
    return {f"long_{lang}_{size // 1000}k": (unit * (size // len(unit) + 1))[:size]
            for lang, unit in LONG_UNITS.items() for size in LONG_SIZES}


CHILD = r"""
import json, statistics, sys, time
from hermes_core.agent.smart_routing import Router
from hermes_core.config import parse_yaml
lines, reps, calls = json.load(sys.stdin), int(sys.argv[1]), int(sys.argv[2])
routing = {"default_model": "gpt-4o", "fast_model": "gpt-4o-mini", "code_model": "gpt-4.1"}
router = Router.from_settings(parse_yaml(json.dumps({"llm": {"routing": routing}})))
out = {}
for name, text in lines.items():
    n = max(1, calls * 1000 // max(1000, len(text)))   # a text over 1 KB is called fewer times
    router.select(text)   # warm: compiled patterns, lazy imports
    runs = []
    for _ in range(reps):
        start = time.process_time()
        for _ in range(n):
            router.select(text)
        runs.append((time.process_time() - start) / n * 1e6)
    out[name] = statistics.median(runs)
print(json.dumps(out))
"""


def _baseline_tree(ref: str, into: Path) -> Path:
    """The baseline's ``hermes_core`` package, unpacked under ``into``."""
    archive = into / "base.tar"
    done = subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref, "hermes_core"],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"route_select.py: no hermes_core at {ref!r} ({done.stderr.strip()})")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def _child(path: Path, lines: dict[str, str], reps: int, calls: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(path), "OMP_NUM_THREADS": "1"}
    # the lines go on stdin: 100 KB of text is past what one argument may hold
    done = subprocess.run([sys.executable, "-c", CHILD, str(reps), str(calls)],
                          input=json.dumps(lines), check=True, capture_output=True, text=True,
                          env=env, cwd=path)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def measure(ref: str, rounds: int, reps: int, calls: int, *, long: bool = False) -> dict[str, Any]:
    texts = _long_lines() if long else LINES
    with tempfile.TemporaryDirectory() as tmp:
        base = _baseline_tree(ref, Path(tmp))
        sides: dict[str, list[dict[str, float]]] = {"baseline": [], "tree": []}
        for _ in range(rounds):
            sides["baseline"].append(_child(base, texts, reps, calls))
            sides["tree"].append(_child(ROOT, texts, reps, calls))
    lines: dict[str, dict[str, float]] = {}
    for name in texts:
        b = statistics.median(r[name] for r in sides["baseline"])
        t = statistics.median(r[name] for r in sides["tree"])
        lines[name] = {"baseline_us": round(b, 2), "tree_us": round(t, 2),
                       "ratio": round(t / b, 3) if b else 0.0}
    return {"baseline": ref, "rounds": rounds, "reps": reps, "calls": calls, "lines": lines}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--long", action="store_true",
                    help="prose of 1, 10 and 100 KB instead of the short lines")
    args = ap.parse_args(argv)
    out = measure(args.baseline, args.rounds, args.reps, args.calls, long=args.long)
    if args.json:
        print(json.dumps(out))
    else:
        for name, row in out["lines"].items():
            print(f"{name:24} {row['baseline_us']:9.1f} {row['tree_us']:9.1f}  x{row['ratio']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
