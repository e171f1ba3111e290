"""What a store kept open pays, per write, for carrying on its open's upkeep (decision 125).

Medians, each against a baseline measured in the same run:

* ``write``: one session stored per write (``upsert``, the default segmenter) on an archive of
  ``--sessions``, nothing pending; then an open of that archive in step (``open_*_ms``). With
  ``--baseline-tree DIR`` (a checkout of the code before) the same measures run there too,
  alternated round by round in fresh processes: the ratios are what the drift triggers, the
  note each insert clears and the every-few-writes check cost.
* ``pending``: a write while a re-index an open left is pending (one ``WRITE_ROWS`` batch after
  it, real segmenter) against the ``write`` median of this tree, and how many writes finished it.
* ``reads``: with ``--reads-baseline-tree DIR`` only: a recall's search on one thread while
  another thread of the same store writes sessions that each carry a re-index batch
  (``--reads-sessions`` indexed by another tokenizer), this tree against DIR alternated in fresh
  processes: the read's latency while upkeep is pending (its p50 and max).
* ``heal``: an archive of ``--sessions`` with 1 % of its sessions' index rows deleted by direct
  SQL: the open that heals it (``OPEN_STEPS`` transactions of ``CHUNK`` sessions) and its longest
  write transaction, against an open of the same archive in step.

    python benchmarks/memory_write_upkeep.py --json [--sessions N] [--writes W] [--rounds R]
                                                   [--baseline-tree DIR]
    python benchmarks/memory_write_upkeep.py --json --reads-baseline-tree DIR [--rounds R]
                                                   [--reads-sessions N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.cli.argtypes import positive_int

AT = 1_800_000_000.0
WORDS = ("deploy", "postgres", "kubernetes", "grafana", "terraform", "nginx", "redis", "kafka",
         "python", "rust", "golang", "cache", "index", "shard", "replica", "backup", "restore",
         "latency", "budget", "invoice", "ticket")


def _summary(rng: random.Random, i: int) -> str:
    return f"session {i} " + " ".join(rng.choice(WORDS) for _ in range(40)) + "."


def _build(path: Path, n: int, **store_kw: object) -> None:
    rng = random.Random(n)
    with SessionStore(path, **store_kw) as store:  # type: ignore[arg-type]
        for at in range(0, n, 200):
            store.upsert_many([SessionRecord(f"s{i}", _summary(rng, i), (), AT + i)
                               for i in range(at, min(n, at + 200))])


#: Opens of the archive, in step, timed after the writes (what every process start pays).
OPENS = 7


def worker_writes(sessions: int, writes: int) -> dict[str, list[float]]:
    """Milliseconds of each single-session write on a fresh archive, then of each of ``OPENS``
    opens of it with nothing to heal (run in a fresh process)."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.db"
        _build(path, sessions)
        out, opens = [], []
        with SessionStore(path) as store:
            for i in range(writes):
                rec = SessionRecord(f"new{i}", _summary(rng, 10**6 + i), (), AT)
                t0 = time.perf_counter()
                store.upsert(rec)
                out.append((time.perf_counter() - t0) * 1000)
        for _ in range(OPENS):
            t0 = time.perf_counter()
            SessionStore(path).close()
            opens.append((time.perf_counter() - t0) * 1000)
        return {"writes": out, "opens": opens}


def worker_reads(sessions: int) -> list[float]:
    """Milliseconds of each search made while another thread's writes carry a pending re-index
    on (run in a fresh process; only the reads that ended before the re-index did)."""
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.db"
        _build(path, sessions, segment=str.lower, segment_id="older-tokenizer-1")
        out: list[float] = []
        with SessionStore(path) as store:
            done = threading.Event()

            def write() -> None:
                n = 0
                while store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'"
                                               ).fetchone()[0] != store.segment_id:
                    store.upsert(SessionRecord(f"new{n}", _summary(rng, 10**6 + n), (), AT))
                    n += 1
                done.set()

            writer = threading.Thread(target=write)
            writer.start()
            while not done.is_set():
                word = rng.choice(WORDS)
                t0 = time.perf_counter()
                store.search(f'"{word}"', 5)
                took = (time.perf_counter() - t0) * 1000
                if not done.is_set():
                    out.append(took)
                time.sleep(0.002)
            writer.join()
        return out


def reads(sessions: int, rounds: int, baseline: Path) -> dict[str, object]:
    here = Path(__file__).resolve().parent.parent
    trees = {"after": here, "before": baseline}
    p50: dict[str, list[float]] = {k: [] for k in trees}
    worst: dict[str, list[float]] = {k: [] for k in trees}
    for r in range(rounds):
        for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
            env = {**os.environ, "PYTHONPATH": str(trees[name]), "OMP_NUM_THREADS": "1"}
            got = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker-reads",
                                  "--reads-sessions", str(sessions)], env=env,
                                 capture_output=True, text=True, check=True, cwd=str(trees[name]))
            times = list(json.loads(got.stdout))
            p50[name].append(statistics.median(times))
            worst[name].append(max(times))
    out: dict[str, object] = {f"{k}_p50_ms": round(statistics.median(v), 2) for k, v in p50.items()}
    out |= {f"{k}_max_ms": round(statistics.median(v), 1) for k, v in worst.items()}
    out["p50_ratio"] = round(statistics.median(p50["after"]) / statistics.median(p50["before"]), 3)
    out["max_ratio"] = round(statistics.median(worst["after"]) / statistics.median(worst["before"]), 3)
    out["rounds_p50_ms"] = {k: [round(x, 2) for x in v] for k, v in p50.items()}
    return out


def _run_worker(tree: Path, sessions: int, writes: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    got = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                          "--sessions", str(sessions), "--writes", str(writes)],
                         env=env, capture_output=True, text=True, check=True, cwd=str(tree))
    return dict(json.loads(got.stdout))


def writes(sessions: int, count: int, rounds: int, baseline: Path | None) -> dict[str, object]:
    here = Path(__file__).resolve().parent.parent
    trees = {"after": here} | ({"before": baseline} if baseline is not None else {})
    med: dict[str, list[float]] = {k: [] for k in trees}
    opens: dict[str, list[float]] = {k: [] for k in trees}
    for r in range(rounds):
        for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
            got = _run_worker(trees[name], sessions, count)
            med[name].append(statistics.median(got["writes"]))
            opens[name].append(statistics.median(got["opens"]))
    out: dict[str, object] = {f"{k}_ms": round(statistics.median(v), 3) for k, v in med.items()}
    out["rounds_ms"] = {k: [round(x, 3) for x in v] for k, v in med.items()}
    out |= {f"open_{k}_ms": round(statistics.median(v), 3) for k, v in opens.items()}
    if baseline is not None:
        out["ratio"] = round(statistics.median(med["after"]) / statistics.median(med["before"]), 3)
        out["open_ratio"] = round(statistics.median(opens["after"])
                                  / statistics.median(opens["before"]), 3)
    return out


def pending(sessions: int, plain_ms: float) -> dict[str, object]:
    from hermes_core.agent.episodic import reindex  # this tree's only: workers run the baseline
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.db"
        _build(path, sessions, segment=str.lower, segment_id="older-tokenizer-1")
        t0 = time.perf_counter()
        store = SessionStore(path)
        open_ms = (time.perf_counter() - t0) * 1000
        times, n = [], 0
        with store:
            while store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'"
                                           ).fetchone()[0] != store.segment_id:
                rec = SessionRecord(f"new{n}", _summary(rng, 10**6 + n), (), AT)
                t0 = time.perf_counter()
                store.upsert(rec)
                times.append((time.perf_counter() - t0) * 1000)
                n += 1
        # an archive of at most OPEN_ROWS sessions is re-indexed whole by the open: no write
        # carries a batch then, and there is nothing to time
        med = statistics.median(times) if times else None
        return {"open_ms": round(open_ms, 1), "write_rows": reindex.WRITE_ROWS,
                "open_rows": reindex.OPEN_ROWS, "writes_to_finish": n,
                "write_ms": None if med is None else round(med, 2),
                "ratio_to_plain_write": None if med is None else round(med / plain_ms, 1)}


def heal(sessions: int, rounds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "h.db"
        _build(base, sessions)
        in_step: list[float] = []
        healing: list[float] = []
        holds: list[float] = []
        _timed_steps(holds)
        for _ in range(rounds):
            t0 = time.perf_counter()
            SessionStore(base).close()
            in_step.append((time.perf_counter() - t0) * 1000)
            drifted = Path(tmp) / "d.db"
            drifted.write_bytes(base.read_bytes())
            conn = sqlite3.connect(drifted)
            conn.execute("DELETE FROM sessions_fts WHERE rowid IN (SELECT rowid FROM sessions "
                         "WHERE rowid % 100 = 7)")
            conn.commit()
            conn.close()
            t0 = time.perf_counter()
            store = SessionStore(drifted)
            healing.append((time.perf_counter() - t0) * 1000)
            in_sync = store.stats()["index_in_sync"]
            store.close()
        return {"open_in_step_ms": round(statistics.median(in_step), 1),
                "open_healing_ms": round(statistics.median(healing), 1),
                "ratio": round(statistics.median(healing) / statistics.median(in_step), 2),
                "step_hold_ms_max": round(max(holds), 1),
                "step_hold_ms_median": round(statistics.median(holds), 1),
                "healed_in_sync": in_sync}


def _timed_steps(holds: list[float]) -> None:
    """Each healing write transaction's length (the lock a writer would wait for) into ``holds``."""
    from hermes_core.agent.episodic import reindex  # drift's steps take it from there
    plain = reindex.immediate

    @contextmanager
    def timed(conn: sqlite3.Connection) -> Iterator[None]:
        t0 = time.perf_counter()
        with plain(conn):
            yield
        holds.append((time.perf_counter() - t0) * 1000)

    reindex.immediate = timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sessions", type=positive_int, default=5_000)
    ap.add_argument("--writes", type=positive_int, default=200)
    ap.add_argument("--rounds", type=positive_int, default=5)
    ap.add_argument("--baseline-tree", type=Path, default=None)
    ap.add_argument("--worker-reads", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--reads-sessions", type=positive_int, default=20_000)
    ap.add_argument("--reads-baseline-tree", type=Path, default=None)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker_writes(args.sessions, args.writes)))
        return
    if args.worker_reads:
        print(json.dumps(worker_reads(args.reads_sessions)))
        return
    if args.reads_baseline_tree is not None:
        result = {"reads_sessions": args.reads_sessions,
                  "reads": reads(args.reads_sessions, args.rounds, args.reads_baseline_tree)}
        print(json.dumps(result, indent=None if args.json else 2))
        return
    w = writes(args.sessions, args.writes, args.rounds, args.baseline_tree)
    result = {"sessions": args.sessions, "write": w,
              "pending": pending(args.sessions, float(w["after_ms"])),  # type: ignore[arg-type]
              "heal": heal(args.sessions, args.rounds)}
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
