"""Prompt build latency: a cached turn (nothing changed) vs a rebuild (every source re-read).

Both are measured side by side in one run, interleaved (cached turn, then invalidate + rebuild,
repeated), so machine noise hits both equally. A cached turn still stats every source, walks the
project-context search path and assembles the per-turn context, messages, token counts and cache
plan; a rebuild additionally reads, decodes, scans and truncates every file and re-joins and
re-hashes the system prompt.

``prepare_us_p50``: an agent's turn up to the request (``Agent.prepare``: build, route, compaction
fit, counted in the routed model's encoding) and the bill read back (``compactor.observe``) over a
120-message history of JSON-ish messages: every message's count is looked up several times a turn.
``prepare_hooked_us_p50``: the same with a ``pre_llm_call`` hook adding ~300 tokens of new text
each turn (as retrieval does), and ``hooked_vs_plain`` its ratio to ``prepare_us_p50`` (the
hook's own cost is nil: what it adds is the work of counting and fitting its text).
Run this file with ``PYTHONPATH`` on another checkout to compare two trees in one run.

    python benchmarks/prompt_build.py --json
    {"cached_us_p50": ..., "rebuild_us_p50": ..., "speedup": ..., ...}
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.types import Message

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_HOME = REPO / "examples" / "home"

PROJECT_DOC = """# Project atlas

## Layout
- `services/billing-api` (Go 1.22): invoices, payments, refunds. 计费服务，负责发票与退款。
- `services/gateway` (Python 3.12, FastAPI): auth, rate limits, routing to internal services.
- `infra/` (Terraform + Helm): clusters `prod-sh`, `stg-sh`; never apply to prod from a laptop.

## Conventions
- Run `make check` (ruff, mypy, go vet, unit tests) before pushing; CI must be green to merge.
- Commit messages in English, imperative mood; squash before merging feature branches.
- 数据库迁移放在 `migrations/`，按编号递增，禁止修改已合并的迁移文件。
- Feature flags live in `config/flags.yaml`; remove a flag within two releases of full rollout.
"""


def make_home(root: Path) -> tuple[Path, Path]:
    """A realistic home (the bundled example when present) and a git repo with HERMES.md."""
    home = root / "home"
    if EXAMPLE_HOME.is_dir():
        home.mkdir()
        for name in ("SOUL.md", "MEMORY.md", "USER.md"):
            if (EXAMPLE_HOME / name).is_file():
                shutil.copy(EXAMPLE_HOME / name, home / name)
    else:
        home.mkdir()
        (home / "SOUL.md").write_text("You are Hermes, a bilingual engineering assistant.\n" * 40)
        (home / "MEMORY.md").write_text("- The main repo is ~/code/atlas.\n§\n- 周报周五18:00前提交。\n" * 15)
        (home / "USER.md").write_text("- Name: Chen Yu (陈宇); backend engineer.\n" * 15)
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "services" / "gateway").mkdir(parents=True)
    (repo / "HERMES.md").write_text(PROJECT_DOC * 3, encoding="utf-8")
    # a real home's files were written long before the chat: aged by an hour, so a file is not
    # re-read for having changed within one timestamp tick of a turn (which costs a read a turn)
    old = time.time_ns() - 3_600_000_000_000
    for path in (*home.iterdir(), repo / "HERMES.md"):
        os.utime(path, ns=(old, old))
    return home, repo / "services" / "gateway"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def prepare_turns(rounds: int, root: Path, *, hooked: bool = False) -> list[float]:
    """Microseconds of each of ``rounds`` agent turns' prepare + observe (no provider call),
    with a hook adding fresh text each turn when ``hooked``."""
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.testing import FunctionProvider
    from hermes_core.types import Completion, Usage

    home = root / ("agent-home-hooked" if hooked else "agent-home")
    home.mkdir()
    (home / "SOUL.md").write_text("You are Hermes, a bilingual engineering assistant.\n" * 60)
    settings = load_settings({
        "home": str(home), "llm": {"routing": {"default_model": "claude-sonnet-4-5"}},
        "skill_utils": {"enabled": False, "embeddings": False},
        "context_engine": {"enabled": False}}, env={})
    provider = FunctionProvider(lambda p, m: Completion("ok", m, "f", Usage(100, 5)),
                                name="anthropic")
    provider.kind = "anthropic"
    agent = Agent(settings, provider=provider, cwd=root,
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    rows = json.dumps({"rows": [[j, f"r{j}"] for j in range(40)]})
    agent.history.extend(Message("user" if i % 2 == 0 else "assistant", f"turn {i}: {rows}")
                         for i in range(120))
    if hooked:
        agent.pre_llm_call = lambda message, prompt: (
            f"## Open tickets for: {message}\n" + "- OPS-112: staging deploys fail on migrate\n" * 30)
    agent.prepare("warm-up")
    times = []
    for i in range(rounds):
        t0 = time.perf_counter_ns()
        prompt, _ = agent.prepare(f"how do I roll back release {i}?")
        agent.compactor.observe(prompt, Usage(5000, 10), "claude-sonnet-4-5")
        times.append((time.perf_counter_ns() - t0) / 1000)
    agent.close()
    return times


def run(rounds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        home, cwd = make_home(Path(tmp))
        builder = PromptBuilder(home, cwd=cwd, clock=lambda: datetime(2030, 1, 1, tzinfo=UTC))
        history = [Message("user" if i % 2 == 0 else "assistant", f"turn {i}: " + "words " * 30)
                   for i in range(10)]
        builder.build("warm-up", history, session_id="bench", model="claude-sonnet-4-5",
                      provider_kind="anthropic")
        cached: list[float] = []
        rebuild: list[float] = []
        cached_reads = 0
        rebuild_reads = 0
        gc.disable()
        try:
            for i in range(rounds):
                msg = f"how do I roll back release {i}?"
                reads = builder.file_reads
                t0 = time.perf_counter_ns()
                builder.build(msg, history, session_id="bench", model="claude-sonnet-4-5",
                              provider_kind="anthropic")
                cached.append((time.perf_counter_ns() - t0) / 1000)
                cached_reads += builder.file_reads - reads
                builder.invalidate()
                reads = builder.file_reads
                t0 = time.perf_counter_ns()
                p = builder.build(msg, history, session_id="bench", model="claude-sonnet-4-5",
                                  provider_kind="anthropic")
                rebuild.append((time.perf_counter_ns() - t0) / 1000)
                rebuild_reads += builder.file_reads - reads
            prepared = prepare_turns(rounds, Path(tmp))
            hooked = prepare_turns(rounds, Path(tmp), hooked=True)
        finally:
            gc.enable()
        cached_p50 = statistics.median(cached)
        rebuild_p50 = statistics.median(rebuild)
        return {
            "rounds": rounds,
            "cached_us_p50": round(cached_p50, 2),
            "cached_us_p95": round(percentile(cached, 0.95), 2),
            "rebuild_us_p50": round(rebuild_p50, 2),
            "rebuild_us_p95": round(percentile(rebuild, 0.95), 2),
            "speedup": round(rebuild_p50 / cached_p50, 1),
            "prepare_us_p50": round(statistics.median(prepared), 2),
            "prepare_hooked_us_p50": round(statistics.median(hooked), 2),
            "hooked_vs_plain": round(statistics.median(hooked) / statistics.median(prepared), 3),
            "file_reads_per_cached_turn": cached_reads / rounds,
            "file_reads_per_rebuild": rebuild_reads / rounds,
            "system_tokens": p.tokens["system"],
            "system_bytes": len(p.system.encode("utf-8")),
            "history_messages": len(history),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="cached/rebuild pairs (default 2000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>28}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
