"""A writer during the one-time episodic re-index: how long one write waits, main vs this tree.

    python benchmarks/reindex_writer.py [--json] [--sessions 10000] [--baseline /work/main]

For each source tree (``--baseline`` first, then this one; both in the same run, one after the
other), a child process with that tree on its path: builds an archive of ``--sessions`` sessions
indexed by an older tokenizer (mixed English and Chinese summaries), opens a writer's store on it
(a custom segmenter, never compared, so it does not re-index itself), then starts another process
that opens the archive the ordinary way, which re-indexes it with today's tokenizer. Meanwhile
the writer records one session every 50 ms and times each write (busy timeout 600 s, so a wait
is measured, not refused). Reported per tree: ``reindex_s`` (the re-indexing open), ``writes``
during it, ``write_ms_max`` / ``write_ms_p50``, and ``rows_ok`` (every session and every written
one indexed once after). Ratios compare this tree with the baseline.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def _open_default(path: str, out: Any) -> None:
    from hermes_core.agent.episodic.store import SessionStore

    t0 = time.perf_counter()
    with SessionStore(path, busy_timeout_s=600.0) as store:
        out.put((time.perf_counter() - t0, store.reindexed))


def child(n: int) -> dict[str, Any]:
    """Runs with one tree on sys.path (see main)."""
    from hermes_core.agent.episodic.store import SessionRecord, SessionStore

    def old(text: str) -> str:
        return text.lower()

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "sessions.db")
        with SessionStore(path, segment=old, segment_id="bench-old-1") as store:
            store.upsert_many([SessionRecord(
                f"s{i}", f"session {i}: deployed service-{i} 和数据库{i} 明天下午开会讨论预算 "
                         f"about the billing pipeline and its nightly jobs", ("deploy", f"t{i}"),
                1_700_000_000.0 + i) for i in range(n)])
        writer = SessionStore(path, segment=old, busy_timeout_s=600.0)
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        proc = ctx.Process(target=_open_default, args=(path, out))
        proc.start()
        time.sleep(1.0)     # the re-index is under way (its process has started and opened)
        waits: list[float] = []
        i = 0
        while proc.is_alive() and out.empty():
            t0 = time.perf_counter()
            writer.upsert(SessionRecord(f"w{i}", f"written during the re-index {i}", (),
                                        1_800_000_000.0 + i))
            waits.append((time.perf_counter() - t0) * 1000)
            i += 1
            time.sleep(0.05)
        reindex_s, reindexed = out.get(timeout=1200)
        proc.join(60)
        writer.close()
        with SessionStore(path) as store:
            stats = store.stats()
            rows_ok = (stats["sessions"] == n + i and stats["index_in_sync"]
                       and len(store.search('"written"', n + i + 1)) == i)
    return {"reindex_s": round(reindex_s, 2), "reindexed_rows": reindexed, "writes": len(waits),
            "write_ms_max": round(max(waits), 1) if waits else None,
            "write_ms_p50": round(statistics.median(waits), 1) if waits else None,
            "rows_ok": rows_ok}


def run_tree(tree: Path, n: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, __file__, "--child", "--sessions", str(n)],
                          env=env, capture_output=True, text=True, check=True, cwd=tree)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--baseline", default="/work/main", help="the tree to compare with")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.sessions)))
        return 0
    base = run_tree(Path(args.baseline), args.sessions)
    new = run_tree(HERE, args.sessions)
    report = {
        "sessions": args.sessions, "baseline": args.baseline, "baseline_figures": base,
        "this_tree": new,
        "write_ms_max_ratio": round(new["write_ms_max"] / base["write_ms_max"], 4)
        if base.get("write_ms_max") and new.get("write_ms_max") else None,
        "reindex_s_ratio": round(new["reindex_s"] / base["reindex_s"], 3),
    }
    print(json.dumps(report, indent=None if not args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
