"""What a fork costs the parent while a memory store is open (decisions 143 and 153).

Each round, in a fresh process per tree: a session is written (so ``-wal`` holds pages), then
``os.fork()`` is timed in the parent (the child exits at once) and the parent's first write
after it. The baseline in the same process is a fork with no store alive (the interpreter's own
cost); ``fork_ratio`` is the store's fork over it. With ``--baseline-tree DIR`` (a checkout of
the code before) the same runs there, alternated with this tree round by round.

    python benchmarks/memory_fork.py --json [--sessions N] [--rounds R] [--forks F]
                                            [--baseline-tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AT = 1_800_000_000.0


def _fork_ms() -> float:
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    ms = (time.perf_counter() - t) * 1000
    os.waitpid(pid, 0)
    return ms


def one_round(sessions: int, forks: int) -> dict[str, float]:
    """In this process: fork and first-write times, with and without a store open."""
    from hermes_core.agent.episodic.store import SessionRecord, SessionStore

    bare = [_fork_ms() for _ in range(forks)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.db"
        with SessionStore(path, segment=str.lower, segment_id="bench") as store:
            store.upsert_many([SessionRecord(f"s{i}", f"session {i} about deploys and caches",
                                             (), AT + i) for i in range(sessions)])
            fork, write, plain = [], [], []
            for k in range(forks):
                store.upsert(SessionRecord(f"w{k}", f"written before fork {k}", (), AT))
                fork.append(_fork_ms())
                t = time.perf_counter()
                store.upsert(SessionRecord(f"a{k}", f"written after fork {k}", (), AT))
                write.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                store.upsert(SessionRecord(f"b{k}", f"written with no fork {k}", (), AT))
                plain.append((time.perf_counter() - t) * 1000)
    return {"fork_no_store_ms": statistics.median(bare), "fork_ms": statistics.median(fork),
            "write_after_fork_ms": statistics.median(write),
            "write_ms": statistics.median(plain)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--forks", type=int, default=15)
    ap.add_argument("--baseline-tree", type=Path)
    ap.add_argument("--_round", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._round:
        print(json.dumps(one_round(a.sessions, a.forks)))
        return
    here = Path(__file__).resolve().parent.parent
    trees = {"after": here} | ({"before": a.baseline_tree} if a.baseline_tree else {})
    got: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for _ in range(a.rounds):
        for name, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--_round",
                                  "--sessions", str(a.sessions), "--forks", str(a.forks)],
                                 env=env, capture_output=True, text=True, check=True, cwd=tree)
            got[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    result: dict[str, object] = {"sessions": a.sessions, "rounds": a.rounds, "forks": a.forks}
    for name, rounds in got.items():
        med = {k: round(statistics.median(r[k] for r in rounds), 3) for k in rounds[0]}
        med["fork_ratio"] = round(med["fork_ms"] / med["fork_no_store_ms"], 2)
        result[name] = med
    if "before" in result:
        b, f = result["before"], result["after"]
        assert isinstance(b, dict) and isinstance(f, dict)
        result["after_over_before"] = {k: round(f[k] / b[k], 3) for k in
                                       ("fork_ms", "write_after_fork_ms", "write_ms")}
    print(json.dumps(result) if a.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
