"""Skill-retrieval latency and restart cost, measured side by side in one run.

    python benchmarks/retrieval.py [--json] [--queries N]

* ``l1_l3_10000_ms_p50``: retrieve() over 10,000 synthetic skills with L1-L3 only (no model).
* ``full_1000_ms_p50`` vs ``embed_only_ms_p50``: 1,000 skills; the full five-layer retrieve()
  against the bare cost of embedding the query and one matrix product (the baseline any dense
  retriever pays). Queries alternate between the two and are all distinct, so neither side
  profits from the query cache. ``overhead_ratio`` = full / embed-only (goal <= 1.25).
* ``cold_start_s``: a new Python process (imports, model loads) over the same 1,000 skills and the
  warm embedding cache, up to its first answer; ``restart_embedded_docs``: documents and skill
  parts (name words, description sentences) it had to embed (goal 0). ``warm_restart_s``: the
  same in-process (modules already imported).
* ``peak_rss_mb``: the process's peak resident set.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hermes_core.cli.argtypes import positive_int
from hermes_core.retrieval.dense import default_embedders
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill

DOMAINS = ["Navigation", "Calendar", "Finance", "Shopping", "Health", "Travel", "Music", "Files",
           "Email", "Weather", "Social", "Photos", "Notes", "Fitness", "Food", "Home"]
OBJECTS = ["route", "meeting", "invoice", "order", "appointment", "flight", "playlist", "document",
           "message", "forecast", "post", "album", "note", "workout", "recipe", "device", "ticket",
           "account", "payment", "reminder", "contact", "report", "image", "booking"]
VERBS = ["create", "query", "update", "delete", "list", "share", "export", "cancel", "schedule",
         "search", "summarize", "convert", "send", "check", "book", "track"]
FILLER = ["quickly", "for the user", "with details", "from the server", "in the app", "by date",
          "and notify", "securely", "on request", "with filters", "in bulk", "for a contact"]
CJK = ["查询", "创建", "会议", "订单", "天气", "航班", "提醒", "文件", "付款", "记录"]


def synthetic_skills(n: int, seed: int = 7) -> list[Skill]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        d, o, v = rng.choice(DOMAINS), rng.choice(OBJECTS), rng.choice(VERBS)
        desc = f"{v.capitalize()} a {o} {rng.choice(FILLER)} {rng.choice(FILLER)}; {rng.choice(CJK)}{o}"
        out.append(Skill(f"{d}.{o.capitalize()}s.{v}{o.capitalize()}{i}", desc,
                         synonyms=(f"{v} my {o}",) if i % 10 == 0 else ()))
    return out


def queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"please {rng.choice(VERBS)} the {rng.choice(OBJECTS)} {rng.choice(FILLER)} #{i}"
            for i in range(n)]


def p50(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def child_cold_start(cache: str) -> int:
    """Run in a fresh process: build over the warm cache, answer once, report."""
    t = time.perf_counter()
    r = SkillRetriever(skills=synthetic_skills(1_000), embedders=default_embedders(), cache_dir=cache)
    r.retrieve("please book the flight")
    print(json.dumps({"seconds": time.perf_counter() - t,
                      "embedded_docs": r.embedded_docs + sum(d.embedded_parts for d in r.dense)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--queries", type=positive_int, default=200)
    ap.add_argument("--child-cold-start", metavar="CACHE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_cold_start:
        return child_cold_start(args.child_cold_start)
    out: dict[str, float | int | str] = {}

    # L1-L3 over 10,000 skills
    big = SkillRetriever(skills=synthetic_skills(10_000), embedders=[])
    big.refresh()
    times = []
    for q in queries(args.queries, 1):
        t = time.perf_counter()
        big.retrieve(q)
        times.append((time.perf_counter() - t) * 1000)
    out["l1_l3_10000_ms_p50"] = p50(times)

    # full vs embed-only over 1,000 skills, interleaved
    skills = synthetic_skills(1_000)
    with tempfile.TemporaryDirectory() as cache:
        embedders = default_embedders()
        if not embedders:
            print("no embedder installed: pip install 'hermes-core[embeddings]'", file=sys.stderr)
            return 1
        full = SkillRetriever(skills=skills, embedders=embedders, cache_dir=cache)
        t = time.perf_counter()
        full.refresh()
        out["first_index_s"] = round(time.perf_counter() - t, 3)
        dense = full.dense[0]
        emb = dense.embedder
        out["embedder"] = emb.model_id
        qs_full, qs_base = queries(args.queries, 2), queries(args.queries, 3)
        for q in queries(5, 4):  # warm both paths
            full.retrieve(q)
            _ = dense.matrix @ emb.embed_query(q)
        t_full, t_base = [], []
        for qf, qb in zip(qs_full, qs_base, strict=True):
            t = time.perf_counter()
            _ = dense.matrix @ emb.embed_query(qb)
            t_base.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            full.retrieve(qf)
            t_full.append((time.perf_counter() - t) * 1000)
        out["full_1000_ms_p50"] = p50(t_full)
        out["embed_only_ms_p50"] = p50(t_base)
        out["overhead_ratio"] = round(statistics.median(t_full) / statistics.median(t_base), 3)

        # restart: new models, same on-disk cache; in-process, then a new process
        t = time.perf_counter()
        again = SkillRetriever(skills=skills, embedders=default_embedders(), cache_dir=cache)
        again.retrieve("please book the flight")
        out["warm_restart_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child-cold-start", cache],
                              capture_output=True, text=True, check=True, timeout=600)
        out["cold_start_s"] = round(time.perf_counter() - t, 3)
        child = json.loads(proc.stdout.strip().splitlines()[-1])
        out["restart_embedded_docs"] = (int(child["embedded_docs"]) + again.embedded_docs
                                        + sum(d.embedded_parts for d in again.dense))
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["queries"] = args.queries
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:24s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
