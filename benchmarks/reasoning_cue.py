"""The reasoning cue's cost: CPU time per short why-question and per long run, this tree against
the same module at a baseline commit, in the same run.

``reasoning_cue`` runs on every request before a model is chosen (on a message's head and tail,
at most 16,000 characters; the long runs here are larger to show it stays linear). Short: every
why-question row of ``tests/agent/routing/test_reasoning.py``'s tables, each timed as the mean of
``--loops`` calls; ``features_us`` the same rows through the router's feature path
(``rules.extract_features``, which runs the cue beside the code checks). Long: ``--chars`` of
one why repeated (a happening, a why about a person, a technical why about a person) in
English, Chinese and Japanese. Medians of ``--reps`` interleaved runs, CPU time of this process
(a shared machine's wall clock mostly measures its other jobs); ``ratio`` is tree over
baseline. ``code_cues.py``, ``reasoning.py`` and ``rules.py`` are read with ``git show
REF:path`` (the tree's from disk) and loaded apart, each importing the others of its own side;
the rest of the package is this tree's.

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
TABLES = "tests/agent/routing/test_reasoning.py"
SHORT_TABLES = ("WHY_ABOUT_A_HAPPENING", "WHY_CHAT_OR_EXPLANATION", "TECHNICAL_WHY",
                "WHY_ABOUT_A_THING", "WHY_ABOUT_A_PERSON", "JOKE_OR_RIDDLE",
                "WHY_ABOUT_A_PERSON_NAMING_A_LANGUAGE_OR_SYSTEM_WORD", "REAL_WHY_NEAR_A_JOKE",
                "ANSWER_NAMING_A_SYSTEM_PART", "WHY_ABOUT_A_PERSON_NAMING_A_SHARED_WORD",
                "BARE_WHY_ABOUT_A_NOUN", "ROAD_CROSSING_ANSWERED_TECHNICALLY",
                "PERSONIFIED_SYSTEM_PART", "REAL_FAULT_NAMING_A_LIFE_WORD")
RUNS = {
    "en_happening": "why did my sister ignore me? ",
    "zh_happening": "为什么迟到了？",
    "ja_happening": "どうして遅れたの？",
    "en_person": "why did he ignore me? ",
    "zh_person": "他为什么不理我。",
    "ja_person": "彼はなぜ怒ったの？",
    "en_person_technical": "why did he get a segfault in malloc? ",
    "en_answered": "Why is the sky blue? Because of light.\n",
    "en_answered_system_part": "Why does the build fail? Because the cache is stale.\n",
    "en_frame_answered": "Why did the chicken cross the road? To get to the other side.\n",
    "en_answered_personified": "Why did the cache go to therapy? Because it had issues.\n",
}


def _exec(name: str, source: str, origin: str) -> ModuleType:
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, origin, "exec"), module.__dict__)
    return module


PACKAGE = "hermes_core.agent.routing"
SIDE_MODULES = ("code_cues", "reasoning", "rules")   # in import order


def _source(ref: str | None, path: str) -> str:
    if ref is None:
        return (ROOT / path).read_text(encoding="utf-8")
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"reasoning_cue.py: no {path} at baseline {ref!r} in {ROOT} "
                         f"({done.stderr.strip()}); pass --baseline HEAD or a commit")
    return done.stdout


def load_side(ref: str | None) -> dict[str, ModuleType]:
    """The routing cue modules of this tree (``ref`` None) or of commit ``ref``, each importing
    the others of the same side."""
    side = "tree" if ref is None else ref.replace("-", "_").replace("/", "_").replace(".", "_")
    out: dict[str, ModuleType] = {}
    for short in SIDE_MODULES:
        path = f"{PACKAGE.replace('.', '/')}/{short}.py"
        source = _source(ref, path)
        for done in out:
            source = source.replace(f"from {PACKAGE}.{done} import", f"from {done}_{side} import")
        out[short] = _exec(f"{short}_{side}", source, f"{ref or 'tree'}:{path}")
    return out


def short_tables() -> dict[str, list[str]]:
    """The why-question rows of the cue's test tables (text first in each row), by table."""
    tables = _exec("reasoning_tables", (ROOT / TABLES).read_text(encoding="utf-8"), TABLES)
    return {name: [row if isinstance(row, str) else row[0] for row in getattr(tables, name)]
            for name in SHORT_TABLES}


def short_whys() -> list[str]:
    """Every row of :func:`short_tables`."""
    return [text for rows in short_tables().values() for text in rows]


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _each(fn: Callable[[str], object], texts: list[str], loops: int) -> None:
    for text in texts:
        for _ in range(loops):
            fn(text)


def measure(modules: dict[str, ModuleType], reps: int, loops: int,
            chars: int, features: dict[str, Callable[[str], object]] | None = None,
            ) -> dict[str, object]:
    whys = short_whys()
    texts = {kind: (unit * (chars // len(unit) + 1))[:chars] for kind, unit in RUNS.items()}
    short: dict[str, list[float]] = {side: [] for side in modules}
    feats: dict[str, list[float]] = {side: [] for side in features or {}}
    person = short_tables()["WHY_ABOUT_A_PERSON"]
    person_cue: dict[str, list[float]] = {side: [] for side in modules}
    person_feats: dict[str, list[float]] = {side: [] for side in features or {}}
    runs: dict[str, dict[str, list[float]]] = {k: {side: [] for side in modules} for k in texts}
    for side, module in modules.items():   # a first call loads what it loads (tokenizers)
        module.reasoning_cue(whys[0])
        if features:
            features[side](whys[0])
    for _ in range(reps):   # interleaved, so load on the machine falls on both alike
        for side, module in modules.items():
            cue: Callable[[str], object] = module.reasoning_cue
            short[side].append(_cpu(functools.partial(_each, cue, whys, loops))
                               / (len(whys) * loops) * 1e6)
            if features:
                feats[side].append(_cpu(functools.partial(_each, features[side], whys, loops))
                                   / (len(whys) * loops) * 1e6)
            for fn, into in ((cue, person_cue), (features and features[side], person_feats)):
                if fn:
                    into[side].append(_cpu(functools.partial(_each, fn, person, loops))
                                      / (len(person) * loops) * 1e6)
            for kind, text in texts.items():
                runs[kind][side].append(_cpu(functools.partial(cue, text)))
    med = {side: statistics.median(v) for side, v in short.items()}
    long: dict[str, dict[str, float]] = {}
    for kind, sides in runs.items():
        m = {side: statistics.median(v) for side, v in sides.items()}
        long[kind] = {"baseline": round(m["baseline"], 3), "tree": round(m["tree"], 3),
                      "ratio": round(m["tree"] / max(m["baseline"], 1e-9), 3)}
    out: dict[str, object] = {"short_whys": len(whys),
                              "short_us": {side: round(v, 2) for side, v in med.items()},
                              "short_ratio": round(med["tree"] / med["baseline"], 3)}
    for key, got in (("person_cue_us", person_cue), ("person_features_us", person_feats)):
        if got:
            pm = {side: statistics.median(v) for side, v in got.items()}
            out[key] = {**{side: round(v, 2) for side, v in pm.items()},
                        "ratio": round(pm["tree"] / pm["baseline"], 3)}
    if features:
        fmed = {side: statistics.median(v) for side, v in feats.items()}
        out["features_us"] = {side: round(v, 2) for side, v in fmed.items()}
        out["features_ratio"] = round(fmed["tree"] / fmed["baseline"], 3)
    return {**out, "runs_s": long, "chars": chars}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--loops", type=int, default=20, help="calls per short row in one timing")
    ap.add_argument("--chars", type=int, default=1_000_000, help="length of each long run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sides = {"baseline": load_side(args.baseline), "tree": load_side(None)}
    modules = {side: loaded["reasoning"] for side, loaded in sides.items()}
    features = {side: loaded["rules"].extract_features for side, loaded in sides.items()}
    result = {"baseline": args.baseline,
              **measure(modules, args.reps, args.loops, args.chars, features)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"short whys ({result['short_whys']}): {result['short_us']} us, "
              f"ratio {result['short_ratio']}; features {result['features_us']} us, "
              f"ratio {result['features_ratio']}")
        long = result["runs_s"]
        assert isinstance(long, dict)
        for kind, entry in long.items():
            print(f"{kind:22} {entry['baseline']:.3f} -> {entry['tree']:.3f} s  "
                  f"({entry['ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
