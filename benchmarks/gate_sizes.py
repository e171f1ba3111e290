"""The confidence gate on sub-catalogs of a labelled catalog: keep and reject per catalog size.

    python benchmarks/gate_sizes.py --catalog skills.jsonl --queries queries.jsonl
        [--negatives negatives.jsonl ...] [--sizes 25,50,100] [--seeds 1,2] [--limit 400]
        [--off-limit 300] [--no-embeddings] [--home DIR] [--json]

The gate is calibrated per catalog at index time (``retrieval/calibration.py``), and the dev sets
measure it on whole catalogs of 199 and 911 skills only. Here each size ``n`` and seed draws ``n``
skills (``random.Random(seed)`` over the catalog's names), writes them as a JSONL catalog in their
original order and builds a retriever over it as ``hermes-core skills eval --catalog`` does. Then:

* ``keep``: the share of the labelled queries whose gold is one of the ``n`` skills (a fixed-seed
  sample of at most ``--limit``) that the gate lets through; ``recall@5`` their ranking's.
* ``reject_negatives``: the share of the ``--negatives`` files' off-topic requests (``gold: null``)
  the gate stops (or that get no skill).
* ``reject_other``: the same for the labelled queries whose gold is *not* in the sub-catalog (at
  most ``--off-limit``): tool requests the catalog cannot serve. Some of them a kept skill does
  serve (the dev sets' skills overlap, decision 91), so this is a harder, noisier figure.

Medians over the seeds are printed per size (``--json``: one object, ``rows`` per size and seed,
``medians`` per size). ``--home``: the HERMES_HOME whose embedding cache serves (query vectors are
kept there too, so the sub-catalogs share one embedding of each request).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_core.cli.skills_cmd import _retriever
from hermes_core.jsonl import read_jsonl
from hermes_core.retrieval.evaluate import LabeledQuery, load_queries, recall_at, sample


def sub_catalog(lines: Sequence[dict[str, Any]], size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` skills drawn by ``seed`` from the catalog's names, in the catalog's order."""
    names = sorted(str(d["name"]) for d in lines)
    chosen = set(random.Random(seed).sample(names, min(size, len(names))))
    return [d for d in lines if d["name"] in chosen]


def measure(catalog: Path, home: Path, embeddings: bool, on: Sequence[LabeledQuery],
            negatives: Sequence[LabeledQuery], other: Sequence[LabeledQuery]) -> dict[str, Any]:
    """Build a retriever over ``catalog`` and read its gate on the three request sets."""
    args = argparse.Namespace(catalog=str(catalog), home=str(home), config=None,
                              no_embeddings=not embeddings)
    r = _retriever(args, folders_ok=False)
    r.persist_query_vectors(True)
    t0 = time.perf_counter()
    r.ensure_built()
    build_s = time.perf_counter() - t0
    kept = r5 = 0
    for q in on:
        res = r.retrieve(q.query)
        kept += 0 if res.gated else 1
        ranking = res.candidates if res.layer != "L1" else res.names
        r5 += int(recall_at(ranking, q.gold or "", 5))

    def rejected(qs: Sequence[LabeledQuery]) -> float | None:
        if not qs:
            return None
        n = 0
        for q in qs:
            res = r.retrieve(q.query)
            n += 1 if (res.gated or not res.skills) else 0
        return round(n / len(qs), 4)
    return {"on_topic": len(on), "keep": round(kept / len(on), 4) if on else None,
            "recall@5": round(r5 / len(on), 4) if on else None,
            "negatives": len(negatives), "reject_negatives": rejected(negatives),
            "other": len(other), "reject_other": rejected(other),
            "build_s": round(build_s, 2), "calibration": r.calibration_report()}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--catalog", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--negatives", nargs="*", default=[])
    p.add_argument("--sizes", default="25,50,100")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--limit", type=int, default=400)
    p.add_argument("--off-limit", type=int, default=300)
    p.add_argument("--no-embeddings", action="store_true")
    p.add_argument("--home", default=None)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    lines = [d for _, d in read_jsonl(Path(a.catalog), what="catalog")]
    queries = [q for q in load_queries(a.queries) if q.gold is not None]
    negatives = [q for f in a.negatives for q in load_queries(f) if q.gold is None]
    home = Path(a.home) if a.home else Path(tempfile.mkdtemp(prefix="gate-sizes-home-"))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gate-sizes-") as tmp:
        for size in (int(x) for x in a.sizes.split(",")):
            for seed in (int(x) for x in a.seeds.split(",")):
                sub = sub_catalog(lines, size, seed)
                names = {d["name"] for d in sub}
                path = Path(tmp) / f"catalog-{size}-{seed}.jsonl"
                path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in sub), "utf-8")
                on = sample([q for q in queries if q.gold in names], a.limit, seed)
                other = sample([q for q in queries if q.gold not in names], a.off_limit, seed)
                row = {"size": len(sub), "seed": seed,
                       **measure(path, home, not a.no_embeddings, on, negatives, other)}
                rows.append(row)
                if not a.json:
                    print({k: v for k, v in row.items() if k != "calibration"}, flush=True)
    medians: dict[str, dict[str, float]] = {}
    for size in sorted({r["size"] for r in rows}):
        at = [r for r in rows if r["size"] == size]
        medians[str(size)] = {k: round(statistics.median(r[k] for r in at), 4)
                              for k in ("keep", "recall@5", "reject_negatives", "reject_other")
                              if all(r[k] is not None for r in at)}
    out = {"catalog": a.catalog, "embeddings": not a.no_embeddings, "rows": rows, "medians": medians}
    print(json.dumps(out, ensure_ascii=False) if a.json else json.dumps(medians, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
