"""How fast hostile configs are rejected (goal: each in < 0.5 s), beside a normal config's load.

Each case is parsed with :func:`hermes_core.config.parse_yaml` (the 1 MB ones through
``load_settings`` from a file, as the CLI does); the best of ``--repeat`` runs is reported, and the
normal example config, loaded in the same run, is the baseline.

    python benchmarks/hostile_config.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.config import MAX_CONFIG_BYTES, load_settings, parse_yaml  # noqa: E402
from hermes_core.errors import ConfigError  # noqa: E402

GOAL_S = 0.5


def _bomb(levels: int = 9) -> str:
    out = []
    for i in range(levels):
        name = chr(97 + i)
        items = ["x"] * 9 if i == 0 else [f"*{chr(96 + i)}"] * 9
        out.append(f"{name}: &{name} [{','.join(items)}]")
    return "\n".join(out) + "\n"


def cases(tmp: Path) -> dict[str, Callable[[], object]]:
    many_keys = "context_windows:\n" + "".join(f"  model-{i}: {i}\n" for i in range(60_000))
    many_keys = "llm:\n  routing:\n" + "\n".join("    " + ln for ln in many_keys.splitlines())
    many_keys = many_keys[: MAX_CONFIG_BYTES - 10]
    near_limit = tmp / "near-1mb.yaml"
    near_limit.write_text(many_keys[: many_keys.rfind("\n")] + "\n", encoding="utf-8")
    over_limit = tmp / "over-1mb.yaml"
    over_limit.write_text("home: x\n" + "#" * MAX_CONFIG_BYTES, encoding="utf-8")
    long_string = tmp / "long-string.yaml"
    long_string.write_text("home: '" + "x" * (MAX_CONFIG_BYTES - 20) + "'\n", encoding="utf-8")
    long_key = tmp / "long-key.yaml"   # malformed: libyaml rejects it, the pure-Python loader took 3.9 s
    long_key.write_text("k" * (MAX_CONFIG_BYTES - 20) + ": 1\n", encoding="utf-8")
    long_list = tmp / "1mb-list-bad-item.yaml"   # valid YAML near both limits, refused by validation
    long_list.write_text("skill_utils:\n  folders: [" + ",".join(["/" + "a" * 50] * 18_000) + ", 5]\n",
                         encoding="utf-8")
    example = REPO / "config.example.yaml"
    bomb = _bomb()
    return {
        "baseline_example_config": lambda: load_settings(example, env={}),
        f"alias_bomb_{len(_bomb(7))}_bytes_7_levels": lambda: parse_yaml(_bomb(7), env={}),
        f"alias_bomb_{len(bomb)}_bytes_9_levels": lambda: parse_yaml(bomb, env={}),
        "recursive_alias": lambda: parse_yaml("llm: &a\n  routing: *a\n", env={}),
        "nesting_500_deep": lambda: parse_yaml("a: " + "[" * 500 + "]" * 500 + "\n", env={}),
        "integer_5000_digits": lambda: parse_yaml("llm:\n  max_tokens: " + "9" * 5000 + "\n", env={}),
        "1mb_of_keys": lambda: load_settings(near_limit, env={}),
        "1mb_plus_one": lambda: load_settings(over_limit, env={}),
        "1mb_single_string": lambda: load_settings(long_string, env={}),
        "1mb_one_long_key": lambda: load_settings(long_key, env={}),
        "1mb_list_with_a_bad_item": lambda: load_settings(long_list, env={}),
    }


def run(repeat: int) -> dict[str, object]:
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as d:
        for name, fn in cases(Path(d)).items():
            best = float("inf")
            outcome = "loaded"
            for _ in range(repeat):
                t0 = time.perf_counter()
                try:
                    fn()
                    outcome = "loaded"
                except ConfigError as e:
                    outcome = "rejected: " + e.reason[:80]
                best = min(best, time.perf_counter() - t0)
            out[name] = {"seconds": round(best, 4), "outcome": outcome, "under_goal": best < GOAL_S}
    hostile = [v for k, v in out.items() if not k.startswith("baseline")]
    out["all_under_goal"] = all(v["under_goal"] for v in hostile)  # type: ignore[index]
    out["goal_s"] = GOAL_S
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    out = run(args.repeat)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:38} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
