"""How much of a session's input a provider's prompt cache serves, read off the wire.

    python benchmarks/prefix_cache.py --json [--turns 50] [--scenario NAME ... | --all]

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

Scenarios (``--scenario``, each run for both providers beside the chat without its event, in the
same run; ``price_vs_ideal`` is the price-weighted input over that chat's, ``mark_*`` the first
request after the event, ``mark_resends_previous_prefix`` whether it starts with what the request
before it sent): ``restart`` (a new Agent on the same home and history midway), ``failover``
(the provider answers 529/503 for five turns, the other provider serves them, then back; both
servers' input counts), ``model-switch`` (five turns on another model of the provider; the
servers' entries are per model), ``compaction`` (``--compaction-turns`` turns in a 24k window:
``folds`` and the tokens written or sent uncached at each), ``restart-compacted`` and
``stateless`` (that chat with a new Agent midway, or for every turn as a web server making an
Agent per request would; compared with ``compaction``), ``edit`` (MEMORY.md appended to
midway), ``chinese`` (the chat in Chinese), ``tools`` (a tool added midway).

One clock for the pool and both caches moves ``--turn-seconds`` a turn (60: a provider cooled
by a failover comes back). An entry unread for ``--ttl`` seconds is gone (300, Anthropic's
default cache and about OpenAI's; a block marked ``"ttl": "1h"`` keeps its entry an hour;
0: entries never expire); a read refreshes every entry it reads through. So five turns away
(a failover, another model) at a minute a turn come back to a cold prefix, and at 30 s a turn
to a warm one.
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
from collections.abc import Callable, Sequence
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
from hermes_core.agent.credential_pool import CredentialPool
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
#: Seconds an unread entry lives: Anthropic's default ``ephemeral`` cache (a ``"ttl": "1h"``
#: marker asks for an hour); OpenAI's automatic cache is cleared after 5-10 minutes unused.
TTL_S = 300.0
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
ZH_TOPICS = ("git 变基冲突", "很慢的 postgres 查询", "docker 镜像太大", "kubernetes 就绪探针",
             "nginx 502 错误", "执行两次的定时任务", "新笔记本上的 ssh 密钥", "terraform 要重建数据库")
RUNBOOK = " ".join(f"Step {i}: check the logs, compare with the last good deploy, note the "
                   f"difference and roll back if the error rate rises." for i in range(1, 60))


def lookup_runbook(topic: str) -> str:
    """The team runbook's section on a topic."""
    return f"Runbook for {topic}: {RUNBOOK}"


def user_message(turn: int, chinese: bool = False) -> str:
    topics = ZH_TOPICS if chinese else TOPICS
    topic = topics[(turn * 3) % len(topics)]
    if turn % 5 == 0:
        return (f"Please look up the runbook for {topic} and summarise it."
                + (" 请用中文总结。" if chinese else ""))
    return f"第 {turn} 轮：我该怎么处理{topic}？请给出具体命令。" if chinese else (
        f"Turn {turn}: how should I deal with {topic}?")


# --------------------------------------------------------------------------- the billing servers

def _bare(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True,
                      ensure_ascii=False)


def entry_ttls(kind: str, body: dict[str, Any], default: float) -> list[float]:
    """Seconds an entry written at each of the request's blocks lives: ``default``, or an hour
    for an Anthropic block whose ``cache_control`` asks ``"ttl": "1h"`` (never less than
    ``default``: with no TTL, ``inf``, no entry expires)."""
    blocks: list[Any] = [*body.get("tools", [])]
    if kind == "anthropic":
        blocks += body.get("system", [])
    for m in body["messages"]:
        content = m.get("content")
        blocks += content if isinstance(content, list) else [m]
    return [max(default, 3600.0) if kind == "anthropic" and isinstance(b, dict)
            and (b.get("cache_control") or {}).get("ttl") == "1h" else default for b in blocks]


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


def _never() -> float:
    return 0.0


@dataclass
class Server:
    """One provider's prompt cache, billed per request (see the module doc). An entry unread for
    ``ttl_s`` seconds of ``clock`` is gone; a read refreshes every entry it reads through."""

    kind: str
    clock: Callable[[], float] = _never
    ttl_s: float = TTL_S
    entries: dict[str, float] = field(default_factory=dict)   # prefix hash -> expiry
    read_back: set[str] = field(default_factory=set)
    written: list[str] = field(default_factory=list)
    prefixes: set[str] = field(default_factory=set)
    rows: list[dict[str, int]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    turn_of: list[int] = field(default_factory=list)   # the chat turn of each request

    def bill(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = wire_blocks(self.kind, body)
        now = self.clock()
        ttls = entry_ttls(self.kind, body, self.ttl_s)
        h = hashlib.sha256(str(body.get("model", "")).encode("utf-8") + b"\x1e")  # per model
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
        live = {d for d in hashes if self.entries.get(d, -math.inf) > now}
        hits = [p for p in looked if hashes[p] in live]
        at = max(hits, key=lambda p: cumulative[p], default=None)
        cached = 0 if at is None else cumulative[at]
        if self.kind == "openai":
            cached = cached // OPENAI_STEP * OPENAI_STEP
        if at is not None:
            self.read_back.add(hashes[at])
            for p in range(at + 1):   # what was read through lives on from now
                if hashes[p] in live:
                    self.entries[hashes[p]] = max(self.entries[hashes[p]], now + ttls[p])
        write = 0
        new = marks if self.kind == "anthropic" else list(range(len(blocks)))
        for p in new:
            if cumulative[p] >= MIN_CACHE and hashes[p] not in live:
                self.entries[hashes[p]] = now + ttls[p]
                live.add(hashes[p])
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


def answer(kind: str, server: Server, request: httpx.Request,
           down: Callable[[], bool] = lambda: False) -> httpx.Response:
    if down():
        return httpx.Response(529 if kind == "anthropic" else 503, json={
            "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    body = json.loads(request.content)
    server.bodies.append(body)
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


SCENARIOS = ("calm", "restart", "failover", "model-switch", "compaction", "restart-compacted",
             "stateless", "edit", "chinese", "tools")
LONG = ("compaction", "restart-compacted", "stateless")
#: what each scenario is compared with in the same run: the chat without the event
IDEAL = {"restart-compacted": "compaction", "stateless": "compaction"}
OTHER = {"anthropic": "openai", "openai": "anthropic"}
SWITCH = {"anthropic": "claude-sonnet-4", "openai": "gpt-4.1"}   # same provider, another model
def lookup_owner(service: str) -> str:
    """Who owns a service and how to reach them."""
    return f"{service} is owned by the platform team (#platform on chat)."


def settings_for(kind: str, home: Path, scenario: str) -> Any:
    llm: dict[str, Any] = {"stream": False, "routing": {"default_model": MODELS[kind]}}
    creds = {kind: {"keys": [{"key": KEYS[kind]}]}}
    if scenario == "failover":
        other = OTHER[kind]
        creds[other] = {"keys": [{"key": KEYS[other]}]}
        llm["routing"]["providers"] = [
            {"name": kind, "priority": 1, "models": [MODELS[kind]]},
            {"name": other, "priority": 2, "models": [MODELS[other]],
             "equivalents": {MODELS[kind]: MODELS[other]}}]
    if scenario in LONG:   # a window the chat fills several times over
        llm["routing"]["context_windows"] = {MODELS[kind]: 24_000}
    return load_settings({"home": str(home), "llm": llm, "credentials": creds,
                          "skill_utils": {"enabled": True, "embeddings": False},
                          "context_engine": {"enabled": True}}, env={})


def make_agent(kind: str, settings: Any, root: Path, home: Path, scenario: str,
               providers: dict[str, Any], clock: Callable[[], float]) -> Agent:
    tools: list[Callable[..., str]] = [lookup_runbook]
    return Agent(settings, providers=providers, cwd=root, session_id=f"bench-{kind}-{scenario}",
                 tools=tools, pool=CredentialPool.from_settings(settings, clock=clock),
                 loop_options={"sleep": lambda s: None, "audit_path": home / "audit.jsonl"})


def stable_part(kind: str, body: dict[str, Any]) -> list[str]:
    """A request's blocks before its last message: what the next request's cache must match."""
    blocks = wire_blocks(kind, body)
    last = body["messages"][-1].get("content")
    tail = len(last) if isinstance(last, list) else 1
    return [b for b, _ in blocks[:-tail]]


def run(kind: str, turns: int, root: Path, scenario: str = "calm", *, ttl_s: float = TTL_S,
        turn_s: float = 60.0) -> dict[str, Any]:
    home = make_home(root / scenario / kind)
    settings = settings_for(kind, home, scenario)
    now = [1_800_000_000.0]   # the pool's and the caches' clock: ``turn_s`` a turn

    def clock() -> float:
        return now[0]
    servers = {k: Server(k, clock=clock, ttl_s=ttl_s or math.inf) for k in ("anthropic", "openai")}
    server = servers[kind]
    mid = turns // 2 + 1
    window = range(mid, mid + 5)   # failover / model switch: five turns elsewhere, then back
    turn_now = [0]
    marks: dict[str, int] = {}   # the request index where something happened

    def down() -> bool:
        return scenario == "failover" and turn_now[0] in window

    names = ["anthropic", "openai"] if scenario == "failover" else [kind]
    providers = {k: AnthropicProvider() if k == "anthropic" else OpenAIProvider() for k in names}
    chinese = scenario == "chinese"

    def renewed(old: Agent) -> Agent:
        """A new Agent on the same home and history (a restart, or a web server's request)."""
        history = list(old.history)
        old.close(summarize=False)
        agent = make_agent(kind, settings, root, home, scenario, providers, clock)
        agent.history = history
        return agent

    with respx.mock(assert_all_called=False) as mock:
        for k, url in (("anthropic", ANTHROPIC_URL), ("openai", OPENAI_URL)):
            mock.post(url).mock(side_effect=lambda request, k=k: answer(
                k, servers[k], request, down if k == kind else lambda: False))
        agent = make_agent(kind, settings, root, home, scenario, providers, clock)
        skills, memories = set(), set()
        folds = []
        try:
            for turn in range(1, turns + 1):
                turn_now[0] = turn
                now[0] += turn_s
                if scenario == "stateless" and turn > 1:   # an Agent a request (a web server)
                    agent = renewed(agent)
                if turn == mid:
                    marks["mid"] = len(server.rows)
                    if scenario.startswith("restart"):   # a new process on the same home and history
                        agent = renewed(agent)
                    elif scenario == "edit":
                        with (home / "MEMORY.md").open("a", encoding="utf-8") as fh:
                            fh.write("\n§\nNote 6: the billing service moved to ops/pay.sh")
                    elif scenario == "tools":
                        agent.tool(lookup_owner)
                if scenario == "model-switch":
                    agent.requested_model = SWITCH[kind] if turn in window else None
                if scenario in ("failover", "model-switch") and turn == window.stop:
                    marks["back"] = len(server.rows)
                reply = agent.chat(user_message(turn, chinese))
                assert reply.text, f"turn {turn} has no answer"
                if reply.compaction is not None and reply.compaction.compaction is not None:
                    folds.append(len(server.rows) - 1)
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
    digest = hashlib.sha256()
    for body in server.bodies:   # what a request's cache must match, over the whole session
        digest.update("\x1f".join(stable_part(kind, body)).encode("utf-8"))
    row["stable_parts_sha256"] = digest.hexdigest()[:16]
    at = marks.get("back", marks.get("mid"))
    if scenario != "calm" and at is not None and at < len(server.rows):
        prev = server.bodies[at - 1]
        first = server.bodies[at]
        same = stable_part(kind, prev) == wire_blocks_prefix(kind, first, stable_part(kind, prev))
        row["mark_request"] = at
        row["mark_cached_tokens"] = server.rows[at]["cached"]
        row["mark_tokens"] = server.rows[at]["total"]
        row["mark_resends_previous_prefix"] = same
    if folds:
        row["folds"] = len(folds)
        row["fold_written_tokens"] = [server.rows[i]["write"] + server.rows[i]["uncached"]
                                      for i in folds]
    if scenario == "failover":
        row["other_provider"] = servers[OTHER[kind]].report()
    return row


def wire_blocks_prefix(kind: str, body: dict[str, Any], like: list[str]) -> list[str]:
    return [b for b, _ in wire_blocks(kind, body)[:len(like)]]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, default=[],
                        help="also run this scenario beside the calm chat (repeatable; 'all')")
    parser.add_argument("--all", action="store_true", help="every scenario")
    parser.add_argument("--compaction-turns", type=int, default=180)
    parser.add_argument("--ttl", type=float, default=TTL_S, metavar="S",
                        help="seconds a cache entry lives unread (0: for ever)")
    parser.add_argument("--turn-seconds", type=float, default=60.0, metavar="S",
                        help="seconds between two turns of the chat")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    wanted = [s for s in (SCENARIOS[1:] if args.all else args.scenario) if s != "calm"]
    out: dict[str, Any] = {"turns": args.turns, "ttl_s": args.ttl, "turn_s": args.turn_seconds}
    with tempfile.TemporaryDirectory() as tmp:
        done: dict[tuple[str, int, str], dict[str, Any]] = {}

        def session(kind: str, turns: int, name: str) -> dict[str, Any]:
            if (kind, turns, name) not in done:
                done[kind, turns, name] = run(kind, turns, Path(tmp) / str(len(done)), name,
                                              ttl_s=args.ttl, turn_s=args.turn_seconds)
            return done[kind, turns, name]

        out.update({kind: session(kind, args.turns, "calm") for kind in ("anthropic", "openai")})
        scenarios: dict[str, Any] = {}
        for name in wanted:
            turns = args.compaction_turns if name in LONG else args.turns
            scenarios[name] = got = {"turns": turns, "ideal": IDEAL.get(name, "calm")}
            for kind in ("anthropic", "openai"):
                row = got[kind] = dict(session(kind, turns, name))
                ideal = session(kind, turns, IDEAL.get(name, "calm"))
                paid = row["price_weighted_input"] + row.get("other_provider", {}).get(
                    "price_weighted_input", 0)
                row["price_vs_ideal"] = round(paid / max(1, ideal["price_weighted_input"]), 4)
        if scenarios:
            out["scenarios"] = scenarios
    if args.json:
        print(json.dumps(out))
    else:
        for kind in ("anthropic", "openai"):
            print(kind, ", ".join(f"{k}={v}" for k, v in out[kind].items()))
        for name, got in out.get("scenarios", {}).items():
            for kind in ("anthropic", "openai"):
                print(name, kind, ", ".join(f"{k}={v}" for k, v in got[kind].items()))
    return 0 if all(math.isfinite(out[k]["cached_share"]) for k in ("anthropic", "openai")) else 1


if __name__ == "__main__":
    sys.exit(main())
