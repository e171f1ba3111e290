"""Inventory of the test suite: files, test functions, collected items, asserts, ``pytest.raises``.

Why: moving tests between files must never lose a check. Run this before and after a
reorganisation and compare; the counts of test functions, asserts and raises may only grow.

Usage: ``python benchmarks/test_inventory.py [--json] [--no-collect] [PATH]`` (PATH defaults to
``tests``). Counting is done on the syntax tree, so comments and strings never count; collection
runs ``pytest --collect-only`` in a subprocess (skip it with ``--no-collect``).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path


def _is_raises(node: ast.AST) -> bool:
    """``pytest.raises(...)`` or a bare ``raises(...)`` call."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "raises":
        return isinstance(f.value, ast.Name) and f.value.id == "pytest"
    return isinstance(f, ast.Name) and f.id == "raises"


def count_file(path: Path) -> dict[str, int]:
    """Test functions (``def test_``/``async def test_``), asserts and raises in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tests = asserts = raises = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            tests += 1
        elif isinstance(node, ast.Assert):
            asserts += 1
        elif _is_raises(node):
            raises += 1
    return {"test_functions": tests, "asserts": asserts, "raises": raises}


def collected_items(root: Path, repo: Path) -> int:
    """How many items ``pytest --collect-only`` reports for ``root``."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(root)],
        cwd=repo, capture_output=True, text=True, check=False)
    per_file = re.findall(r"^\S+\.py: (\d+)$", proc.stdout, re.M)
    if per_file:  # -qq output: one "path: count" line per file
        return sum(int(n) for n in per_file)
    m = re.search(r"(\d+) tests? collected", proc.stdout)
    if m is not None:
        return int(m.group(1))
    return sum(1 for ln in proc.stdout.splitlines() if "::" in ln)


def inventory(root: Path, *, collect: bool = True) -> dict[str, int]:
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    test_files = [p for p in files if p.name.startswith("test_")]
    totals = {"test_functions": 0, "asserts": 0, "raises": 0}
    for p in files:
        for k, v in count_file(p).items():
            totals[k] += v
    out = {"files": len(files), "test_files": len(test_files), **totals}
    if collect:
        out["collected_items"] = collected_items(root, root.resolve().parent)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default="tests")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--no-collect", action="store_true", help="skip pytest --collect-only")
    args = ap.parse_args(argv)
    result = inventory(Path(args.path), collect=not args.no_collect)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for k, v in result.items():
            print(f"{k:16} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
