"""One offline turn on today's home beside the same turn on a home 10-100x its size, same run.

    python benchmarks/turn_home.py --json [--no-embeddings] [--turns 60] [--profile FILE]
    python benchmarks/turn_home.py --json --compare embeddings|scrub-memo [--turns 12]

Two homes, each an Agent answering through ``hermes_core.testing.FakeProvider`` (no network),
the audit log written, the whole ``Agent.chat`` timed:

* ``today``: ``examples/home`` as shipped (16 skills in both languages, its MEMORY.md and
  USER.md), 200 sessions, a 4-turn history;
* ``production``: the same SOUL.md, a 2,000-skill JSONL catalog (the MetaTool and
  HammerBench-zh dev skills, varied past their 1,110, as ``benchmarks/turn.py`` makes it),
  20,000 sessions (``benchmarks/memory.py``'s archive), a 40-turn history in both languages, a
  MEMORY.md of ~12,000 characters and a USER.md of ~5,000 (under the 20,000 / 10,000 caps).

Every measured turn starts from the same history (reset before each chat), so each is the same
warm turn; the requests alternate the MetaTool (English) and HammerBench-zh (Chinese) dev
queries. Reported per home: ``turn_ms_p50/p95`` and the parts' medians (``prepare``: build,
route and fit; ``build``: the prompt builder; ``retrieve``: skill retrieval with its layers'
own timings; ``recall``: the episodic search; ``call``: the call loop with the audit write;
``record``: the rest), and top level ``production_vs_today`` (turn p50 ratio). Embeddings
load the bundled models unless ``--no-embeddings``; their vectors are kept in the homes under
``--cache-dir``, so only the first run embeds the catalog. The learned injection scorer's
verdicts an earlier run left there are removed unless ``--keep-verdicts`` (a home that has
recalled these sessions before). ``--profile FILE`` writes a cProfile of the production home's
measured turns.

``--compare embeddings`` measures the production home only, three times in the same run:
lexical layers alone, with the embedding models (the dense layer over the 2,000 skills), and
lexical again; ``ratio`` is the embeddings turn p50 over the second lexical run's (both after the
process warmed up: the first run also pays the process's first imports and page cache). Its first
run embeds the catalog (minutes on a loaded machine; kept in the home after), so keep ``--turns``
small. ``--compare scrub-memo`` runs the production home once with the call loop's outbound
scrub memo off for two turns of every four (the same process, warmed alike, one English and one
Chinese request in each pair): ``ratio`` = on / off.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.types import Message

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "home"

_spec = importlib.util.spec_from_file_location("hermes_bench_turn", Path(__file__).with_name("turn.py"))
assert _spec is not None and _spec.loader is not None
_turn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_turn)

REPLY_EN = ("Here is what I would do: first check the logs with `kubectl logs -p`, then compare "
            "the deployment's env with the secret it names; the usual cause is a renamed key. ")
REPLY_ZH = "好的，我先帮你查一下相关的记录，然后把结果整理成一份清单发给你，有问题随时告诉我。"


def r3(x: float) -> float:
    return round(x, 3)


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, round(q * (len(s) - 1))))]


def requests(n: int, seed: int) -> list[str]:
    """``n`` dev queries, English and Chinese alternating."""
    rng = random.Random(seed)
    by_lang = []
    for ds in ("metatool", "hammerbench-zh"):
        path = _turn.EVAL / ds / "queries.dev.jsonl"
        qs = [json.loads(line)["query"] for line in path.open(encoding="utf-8") if line.strip()]
        rng.shuffle(qs)
        by_lang.append(qs)
    return [by_lang[i % 2][i // 2] for i in range(n)]


def history(turns: int, seed: int) -> list[Message]:
    """``turns`` user/assistant pairs; the user asks dev queries (not the measured ones), the
    assistant answers in the request's language, some answers long."""
    asked = requests(turns + 400, seed + 1)[400:]
    rng = random.Random(seed)
    out: list[Message] = []
    for i, q in enumerate(asked):
        zh = i % 2 == 1
        out.append(Message("user", q))
        out.append(Message("assistant", (REPLY_ZH if zh else REPLY_EN) * rng.randint(1, 6)))
    return out


def grown(text: str, chars: int) -> str:
    """``text``'s bullet lines repeated, each copy numbered, to about ``chars`` characters."""
    head, *lines = [x for x in text.splitlines() if x.strip()]
    bullets = [x for x in lines if x.startswith("- ")]
    out, k = [head], 0
    while sum(len(x) + 1 for x in out) < chars:
        b = bullets[k % len(bullets)]
        out.append(f"- ({k // len(bullets) + 1}) {b[2:]}")
        k += 1
    return "\n".join(out) + "\n"


def make_home(home: Path, big: bool, args: argparse.Namespace) -> dict[str, Any]:
    """The home's folder and its config overrides (created once; the catalog's vectors stay)."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE / "SOUL.md", home / "SOUL.md")
    memory, user = (EXAMPLE / "MEMORY.md").read_text("utf-8"), (EXAMPLE / "USER.md").read_text("utf-8")
    (home / "MEMORY.md").write_text(grown(memory, 12_000) if big else memory, "utf-8")
    (home / "USER.md").write_text(grown(user, 5_000) if big else user, "utf-8")
    skills: dict[str, Any] = {"embeddings": not args.no_embeddings, "refresh_interval_s": None}
    if big:
        cat = home / "catalog.jsonl"
        if not cat.exists():
            _turn.write_catalog(_turn.catalog(2_000), cat)
        skills["catalogs"] = [str(cat)]
    elif not (home / "skills").exists():
        shutil.copytree(EXAMPLE / "skills", home / "skills")
    db = archive(args.cache_dir, 20_000 if big else 200, args.seed)
    return {"skill_utils": skills, "context_engine": {"db_path": str(db)}}


def archive(cache: Path, sessions: int, seed: int) -> Path:
    """``benchmarks/memory.py``'s archive of ``sessions`` sessions over a year, built once."""
    mem = _turn._memory
    path = cache / f"turn-home-sessions-{sessions}-seed{seed}.db"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".building")
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        print(f"building {path} ({sessions:,} sessions, once)", file=sys.stderr)
        mem.build(tmp, sessions, seed, 5_000, time.time(), mem._vocabularies())
        tmp.rename(path)
    return path


def timed(obj: Any, name: str, into: list[float]) -> Callable[[], None]:
    """Wrap ``obj.name`` so each call's milliseconds land in ``into``; returns the undo."""
    inner = getattr(obj, name)

    def wrapper(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            into.append((time.perf_counter() - t) * 1000)

    setattr(obj, name, wrapper)
    return lambda: delattr(obj, name)


def run_home(label: str, big: bool, args: argparse.Namespace,
             profile: cProfile.Profile | None) -> dict[str, Any]:
    home = args.cache_dir / f"turn-home-{label}-{'lex' if args.no_embeddings else 'emb'}"
    overrides = make_home(home, big, args)
    if not args.keep_verdicts:   # the learned scorer's verdicts of an earlier run: not this one's
        shutil.rmtree(home / "cache" / "injection", ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="hermes-turn-home-") as tmp:
        cfg = {"home": str(home), **overrides,
               "llm": {"routing": {"default_model": "gpt-4o-mini"}},
               "credential_pool": {"audit_log": str(Path(tmp) / "audit.jsonl")}}
        agent = Agent(load_settings(cfg, env={}), provider=FakeProvider(default="ok"),
                      loop_options={"sleep": lambda s: None})
        assert agent.retriever is not None and agent.context_engine is not None
        memo = agent.loop.scrub_memo
        alternate = getattr(args, "compare", None) == "scrub-memo"
        if not args.no_embeddings:
            agent.retriever.wait_warm()
        hist = history(40 if big else 4, args.seed)
        msgs = requests(args.turns + 10, args.seed)
        parts: dict[str, list[float]] = {k: [] for k in
                                         ("prepare", "build", "retrieve", "recall", "call")}
        undo = [timed(agent, "prepare", parts["prepare"]),
                timed(agent.builder, "build", parts["build"]),
                timed(agent.retriever, "retrieve", parts["retrieve"]),
                timed(agent.context_engine, "recall", parts["recall"]),
                timed(agent.loop, "complete", parts["call"])]
        layers: dict[str, list[float]] = {}
        total: list[float] = []
        off: list[float] = []    # --compare scrub-memo: the turns scrubbed whole
        for i, m in enumerate(msgs):
            agent.history[:] = hist
            # two turns on, two off (one English and one Chinese request each): the same process,
            # warmed alike, the same mix of languages
            memo_off = alternate and (i // 2) % 2 == 1
            if alternate:
                agent.loop.scrub_memo = None if memo_off else memo
            warm = i >= 10   # the first ten: indexes, jieba, statements, page cache
            if warm and profile is not None:
                profile.enable()
            t = time.perf_counter()
            reply = agent.chat(m)
            dt = (time.perf_counter() - t) * 1000
            if profile is not None:
                profile.disable()
            if not warm:
                for v in parts.values():
                    v.clear()
                continue
            if memo_off:
                off.append(dt)
                continue
            total.append(dt)
            for k, v in (getattr(reply.retrieval, "timings_ms", None) or {}).items():
                if k != "total":
                    layers.setdefault(k, []).append(v)
        for u in undo:
            u()
        med = {k: statistics.median(v) if v else 0.0 for k, v in parts.items()}
        out: dict[str, Any] = {
            "skills": len(agent.retriever.skills), "history_messages": len(hist),
            "memory_chars": len((home / "MEMORY.md").read_text("utf-8")),
            "turns": len(total), "turn_ms_p50": r3(statistics.median(total)),
            "turn_ms_p95": r3(percentile(total, 0.95)),
            "parts_ms_p50": {**{k: r3(v) for k, v in med.items()},
                             "record": r3(statistics.median(total) - med["prepare"] - med["call"])},
            "layers_ms_p50": {k: r3(statistics.median(v)) for k, v in layers.items()},
        }
        if alternate:
            out["memo_off_turn_ms_p50"] = r3(statistics.median(off))
            out["memo_on_vs_off"] = r3(statistics.median(total) / statistics.median(off))
        agent.context_engine = None   # nothing recorded: the cached archive stays as built
        agent.close(summarize=False)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "hermes-bench")
    ap.add_argument("--no-embeddings", action="store_true", help="lexical layers only")
    ap.add_argument("--keep-verdicts", action="store_true",
                    help="keep the injection verdicts an earlier run left in the homes")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the production turns here")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compare", choices=("embeddings", "scrub-memo"),
                    help="the production home only, twice in the same run (see above)")
    args = ap.parse_args(argv)
    prof = cProfile.Profile() if args.profile else None
    if args.compare == "scrub-memo":
        production = run_home("production", True, args, prof)
        report = {"mode": "compare-scrub-memo", "embeddings": not args.no_embeddings,
                  "verdicts": "kept" if args.keep_verdicts else "cold", "production": production,
                  "ratio": production["memo_on_vs_off"]}
        print(json.dumps(report, ensure_ascii=False, indent=None if args.json else 2))
        return 0
    if args.compare == "embeddings":
        runs = [run_home("production", True, argparse.Namespace(**{**vars(args),
                                                                    "no_embeddings": lex}), None)
                for lex in (True, False, True)]
        report = {"mode": "compare-embeddings",
                  "verdicts": "kept" if args.keep_verdicts else "cold",
                  "lexical_first": runs[0], "embeddings": runs[1], "lexical": runs[2],
                  "ratio": r3(runs[1]["turn_ms_p50"] / runs[2]["turn_ms_p50"])}
        print(json.dumps(report, ensure_ascii=False, indent=None if args.json else 2))
        return 0
    today = run_home("today", False, args, None)
    production = run_home("production", True, args, prof)
    if prof is not None:
        prof.dump_stats(str(args.profile))
    report = {"mode": "lexical" if args.no_embeddings else "embeddings",
              "verdicts": "kept" if args.keep_verdicts else "cold",
              "today": today, "production": production,
              "production_vs_today": r3(production["turn_ms_p50"] / today["turn_ms_p50"])}
    print(json.dumps(report, ensure_ascii=False, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
