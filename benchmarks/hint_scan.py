"""What scanning the descriptions a hint or the full skill list shows costs a turn (decision 228).

    python benchmarks/hint_scan.py --json [--rounds 5] [--skills 2000] [--hinted 5]

Real descriptions (the tool catalogs under tests/data/catalogs: ACEBench and HammerBench, Chinese
and English, the anthropics/skills catalog), each round given a tag of its own so neither the
description memo nor the learned scorer's verdict cache has seen it: ``cold`` is a render whose
descriptions are all new to the process (a hint's first turn, the full list's first turn), ``warm``
the same render again (every later turn). ``off`` is the same render with the scan off
(``prompt.injection_scan: false``: the render as it was before descriptions were scanned), timed in
the same round, and each ``*_ratio`` is a median over the ``off`` median. The scanner is warmed on
an unrelated text first, so its one-time import and model load are not in any figure
(``scanner_warmup_ms`` says what they cost). Medians of ``--rounds``.

``home_*``: the first turn of a home with retrieval off (the full list) as a process meets it,
with the home's scan caches attached (``use_home_cache``, as the prompt builder does): ``cold``
on a home that never ran, ``restarted`` after a restart (the process's memo and learned verdicts
forgotten, the home's files read anew), ``warm`` its next turn; for a home of ``--skills`` skills
and one of ``--small`` in the same round, and ``home_*_vs_small`` the large over the small.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_core.injection import INJECTION_CATEGORIES, guard_text, verdicts
from hermes_core.retrieval.result import DESCRIPTION_VERDICTS, render_full_list, render_hint
from hermes_core.types import Skill

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ROOT / "tests" / "data" / "catalogs"


def descriptions() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in [CATALOGS / "anthropics_skills.jsonl", *sorted(CATALOGS.glob("*.skills.jsonl"))]:
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append((row["name"], row["description"]))
    return out


def _ms(fn: Any, *args: Any) -> float:
    t = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t) * 1000


def restart(cache: Path) -> None:
    """What a new process on the same home holds: no memo in memory, the home's files unread."""
    DESCRIPTION_VERDICTS.clear()
    verdicts.STORE.clear()
    verdicts.use_home_cache(None)
    verdicts.use_home_cache(cache)


def home_turns(skills: list[Skill], cache: Path) -> dict[str, float]:
    """The full list's first turn on a new home, after a restart, and warm (ms)."""
    restart(cache)
    out = {"cold": _ms(render_full_list, skills, INJECTION_CATEGORIES)}
    restart(cache)
    out["restarted"] = _ms(render_full_list, skills, INJECTION_CATEGORIES)
    out["warm"] = _ms(render_full_list, skills, INJECTION_CATEGORIES)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skills", type=int, default=2000, help="size of the full list")
    ap.add_argument("--hinted", type=int, default=5, help="skills in a hint")
    ap.add_argument("--small", type=int, default=20, help="size of the small home's full list")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if min(args.rounds, args.skills, args.hinted, args.small) < 1:
        ap.error("--rounds, --skills, --hinted and --small must be at least 1")
    pool = descriptions()
    cats = INJECTION_CATEGORIES
    warmup = _ms(lambda: guard_text("Summarise the meeting notes and list the open action items.",
                                    name="warm-up", categories=cats))
    times: dict[str, list[float]] = {k: [] for k in (
        "hint_off", "hint_cold", "hint_warm", "list_off", "list_cold", "list_warm")}
    withheld = 0
    for r in range(args.rounds):
        skills = [Skill(f"{n}-{i}", f"{d} [round {r}]")
                  for i, (n, d) in enumerate(pool[(r * 997) % len(pool):] + pool)][: args.skills]
        hint = skills[: args.hinted]
        DESCRIPTION_VERDICTS.clear()
        times["hint_off"].append(_ms(render_hint, hint, ()))
        times["hint_cold"].append(_ms(render_hint, hint, cats))
        times["hint_warm"].append(_ms(render_hint, hint, cats))
        times["list_off"].append(_ms(render_full_list, skills, ()))
        times["list_cold"].append(_ms(render_full_list, skills, cats))
        times["list_warm"].append(_ms(render_full_list, skills, cats))
        withheld += render_full_list(skills, cats).count("[BLOCKED: the description of ")
        for size, tag in ((args.skills, "large"), (args.small, "small")):
            listed = [Skill(f"{sk.name}-{tag}", f"{sk.description} [{tag} home]")
                      for sk in skills[:size]]
            with tempfile.TemporaryDirectory() as home:
                for phase, ms in home_turns(listed, Path(home) / "cache" / "injection").items():
                    times.setdefault(f"home_{tag}_{phase}", []).append(ms)
    verdicts.use_home_cache(None)
    med = {k: statistics.median(v) for k, v in times.items()}
    report: dict[str, Any] = {
        "rounds": args.rounds, "skills": args.skills, "hinted": args.hinted,
        "scanner_warmup_ms": round(warmup, 1),
        **{f"{k}_ms": round(v, 3) for k, v in med.items()},
        "hint_cold_ratio": round(med["hint_cold"] / med["hint_off"], 2),
        "hint_warm_ratio": round(med["hint_warm"] / med["hint_off"], 2),
        "list_cold_ratio": round(med["list_cold"] / med["list_off"], 2),
        "list_warm_ratio": round(med["list_warm"] / med["list_off"], 2),
        "withheld_per_round": withheld / args.rounds,
        **{f"home_{p}_vs_small": round(med[f"home_large_{p}"] / med[f"home_small_{p}"], 2)
           for p in ("cold", "restarted", "warm")},
    }
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
