"""What opening the episodic archive costs a fresh process, and whether it grows with the archive.

Each tree (this one, and ``--baseline-tree DIR``: a checkout of the code before) builds its own
archive of ``--sessions`` through ``SessionStore`` (the real segmenter), then a copy ``--scale``
times larger made in SQL (the same segmented index rows at shifted rowids: no Python segmenting,
so a 100x archive takes a minute, not an hour). Per round, in fresh processes, trees alternated:

* ``import_ms``: importing ``hermes_core.agent.episodic.store``;
* ``first_open_ms``: the process's first open of an archive in step (what it does once: the
  segmenter's id, read from the installed packages' metadata);
* ``start_ms``: the two together (a module the import no longer pulls in may be pulled in by the
  first open instead);
* ``open_ms``: the median of 21 opens after it;
* for the small and the large archive, and their ratio (``scale_ratio``: 1.0 when an open does no
  work that grows with the archive).

``bump``: the baseline tree's archives opened by this tree (a tokenizer or segmenter version
between them re-indexes): the first open's time and rows re-indexed (at most
``reindex.OPEN_ROWS`` an open), against this tree's open of its own archive in step.

    python benchmarks/memory_open.py --json [--sessions N] [--scale K] [--rounds R]
                                            [--baseline-tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AT = 1_800_000_000.0
WORDS = ("deploy", "postgres", "kubernetes", "grafana", "terraform", "nginx", "redis", "kafka",
         "python", "rust", "golang", "cache", "index", "shard", "replica", "backup", "restore",
         "latency", "budget", "invoice", "ticket", "部署", "数据库", "回滚")


def build(path: Path, n: int) -> None:
    """``n`` sessions of 40 words through the store (one process of the tree being measured)."""
    from hermes_core.agent.episodic.store import SessionRecord, SessionStore

    rng = random.Random(n)
    with SessionStore(path) as store:
        for at in range(0, n, 1_000):
            store.upsert_many([
                SessionRecord(f"s{i}", f"session {i} " + " ".join(rng.choice(WORDS) for _ in range(40)),
                              (), AT + i) for i in range(at, min(n, at + 1_000))])


def grow(src: Path, dst: Path, k: int) -> None:
    """``src`` copied ``k`` times over in one transaction: sessions and their index rows at
    rowids shifted by the archive's size, ids made unique; the drift notes the copy made are
    cleared (the copy is in step, as the store would have written it)."""
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst, isolation_level=None)
    n = conn.execute("SELECT MAX(rowid) FROM sessions").fetchone()[0]
    if conn.execute("SELECT 1 FROM sessions_fts WHERE rowid < 1 LIMIT 1").fetchone():
        raise SystemExit("grow: the small archive has passages below rowid 1; use short sessions")
    conn.execute("BEGIN")
    for j in range(1, k):
        conn.execute(
            "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
            " relevance_score, content_hash, source, message_count) SELECT rowid + ?,"
            " memory_id || ?, session_id || ?, summary, tags, created_at + ?, relevance_score,"
            " content_hash || ?, source, message_count FROM sessions WHERE rowid <= ?",
            (j * n, f"-{j}", f"-{j}", j * n, f"-{j}", n))
        conn.execute(
            "INSERT INTO sessions_fts(rowid, summary, tags, session_id, created_at, relevance_score)"
            " SELECT rowid + ?, summary, tags, session_id || ?, created_at + ?, relevance_score"
            " FROM sessions_fts WHERE rowid <= ?", (j * n, f"-{j}", j * n, n))
    conn.execute("DELETE FROM index_drift")
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def one(path: Path, n_opens: int = 21) -> dict[str, float]:
    """Import, first open and the median of ``n_opens`` further opens of ``path`` (0: the first
    open's time again), in this process."""
    t0 = time.perf_counter()
    from hermes_core.agent.episodic.store import SessionStore
    imported = time.perf_counter() - t0
    t0 = time.perf_counter()
    store = SessionStore(path)
    first = time.perf_counter() - t0
    reindexed = store.reindexed
    store.close()
    opens = []
    for _ in range(n_opens):
        t0 = time.perf_counter()
        SessionStore(path).close()
        opens.append(time.perf_counter() - t0)
    return {"import_ms": imported * 1e3, "first_open_ms": first * 1e3,
            "start_ms": (imported + first) * 1e3,
            "open_ms": statistics.median(opens or [first]) * 1e3, "reindexed": float(reindexed)}


def _child(tree: Path, *args: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], env=env,
                         cwd=tree, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1])) if out.strip() else {}


def _medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1_000)
    ap.add_argument("--scale", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline-tree", type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--opens", type=int, default=21, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:
        build(Path(args.build[0]), int(args.build[1]))
        return
    if args.one:
        print(json.dumps(one(args.one, args.opens)))
        return
    here = Path(__file__).resolve().parents[1]
    trees = {"after": here, **({"before": args.baseline_tree.resolve()} if args.baseline_tree else {})}
    result: dict[str, object] = {"sessions": args.sessions, "scale": args.scale, "rounds": args.rounds}
    with tempfile.TemporaryDirectory() as d:
        dbs: dict[str, dict[str, Path]] = {}
        for name, tree in trees.items():
            small, large = Path(d) / f"{name}-small.db", Path(d) / f"{name}-large.db"
            _child(tree, "--build", str(small), str(args.sessions))
            grow(small, large, args.scale)
            dbs[name] = {"small": small, "large": large}
        rounds: dict[tuple[str, str], list[dict[str, float]]] = {}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                for size, path in dbs[name].items():
                    rounds.setdefault((name, size), []).append(_child(tree, "--one", str(path)))
        for name in trees:
            small, large = _medians(rounds[name, "small"]), _medians(rounds[name, "large"])
            result[name] = {"small": small, "large": large, "scale_ratio": {
                k: round(large[k] / small[k], 3) for k in ("first_open_ms", "open_ms") if small[k]}}
        if "before" in trees:
            after, before = result["after"], result["before"]
            assert isinstance(after, dict) and isinstance(before, dict)
            result["ratio"] = {size: {k: round(after[size][k] / before[size][k], 3)
                                      for k in ("import_ms", "first_open_ms", "start_ms", "open_ms")
                                      if before[size][k]} for size in ("small", "large")}
            bump: dict[str, object] = {}
            for size, path in dbs["before"].items():   # each opened once: it is re-indexed then
                copy = Path(d) / f"bump-{size}.db"
                shutil.copy(path, copy)
                got = _child(here, "--one", str(copy), "--opens", "0")
                bump[size] = {"first_open_ms": round(got["first_open_ms"], 1),
                              "reindexed": got["reindexed"],
                              "ratio_to_in_step": round(got["first_open_ms"]
                                                        / after[size]["first_open_ms"], 1)}
            result["bump"] = bump
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
