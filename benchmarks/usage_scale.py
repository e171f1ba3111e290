"""The usage history at its cap: does recording an event cost the same when 100,000 have arrived?

Two files in one run, measured alternately so both see the same machine:

* ``small``: a history of 100 events;
* ``full``: N events (default 100,000) have arrived at the store's cap C (default 20,000, the
  shipped ``skill_utils.usage_cap``): the first N - C are gone, oldest first.

The full file is filled as the store would hold it (one bulk insert of the N events, then the
store's own cap applied by its first ``record``), not by N single commits: at a few ms of fsync
each, that alone would take minutes and measure the disk.

For each file, R (default 200) events are recorded through ``UsageStore.record`` (each one short
transaction, as a turn records it). Then each file's lexical usage index (``UsageLayer.index``, no
embedder) is built once (``first_build_ms``: a process's first turn), and K times (default 3) an
event is recorded and what the next turn waits for in ``UsageLayer.index`` is timed (a rebuild in
the turn, or the index it had while one runs beside it). Prints medians, ``record_ratio = full /
small`` and ``turn_index_ratio``, the full file's rows (must be C) and its size before and after
the R records plus as many again (must not grow: freed pages are reused).

CPU per event (decision 231): K more times an event is recorded in each file and the new history's
index is built both ways, alternated, CPU time (``time.process_time``) of each: ``whole`` (a
``UsageIndex`` from scratch, which every event cost before: BM25 over every past message and
every sampled leave-one-out measured) and ``updated`` (from the last history's index, as the layer
now builds). ``rebuild_cpu_ms_p50`` and, against the small file's update in the same run,
``rebuild_cpu_ratio``; ``updated_equals_whole`` checks the two agree on the leave-one-out.

    python benchmarks/usage_scale.py --json [--events N] [--cap C] [--records R] [--rebuilds K]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from hermes_core.cli.argtypes import positive_int
from hermes_core.retrieval.usage import USAGE_FILE, UsageIndex, UsageLayer, UsageStore

WORDS = ("deploy", "staging", "docker", "logs", "parcel", "track", "weather", "tomorrow", "send",
         "mail", "invoice", "pdf", "extract", "table", "translate", "summary", "calendar", "meeting",
         "部署", "快递", "天气", "发票", "会议", "翻译")
SKILLS = [f"skill-{i}" for i in range(500)]


def message(rng: random.Random, i: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(4, 14))) + f" #{i}"


def filled(path: Path, n: int, cap: int, seed: int) -> UsageStore:
    """A store of ``cap`` after ``n`` arrivals."""
    rng = random.Random(seed)
    store = UsageStore(path, cap=cap)
    store.record("warm up the file", SKILLS[0])
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO usage_events (at, query, skill, kind, good, content_hash) VALUES (?,?,?,?,1,'')",
            ((float(i), message(rng, i), SKILLS[i % len(SKILLS)], "view") for i in range(n - 1)))
    conn.close()
    store.record(message(rng, n), SKILLS[n % len(SKILLS)])   # the cap applied, as it always is
    return store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=positive_int, default=100_000)
    ap.add_argument("--cap", type=positive_int, default=20_000)
    ap.add_argument("--records", type=positive_int, default=200)
    ap.add_argument("--rebuilds", type=positive_int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        small = filled(Path(tmp) / "small" / USAGE_FILE, 100, args.cap, 3)
        full = filled(Path(tmp) / "full" / USAGE_FILE, args.events, args.cap, 5)
        assert full.path is not None
        size_before = full.path.stat().st_size
        times: dict[str, list[float]] = {"small": [], "full": []}
        for i in range(args.records):
            for name, store in (("small", small), ("full", full)):
                text = message(rng, 10_000_000 + i)
                t = time.perf_counter()
                store.record(text, SKILLS[i % len(SKILLS)])
                times[name].append((time.perf_counter() - t) * 1e3)
        for i in range(args.records):   # as many again: a file at its cap stays its size
            full.record(message(rng, 20_000_000 + i), SKILLS[i % len(SKILLS)])
        rows, size_after = len(full), full.path.stat().st_size
        layers = {"small": UsageLayer(small), "full": UsageLayer(full)}
        build: dict[str, float] = {}
        for name, layer in layers.items():   # the first build of a process is always in its turn
            t = time.perf_counter()
            layer.index(SKILLS, None, None)
            build[name] = (time.perf_counter() - t) * 1e3
        turn: dict[str, list[float]] = {"small": [], "full": []}
        for i in range(args.rebuilds):
            for name, store in (("small", small), ("full", full)):
                store.record(message(rng, 30_000_000 + i), SKILLS[i])   # the last turn's event
                t = time.perf_counter()
                layers[name].index(SKILLS, None, None)                   # what this turn waits for
                turn[name].append((time.perf_counter() - t) * 1e3)
                layers[name].settle()                                    # before the next event
        cpu: dict[str, dict[str, list[float]]] = {n: {"whole": [], "updated": []} for n in layers}
        stores = {"small": small, "full": full}
        last = {name: UsageIndex(store.events(), SKILLS) for name, store in stores.items()}
        same = True
        for i in range(args.rebuilds):
            for name, store in stores.items():
                store.record(message(rng, 40_000_000 + i), SKILLS[i])
                events = store.events()
                t = time.process_time()
                whole = UsageIndex(events, SKILLS)
                cpu[name]["whole"].append((time.process_time() - t) * 1e3)
                t = time.process_time()
                last[name] = UsageIndex(events, SKILLS, previous=last[name])
                cpu[name]["updated"].append((time.process_time() - t) * 1e3)
                same &= (whole.reliability == last[name].reliability
                         and whole.gate.report() == last[name].gate.report())
        small.close()
        full.close()
    rec = {k: statistics.median(v) for k, v in times.items()}
    trn = {k: statistics.median(v) for k, v in turn.items()}
    out = {"events": args.events, "cap": args.cap, "records": args.records,
           "record_ms_p50": {k: round(v, 3) for k, v in rec.items()},
           "record_ratio": round(rec["full"] / rec["small"], 3),
           "first_build_ms": {k: round(v, 1) for k, v in build.items()},
           "turn_index_ms_p50": {k: round(v, 3) for k, v in trn.items()},
           "turn_index_ratio": round(trn["full"] / trn["small"], 3),
           "full_rows": rows, "full_bytes_before": size_before, "full_bytes_after": size_after,
           "rebuild_cpu_ms_p50": {n: {w: round(statistics.median(v), 1) for w, v in c.items()}
                                  for n, c in cpu.items()},
           "rebuild_cpu_ratio": {w: round(statistics.median(cpu["full"][w])
                                          / statistics.median(cpu["small"]["updated"]), 1)
                                 for w in ("whole", "updated")},
           "updated_equals_whole": same}
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
