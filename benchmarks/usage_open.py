"""Opening the usage history with a configured key: the scan for it, against the marker read.

Builds a fresh ``usage.sqlite3`` of N events (default 100,000; the store's cap raised to N), none
holding the key, then times, back to back R times (default 7):

* ``scan``: an open that has to look for the key in every stored query (its ``scrubbed:`` marker
  deleted first), which is what every open cost before the marker existed;
* ``marked``: the next open, which finds the marker and reads nothing else.

An open is ``UsageStore(path, secrets=[key])`` then ``len()`` (the store opens lazily), then
``close()``. Prints medians and ``ratio = scan_ms_p50 / marked_ms_p50``.

    python benchmarks/usage_open.py --json [--events N] [--repeat R]
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
from hermes_core.redact import scrubbed_marker
from hermes_core.retrieval.usage import SCHEMA, USAGE_FILE, USAGE_SCHEMA_VERSION, UsageStore

KEY = "zq81-PLAINTOKEN-77xx-bench"
WORDS = ("deploy", "staging", "docker", "logs", "parcel", "track", "weather", "tomorrow", "send",
         "mail", "invoice", "pdf", "extract", "table", "translate", "summary", "calendar", "meeting")


def build(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(SCHEMA)
        conn.execute(f"PRAGMA user_version = {USAGE_SCHEMA_VERSION}")
        conn.executemany(
            "INSERT INTO usage_events (at, query, skill, kind, good, content_hash) VALUES (?,?,?,?,1,'')",
            ((float(i), " ".join(rng.choices(WORDS, k=rng.randint(4, 14))), f"skill-{i % 500}", "view")
             for i in range(n)))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()


def open_ms(path: Path, cap: int) -> float:
    t = time.perf_counter()
    st = UsageStore(path, secrets=[KEY], cap=cap)
    len(st)
    st.close()
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=positive_int, default=100_000)
    ap.add_argument("--repeat", type=positive_int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / USAGE_FILE
        build(path, args.events)
        open_ms(path, args.events)   # warm the page cache
        scan: list[float] = []
        marked: list[float] = []
        for _ in range(args.repeat):
            with sqlite3.connect(path) as conn:
                conn.execute("DELETE FROM usage_meta WHERE key = ?", (scrubbed_marker(KEY),))
            conn.close()
            scan.append(open_ms(path, args.events))
            marked.append(open_ms(path, args.events))
    out = {"events": args.events, "repeat": args.repeat,
           "scan_ms_p50": round(statistics.median(scan), 2),
           "marked_ms_p50": round(statistics.median(marked), 2)}
    out["ratio"] = round(out["scan_ms_p50"] / out["marked_ms_p50"], 1)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.events} events: open with the key's scan {out['scan_ms_p50']} ms, "
              f"with its marker {out['marked_ms_p50']} ms (x{out['ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
