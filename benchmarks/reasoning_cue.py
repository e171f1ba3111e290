"""The reasoning cue's cost: CPU time per short why-question and per long run, this tree against
the same module at a baseline commit, in the same run.

``reasoning_cue`` runs on every request before a model is chosen (on a message's head and tail,
at most 16,000 characters; the long runs here are larger to show it stays linear). Short: every
why-question row of ``tests/agent/routing/test_reasoning.py``'s tables, each timed as the mean of
``--loops`` calls. Long: ``--chars`` of one why repeated (a happening, a why about a person, a
technical why about a person) in English, Chinese and Japanese. Medians of ``--reps``
interleaved runs, CPU time of this process (a shared machine's wall clock mostly measures its
other jobs); ``ratio`` is tree over baseline. The baseline module is read with ``git show
REF:path`` and loaded apart; it imports what it imports from this tree.

    PYTHONPATH=. python benchmarks/reasoning_cue.py [--baseline main] [--reps 5] --json
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
MODULE = "hermes_core/agent/routing/reasoning.py"
TABLES = "tests/agent/routing/test_reasoning.py"
SHORT_TABLES = ("WHY_ABOUT_A_HAPPENING", "WHY_CHAT_OR_EXPLANATION", "TECHNICAL_WHY",
                "WHY_ABOUT_A_THING", "WHY_ABOUT_A_PERSON")
RUNS = {
    "en_happening": "why did my sister ignore me? ",
    "zh_happening": "为什么迟到了？",
    "ja_happening": "どうして遅れたの？",
    "en_person": "why did he ignore me? ",
    "zh_person": "他为什么不理我。",
    "ja_person": "彼はなぜ怒ったの？",
    "en_person_technical": "why did he get a segfault in malloc? ",
}


def _exec(name: str, source: str, origin: str) -> ModuleType:
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, origin, "exec"), module.__dict__)
    return module


def load(ref: str | None) -> ModuleType:
    """The cue module of this tree (``ref`` None) or of commit ``ref``."""
    if ref is None:
        return _exec("reasoning_tree", (ROOT / MODULE).read_text(encoding="utf-8"), MODULE)
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{MODULE}"],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"reasoning_cue.py: no {MODULE} at baseline {ref!r} in {ROOT} "
                         f"({done.stderr.strip()}); pass --baseline HEAD or a commit")
    name = f"reasoning_{ref}".replace("-", "_").replace("/", "_")
    return _exec(name, done.stdout, f"{ref}:{MODULE}")


def short_whys() -> list[str]:
    """The why-question rows of the cue's test tables (text first in each row)."""
    tables = _exec("reasoning_tables", (ROOT / TABLES).read_text(encoding="utf-8"), TABLES)
    out: list[str] = []
    for name in SHORT_TABLES:
        out += [row if isinstance(row, str) else row[0] for row in getattr(tables, name)]
    return out


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def measure(modules: dict[str, ModuleType], reps: int, loops: int,
            chars: int) -> dict[str, object]:
    whys = short_whys()
    texts = {kind: (unit * (chars // len(unit) + 1))[:chars] for kind, unit in RUNS.items()}
    short: dict[str, list[float]] = {side: [] for side in modules}
    runs: dict[str, dict[str, list[float]]] = {k: {side: [] for side in modules} for k in texts}
    for _ in range(reps):   # interleaved, so load on the machine falls on both alike
        for side, module in modules.items():
            cue: Callable[[str], str] = module.reasoning_cue

            def every_short(cue: Callable[[str], str] = cue) -> None:
                for text in whys:
                    for _ in range(loops):
                        cue(text)

            short[side].append(_cpu(every_short) / (len(whys) * loops) * 1e6)
            for kind, text in texts.items():
                runs[kind][side].append(_cpu(functools.partial(cue, text)))
    med = {side: statistics.median(v) for side, v in short.items()}
    long: dict[str, dict[str, float]] = {}
    for kind, sides in runs.items():
        m = {side: statistics.median(v) for side, v in sides.items()}
        long[kind] = {"baseline": round(m["baseline"], 3), "tree": round(m["tree"], 3),
                      "ratio": round(m["tree"] / max(m["baseline"], 1e-9), 3)}
    return {"short_whys": len(whys),
            "short_us": {side: round(v, 2) for side, v in med.items()},
            "short_ratio": round(med["tree"] / med["baseline"], 3),
            "runs_s": long, "chars": chars}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--loops", type=int, default=20, help="calls per short row in one timing")
    ap.add_argument("--chars", type=int, default=1_000_000, help="length of each long run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    modules = {"baseline": load(args.baseline), "tree": load(None)}
    result = {"baseline": args.baseline, **measure(modules, args.reps, args.loops, args.chars)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"short whys ({result['short_whys']}): {result['short_us']} us, "
              f"ratio {result['short_ratio']}")
        long = result["runs_s"]
        assert isinstance(long, dict)
        for kind, entry in long.items():
            print(f"{kind:22} {entry['baseline']:.3f} -> {entry['tree']:.3f} s  "
                  f"({entry['ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
