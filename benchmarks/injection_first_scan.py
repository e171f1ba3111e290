"""A process's first injection scan, each in a fresh interpreter: does it read Greek's dictionary?

    python benchmarks/injection_first_scan.py --json [--runs 5] [--against /path/to/other/checkout]

simplemma's Greek dictionary (``injection/greek_lexicon.py``) costs a read from disk once a
process; it should be read only by a text that needs it (Greek whose words sound like English rule
words). For each text below, a fresh interpreter imports the scanner, scans the text once and
reports the scan's seconds and whether the dictionary was read; ``dictionary_load_s`` is that read
alone (the same-run baseline: a first scan that reads it costs about this much more). With
``--against``, the same runs on another checkout (e.g. main) alternate with this one and each
median gets a ``ratio`` (this / other). Medians of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TEXTS = {
    "no_greek": "Please summarise the meeting notes from Tuesday and list the open action items.",
    "accented_greek": "Η τελευταία έκδοση είναι στο Drive, και τα logs στον server.",
    "unaccented_greek": "δωσε μου τη βαση δεδομενων, ειναι στον διακομιστη",
}
SCAN = '''
import json, sys, time
import simplemma.strategies.dictionaries.dictionary_factory as factory
read = []
load = factory._load_dictionary_from_disk
factory._load_dictionary_from_disk = lambda lang: (read.append(lang), load(lang))[1]
from hermes_core.injection import scan_for_injection
t = time.perf_counter()
scan_for_injection(sys.argv[1])
print(json.dumps({"s": time.perf_counter() - t, "read": "el" in read}))
'''
LOAD = '''
import json, time
import simplemma.strategies.dictionaries.dictionary_factory as factory
t = time.perf_counter()
factory._load_dictionary_from_disk("el")
print(json.dumps({"s": time.perf_counter() - t, "read": True}))
'''


def run(root: Path, code: str, *args: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another checkout to compare with, run alternately")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs must be at least 1 (got {args.runs})")
    roots = {"this": ROOT} | ({"other": args.against.resolve()} if args.against else {})
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {r: {k: [] for k in TEXTS} for r in roots}
    loads: list[float] = []
    for _ in range(args.runs):
        loads.append(run(ROOT, LOAD)["s"])
        for name, text in TEXTS.items():
            for root_name, root in roots.items():
                samples[root_name][name].append(run(root, SCAN, text))
    report: dict[str, Any] = {"runs": args.runs, "dictionary_load_s": round(statistics.median(loads), 4)}
    for name in TEXTS:
        row: dict[str, Any] = {}
        for root_name in roots:
            got = samples[root_name][name]
            row[f"{root_name}_first_scan_s"] = round(statistics.median(g["s"] for g in got), 4)
            row[f"{root_name}_reads_dictionary"] = sum(g["read"] for g in got) / len(got)
        if "other" in roots:
            row["ratio"] = round(row["this_first_scan_s"] / row["other_first_scan_s"], 3)
        report[name] = row
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
