"""Episodic-memory upkeep on a large archive: ``memory stats``, the counters' write cost,
retention steps against a forget, and how long summaries rank for their own words.

Everything is compared with a baseline measured in the same run (medians):

* ``stats``: the three scans ``memory stats`` ran before the counters (``COUNT(*)`` with
  ``MIN``/``MAX`` over ``sessions``, ``COUNT(*)`` over the index, ``GROUP BY source``) against
  ``SessionStore.stats()``, each on a fresh read-only connection, alternated.
* ``insert``: sessions stored per second with the counting triggers and without them (a fresh
  small file each, alternated), so their cost is a ratio.
* ``retention``: the longest write transaction of a prune (steps of ``PRUNE_BATCH``) against
  the write transaction of one forget (its index merge), on the same archive.
* ``long_summaries``: for sampled long (30-60 sentences) and short summaries, the summary's three
  rarest words (of five letters or more) are asked; "wrong" is the session not in the top 5
  while a returned one holds fewer of the three words. bm25's length normalisation is what
  makes it differ between the two. The archive is built twice, with one index row a session
  (``whole``, the baseline) and with long summaries cut into passages, and every question is
  asked of both, alternated, with the median recall time of each.

    python benchmarks/memory_upkeep.py --json [--sessions N] [--samples S]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import counts, passages, retention
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.cli.argtypes import positive_int

sys.path.insert(0, str(Path(__file__).resolve().parent))
import memory as memory_bench

OLD_STATS_SQL = ("SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM sessions",
                 "SELECT COUNT(*) FROM sessions_fts",
                 "SELECT source, COUNT(*) FROM sessions GROUP BY source ORDER BY source")


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def stats_ms(db: Path, rounds: int) -> dict[str, object]:
    old, new = [], []
    for r in range(rounds):
        for which in (("old", "new") if r % 2 == 0 else ("new", "old")):
            if which == "old":
                conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
                t0 = time.perf_counter()
                for sql in OLD_STATS_SQL:
                    conn.execute(sql).fetchall()
                old.append(_ms(t0))
                conn.close()
            else:
                t0 = time.perf_counter()
                with SessionStore(db, read_only=True) as store:
                    store.stats()
                new.append(_ms(t0))
    o, n = statistics.median(old), statistics.median(new)
    return {"scan_ms_p50": round(o, 2), "counters_ms_p50": round(n, 2), "ratio": round(n / o, 4)}


def insert_per_s(rounds: int, n: int) -> dict[str, object]:
    rates: dict[str, list[float]] = {"counters": [], "none": []}
    real_ensure = counts.ensure
    for r in range(rounds):
        for which in (("counters", "none") if r % 2 == 0 else ("none", "counters")):
            with tempfile.TemporaryDirectory() as tmp:
                counts.ensure = real_ensure if which == "counters" else (lambda conn: False)  # type: ignore[assignment]
                try:
                    with SessionStore(Path(tmp) / "i.db", segment=str.lower) as store:
                        recs = [SessionRecord(f"s{i}", f"session {i} about word{i % 97} and more",
                                              (), 1.0e9 + i) for i in range(n)]
                        t0 = time.perf_counter()
                        for at in range(0, n, 10):
                            store.upsert_many(recs[at:at + 10])
                        rates[which].append(n / (time.perf_counter() - t0))
                finally:
                    counts.ensure = real_ensure  # type: ignore[assignment]
    c, b = statistics.median(rates["counters"]), statistics.median(rates["none"])
    return {"with_counters_per_s": round(c, 1), "without_per_s": round(b, 1), "ratio": round(c / b, 4)}


def retention_vs_forget(db: Path, now: float) -> dict[str, object]:
    """The longest write transaction of each, timed from BEGIN IMMEDIATE to COMMIT."""
    holds: list[float] = []
    began: list[float] = []

    def trace(sql: str) -> None:
        if sql.startswith("BEGIN IMMEDIATE"):
            began.append(time.perf_counter())
        elif sql == "COMMIT" and began:
            holds.append(_ms(began.pop()))

    with SessionStore(db, clock=lambda: now) as store:
        total = store.stats()["sessions"]
        store.connection.set_trace_callback(trace)
        victim = store.connection.execute("SELECT session_id FROM sessions LIMIT 1").fetchone()[0]
        store.delete(victim)
        forget_ms = max(holds)
        holds.clear()
        pruned = store.prune(retention.RetentionPolicy(max_sessions=total - 1 - 2_000))
        store.connection.set_trace_callback(None)
    return {"forget_hold_ms": round(forget_ms, 1), "prune_step_hold_ms_max": round(max(holds), 1),
            "prune_step_hold_ms_p50": round(statistics.median(holds), 2), "pruned": pruned,
            "steps": len(holds), "ratio_step_to_forget": round(max(holds) / forget_ms, 4)}


def _held(engine: ContextEngine, summary: str) -> list[str] | None:
    """The summary's three rarest words (five letters or more): what a user recalls it by."""
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{5,}", summary)})
    if len(words) < 3:
        return None
    dfs = engine.store.term_dfs(words, 1_000)
    return sorted(words, key=lambda w: (dfs[w], w))[:3]


def long_summaries(dbs: dict[str, Path], now: float, samples: int, seed: int) -> dict[str, object]:
    """Each layout's archive asked the same questions, the layouts alternated per question: the
    share of top-1 hits and of "wrong" answers, and the median recall time."""
    rng = random.Random(seed)
    conn = sqlite3.connect(next(iter(dbs.values())))
    rows = conn.execute("SELECT session_id, summary FROM sessions").fetchall()
    conn.close()
    groups = {"long": [r for r in rows if r[1].count(".") + r[1].count("。") > 25],
              "short": [r for r in rows if r[1].count(".") + r[1].count("。") < 10]}
    engines = {name: ContextEngine(db, clock=lambda: now) for name, db in dbs.items()}
    out: dict[str, object] = {}
    try:
        for group, members in groups.items():
            top1 = dict.fromkeys(dbs, 0)
            wrong = dict.fromkeys(dbs, 0)
            ms: dict[str, list[float]] = {name: [] for name in dbs}
            for n, (sid, summary) in enumerate(rng.sample(members, min(samples, len(members)))):
                q = _held(engines["whole"], summary)
                if q is None:
                    continue
                for name in (list(dbs) if n % 2 == 0 else list(reversed(dbs))):
                    t0 = time.perf_counter()
                    got = engines[name].retrieve(" ".join(q), 5)
                    ms[name].append(_ms(t0))
                    ids = [f.session_id for f in got]
                    held = [sum(w in f.summary.lower() for w in q) for f in got]
                    top1[name] += bool(ids) and ids[0] == sid
                    wrong[name] += sid not in ids and any(h < 3 for h in held)
            out[group] = {name: {"asked": len(ms[name]),
                                 "top1": round(top1[name] / max(1, len(ms[name])), 3),
                                 "wrong": round(wrong[name] / max(1, len(ms[name])), 3),
                                 "recall_ms_p50": round(statistics.median(ms[name] or [0.0]), 2)}
                          for name in dbs}
    finally:
        for engine in engines.values():
            engine.close()
    return out


VICTIM, VICTIM_WORD = "victim", "qqzvictimword"


def plant_victim(db: Path, now: float) -> None:
    """The first session of the archive (so its words sit in the oldest segment) holds a word no
    other session has."""
    with SessionStore(db, clock=lambda: now) as store:
        store.upsert(SessionRecord(VICTIM, f"the user confided {VICTIM_WORD} once", (), now))


def stepped_merge(db: Path, pages: int, steps_max: int) -> dict[str, object]:
    """Decision 111's leftover, probed on the archive: the oldest session's rows deleted
    (a tombstone, no merge), then FTS5's incremental ``merge`` of ``pages`` pages a transaction
    (``usermerge`` 2) with another connection recording a session between steps, until a step
    changes nothing. Reports the steps, the longest step's lock hold against one ``optimize``
    (what a forget runs), FTS5's integrity check, and whether the deleted words are still in the
    index's pages (``sessions_fts_data``) after the steps and after the ``optimize``."""
    conn = sqlite3.connect(db, isolation_level=None)
    other = sqlite3.connect(db, isolation_level=None, timeout=60)
    rowid = conn.execute("SELECT rowid FROM sessions WHERE session_id = ?", (VICTIM,)).fetchone()[0]

    def held() -> bool:   # no other term starts with "qqz": FTS5's prefix compression keeps it whole
        return any(VICTIM_WORD.encode() in (b or b"")
                   for (b,) in conn.execute("SELECT block FROM sessions_fts_data"))

    conn.execute("BEGIN IMMEDIATE")
    passages.remove(conn, "sessions_fts", rowid)
    conn.execute("DELETE FROM sessions WHERE rowid = ?", (rowid,))
    conn.execute("INSERT INTO sessions_fts(sessions_fts, rank) VALUES ('usermerge', 2)")
    conn.execute("COMMIT")
    holds, steps = [], 0
    while steps < steps_max:
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        before = conn.total_changes
        conn.execute("INSERT INTO sessions_fts(sessions_fts, rank) VALUES ('merge', ?)", (pages,))
        changed = conn.total_changes - before
        conn.execute("COMMIT")
        holds.append(_ms(t0))
        steps += 1
        if changed < 2:
            break
        other.execute("INSERT INTO sessions_fts(summary, tags, session_id, created_at,"
                      " relevance_score) VALUES ('a session recorded between steps', '', ?, 0, 1)",
                      (f"between-{steps}",))
    integrity = "ok"
    try:
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as e:
        integrity = str(e)
    after_steps = held()
    t0 = time.perf_counter()
    conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('optimize')")
    optimize_ms = _ms(t0)
    out = {"pages": pages, "steps": steps, "converged": steps < steps_max,
           "step_hold_ms_max": round(max(holds), 1),
           "step_hold_ms_p50": round(statistics.median(holds), 2),
           "optimize_ms": round(optimize_ms, 1), "integrity": integrity,
           "deleted_row_in_index_after_steps": after_steps,
           "deleted_row_in_index_after_optimize": held()}
    other.close()
    conn.close()
    return out


def build_layouts(tmp: Path, sessions: int, seed: int, now: float) -> dict[str, object]:
    """The same archive twice: ``whole``, one index row a session (as before passages: passages
    switched off, which search ranks exactly as FTS5's rank), and ``passages``."""
    built: dict[str, object] = {}
    vocab = memory_bench._vocabularies()
    for name in ("whole", "passages"):
        real = passages.SPLIT_ABOVE
        passages.SPLIT_ABOVE = 10**9 if name == "whole" else real
        try:
            db = tmp / f"{name}.db"
            got = memory_bench.build(db, sessions, seed, 10_000, now, vocab)
        finally:
            passages.SPLIT_ABOVE = real
        with sqlite3.connect(db) as conn:
            got["index_rows"] = conn.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0]
        got["file_mb"] = round(db.stat().st_size / 2**20, 1)
        built[name] = got
    return built


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=positive_int, default=100_000)
    ap.add_argument("--samples", type=positive_int, default=150)
    ap.add_argument("--rounds", type=positive_int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ranking-only", action="store_true",
                    help="build both layouts and ask the long-summary questions only")
    ap.add_argument("--merge-probe", action="store_true",
                    help="build one archive and probe FTS5's stepped merge after a delete only")
    args = ap.parse_args(argv)
    now = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        if args.merge_probe:
            db = Path(tmp) / "probe.db"
            plant_victim(db, now)
            built = memory_bench.build(db, args.sessions, args.seed, 10_000, now,
                                       memory_bench._vocabularies())
            probe = {"sessions": args.sessions, "build": built,
                     "stepped_merge": stepped_merge(db, 64, 5_000)}
            print(json.dumps(probe) if args.json else json.dumps(probe, indent=2))
            return 0
        built = build_layouts(Path(tmp), args.sessions, args.seed, now)
        dbs = {name: Path(tmp) / f"{name}.db" for name in built}
        db = dbs["passages"]
        result = {"sessions": args.sessions, "build": built,
                  "long_summaries": long_summaries(dbs, now, args.samples, args.seed)}
        if not args.ranking_only:
            result.update(stats=stats_ms(db, args.rounds), retention=retention_vs_forget(db, now),
                          insert=insert_per_s(args.rounds, 2_000))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
