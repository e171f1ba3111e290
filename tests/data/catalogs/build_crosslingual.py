"""Rebuilds the cross-lingual and mixed-language check sets described in README.md.

    python build_crosslingual.py OUT ACEBENCH_DATA_ALL HAMMERBENCH_ZH_DIR HB_CHECK_QUERIES

ACEBENCH_DATA_ALL is the ``data_all`` folder of chenchen0103/ACEBench; HAMMERBENCH_ZH_DIR holds the
HammerBench-zh ``skills.jsonl`` and HB_CHECK_QUERIES is the check half of its dev queries. The
output is deterministic: languages and the capped sample are chosen by a hash of the tool's name,
never by its label or its queries.
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any


def words(ident: str) -> list[str]:
    """The dotted parts of an identifier as lower-case words (``TrafficViolations`` ->
    ``traffic violations``)."""
    parts = []
    for seg in ident.split("."):
        w = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", seg.replace("_", " "))
        w = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", w)
        parts.append(w.lower().strip())
    return parts


def english_from_name(name: str) -> str:
    """``Navigation.TrafficViolations.queryViolation`` -> ``Query violation (navigation, traffic
    violations)``: a terse English description made of the identifier's words alone."""
    p = words(name)
    return f"{p[-1].capitalize()} ({', '.join(p[:-1])})" if len(p) > 1 else p[0].capitalize()


def half(name: str, byte: int = 0) -> int:
    return hashlib.sha1(name.encode()).digest()[byte]


def lines(path: str | Path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def write(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def ace_functions(root: Path, lang: str) -> dict[str, str]:
    """Every function with a description, first description kept for a repeated name."""
    out: dict[str, str] = {}
    for f in sorted(glob.glob(str(root / f"data_{lang}" / "data_*.json"))):
        for line in lines(f):
            for fn in (json.loads(line).get("function") or []) if line.strip() else []:
                if isinstance(fn, dict) and fn.get("description") and fn["name"] not in out:
                    out[fn["name"]] = fn["description"]
    return out


def ace_queries(root: Path, lang: str) -> list[dict[str, str]]:
    """Single-turn ``normal`` requests whose ground truth calls exactly one function."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for f in sorted(glob.glob(str(root / f"data_{lang}" / "data_normal_*.json"))):
        if "preference" in f or "multi_turn" in f:
            continue
        answers = {}
        for line in lines(f.replace(f"data_{lang}/", f"data_{lang}/possible_answer/")):
            if line.strip():
                r = json.loads(line)
                answers[r["id"]] = r["ground_truth"]
        for line in lines(f):
            if not line.strip():
                continue
            r = json.loads(line)
            gt = answers.get(r["id"])
            if isinstance(gt, list):
                gt = gt[0] if len(gt) == 1 else None
            q = r["question"].strip()
            if not isinstance(gt, dict) or len(gt) != 1 or q.count("user:") != 1:
                continue
            q = q.split("user:", 1)[1].strip()
            if q not in seen:
                seen.add(q)
                out.append({"query": q, "gold": next(iter(gt))})
    return out


def main(out: Path, ace: Path, hb: Path, check: Path) -> None:
    tools = [json.loads(line) for line in lines(hb / "skills.jsonl")]
    write(out / "hammerbench_en_names.skills.jsonl",
          [{"name": s["name"], "description": english_from_name(s["name"])} for s in tools])
    write(out / "hammerbench_mixed.skills.jsonl",
          [{"name": s["name"], "description": s["description"] if half(s["name"]) % 2
            else english_from_name(s["name"])} for s in tools])
    write(out / "hammerbench_zh.check.queries.jsonl",
          [json.loads(line) for line in lines(check)])
    en, zh = ace_functions(ace, "en"), ace_functions(ace, "zh")
    queries_en = ace_queries(ace, "en")
    write(out / "acebench_en.queries.jsonl", queries_en)
    mixed = dict(zh)
    for name, desc in en.items():      # a name in both keeps its hash half's language
        if name not in mixed or half(name) % 2:
            mixed[name] = desc
    gold = {q["gold"] for q in queries_en + ace_queries(ace, "zh")}
    # every gold function and a hash third of the others: a few hundred KB
    keep = {n: d for n, d in mixed.items() if n in gold or half(n, 1) < 86}
    write(out / "acebench_mixed.skills.jsonl",
          [{"name": n, "description": d} for n, d in sorted(keep.items())])


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:5]))
