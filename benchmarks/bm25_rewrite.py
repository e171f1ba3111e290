"""What rewriting the BM25 index file costs after a warm restart, beside a full rebuild in the
same process.

    python benchmarks/bm25_rewrite.py [--json] [--sizes 2000,20000] [--repeats 5] [--changed 64]
                                      [--against /path/to/other/checkout]

For each catalog size (synthetic skills, as ``retrieval_rebuild.py`` makes them) a cache folder
is filled once (a cold build, untimed). Then, ``--repeats`` times, as a new process would: a
fresh token memo reads the file back (``IndexCache.base``), ``--changed`` skills are edited to a
text not seen before and the index updated (untimed), and:

* ``rewrite_<n>_ms``: ``IndexCache.save`` of that update (at ``MIN_NEW`` changes, the default,
  the file is written again whole; fewer for a tiny run): what the kept skills cost to write back.
* ``rebuild_<n>_ms``: the same catalog's index built whole from terms already in memory (no
  tokenising) and written (``save_parts``): the baseline, a full rebuild of the file.
* ``rewrite_<n>_ratio``: the two medians' ratio, rewrite / rebuild.
* ``decoded_<n>``: skills whose terms the last rewrite's process made (``StoredTerms.decoded``).

Each tree runs in a child process (``--library``); with ``--against`` the other checkout's
children alternate with this tree's, and ``against_rewrite_<n>_ratio`` etc. are theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a child measuring another checkout's library (``--library DIR``) imports that one
sys.path.insert(0, next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--library"),
                        str(ROOT)))

from hermes_core.types import Skill  # noqa: E402  (the library chosen above)


def _skills(n: int, revision: int, changed: int) -> list[Skill]:
    from benchmarks.retrieval_rebuild import catalog_lines

    lines = [json.loads(x) for x in catalog_lines(n)]
    step = max(1, n // max(changed, 1))
    for k in range(changed if revision else 0):
        rec = lines[(k * step) % n]
        rec["description"] += f" It now also handles archived items, revision {revision}."
    return [Skill(r["name"], r["description"]) for r in lines]


def child(n: int, repeats: int, changed: int) -> dict[str, float]:
    from hermes_core.retrieval import bm25
    from hermes_core.retrieval.bm25 import BM25Index
    from hermes_core.retrieval.bm25_store import MIN_NEW, IndexCache, save_parts
    from hermes_core.retrieval.token_memo import TokenMemo, skill_key

    derive = bm25.skill_terms
    rewrite, rebuild = [], []
    decoded = -1.0
    with tempfile.TemporaryDirectory() as folder:
        base_catalog = _skills(n, 0, changed)
        memo = TokenMemo(max_skills=4 * n, max_tokens=10**9)
        IndexCache(folder, min_new=1).save(BM25Index(base_catalog, memo), memo, derive)   # cold
        full = memo   # the baseline's memo: the catalog's terms, the edited ones added as they come
        for r in range(1, repeats + 1):
            skills = _skills(n, r, changed)
            memo = TokenMemo(max_skills=4 * n, max_tokens=10**9)   # a new process
            state = IndexCache(folder, min_new=min(changed, MIN_NEW))
            start = state.base(BM25Index(), memo, derive, skills)
            assert start is not None, "the file was not read back"
            new = start.updated(skills)
            t = time.perf_counter()
            assert state.save(new, memo, derive), "the rewrite was not due"
            rewrite.append((time.perf_counter() - t) * 1e3)
            terms = start.parts.terms
            decoded = float(terms.decoded()) if hasattr(terms, "decoded") else -1.0
            full.terms(skills, derive)   # every term in memory: no tokenising timed
            keys = [skill_key(s) for s in skills]
            t = time.perf_counter()
            parts = BM25Index(skills, full).parts
            assert save_parts(Path(folder) / "rebuild.npz", parts, keys, derive)
            rebuild.append((time.perf_counter() - t) * 1e3)
    rw, rb = statistics.median(rewrite), statistics.median(rebuild)
    return {f"rewrite_{n}_ms": round(rw, 1), f"rebuild_{n}_ms": round(rb, 1),
            f"rewrite_{n}_ratio": round(rw / rb, 3), f"decoded_{n}": decoded}


def _run(library: Path, n: int, repeats: int, changed: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", str(n), "--repeats", str(repeats),
                          "--changed", str(changed), "--library", str(library)],
                         check=True, capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
                             p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)})
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--changed", type=int, default=64)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--library", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.repeats, a.changed)))
        return 0
    result: dict[str, float] = {}
    for n in (int(x) for x in a.sizes.split(",")):
        result.update(_run(ROOT, n, a.repeats, a.changed))
        if a.against is not None:
            result.update({f"against_{k}": v for k, v in _run(a.against, n, a.repeats, a.changed).items()})
    print(json.dumps(result) if a.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
