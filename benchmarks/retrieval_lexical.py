"""A lexical-only turn's retrieval cost per request, this tree against another, in one run.

    python benchmarks/retrieval_lexical.py [--json] [--against /path/to/other/checkout]
                                           [--queries 300] [--rounds 3]

What a chat's first turns pay while the models load (or every turn with ``skill_utils.embeddings:
false``): ``SkillRetriever.retrieve`` with the lexical layers only, over the HammerBench-zh and
MetaTool dev catalogs (when the eval data is beside the repo), the anthropics/skills catalog and
``examples/home`` (its labelled requests and the held-apart generic ones, Chinese and English).

Each catalog's requests are answered once to warm the memos, then timed ``--rounds`` times; a
child process per tree and round, the trees alternated (this tree first), so both meet the same
load. Per catalog: ``<catalog>_ms`` (median per request over every round, this tree),
``<catalog>_tokenize_ms`` (``bm25_tokens`` of the same requests in the same process: a baseline
no retrieval can go under) and ``<catalog>_vs_tokenize``; with ``--against``:
``<catalog>_against_ms`` and ``<catalog>_ratio`` (this tree / the other). ``multi_hint_share``: the
share of requests whose hint listed more than one skill (where the evidence is read).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("HERMES_EVAL_DIR") or next(
    (str(p) for p in (ROOT.parent / "shared" / "eval", ROOT.parent.parent / "shared" / "eval")
     if p.is_dir()), str(ROOT.parent / "shared" / "eval")))
DATA = ROOT / "tests" / "data" / "catalogs"


def catalogs() -> dict[str, tuple[dict[str, Any], list[Path]]]:
    """Name -> (retriever sources, request files); catalogs whose files are missing are left out."""
    out = {
        "hammerbench_zh": ({"catalogs": [str(EVAL / "hammerbench-zh" / "skills.jsonl")]},
                           [EVAL / "hammerbench-zh" / "queries.dev.jsonl"]),
        "metatool": ({"catalogs": [str(EVAL / "metatool" / "skills.jsonl")]},
                     [EVAL / "metatool" / "queries.dev.jsonl", EVAL / "metatool" / "negatives.dev.jsonl"]),
        "anthropics": ({"catalogs": [str(DATA / "anthropics_skills.jsonl")]},
                       [DATA / "anthropics_skills.queries.jsonl",
                        DATA / "anthropics_skills.negatives.jsonl"]),
        "example_home": ({"folders": [str(ROOT / "examples" / "home" / "skills")]},
                         [DATA / "anthropics_skills.queries.jsonl", DATA / "generic_offtopic.jsonl"]),
    }
    return {k: v for k, v in out.items()
            if all(Path(p).is_file() for p in [*v[0].get("catalogs", []), *v[1]])}


def requests(files: list[Path], n: int) -> list[str]:
    """Up to ``n`` requests, taken evenly from each file in turn."""
    per = [[json.loads(line)["query"] for line in f.read_text("utf-8").splitlines() if line.strip()]
           for f in files]
    out: list[str] = []
    for i in range(n):
        rows = per[i % len(per)]
        if i // len(per) < len(rows):
            out.append(rows[i // len(per)])
    return out


def child(n: int) -> int:
    """In the tree on ``sys.path``: time each catalog's requests once; print one JSON object."""
    sys.path.insert(0, os.getcwd())
    from hermes_core.retrieval.bm25 import bm25_tokens
    from hermes_core.retrieval.retriever import SkillRetriever

    out: dict[str, Any] = {}
    for name, (sources, files) in catalogs().items():
        r = SkillRetriever(embedders=[], **sources)
        r.refresh()
        qs = requests(files, n)
        multi = sum(len(r.retrieve(q).names) > 1 for q in qs)      # warm-up, and the share
        times, toks = [], []
        for q in qs:
            t = time.perf_counter()
            r.retrieve(q)
            times.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            bm25_tokens(q)
            toks.append((time.perf_counter() - t) * 1000)
        out[name] = {"ms": times, "tokenize_ms": toks, "multi_hint_share": multi / max(len(qs), 1)}
    print(json.dumps(out))
    return 0


def run(tree: Path, n: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--queries", str(n)],
                          cwd=tree, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 4)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--against", type=Path, help="another checkout to time alongside (e.g. main)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.queries)
    trees = {"": ROOT} | ({"against": args.against.resolve()} if args.against else {})
    rounds: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
    for _ in range(args.rounds):
        for key, tree in trees.items():
            rounds[key].append(run(tree, args.queries))
    report: dict[str, Any] = {"queries": args.queries, "rounds": args.rounds}
    for name in rounds[""][0]:
        ms = median([t for r in rounds[""] for t in r[name]["ms"]])
        tk = median([t for r in rounds[""] for t in r[name]["tokenize_ms"]])
        report[f"{name}_ms"], report[f"{name}_tokenize_ms"] = ms, tk
        report[f"{name}_vs_tokenize"] = round(ms / tk, 3) if tk else None
        report[f"{name}_multi_hint_share"] = round(rounds[""][0][name]["multi_hint_share"], 4)
        report[f"{name}_round_ms"] = [median(r[name]["ms"]) for r in rounds[""]]
        if "against" in rounds and name in rounds["against"][0]:
            other = median([t for r in rounds["against"] for t in r[name]["ms"]])
            report[f"{name}_against_ms"] = other
            report[f"{name}_against_round_ms"] = [median(r[name]["ms"]) for r in rounds["against"]]
            report[f"{name}_ratio"] = round(ms / other, 3) if other else None
    if args.json:
        print(json.dumps(report))
    else:
        for k, v in report.items():
            print(f"{k:40s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
