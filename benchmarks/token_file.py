"""What a restart pays to adopt the token file and ask for most of its skills' terms: each skill
made when first asked for (this tree) against every skill made up front, in the same run.

    python benchmarks/token_file.py [--json] [--size 5000] [--asked 0.9] [--rounds 21]

The token file (``bm25/terms.npz``) is read only when no BM25 index file is usable; the refresh
that follows asks the memo for its whole catalog, bar the skills dropped meanwhile. A cache folder
is filled once with ``--size`` synthetic skills (as ``retrieval_rebuild.py`` makes them; untimed).
Each round times, in alternating order, a fresh memo adopting the file and then asked for an
``--asked`` share of the catalog (a fixed sample, in catalog order), two ways:

* ``lazy_ms``: ``TermsCache.load`` (``TokenMemo.adopt_stored``: a skill's terms are decoded and
  made when asked for, one never asked is never made);
* ``eager_ms``: ``load_terms`` (every skill made) and ``TokenMemo.adopt``, as before decision 190;
* ``ratio``: the two medians, lazy / eager; ``ratio_min``: the two minimums' (this machine is
  shared: the minimum is the run least disturbed);
* ``load_ms``: ``TermsCache.load`` alone, the share of ``lazy_ms`` spent before any ask.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.retrieval_rebuild import catalog_lines  # this checkout's
from hermes_core.retrieval import token_store
from hermes_core.retrieval.bm25 import skill_terms
from hermes_core.retrieval.token_memo import TokenMemo
from hermes_core.types import Skill


def _restart(folder: str, n: int, asked: list[Skill], lazy: bool) -> tuple[float, float]:
    """One restart's adoption and asks, in ms: (adoption alone, adoption + asks)."""
    # the cache owns what the memo adopted lazily (the memo holds it weakly): kept to the end
    cache, memo = token_store.TermsCache(folder), TokenMemo(max_skills=4 * n, max_tokens=10**9)
    t = time.perf_counter()
    if lazy:
        cache.load(memo, skill_terms)
    else:
        entries = token_store.load_terms(token_store.terms_path(folder), skill_terms)
        assert entries is not None, "the file was not read"
        memo.adopt(skill_terms, entries)
    loaded = time.perf_counter()
    memo.terms(asked, skill_terms)
    done = time.perf_counter()
    assert memo.derived == 0, "a skill was derived, not read from the file"
    return (loaded - t) * 1e3, (done - t) * 1e3


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
            for lazy in ((True, False) if r % 2 else (False, True)):
                load, total = _restart(folder, n, asked, lazy)
                times[lazy].append(total)
                if lazy:
                    loads.append(load)
    lz, eg = statistics.median(times[True]), statistics.median(times[False])
    return {"size": n, "asked": len(asked), "lazy_ms": round(lz, 2), "eager_ms": round(eg, 2),
            "ratio": round(lz / eg, 3), "ratio_min": round(min(times[True]) / min(times[False]), 3),
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
