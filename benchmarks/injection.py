"""Injection scan quality and speed on the labelled corpus (tests/data/injection/corpus.jsonl).

For every text (an attack or an ordinary note embedded among ordinary paragraphs of a MEMORY.md,
HERMES.md or SKILL.md body) the scan decides paragraph by paragraph. A hostile text counts as
caught when at least one paragraph is blocked; a benign text counts as blocked when any paragraph
is. ``whole_file_blocked`` is the share of hostile texts that lost every paragraph (the ordinary
paragraphs around an attack should survive; the old whole-file blocking scores 1.0 on every
caught text). MEMORY.md rows are scanned as data (``guard_text(..., data=True)``, as the prompt
builder reads MEMORY.md and USER.md), the others as instructions. The baseline is the scan before
this design (a frozen copy, ``_baseline_injection.py``: whole-file blocking, no normalisation, English and
Chinese), measured in the same run. Numbers are reported on the held-out half; the dev half (the
one patterns were tuned on) is shown for reference.

    python benchmarks/injection.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _baseline_injection import scan_for_injection as baseline_scan  # noqa: E402

from hermes_core.errors import ConfigError  # noqa: E402
from hermes_core.injection.scan import (  # noqa: E402
    INJECTION_CATEGORIES,
    SEMANTIC,
    SEMANTIC_DATA,
    guard_text,
    split_paragraphs,
)
from hermes_core.injection.verdicts import STORE  # noqa: E402
from hermes_core.jsonl import read_jsonl  # noqa: E402

CORPUS = REPO / "tests" / "data" / "injection" / "corpus.jsonl"
REAL = REPO / "tests" / "data" / "injection" / "real" / "corpus.jsonl"
NAMES = {"memory": "MEMORY.md", "context": "HERMES.md", "skill": "SKILL.md"}


# what every row of a corpus file holds (import_real.py's rows also name their source's kind)
ROW_KEYS = ("text", "label", "split", "location", "lang", "variant")
REAL_KEYS = (*ROW_KEYS, "kind")


def load(path: Path = CORPUS, keys: tuple[str, ...] = ROW_KEYS) -> list[dict[str, str]]:
    """The rows of a corpus file; a line that is not one (bad JSON, not UTF-8, another file's
    rows) is a ConfigError naming the file and the line."""
    rows = []
    for n, row in read_jsonl(path, what="corpus"):
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in keys):
            raise ConfigError(f"not a corpus row (each needs the strings {', '.join(keys)})",
                              file=str(path), line=n)
        rows.append(row)
    return rows


# Where the text is data rather than instructions for the assistant (as the prompt builder scans
# MEMORY.md and USER.md): orders about "your reply" are hostile there.
DATA_LOCATIONS = frozenset({"memory"})


# The scan measured as "current": the default categories, or with ``--semantic`` the opt-in e5
# stage of the learned scorer too.
CATEGORIES: list[tuple[str, ...]] = [INJECTION_CATEGORIES]


def current(text: str, location: str) -> tuple[bool, int, int]:
    """(blocked anything, paragraphs kept, paragraphs)."""
    g = guard_text(text, name=NAMES[location], categories=CATEGORIES[0],
                   data=location in DATA_LOCATIONS)
    return g.blocked > 0, g.paragraphs - g.blocked, g.paragraphs


RULES = tuple(c for c in INJECTION_CATEGORIES if c != "learned")


def rules_only(text: str, location: str) -> tuple[bool, int, int]:
    """The scan without its learned scorer (the phrase rules alone), for the same-run comparison."""
    g = guard_text(text, name=NAMES[location], categories=RULES,
                   data=location in DATA_LOCATIONS)
    return g.blocked > 0, g.paragraphs - g.blocked, g.paragraphs


def baseline(text: str, location: str) -> tuple[bool, int, int]:
    n = len(split_paragraphs(text))
    hit = baseline_scan(text) is not None
    return hit, 0 if hit else n, n


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def evaluate(rows: list[dict[str, str]], scan: Callable[[str, str], tuple[bool, int, int]]
             ) -> dict[str, Any]:
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    whole = caught = 0
    for row in rows:
        blocked, k, _n = scan(row["text"], row["location"])
        for key in ("all", f"lang:{row['lang']}", f"location:{row['location']}",
                    f"variant:{row['variant']}"):
            cell = tally[(row["label"], key)]
            cell[0] += int(blocked)
            cell[1] += 1
        if row["label"] == "hostile" and blocked:
            caught += 1
            whole += int(k == 0)
    def rates(label: str, prefix: str) -> dict[str, float | None]:
        return {key.split(":", 1)[1]: _rate(*tally[(lab, key)]) for (lab, key) in sorted(tally)
                if lab == label and key.startswith(prefix)}
    return {
        "hostile_caught": _rate(*tally[("hostile", "all")]),
        "benign_blocked": _rate(*tally[("benign", "all")]),
        "hostile": tally[("hostile", "all")][1], "benign": tally[("benign", "all")][1],
        "whole_file_blocked": _rate(whole, caught),
        "hostile_caught_by_language": rates("hostile", "lang:"),
        "benign_blocked_by_language": rates("benign", "lang:"),
        "hostile_caught_by_location": rates("hostile", "location:"),
        "benign_blocked_by_location": rates("benign", "location:"),
        "hostile_caught_by_disguise": rates("hostile", "variant:"),
    }


def ms_per_10kb(rows: list[dict[str, str]], scan: Callable[[str, str], tuple[bool, int, int]],
                repeat: int = 7, *, cached: bool = False) -> float:
    """CPU time of the process (not wall time: on a shared machine that counts other people's
    work), the best of ``repeat`` passes. The learned scorer's remembered verdicts are forgotten
    before each pass (every paragraph scored, as the first time a text is seen) unless
    ``cached`` (a text seen before, as a restart with unchanged files sees it)."""
    texts = [(r["text"], r["location"]) for r in rows]
    size = sum(len(t.encode("utf-8")) for t, _ in texts)
    best = float("inf")
    for _ in range(repeat):
        if not cached:
            STORE.clear()
        t0 = time.process_time()
        for text, loc in texts:
            scan(text, loc)
        best = min(best, time.process_time() - t0)
    return round(best * 1000 * 10_240 / size, 3)


def by_kind(rows: list[dict[str, str]], scan: Callable[[str, str], tuple[bool, int, int]]
            ) -> dict[str, Any]:
    """The third-party rows: overall, then one row per source kind."""
    out: dict[str, Any] = {"all": _brief(evaluate(rows, scan))}
    for kind in sorted({r["kind"] for r in rows}):
        out[kind] = _brief(evaluate([r for r in rows if r["kind"] == kind], scan))
    return out


def _brief(r: dict[str, Any]) -> dict[str, Any]:
    keep = ("hostile_caught", "benign_blocked", "hostile", "benign", "whole_file_blocked")
    return {k: r[k] for k in keep}


def real_texts(path: Path) -> dict[str, Any]:
    """Scores on the third-party texts (tests/data/injection/import_real.py builds them from
    pinned public sources; they are not committed, so this is absent on a fresh checkout)."""
    if not path.is_file():
        return {"absent": f"{path} (build it with tests/data/injection/import_real.py)"}
    rows = load(path, REAL_KEYS)
    out: dict[str, Any] = {"corpus": str(path), "rows": len(rows)}
    # "final": whole sources kept out of training and tuning (import_real.py, ``final=True``)
    for split in ("heldout", "final", "dev"):
        part = [r for r in rows if r["split"] == split]
        if not part:
            continue
        out[split] = by_kind(part, current)
        out[f"{split}_rules_only"] = by_kind(part, rules_only)
        out[f"{split}_baseline"] = by_kind(part, baseline)
        out[f"{split}_by_location"] = {
            loc: _brief(evaluate([r for r in part if r["location"] == loc], current))
            for loc in sorted({r["location"] for r in part})}
        out[f"{split}_by_language"] = {
            lang: _brief(evaluate([r for r in part if r["lang"] == lang], current))
            for lang in sorted({r["lang"] for r in part})}
    return out


def run(real: Path = REAL) -> dict[str, Any]:
    rows = load()
    held = [r for r in rows if r["split"] == "heldout"]
    dev = [r for r in rows if r["split"] == "dev"]
    guard_text("warm up the confusables table", name="x")
    current("warm up the learned scorer", "memory")
    ms, base_ms = ms_per_10kb(held, current), ms_per_10kb(held, baseline)
    rules_ms = ms_per_10kb(held, rules_only)
    cached_ms = ms_per_10kb(held, current, cached=True)
    return {
        "corpus": str(CORPUS.relative_to(REPO)),
        "heldout": {**evaluate(held, current), "scan_ms_per_10kb": ms},
        "heldout_rules_only": {**evaluate(held, rules_only), "scan_ms_per_10kb": rules_ms},
        "scan_time_vs_rules_only": round(ms / rules_ms, 2) if rules_ms else None,
        "scan_ms_per_10kb_verdicts_cached": cached_ms,
        "heldout_baseline": {**evaluate(held, baseline), "scan_ms_per_10kb": base_ms},
        "scan_time_vs_baseline": round(ms / base_ms, 2) if base_ms else None,
        "dev": evaluate(dev, current),
        "dev_rules_only": evaluate(dev, rules_only),
        "dev_baseline": evaluate(dev, baseline),
        "real": real_texts(real),
        "goals": {"hostile_caught": ">= 0.90", "benign_blocked": "<= 0.05"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--real", type=Path, default=REAL,
                        help="the third-party corpus (default: %(default)s)")
    parser.add_argument("--semantic", action="store_true",
                        help=f"measure the scan with the opt-in {SEMANTIC!r} category")
    parser.add_argument("--semantic-data", action="store_true",
                        help=f"measure the scan with the opt-in {SEMANTIC_DATA!r} category")
    args = parser.parse_args(argv)
    if args.semantic:
        CATEGORIES[0] = (*INJECTION_CATEGORIES, SEMANTIC)
    elif args.semantic_data:
        CATEGORIES[0] = (*INJECTION_CATEGORIES, SEMANTIC_DATA)
    try:
        if args.real.is_file():   # a bad file fails now, not after the committed corpus is measured
            load(args.real, REAL_KEYS)
        out = run(args.real)
    except ConfigError as e:
        parser.error(f"--real: {e}")
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for split in ("heldout", "heldout_rules_only", "heldout_baseline", "dev", "dev_rules_only",
                  "dev_baseline"):
        r = out[split]
        print(f"{split:18} hostile_caught {r['hostile_caught']:.3f}  benign_blocked "
              f"{r['benign_blocked']:.3f}  whole_file_blocked {r['whole_file_blocked']}  "
              f"ms/10KB {r.get('scan_ms_per_10kb', '-')}")
    print(json.dumps(out["heldout"], ensure_ascii=False, indent=1))
    print(json.dumps(out["real"], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
