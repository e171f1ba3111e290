"""How fast hostile configs are rejected (goal: each in < 0.5 s), beside valid configs' loads.

Each case is parsed with :func:`hermes_core.config.parse_yaml` (the 1 MB ones through
``load_settings`` from a file, as the CLI does). The median of ``--repeat`` runs is reported with
its ratio to the baseline of the same run: a valid config of about the same size (1 MB of list
items), so a loaded machine moves both and the ratio says what a shape costs beyond reading a
megabyte. 1 MB shapes: one huge string, a huge list (valid, one bad item, every item bad), a huge
mapping (valid, every value bad), many unknown keys, deep but legal nesting.

    python benchmarks/hostile_config.py --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.cli.argtypes import positive_int  # noqa: E402
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


def _lines(head: str, line: str, count: int) -> str:
    """``head`` then ``line.format(i=...)`` for as many i as fit under the size limit."""
    out, size = [head], len(head)
    for i in range(count):
        row = line.format(i=i)
        if size + len(row) > MAX_CONFIG_BYTES - 100:
            break
        out.append(row)
        size += len(row)
    return "".join(out)


def _list(item: str, last: str = "") -> str:
    head = "skill_utils:\n  folders: ["
    n = (MAX_CONFIG_BYTES - 100 - len(head) - len(last)) // (len(item) + 1)
    return head + ",".join([item] * min(n, 9_000 if len(item) < 20 else n)) + last + "]\n"


def cases(tmp: Path) -> dict[str, Callable[[], object]]:
    def file(name: str, text: str) -> Path:
        path = tmp / name
        path.write_text(text, encoding="utf-8")
        return path

    def load(path: Path) -> Callable[[], object]:
        return lambda: load_settings(path, env={})

    mapping = "llm:\n  routing:\n    context_windows:\n"
    files = {
        "baseline_1mb_valid_list": file("valid-list.yaml", _list("/" + "a" * 100)),
        "1mb_list_with_a_bad_item": file("list-bad-item.yaml", _list("/" + "a" * 100, ", 5")),
        "1mb_list_every_item_bad": file("list-all-bad.yaml", _list("5" * 100)),
        "1mb_valid_mapping": file("valid-map.yaml",
                                  _lines(mapping, "      m{i:05d}" + "x" * 90 + ": 1000\n", 9_000)),
        "1mb_mapping_every_value_bad": file("map-all-bad.yaml",
                                            _lines(mapping, "      m{i:05d}" + "x" * 90 + ": lots\n",
                                                   9_000)),
        "1mb_of_unknown_keys": file("unknown-keys.yaml", _lines("", "k{i:05d}" + "y" * 96 + ": 1\n",
                                                                9_000)),
        "1mb_of_keys_over_the_entry_limit": file("many-keys.yaml", _lines(
            "llm:\n  routing:\n    context_windows:\n", "      model-{i}: {i}\n", 60_000)),
        "deep_legal_nesting": file("deep.yaml", "".join(
            f"x{i}: " + "{a: " * 30 + "1" + "}" * 30 + "\n" for i in range(300))),
        "1mb_plus_one": file("over-1mb.yaml", "home: x\n" + "#" * MAX_CONFIG_BYTES),
        "1mb_single_string": file("long-string.yaml",
                                  "home: '" + "x" * (MAX_CONFIG_BYTES - 20) + "'\n"),
        "1mb_string_of_the_wrong_type": file("long-string-int.yaml", "llm:\n  max_tokens: '"
                                             + "x" * (MAX_CONFIG_BYTES - 40) + "'\n"),
        "1mb_provider_name": file("long-provider.yaml", "llm:\n  routing:\n    providers:\n"
                                  "      - name: '" + "x" * (MAX_CONFIG_BYTES - 80) + "'\n"),
        # malformed: libyaml rejects it, the pure-Python loader took 3.9 s
        "1mb_one_long_key": file("long-key.yaml", "k" * (MAX_CONFIG_BYTES - 20) + ": 1\n"),
    }
    out: dict[str, Callable[[], object]] = {
        name: load(path) for name, path in files.items() if name.startswith("baseline")}
    example = REPO / "config.example.yaml"
    out["example_config"] = lambda: load_settings(example, env={})
    out[f"alias_bomb_{len(_bomb(7))}_bytes_7_levels"] = lambda: parse_yaml(_bomb(7), env={})
    out[f"alias_bomb_{len(_bomb())}_bytes_9_levels"] = lambda: parse_yaml(_bomb(), env={})
    out["recursive_alias"] = lambda: parse_yaml("llm: &a\n  routing: *a\n", env={})
    out["nesting_500_deep"] = lambda: parse_yaml("a: " + "[" * 500 + "]" * 500 + "\n", env={})
    out["integer_5000_digits"] = lambda: parse_yaml("llm:\n  max_tokens: " + "9" * 5000 + "\n",
                                                    env={})
    out.update({name: load(path) for name, path in files.items() if not name.startswith("baseline")})
    return out


def run(repeat: int) -> dict[str, object]:
    out: dict[str, object] = {}
    baseline = None
    with tempfile.TemporaryDirectory() as d:
        for name, fn in cases(Path(d)).items():
            times = []
            outcome = "loaded"
            for _ in range(repeat):
                t0 = time.perf_counter()
                try:
                    fn()
                    outcome = "loaded"
                except ConfigError as e:
                    outcome = "rejected: " + e.reason[:80]
                times.append(time.perf_counter() - t0)
            median = statistics.median(times)
            baseline = median if baseline is None else baseline
            out[name] = {"median_s": round(median, 4), "max_s": round(max(times), 4),
                         "ratio_to_baseline": round(median / baseline, 2), "outcome": outcome,
                         "under_goal": max(times) < GOAL_S}
    checked = [v for k, v in out.items() if not k.startswith(("baseline", "example"))]
    out["all_under_goal"] = all(v["under_goal"] for v in checked)  # type: ignore[index]
    out["goal_s"] = GOAL_S
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeat", type=positive_int, default=5)
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
