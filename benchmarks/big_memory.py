"""A hand-grown MEMORY.md of about 1 MB: what a turn costs when it changed against when it did not.

The agent's own writes are capped (``prompt.memory_char_limit``), but a user pasting notes, or an
older tool, can leave a MEMORY.md of a megabyte. The builder keeps the head (70 % of the file's
token budget) and the tail (20 %), scanned for injections; an unchanged turn only stats it. Three
kinds of turn, interleaved so machine noise hits each alike:

* ``idle``: nothing changed (the builder stats the files, joins nothing, reads nothing);
* ``append``: one entry appended at the end (how the file grows, by the agent or by hand);
* ``touch``: the file rewritten with the same bytes (a ``git checkout``, a sync tool, an
  editor's save without a change): read again, and the prompt must not be re-joined.

Each changed turn's median is given as a ratio to the idle turn's, and ``rebuilds`` counts the
re-joined prompts (one per append, none per touch). ``--baseline-tree PATH`` runs the same in a
process importing PATH's ``hermes_core`` (a ``git archive`` of another commit) and adds its
figures and this tree's ratios to them.

``--cold N`` measures the first build of a new process instead, N rounds, each round one process
per size of ``--cold-sizes`` (10 KB, 1 MB and 5 MB by default, in a rotating order): the first
build in a new home (nothing cached: the scanner's one-time load, the read, the cut and the scan
of what is kept) and a restart on the same home (the learned scorer's verdicts are stored there).
Each size's medians are given with their ratio to the smallest size's, where the time went
(``perf_counter`` sections: the learned scorer's load, the scan of the kept text, the cut), and
whether every round sent the same system prompt (``sha_distinct``: 1) within its budget.

    python benchmarks/big_memory.py --json
    {"idle_us_p50": ..., "append_ms_p50": ..., "append_vs_idle": ..., ...}
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_core.agent.prompt_builder import PromptBuilder

WORDS = ("deploy", "staging", "server", "config", "user", "prefers", "terse", "answers", "python",
         "rust", "database", "backup", "部署", "服务器", "用户", "偏好", "简洁", "回答", "数据库",
         "备份")


def memory_text(size: int, seed: int = 7) -> str:
    """About ``size`` bytes of MEMORY.md entries (English and Chinese words, one per line)."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        entry = " ".join(rng.choice(WORDS) for _ in range(12)) + f" (note {len(out)})\n§\n"
        out.append(entry)
        total += len(entry.encode("utf-8"))
    return "".join(out)


def run(size: int, turns: int) -> dict[str, object]:
    logging.disable(logging.WARNING)   # the file is over its budget: one warning per read
    with tempfile.TemporaryDirectory(prefix="hermes-bigmem-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
        home.mkdir()
        cwd.mkdir()
        path = home / "MEMORY.md"
        path.write_text(memory_text(size), encoding="utf-8")
        # a minute ahead: every write here has settled, so a turn reads only what changed
        builder = PromptBuilder(home, cwd=cwd, file_clock=lambda: time.time_ns() + 60_000_000_000)
        t0 = time.perf_counter()
        builder.build("warm-up")
        first = time.perf_counter() - t0
        idle: list[float] = []
        append: list[float] = []
        touch: list[float] = []
        before = builder.rebuilds
        for i in range(turns):
            t0 = time.perf_counter()
            builder.build(f"question {i}")
            idle.append(time.perf_counter() - t0)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"the user now deploys from branch release-{i}\n§\n")
            t0 = time.perf_counter()
            builder.build(f"question {i}")
            append.append(time.perf_counter() - t0)
            path.write_bytes(path.read_bytes())
            t0 = time.perf_counter()
            builder.build(f"question {i}")
            touch.append(time.perf_counter() - t0)
        idle_p50 = statistics.median(idle)
        return {"bytes": path.stat().st_size, "turns": turns,
                "first_build_ms": round(first * 1e3, 1),
                "idle_us_p50": round(idle_p50 * 1e6, 1),
                "append_ms_p50": round(statistics.median(append) * 1e3, 2),
                "touch_ms_p50": round(statistics.median(touch) * 1e3, 2),
                "append_vs_idle": round(statistics.median(append) / idle_p50, 1),
                "touch_vs_idle": round(statistics.median(touch) / idle_p50, 1),
                "rebuilds": builder.rebuilds - before,
                "system_tokens": builder.build("last").tokens["system"]}


#: the context-file token budget: the kept head and tail stay within it, whatever the file's size
BUDGET = 20_000


def cold_child(size: int, home: Path) -> dict[str, object]:
    """One process's first build over a MEMORY.md of ``size`` bytes in ``home`` (written when
    not there; when it is, this is a restart), with where its time went."""
    import functools

    import hermes_core.agent.prompt.files as files
    import hermes_core.injection.learned as learned

    spent: dict[str, float] = {}

    def timed(module: object, name: str, label: str) -> None:
        inner = getattr(module, name)

        @functools.wraps(inner)
        def wrapper(*args: object, **kwargs: object) -> object:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0
        setattr(module, name, wrapper)

    timed(learned, "_vectorizers", "scorer_load_ms")
    timed(files, "_guard", "scan_ms")
    timed(files, "truncate_to_budget", "cut_ms")
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="hermes-bigmem-") as tmp:
        path = home / "MEMORY.md"
        if not path.exists():
            path.write_text(memory_text(size), encoding="utf-8")
        builder = PromptBuilder(home, cwd=Path(tmp),
                                file_clock=lambda: time.time_ns() + 60_000_000_000)
        t0 = time.perf_counter()
        prompt = builder.build("first")
        first = time.perf_counter() - t0
        entries = [e for e in path.read_text(encoding="utf-8").split("\n§\n") if e.strip()]
        return {"first_ms": first * 1e3, **{k: v * 1e3 for k, v in spent.items()},
                "sha": hashlib.sha256(prompt.system.encode()).hexdigest()[:16],
                "memory_tokens": prompt.tokens["memory"],
                "head_and_tail_kept": entries[0].strip() in prompt.system
                and entries[-1].strip() in prompt.system}


def _child_env(tree: str | None) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(tree).resolve()),
                                             os.environ.get("PYTHONPATH", "")])
    return env


def run_cold(sizes: list[int], rounds: int, trees: dict[str, str | None]
             ) -> dict[str, dict[int, dict[str, list[Any]]]]:
    """Each round, per tree (``None``: this one; trees alternate which goes first) one new
    process per size (rotating order) in a new home, then one restarted on it: every figure."""
    got: dict[str, dict[int, dict[str, list[Any]]]] = {t: {n: {} for n in sizes} for t in trees}
    names = list(trees)
    for r in range(rounds):
        for label in names[r % len(names):] + names[:r % len(names)]:
            env = _child_env(trees[label])
            for n in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                with tempfile.TemporaryDirectory(prefix="hermes-bigmem-home-") as home:
                    for kind in ("new", "restart"):   # the first child writes the file
                        done = subprocess.run([sys.executable, __file__, "--child", str(n),
                                               "--child-home", home], capture_output=True,
                                              text=True, check=True, env=env)
                        for k, v in json.loads(done.stdout).items():
                            got[label][n].setdefault(f"{kind}.{k}", []).append(v)
    return got


def cold_summary(got: dict[int, dict[str, list[Any]]]) -> dict[str, object]:
    """Medians per size, each first build's ratio to the smallest size's, and the checks."""
    out: dict[str, object] = {}
    smallest = statistics.median(got[min(got)]["new.first_ms"])
    for n, figures in sorted(got.items()):
        row: dict[str, object] = {}
        for k, vs in figures.items():
            if k.endswith(".sha"):
                row[k + "_distinct"] = len(set(vs))
            elif k.endswith("head_and_tail_kept"):
                row[k] = all(vs)
            elif k.endswith("memory_tokens"):
                row[k + "_max"] = max(vs)
            else:
                row[k + "_p50"] = round(statistics.median(vs), 1)
        row["new.first_vs_smallest"] = round(
            statistics.median(figures["new.first_ms"]) / smallest, 2)
        row["within_budget"] = all(int(v) <= BUDGET for v in figures["new.memory_tokens"])
        out[str(n)] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000, help="MEMORY.md size (1 MB)")
    parser.add_argument("--turns", type=int, default=15, help="turns of each kind (default 15)")
    parser.add_argument("--baseline-tree", help="a folder holding another hermes_core to compare")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cold", type=int, default=0,
                        help="rounds of first builds in new processes instead (see above)")
    parser.add_argument("--cold-sizes", default="10000,1000000,5000000",
                        help="MEMORY.md sizes for --cold, smallest first")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-home", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(cold_child(args.child, Path(args.child_home))))
        return 0
    if args.cold:
        sizes = sorted(int(n) for n in args.cold_sizes.split(","))
        trees: dict[str, str | None] = {"tree": None}
        if args.baseline_tree:
            trees["baseline"] = args.baseline_tree
        got = run_cold(sizes, args.cold, trees)
        cold: dict[str, object] = {"rounds": args.cold,
                                   **{label: cold_summary(got[label]) for label in trees}}
        if args.baseline_tree:
            cold["first_vs_baseline"] = {str(n): {kind: round(
                statistics.median(got["tree"][n][f"{kind}.first_ms"])
                / statistics.median(got["baseline"][n][f"{kind}.first_ms"]), 3)
                for kind in ("new", "restart")} for n in sizes}
        print(json.dumps(cold, indent=None if args.json else 1))
        return 0
    result = run(args.bytes, args.turns)
    if args.baseline_tree:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(Path(args.baseline_tree).resolve()), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, __file__, "--bytes", str(args.bytes), "--turns",
                               str(args.turns), "--json"], env=env, capture_output=True,
                              text=True, check=True)
        base = json.loads(done.stdout)
        result["baseline"] = base
        for key in ("append_ms_p50", "touch_ms_p50", "first_build_ms"):
            result[f"{key}_vs_baseline"] = round(float(result[key]) / float(base[key]), 3)  # type: ignore[arg-type]
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>24}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
