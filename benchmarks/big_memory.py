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

    python benchmarks/big_memory.py --json
    {"idle_us_p50": ..., "append_ms_p50": ..., "append_vs_idle": ..., ...}
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1_000_000, help="MEMORY.md size (1 MB)")
    parser.add_argument("--turns", type=int, default=15, help="turns of each kind (default 15)")
    parser.add_argument("--baseline-tree", help="a folder holding another hermes_core to compare")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.bytes < 1 or args.turns < 1:
        parser.error("--bytes and --turns must be at least 1")
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
