"""What a restart pays to adopt the token file and ask for most of its skills' terms: one decode
of the file's tokens (this tree) against a decode of each skill's own slice, in the same run.

    python benchmarks/token_file.py [--json] [--size 5000] [--asked 0.9] [--rounds 21]

The token file (``bm25/terms.npz``) is read only when no BM25 index file is usable; the refresh
that follows asks the memo for its whole catalog, bar the skills dropped meanwhile. A cache folder
is filled once with ``--size`` synthetic skills (as ``retrieval_rebuild.py`` makes them; untimed).
Each round times, in alternating order, ``TermsCache.load`` into a fresh memo and the memo asked
for an ``--asked`` share of the catalog (a fixed sample, in catalog order), twice:

* ``whole_ms``: as this tree reads the file (``StoredTerms(whole=True)``: the text split once);
* ``per_skill_ms``: the same with each skill's slice decoded when asked (``whole=False``, what
  the index file's reader does, and what the token file's did before);
* ``ratio``: the two medians, whole / per-skill; ``ratio_min``: the two minimums' (this machine
  is shared: the minimum is the run least disturbed);
* ``load_ms``: ``TermsCache.load`` alone (whole), the share of the above spent before any ask.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.retrieval_rebuild import catalog_lines  # this checkout's
from hermes_core.retrieval import stored_terms, token_store
from hermes_core.retrieval.bm25 import skill_terms
from hermes_core.retrieval.token_memo import TokenMemo
from hermes_core.types import Skill


def _restart(folder: str, n: int, asked: list[Skill], whole: bool) -> tuple[float, float]:
    """One restart's load and asks, in ms: (load alone, load + asks)."""
    token_store.StoredTerms = functools.partial(stored_terms.StoredTerms, whole=whole)  # type: ignore[misc]
    try:
        cache, memo = token_store.TermsCache(folder), TokenMemo(max_skills=4 * n, max_tokens=10**9)
        t = time.perf_counter()
        cache.load(memo, skill_terms)
        loaded = time.perf_counter()
        memo.terms(asked, skill_terms)
        done = time.perf_counter()
        assert memo.derived == 0, "a skill was derived, not read from the file"
        return (loaded - t) * 1e3, (done - t) * 1e3
    finally:
        token_store.StoredTerms = stored_terms.StoredTerms  # type: ignore[misc]


def measure(n: int, share: float, rounds: int) -> dict[str, float]:
    skills = [Skill(r["name"], r["description"]) for r in map(json.loads, catalog_lines(n))]
    memo = TokenMemo(max_skills=4 * n, max_tokens=10**9)
    asked = [skills[i] for i in sorted(random.Random(7).sample(range(n), round(share * n)))]
    times: dict[bool, list[float]] = {True: [], False: []}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        wrote = token_store.TermsCache(folder, min_new=1).save(
            memo, skill_terms, memo.terms(skills, skill_terms), force=True)
        assert wrote, "the file was not written"
        _restart(folder, n, asked, True)   # untimed: the code fingerprint is taken once a process
        for r in range(rounds):
            for whole in ((True, False) if r % 2 else (False, True)):
                load, total = _restart(folder, n, asked, whole)
                times[whole].append(total)
                if whole:
                    loads.append(load)
    w, p = statistics.median(times[True]), statistics.median(times[False])
    return {"size": n, "asked": len(asked), "whole_ms": round(w, 2), "per_skill_ms": round(p, 2),
            "ratio": round(w / p, 3), "ratio_min": round(min(times[True]) / min(times[False]), 3),
            "load_ms": round(statistics.median(loads), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--size", type=int, default=5000)
    ap.add_argument("--asked", type=float, default=0.9)
    ap.add_argument("--rounds", type=int, default=21)
    a = ap.parse_args(argv)
    result = measure(a.size, a.asked, a.rounds)
    print(json.dumps(result) if a.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
