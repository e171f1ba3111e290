"""Sessions another tool wrote below rowid 1: how many opens until every one is found, what those
opens cost together, and the longest write transaction among them (what another writer waits).

Each round builds an archive of one session plus ``--sessions`` rows inserted by direct SQL at
rowids 0, -1, -2 ..., then opens it (the built-in segmenter, jieba loaded first) until no row is
below rowid 1 and a search finds them all. With ``--baseline-tree DIR`` (a checkout of the code
before) the same rounds run there too, alternated in fresh processes; medians and ratios
(this tree over DIR). Each round also times the first open of that archive against an open of
the same archive with no row planted, in the same process (``first_open_ratio``): what the
planted rows cost the open that moves them. ``--max-opens 1`` stops after that first open (for
archives too large to heal in a benchmark's time).

    python benchmarks/memory_rehome.py --json [--sessions N] [--rounds R] [--max-opens K]
        [--baseline-tree DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

MAX_OPENS = 50


def _open_ms(path: Path) -> float:
    from hermes_core.agent.episodic.store import SessionStore

    t0 = time.perf_counter()
    SessionStore(path).close()
    return (time.perf_counter() - t0) * 1000


def one_round(n: int, max_opens: int = MAX_OPENS) -> dict[str, float]:
    """In this process (the tree on ``sys.path``): one archive, opened until all are found."""
    from hermes_core.agent.episodic import reindex
    from hermes_core.agent.episodic.store import SessionRecord, SessionStore
    from hermes_core.tokenize import segment_for_index

    real = reindex.immediate
    holds: list[float] = []

    @contextlib.contextmanager
    def timed(conn: object) -> Iterator[None]:
        t0 = time.perf_counter()
        with real(conn):  # type: ignore[arg-type]
            yield
        holds.append(time.perf_counter() - t0)

    reindex.immediate = timed  # type: ignore[assignment]
    segment_for_index("部署 warm")                      # jieba's dictionary, outside the timing
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sessions.db"
        with SessionStore(path) as store:
            store.upsert(SessionRecord("s", "a plain session about kites", (), 1.0))
        empty_ms = statistics.median(_open_ms(path) for _ in range(5))   # nothing planted
        with SessionStore(path) as store:
            store.connection.executemany(
                "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                " relevance_score, content_hash, source, message_count) VALUES"
                " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)",
                [(-k, f"m{k}", f"low{k}", f"planted word{k}x deploy 部署 rollback", f"h{k}")
                 for k in range(n)])
        holds.clear()
        opens, total, first = 0, 0.0, 0.0
        while opens < max_opens:
            t0 = time.perf_counter()
            store = SessionStore(path)
            took = time.perf_counter() - t0
            total, first = total + took, first or took
            opens += 1
            try:
                low = store.connection.execute("SELECT COUNT(*) FROM sessions WHERE rowid < 1").fetchone()[0]
                found = len(store.search('"planted"', n + 5))
            finally:
                store.close()
            if low == 0 and found == n:
                break
    return {"opens": opens, "opens_ms": total * 1000, "longest_write_ms": max(holds, default=0.0) * 1000,
            "first_open_ms": first * 1000, "empty_open_ms": empty_ms,
            "first_open_ratio": first * 1000 / empty_ms}


def _run(tree: Path, n: int, max_opens: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--one", "--sessions", str(n),
                          "--max-opens", str(max_opens)], env=env, cwd=tree,
                         check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-opens", type=int, default=MAX_OPENS)
    ap.add_argument("--baseline-tree", type=Path)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_round(args.sessions, args.max_opens)))
        return
    here = Path(__file__).resolve().parents[1]
    trees = {"after": here, **({"before": args.baseline_tree.resolve()} if args.baseline_tree else {})}
    rounds: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            rounds[name].append(_run(tree, args.sessions, args.max_opens))
    result: dict[str, object] = {"sessions": args.sessions, "rounds": args.rounds}
    for name in trees:
        result[name] = {k: round(statistics.median(r[k] for r in rounds[name]), 2)
                        for k in rounds[name][0]}
    if "before" in trees:
        after, before = result["after"], result["before"]
        assert isinstance(after, dict) and isinstance(before, dict)
        result["ratio"] = {k: round(after[k] / before[k], 3) if before[k] else None for k in after}
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
