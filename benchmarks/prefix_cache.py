"""How much of a session's input a provider's prompt cache serves, read off the wire.

    python benchmarks/prefix_cache.py --json [--turns 50]

A 50-turn chat through the real Agent and the official ``anthropic`` and ``openai`` SDKs, HTTP
answered by ``respx``: a home with a ~4k-token SOUL.md, MEMORY.md and USER.md, eight skills (BM25,
no embeddings) and twenty past sessions, so every turn retrieves other skills and recalls other
sessions; every fifth turn calls a tool whose answer is ~1.2k tokens (a follow-up request).

The fake servers bill the JSON each SDK sent the way the providers document their caches, block
by block (a tool definition, a system block, a message content block; tokens by the library's
o200k count of the block's JSON):

* Anthropic: an entry is written at each ``cache_control`` block whose prefix reaches 1,024
  tokens; a request reads the longest prefix that is an entry, looked up at each of its own
  breakpoints and up to 20 blocks before one. Cache writes are the tokens from the read point to
  the last breakpoint; the rest is uncached input.
* OpenAI: automatic; every request's prefixes of at least 1,024 tokens are entries, a request
  reads the longest one it shares, in whole 128-token steps.

Reported per provider: requests, input tokens, cached (read), written, uncached, the cached share,
the price-weighted input (reads 0.1x, writes 1.25x, uncached 1x: Anthropic's 5-minute prices), the
number of distinct tools + system prefixes sent (1 when the stable part never changed), the
breakpoints written that no later request read, and what the Agent itself recorded as cache reads
from the SDK's usage (it must equal the server's count). The package is the one on ``PYTHONPATH``,
so one checkout's script can measure another checkout's library.
"""

# ruff: noqa: E402  (httpx is aliased to httpx2 before anything imports it)
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

httpx2.alias_httpx()   # before respx imports httpx: the SDKs send through httpx2, respx sees both
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx
import respx

from hermes_core.agent.agent import Agent
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.config import load_settings
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    anthropic_message,
    openai_chat_completion,
)
from hermes_core.testing.retrieval import skill_md, write_skill
from hermes_core.tokens import count_tokens
from hermes_core.types import ToolCall

MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o"}
KEYS = {"anthropic": "sk-ant-benchPREFIXkey0123456789abcdef",
        "openai": "sk-proj-benchPREFIXkey0123456789abcdef"}
MIN_CACHE = 1024
LOOKBACK = 20
OPENAI_STEP = 128

SOUL = ("You are Hermes, a careful engineering assistant for a small platform team. " + " ".join(
    f"Rule {i}: answer precisely, name the command or file involved, prefer small reversible "
    f"steps, say when you are unsure, and keep every constraint the user stated earlier."
    for i in range(1, 90)))
MEMORY = "\n§\n".join(f"Note {i}: the {s} service is deployed from ops/{s}.sh on weekdays only"
                      for i, s in enumerate(("billing", "search", "auth", "mailer", "reports"), 1))
USER = "The user is Ada, a platform engineer in Lisbon; prefers short answers with commands.\n"

SKILLS = {
    "git-rebase": "Resolve git rebase conflicts step by step",
    "postgres-slow-query": "Diagnose a slow PostgreSQL query with EXPLAIN ANALYZE",
    "docker-image-size": "Shrink a Docker image with multi-stage builds",
    "k8s-probes": "Configure Kubernetes readiness and liveness probes",
    "nginx-502": "Debug nginx 502 bad gateway errors",
    "cron-twice": "Find why a cron job runs twice",
    "ssh-keys": "Set up SSH keys on a new laptop",
    "terraform-recreate": "Stop a terraform plan from recreating a database",
}
TOPICS = ("a git rebase conflict", "a slow postgres query", "the docker image size",
          "kubernetes readiness probes", "nginx 502 errors", "a cron job that runs twice",
          "ssh keys on my new laptop", "terraform wants to recreate the database")
PAST = [f"Session about {t}: we tried {n} things and wrote the fix into the runbook"
        for n, t in enumerate(TOPICS * 3, 1)][:20]
RUNBOOK = " ".join(f"Step {i}: check the logs, compare with the last good deploy, note the "
                   f"difference and roll back if the error rate rises." for i in range(1, 60))


def lookup_runbook(topic: str) -> str:
    """The team runbook's section on a topic."""
    return f"Runbook for {topic}: {RUNBOOK}"


def user_message(turn: int) -> str:
    topic = TOPICS[(turn * 3) % len(TOPICS)]
    if turn % 5 == 0:
        return f"Please look up the runbook for {topic} and summarise it."
    return f"Turn {turn}: how should I deal with {topic}?"


# --------------------------------------------------------------------------- the billing servers

def _bare(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True,
                      ensure_ascii=False)


def wire_blocks(kind: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as its provider caches it: (a block's bytes, whether it carries a breakpoint),
    tools first, then the system, then every message's blocks (its role on its first block)."""
    out = [(_bare(t), "cache_control" in t) for t in body.get("tools", [])]
    if kind == "anthropic":
        out += [(_bare(b), "cache_control" in b) for b in body.get("system", [])]
    for m in body["messages"]:
        content = m.get("content")
        parts = content if isinstance(content, list) else [m]
        for i, b in enumerate(parts):
            head = f"<{m['role']}>" if i == 0 else ""
            out.append((head + _bare(b), "cache_control" in b))
    return out


@dataclass
class Server:
    """One provider's prompt cache, billed per request (see the module doc)."""

    kind: str
    entries: dict[str, int] = field(default_factory=dict)
    read_back: set[str] = field(default_factory=set)
    written: list[str] = field(default_factory=list)
    prefixes: set[str] = field(default_factory=set)
    rows: list[dict[str, int]] = field(default_factory=list)

    def bill(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = wire_blocks(self.kind, body)
        h = hashlib.sha256()
        hashes, cumulative, running = [], [], 0
        for text, _ in blocks:
            h.update(text.encode("utf-8") + b"\x1e")
            running += count_tokens(text)
            hashes.append(h.hexdigest())
            cumulative.append(running)
        stable = len(body.get("tools", [])) + (len(body.get("system", []))
                                               if self.kind == "anthropic" else 1)
        self.prefixes.add(hashes[stable - 1] if stable else "")
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if self.kind == "anthropic":
            looked = {p for b in marks for p in range(max(0, b - LOOKBACK), b + 1)}
        else:
            looked = set(range(len(blocks)))
        hits = [p for p in looked if hashes[p] in self.entries]
        at = max(hits, key=lambda p: cumulative[p], default=None)
        cached = 0 if at is None else cumulative[at]
        if self.kind == "openai":
            cached = cached // OPENAI_STEP * OPENAI_STEP
        if at is not None:
            self.read_back.add(hashes[at])
        write = 0
        new = marks if self.kind == "anthropic" else list(range(len(blocks)))
        for p in new:
            if cumulative[p] >= MIN_CACHE and hashes[p] not in self.entries:
                self.entries[hashes[p]] = cumulative[p]
                if self.kind == "anthropic":
                    self.written.append(hashes[p])
                    write = max(write, cumulative[p] - cached)
        row = {"total": running, "cached": cached, "write": write,
               "uncached": running - cached - write}
        self.rows.append(row)
        return row

    def report(self) -> dict[str, Any]:
        total = sum(r["total"] for r in self.rows)
        cached = sum(r["cached"] for r in self.rows)
        write = sum(r["write"] for r in self.rows)
        return {"requests": len(self.rows), "input_tokens": total, "cached_tokens": cached,
                "cache_write_tokens": write, "uncached_tokens": total - cached - write,
                "cached_share": round(cached / total, 4) if total else 0.0,
                "price_weighted_input": round(0.1 * cached + 1.25 * write
                                              + (total - cached - write)),
                "distinct_stable_prefixes": len(self.prefixes),
                "breakpoints_never_read": sum(1 for d in self.written if d not in self.read_back)}


def answer(kind: str, server: Server, request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    row = server.bill(body)
    last = body["messages"][-1]
    content = last.get("content")
    text = content if isinstance(content, str) else " ".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict))
    answered = last["role"] == "tool" or (isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content))
    calls: tuple[ToolCall, ...] = ()
    reply = f"Here is what I would do ({len(server.rows)}): reproduce, compare, roll back."
    if "look up the runbook" in text and not answered:
        topic = text.split("runbook for ", 1)[1].split(" and ", 1)[0]
        calls = (ToolCall(f"call_{len(server.rows)}", "lookup_runbook",
                          json.dumps({"topic": topic})),)
        reply = ""
    if kind == "anthropic":
        data = anthropic_message(reply, model=MODELS[kind], input_tokens=row["uncached"],
                                 cache_read=row["cached"], cache_write=row["write"],
                                 tool_calls=calls, id=f"msg_{len(server.rows)}")
    else:
        data = openai_chat_completion(reply, model=MODELS[kind], prompt_tokens=row["total"],
                                      cached_tokens=row["cached"], tool_calls=calls,
                                      id=f"chatcmpl-{len(server.rows)}")
    return httpx.Response(200, json=data)


# --------------------------------------------------------------------------- one session

def make_home(root: Path) -> Path:
    home = root / "home"
    home.mkdir(parents=True)
    (home / "SOUL.md").write_text(SOUL, encoding="utf-8")
    (home / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (home / "USER.md").write_text(USER, encoding="utf-8")
    for name, what in SKILLS.items():
        write_skill(home / "skills", name, skill_md(name, what, f"# {what}\n\n1. Look.\n2. Fix."))
    with ContextEngine(home / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        for i, summary in enumerate(PAST):
            engine.add(f"past-{i}", summary, created_at=1_799_000_000.0 + i * 3600)
    return home


def run(kind: str, turns: int, root: Path) -> dict[str, Any]:
    home = make_home(root / kind)
    settings = load_settings({
        "home": str(home),
        "llm": {"stream": False, "routing": {"default_model": MODELS[kind]}},
        "credentials": {kind: {"keys": [{"key": KEYS[kind]}]}},
        "skill_utils": {"enabled": True, "embeddings": False},
        "context_engine": {"enabled": True},
    }, env={})
    server = Server(kind)
    provider = AnthropicProvider() if kind == "anthropic" else OpenAIProvider()
    with respx.mock(assert_all_called=False) as mock:
        url = ANTHROPIC_URL if kind == "anthropic" else OPENAI_URL
        mock.post(url).mock(side_effect=lambda request: answer(kind, server, request))
        agent = Agent(settings, provider=provider, cwd=root, session_id=f"bench-{kind}",
                      tools=[lookup_runbook],
                      loop_options={"sleep": lambda s: None, "audit_path": home / "audit.jsonl"})
        skills, memories = set(), set()
        try:
            for turn in range(1, turns + 1):
                reply = agent.chat(user_message(turn))
                assert reply.text, f"turn {turn} has no answer"
                turn_ctx = agent.last_turn
                if turn_ctx is not None:
                    skills.add(turn_ctx.skills_block)
                    memories.add(turn_ctx.memories_block)
        finally:
            agent.close(summarize=False)   # the session summary is no chat turn
    row = server.report()
    row["agent_cache_read_tokens"] = agent.stats.usage.cache_read_tokens
    row["distinct_skill_blocks"] = len(skills)
    row["distinct_memory_blocks"] = len(memories)
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = {"turns": args.turns,
               **{kind: run(kind, args.turns, Path(tmp)) for kind in ("anthropic", "openai")}}
    if args.json:
        print(json.dumps(out))
    else:
        for kind in ("anthropic", "openai"):
            print(kind, ", ".join(f"{k}={v}" for k, v in out[kind].items()))
    return 0 if all(math.isfinite(out[k]["cached_share"]) for k in ("anthropic", "openai")) else 1


if __name__ == "__main__":
    sys.exit(main())
