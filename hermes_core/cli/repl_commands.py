"""Slash commands of the chat REPL: each explains one part of the last turn, or changes the session.

Every command reads what the Agent already holds (the last reply, route, retrieval, the pool's
status), so explaining a turn never re-runs it; ``/skills QUERY`` and ``/memory QUERY`` run a fresh
retrieval for a query of the user's choosing.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.cli.repl import Repl


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Callable[[Repl, str], None]


def _help(repl: Repl, arg: str) -> None:
    for cmd in repl.commands.values():
        repl.say(f"  {cmd.usage:<24} {cmd.help}")


def _exit(repl: Repl, arg: str) -> None:
    repl.running = False


def _reset(repl: Repl, arg: str) -> None:
    recorded = repl.agent.reset()
    repl.last_reply = None
    repl.say("[previous conversation recorded; a new one starts]" if recorded is not None
             else "[nothing to record; a new conversation starts]")


def _model(repl: Repl, arg: str) -> None:
    if arg:
        repl.agent.requested_model = None if arg.lower() == "auto" else arg
    auto = repl.agent.requested_model is None
    repl.say(f"model: {repl.agent.model}" + (" (auto: routing picks per turn)" if auto else " (fixed)"))


def _prompt(repl: Repl, arg: str) -> None:
    reply = repl.agent.last_reply
    if reply is None or reply.prompt is None:
        repl.say("no request sent yet")
        return
    if repl.turn_error is not None:
        repl.say("[the last turn failed before a reply; this is the request of the turn before it]")
    provider = repl.agent.providers.get(reply.provider) or repl.agent.provider
    payload = provider.render(reply.prompt, reply.model, repl.agent.options())
    repl.say(f"# as sent to {reply.provider} ({provider.kind}), model {reply.model}, "
             f"prefix sha256 {reply.prompt.prefix_sha256[:16]}")
    repl.say(json.dumps(payload, ensure_ascii=False, indent=2))


def _fmt_contrib(contrib: Any, name: str) -> str:
    if not contrib:
        return ""
    per = contrib.get(name) if isinstance(contrib, dict) and name in contrib else None
    if isinstance(per, dict):
        return ", ".join(f"{k}={v:.3f}" for k, v in per.items())
    parts = []
    for layer, by_skill in (contrib.items() if isinstance(contrib, dict) else ()):
        if isinstance(by_skill, dict) and name in by_skill:
            parts.append(f"{layer}={by_skill[name]:.3f}")
    return ", ".join(parts)


def show_retrieval(repl: Repl, result: Any) -> None:
    if result is None:
        repl.say("no skill retrieval yet (send a message, or /skills QUERY)")
        return
    answered = ", ".join(getattr(result, "answered", ()) or ()) or "none"
    gated = " (gate fired: nothing fits well enough)" if getattr(result, "gated", False) else ""
    repl.say(f"deciding layer: {result.layer}{gated}; layers that answered: {answered}")
    trigger = getattr(result, "trigger", None)
    if trigger is not None:
        repl.say(f"trigger: {trigger}")
    scores = getattr(result, "scores", ()) or ()
    for i, skill in enumerate(result.skills):
        score = f"{scores[i]:.3f}" if i < len(scores) else "-"
        why = _fmt_contrib(getattr(result, "contributions", None), skill.name)
        repl.say(f"  {i + 1}. {skill.name}  score {score}" + (f"  [{why}]" if why else ""))
    if not result.skills:
        cands = getattr(result, "candidates", ()) or ()
        if cands:
            repl.say("  (best candidates before the gate: " + ", ".join(cands[:5]) + ")")
    timings = getattr(result, "timings_ms", None) or {}
    if timings:
        repl.say("  timings ms: " + ", ".join(f"{k}={v:.1f}" for k, v in timings.items()))


def _skills(repl: Repl, arg: str) -> None:
    agent = repl.agent
    if agent.retriever is None:
        repl.say("skill retrieval is unavailable (the retrieval package or the skill catalog failed to load)")
        return
    status = getattr(agent.retriever, "dense_status", None)
    if status is not None:
        repl.say(f"embedding layer: {status()}")
    if arg:
        show_retrieval(repl, agent.retriever.retrieve(arg))
    else:
        turn = getattr(agent, "last_turn", None)
        show_retrieval(repl, turn.retrieval if turn is not None else None)


def _memory(repl: Repl, arg: str) -> None:
    agent = repl.agent
    if agent.context_engine is None:
        repl.say("episodic memory is off (context_engine.enabled: false)")
        return
    query = arg or next((m.content for m in reversed(agent.history) if m.role == "user"), "")
    if not query:
        repl.say("usage: /memory QUERY (or send a message first)")
        return
    found = agent.context_engine.retrieve(query, max_results=5, exclude_session=agent.session_id)
    if not found:
        repl.say(f"no past session matches {query[:60]!r}")
    for f in found:
        tags = f" [tags: {', '.join(f.tags)}]" if f.tags else ""
        repl.say(f"  {f.age_days:.0f}d ago  score {f.score:.3g}  {f.summary[:160]}{tags}")


def _route(repl: Repl, arg: str) -> None:
    d = repl.agent.last_decision
    if d is None:
        repl.say("no route decided yet")
        return
    repl.say(f"model: {d.model}; reason: {d.reason}")
    repl.say("candidates: " + ", ".join(f"{c.provider}/{c.model}" for c in d.candidates))
    reply = repl.agent.last_reply
    err = repl.turn_error
    if reply is None or reply.route is not d:   # the turn after the last reply failed
        reply = None
        if err is not None and not getattr(err, "attempts", ()):
            repl.say(f"  failed: {str(err).splitlines()[0] if str(err) else type(err).__name__}")
    attempts = reply.attempts if reply is not None else getattr(err, "attempts", ())
    if attempts:
        for a in attempts:
            key = f" key {a.key_fingerprint}" if a.key_fingerprint else ""
            wait = f" retry_after {a.retry_after:g}s" if a.retry_after is not None else ""
            repl.say(f"  attempt {a.provider}/{a.model}{key}: {a.status} -> {a.decision}"
                     f" ({a.latency_ms:.0f} ms){wait}")


def _keys(repl: Repl, arg: str) -> None:
    rows = repl.agent.pool.status()
    if not rows:
        repl.say("no API keys configured" + (f" ({repl.agent.offline_reason})"
                                             if repl.agent.offline_reason else ""))
        return
    for k in rows:
        blocked = f" for {k.blocked_for_s:.0f}s" if k.blocked_for_s > 0 else ""
        repl.say(f"  {k.provider:<12} {k.fingerprint}  {k.state}{blocked}  "
                 f"{k.requests_last_window} req/window  in flight {k.in_flight}")


def _save(repl: Repl, arg: str) -> None:
    agent = repl.agent
    path = Path(arg).expanduser() if arg else (
        agent.home / "transcripts" / f"{agent.session_id}.json")
    data = {"session_id": agent.session_id,
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "messages": [{"role": m.role, "content": m.content} for m in agent.history],
            "usage": {"cache_hit_ratio": round(agent.stats.cache_hit_ratio, 4),
                      "input_tokens": agent.stats.usage.total_input_tokens,
                      "output_tokens": agent.stats.usage.output_tokens}}
    if path.is_dir():   # "/save ~/notes" means a file in that folder, not replacing the folder
        path = path / f"{agent.session_id}.json"
    tmp = path.with_suffix(path.suffix + f".{int(time.time() * 1000)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        tmp.replace(path)
    except (OSError, ValueError) as e:   # ValueError: a NUL byte in the name
        with contextlib.suppress(OSError, ValueError):
            tmp.unlink(missing_ok=True)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        repl.say(f"error: cannot save to {path}: {reason}")
        return
    repl.say(f"[saved {len(agent.history)} messages to {path}]")


def _stats(repl: Repl, arg: str) -> None:
    s = repl.agent.stats
    repl.say(f"turns {s.turns}; input tokens {s.usage.total_input_tokens} "
             f"(cache read {s.usage.cache_read_tokens}, write {s.usage.cache_write_tokens}); "
             f"output {s.usage.output_tokens}; cache hit ratio {s.cache_hit_ratio:.0%}")


BUILTIN_COMMANDS = (
    Command("help", "/help", "list commands", _help),
    Command("model", "/model [name|auto]", "show or set the model", _model),
    Command("skills", "/skills [query]", "what the retriever chose and why, per layer", _skills),
    Command("memory", "/memory [query]", "relevant past sessions", _memory),
    Command("route", "/route", "the last routing decision, its reason and attempts", _route),
    Command("keys", "/keys", "API key pool status (fingerprints only)", _keys),
    Command("prompt", "/prompt", "the last request exactly as sent", _prompt),
    Command("stats", "/stats", "tokens and prompt-cache hit ratio of this session", _stats),
    Command("reset", "/reset", "record this chat and start a new one", _reset),
    Command("save", "/save [file]", "save the transcript as JSON", _save),
    Command("exit", "/exit", "end the chat (Ctrl-D too)", _exit),
)
