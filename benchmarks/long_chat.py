"""A 300-turn chat on a 16k-window model: no compaction vs a sliding window vs hermes_core compaction.

All three run in the same process, through the real Agent (PromptBuilder, cache planner, call
loop), against a fake provider that bills the way a prefix-caching provider does: a request's
cached tokens are the longest prefix it shares with a cache entry written at a breakpoint of an
earlier request (the system marker and every message breakpoint), byte for byte; a request whose
prompt plus ``max_tokens`` exceeds the window is refused with a context-window error. Each
rendered block is billed its ``o200k_base`` count (the library's tokenizer, standing in for the
model's own) plus 4 for its framing: a character estimate put JSON at half its count.

Three facts are stated at turns 5, 60 and 150 and asked back at turn 300; a fact counts as
recalled when its key string is in the turn-300 request (system, context or messages) and the
provider accepted it. Refused requests are not billed; ``max_prompt_tokens`` is over every request
sent, refused ones included.

* ``none``: every turn resends the whole history (compaction switched off).
* ``sliding``: before each call the oldest turns are dropped until the history is under the same
  high-water mark compaction uses (a ``pre_llm_call`` hook).
* ``hermes``: hermes_core's compaction, the summary written by the fake's "fast model" -- which,
  like a hurried model, names the topics and drops every number -- so the facts that survive are the
  ones the compactor keeps itself. ``--extractive`` makes the fake decline summaries instead.

    python benchmarks/long_chat.py --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt.token_count import BpeCounter, message_cost
from hermes_core.config import load_settings
from hermes_core.errors import ContextWindowExceeded, HermesError
from hermes_core.testing import FunctionProvider
from hermes_core.tokens import count_tokens
from hermes_core.types import Completion, Prompt, Usage

MODEL = "bench-16k"
WINDOW = 16_000
MAX_TOKENS = 1024

FACTS = {5: ("By the way, my name is Ada Okafor and our project codename is BLUEFIN-7.",
             "BLUEFIN-7"),
         60: ("We decided the launch budget is 48,500 euros, final.", "48,500"),
         150: ("My flight to Osaka leaves on March 14 at 09:40.", "09:40")}
QUESTION = ("Remind me: what is our project codename, the launch budget we decided, and when does "
            "my flight leave?")

TOPICS = ("rebase conflicts in git", "a slow postgres query after a deploy", "docker image size",
          "python asyncio timeouts", "a flaky integration test", "kubernetes readiness probes",
          "sourdough starter that will not rise", "a weekend trip itinerary", "regex for dates",
          "nginx 502 errors", "memory leaks in a node service", "writing a cover letter",
          "树莓派的无线网络经常断线", "如何给团队写周报", "typescript generics", "CSV encoding issues",
          "a terraform plan that wants to recreate a database", "learning Spanish verbs",
          "a cron job that runs twice", "SSH keys on a new laptop")
ASKS = ("How should I approach {t}?", "What are the usual causes of {t}?",
        "Can you give me a checklist for {t}?", "What would you try first with {t}?",
        "Is there a simpler way to handle {t}?", "Thanks. And what about edge cases in {t}?")

SOUL = ("You are Hermes, a careful engineering assistant. " + " ".join(
    f"Guideline {i}: answer precisely, cite the command or file involved, prefer small reversible "
    f"steps, say when you are unsure, and keep the user's constraints from earlier in the chat."
    for i in range(1, 36)))


def user_message(turn: int) -> str:
    if turn in FACTS:
        return FACTS[turn][0]
    topic = TOPICS[(turn * 7) % len(TOPICS)]
    return ASKS[turn % len(ASKS)].format(t=topic)


def assistant_reply(message: str, turn: int) -> str:
    """~150 tokens that read like an answer to ``message``."""
    topic = message.rstrip("?.!").split(" ")[-4:]
    words = " ".join(topic)
    return (f"Here is how I would go about {words}. First, reproduce it reliably and write down the "
            f"exact symptom and when it started. Second, check what changed recently: "
            f"configuration, dependencies, data volume. Third, narrow it down by bisecting the "
            f"change or isolating one component at a time, and keep notes as you go. Finally, "
            f"verify the fix under the same conditions and add a regression check so it stays "
            f"fixed. (answer {turn})")


# --------------------------------------------------------------------------- the billing provider

def blocks(prompt: Prompt) -> list[str]:
    """The request as a provider caches it: the system (with tools), then one block per message
    (the per-turn context joins the last user message)."""
    out = [prompt.system + "".join(t.name + t.description for t in prompt.tools)]
    last_user = max((i for i, m in enumerate(prompt.messages) if m.role == "user"), default=-1)
    for i, m in enumerate(prompt.messages):
        text = (prompt.context + "\n" if i == last_user and prompt.context else "") + m.content
        calls = "".join(c.id + c.name + c.arguments for c in m.tool_calls)
        out.append(f"<{m.role}>{text}{calls}")
    return out


@dataclass
class Biller:
    """Prefix-cache billing: entries are written at breakpoints, read by exact prefix match."""

    entries: dict[str, int] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    last_turn_prompt: Prompt | None = None

    def bill(self, prompt: Prompt) -> Usage:
        parts = blocks(prompt)
        h = hashlib.sha256()
        cumulative, running, hashes = [], 0, []
        for b in parts:
            h.update(b.encode("utf-8", "replace") + b"\x1e")
            running += count_tokens(b) + 4
            cumulative.append(running)
            hashes.append(h.hexdigest())
        total = running
        cached = max((cumulative[i] for i, d in enumerate(hashes) if d in self.entries), default=0)
        marks = ([0] if prompt.cache.system else []) + [i + 1 for i in prompt.cache.message_indices]
        for p in marks:
            if p < len(hashes):
                self.entries[hashes[p]] = cumulative[p]
        refused = total + MAX_TOKENS > WINDOW
        self.requests.append({"purpose": prompt.purpose, "total": total, "cached": cached,
                              "refused": refused})
        if refused:
            raise ContextWindowExceeded(f"prompt is {total} tokens; the window is {WINDOW}",
                                        status_code=400, provider="bench")
        return Usage(input_tokens=total - cached, output_tokens=150, cache_read_tokens=cached)


def lossy_summary(prompt: Prompt) -> str:
    """What a hurried fast model might write: the topics, none of the numbers."""
    body = prompt.messages[-1].content
    asked = re.findall(r"USER: ([^\n]+)", body)
    topics = []
    for line in asked:
        words = re.sub(r"[\d,.:?!]", "", line).split()[-4:]
        if words and " ".join(words) not in topics:
            topics.append(" ".join(words))
    return ("The user worked through a series of engineering and everyday questions, including "
            + "; ".join(topics[:12]) + ". The assistant suggested reproducing each problem, "
            "checking recent changes, isolating components and verifying fixes.")


def make_provider(biller: Biller, *, summaries: bool) -> FunctionProvider:
    def answer(prompt: Prompt, model: str) -> Completion:
        usage = biller.bill(prompt)
        if prompt.purpose == "summary":
            if not summaries:
                raise HermesError("this fast model declines to summarise")
            return Completion(lossy_summary(prompt), model, "bench", usage, finish_reason="stop")
        msg = next((m.content for m in reversed(prompt.messages) if m.role == "user"), "")
        if msg == QUESTION:
            biller.last_turn_prompt = prompt
        return Completion(assistant_reply(msg, len(biller.requests)), model, "bench", usage,
                          finish_reason="stop")

    provider = FunctionProvider(answer, name="bench")
    provider.kind = "anthropic"   # breakpoints planned the Anthropic way
    return provider


# --------------------------------------------------------------------------- the modes

def sliding_window(agent: Agent, drops: list[float]) -> Any:
    """A pre_llm_call hook dropping the oldest turns until the history is under the high-water
    mark of the same budget the compactor uses."""

    def hook(message: str, prompt: Prompt) -> Prompt:
        started = time.perf_counter()
        counter_prompt = agent.compactor.budget_for(prompt, BpeCounter(), MODEL, MAX_TOKENS)
        limit = counter_prompt.high_water
        history = list(prompt.messages[:-1])
        cost = [message_cost(m, BpeCounter()) for m in history]
        dropped = False
        while history and sum(cost) > limit:
            cut = next((i for i in range(1, len(history)) if history[i].role == "user"),
                       len(history))
            del history[:cut], cost[:cut]
            dropped = True
        if dropped:
            drops.append((time.perf_counter() - started) * 1000)
        return replace(prompt, messages=(*history, prompt.messages[-1]))

    return hook


def run_mode(mode: str, turns: int, root: Path, *, model_summaries: bool) -> dict[str, Any]:
    home = root / f"home-{mode}"
    home.mkdir()
    (home / "SOUL.md").write_text(SOUL, encoding="utf-8")
    settings = load_settings({
        "home": str(home),
        "llm": {"max_tokens": MAX_TOKENS, "stream": False,
                "routing": {"default_model": MODEL, "fast_model": MODEL,
                            "context_windows": {MODEL: WINDOW}}},
        "skill_utils": {"enabled": False, "embeddings": False},
        "context_engine": {"enabled": False},
        "prompt": {"compaction": {"enabled": mode == "hermes"}},
    })
    biller = Biller()
    drops: list[float] = []
    agent = Agent(settings, provider=make_provider(biller, summaries=model_summaries),
                  cwd=root, session_id=f"bench-{mode}")
    if mode == "sliding":
        agent.pre_llm_call = sliding_window(agent, drops)
    failed = 0
    compaction_ms: list[float] = []
    started = time.perf_counter()
    for turn in range(1, turns + 1):
        text = QUESTION if turn == turns else user_message(turn)
        try:
            reply = agent.chat(text)
        except HermesError:
            failed += 1
            continue
        event = reply.compaction.compaction if reply.compaction is not None else None
        if event is not None:
            compaction_ms.append(event.ms)
    elapsed = time.perf_counter() - started
    final = biller.last_turn_prompt   # the turn-300 request, when the provider accepted it
    sent = "" if final is None else "\n".join(
        [final.system, final.context, *(m.content for m in final.messages)])
    billed = [r for r in biller.requests if not r["refused"]]   # a refused request is not billed
    total = sum(r["total"] for r in billed)
    cached = sum(r["cached"] for r in billed)
    ms = compaction_ms if mode == "hermes" else drops
    return {
        "failed_turns": failed,
        "max_prompt_tokens": max((r["total"] for r in biller.requests), default=0),
        "refused_requests": len(biller.requests) - len(billed),
        "input_tokens_total": total,
        "cached_tokens_total": cached,
        "uncached_tokens_total": total - cached,
        "cache_hit_ratio": round(cached / total, 4) if total else 0.0,
        "compactions": (agent.compactor.state.compactions if mode == "hermes" else len(drops)),
        "summary_requests": sum(1 for r in biller.requests if r["purpose"] == "summary"),
        "facts_recalled": sum(1 for _, key in FACTS.values() if key in sent),
        "compaction_ms_p50": round(statistics.median(ms), 3) if ms else None,
        "wall_s": round(elapsed, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per mode (>= 151)")
    parser.add_argument("--extractive", action="store_true",
                        help="the fake declines summary requests (the offline fallback)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.turns < 151:
        parser.error("--turns must be at least 151 (facts are stated at turns 5, 60 and 150)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results = {mode: run_mode(mode, args.turns, root, model_summaries=not args.extractive)
                   for mode in ("none", "sliding", "hermes")}
    h, s = results["hermes"], results["sliding"]
    goals = {
        "zero_failed_turns": h["failed_turns"] == 0,
        "cache_hit_ratio_ge_0_80": h["cache_hit_ratio"] >= 0.80,
        "uncached_le_half_sliding": h["uncached_tokens_total"] <= 0.5 * s["uncached_tokens_total"],
        "facts_3_of_3": h["facts_recalled"] == 3,
        "sliding_recalls_at_most_1": s["facts_recalled"] <= 1,
    }
    out = {"benchmark": "long_chat", "turns": args.turns, "window": WINDOW, "model": MODEL,
           "summaries": "extractive" if args.extractive else "model", "modes": results,
           "uncached_vs_sliding": round(h["uncached_tokens_total"] / s["uncached_tokens_total"], 4)
           if s["uncached_tokens_total"] else None, "goals": goals}
    if args.json:
        print(json.dumps(out))
    else:
        keys = ("failed_turns", "max_prompt_tokens", "input_tokens_total", "cached_tokens_total",
                "cache_hit_ratio", "compactions", "facts_recalled", "compaction_ms_p50")
        print(f"{'':22}" + "".join(f"{m:>12}" for m in results))
        for k in keys:
            print(f"{k:22}" + "".join(f"{results[m][k]!s:>12}" for m in results))
        print("goals: " + ", ".join(f"{k}={'yes' if v else 'NO'}" for k, v in goals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
