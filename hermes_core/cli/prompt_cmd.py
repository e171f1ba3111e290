"""``hermes-core prompt MESSAGE``: show exactly what would be sent, calling no provider.

The same PromptBuilder and the same provider ``render()`` the agent uses, so what this prints is
the payload a real turn would send (cache markers included), minus the network call. ``--json``
prints one object: ``system``, ``context``, ``messages``, ``prefix_sha256``, ``tokens``,
``token_counter``, ``compaction``, ``summary_index`` (the index of the message holding the
"conversation so far" summary, or null), ``cache``, ``request``, ``provider``, ``model``,
``sources`` and ``warnings``.

A ``--history`` over the model's history budget is compacted as a chat would compact it: the oldest
turns folded into a "conversation so far" message (extractively: previewing calls no model),
``compaction`` says how (budget, tokens, turns folded) and ``token_counter`` which counter measured
it (``exact:<encoding>`` for OpenAI models, else ``o200k_base``; a chat's ``calibrated:o200k_base``
once a reply was billed); ``tokens`` are that counter's counts (``sources`` give each file's
``o200k_base`` count, what its budget is measured in).
"""

from __future__ import annotations

import argparse
import json
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hermes_core.cli.argtypes import json_text, model_name, shorten, stdin_text, terminal_safe
from hermes_core.config import ProviderSettings, Settings, load_settings
from hermes_core.errors import HermesError, PromptInputError
from hermes_core.providers import build_provider
from hermes_core.providers.base import CallOptions
from hermes_core.redact import redact
from hermes_core.types import Message, Prompt, ToolCall, clean_text

MAX_HISTORY_BYTES = 20_000_000
ROLES = ("user", "assistant", "tool", "system")
DEFAULT_MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "prompt", help="show exactly what would be sent for MESSAGE (no provider is called)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        examples=("hermes-core prompt 'why does my pod crash?' --home examples/home",
                  "hermes-core prompt 帮我查快递 --provider anthropic --json",
                  "hermes-core prompt - --history chat.json < pasted.log"))
    p.add_argument("message", metavar="MESSAGE",
                   help="the user's message; '-' reads it from stdin (a pasted log over the "
                        "system's 128 KB argument limit)")
    p.add_argument("--home", metavar="DIR", help="HERMES_HOME holding SOUL.md, MEMORY.md, USER.md")
    p.add_argument("--config", metavar="FILE", help="config YAML (default: HOME/config.yaml)")
    p.add_argument("--provider", choices=("openai", "anthropic"),
                   help="wire format to render (default: from --model or the config)")
    p.add_argument("--model", type=model_name, metavar="M", help="model id (default: from the config)")
    p.add_argument("--history", metavar="FILE.json",
                   help='earlier messages: a JSON list of {"role", "content"} objects')
    p.add_argument("--session", metavar="ID", help="session id for the per-turn context line")
    p.add_argument("--cwd", metavar="DIR", help="where to look for HERMES.md / AGENTS.md "
                   "(default: the current directory)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run)


# --------------------------------------------------------------------------- history file

def _tool_calls(raw: Any, file: Path, where: str) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise PromptInputError(file, where, "'tool_calls' must be a list")
    out = []
    for j, c in enumerate(raw):
        if not isinstance(c, dict):
            raise PromptInputError(file, f"{where}.tool_calls[{j}]", "must be an object")
        inner = c.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else c
        name, args = fn.get("name"), fn.get("arguments", "{}")
        if not isinstance(name, str) or not name:
            raise PromptInputError(file, f"{where}.tool_calls[{j}]", "needs a 'name'")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        out.append(ToolCall(str(c.get("id") or f"call_{j}"), name, args))
    return tuple(out)


MAX_INT_DIGITS = 100


class _NumberTooLong(ValueError):
    def __init__(self, digits: int) -> None:
        self.digits = digits
        super().__init__(f"number of {digits} digits")


def _bounded_int(text: str) -> int:
    """json's integer hook: Python refuses to convert more than 4,300 digits (ValueError deep in
    the parser), and no field of a history needs more than a hundred."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _NumberTooLong(len(text.lstrip("-")))
    return int(text)


def load_history(path: Path) -> tuple[Message, ...]:
    """Messages from a JSON file: a list, or an object with a ``messages`` list."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
            raise PromptInputError(path, "", "not a regular file")  # a FIFO would block forever
        if st.st_size > MAX_HISTORY_BYTES:
            raise PromptInputError(path, "", f"larger than {MAX_HISTORY_BYTES} bytes")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise PromptInputError(path, "", "file not found") from None
    except IsADirectoryError:
        raise PromptInputError(path, "", "is a directory, not a JSON file") from None
    except OSError as e:
        raise PromptInputError(path, "", f"cannot read ({e.strerror or e})") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_int=_bounded_int)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise PromptInputError(path, f"line {line}", "not valid UTF-8") from None
    except json.JSONDecodeError as e:
        raise PromptInputError(path, f"line {e.lineno}, column {e.colno}",
                               f"invalid JSON ({e.msg})") from None
    except _NumberTooLong as e:
        raise PromptInputError(path, "", f"a number of {e.digits} digits (limit "
                               f"{MAX_INT_DIGITS}); not a chat history") from None
    except ValueError as e:  # any other number or text json cannot turn into a value
        raise PromptInputError(path, "", f"unreadable JSON ({str(e)[:80]})") from None
    except RecursionError:  # the parser recurses once per nesting level
        raise PromptInputError(path, "", "JSON nested too deeply to read") from None
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if not isinstance(data, list):
        raise PromptInputError(path, "", "expected a JSON list of messages "
                               '(or {"messages": [...]})')
    out: list[Message] = []
    for i, item in enumerate(data):
        where = f"[{i}]"
        if not isinstance(item, dict):
            raise PromptInputError(path, where, "each message must be an object")
        role = item.get("role")
        if role not in ROLES:
            raise PromptInputError(path, f"{where}.role", f"must be one of {', '.join(ROLES)} "
                                   f"(got {str(role)[:40]!r})")
        content = item.get("content", "")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise PromptInputError(path, f"{where}.content", "must be a string")
        call_id = item.get("tool_call_id")
        if role == "tool" and not isinstance(call_id, str):
            raise PromptInputError(path, f"{where}.tool_call_id", "a tool message needs one")
        out.append(Message(role, content, _tool_calls(item.get("tool_calls"), path, where),
                           call_id if isinstance(call_id, str) else None,
                           item.get("name") if isinstance(item.get("name"), str) else None))
    return tuple(out)


# --------------------------------------------------------------------------- provider choice

def _provider_entry(settings: Settings, kind: str) -> ProviderSettings:
    for p in sorted(settings.llm.routing.providers, key=lambda p: p.priority):
        if p.kind == kind:
            return p
    return ProviderSettings(name=kind)


def resolve_target(settings: Settings, provider: str | None, model: str | None) -> tuple[str, str]:
    """(provider kind, model): flags first, then the config, then built-in defaults."""
    if provider is None:
        if model:
            provider = "anthropic" if "claude" in model.lower() else "openai"
        else:
            configured = [p.kind for p in sorted(settings.llm.routing.providers,
                                                 key=lambda p: p.priority)
                          if p.kind in ("openai", "anthropic")]
            default = settings.llm.routing.default_model
            provider = configured[0] if configured else (
                "anthropic" if "claude" in default.lower() else "openai")
    if model is None:
        entry = _provider_entry(settings, provider)
        default = settings.llm.routing.default_model
        if entry.models:
            model = entry.models[0]
        elif ("claude" in default.lower()) == (provider == "anthropic"):
            model = default
        else:
            model = DEFAULT_MODELS[provider]
    return provider, model


# --------------------------------------------------------------------------- command

def _message_dict(m: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [asdict(c) for c in m.tool_calls]
    if m.tool_call_id:
        d["tool_call_id"] = m.tool_call_id
    if m.name:
        d["name"] = m.name
    return d


def render_request(prompt: Prompt, settings: Settings, provider: str, model: str) -> dict[str, Any]:
    """The exact payload the provider adapter would send for ``prompt``."""
    adapter = build_provider(_provider_entry(settings, provider))
    options = CallOptions(max_tokens=settings.llm.max_tokens, temperature=settings.llm.temperature,
                          timeout_s=settings.llm.request_timeout_s)
    return adapter.render(prompt, model, options)


def _skill_warnings(retriever: Any) -> list[dict[str, str]]:
    """The SKILL.md files (and JSONL lines) the catalog skipped, as warnings beside the context
    files': on stderr only, a script reading ``--json`` would see a skill silently missing."""
    if retriever is None:
        return []
    from hermes_core.retrieval.served import served_catalog

    return [{"kind": "warning", "file": i.path,
             "reason": f"line {i.line}: {i.reason}" if i.line else i.reason}
            for i in served_catalog(retriever).issues]


def run(args: argparse.Namespace) -> int:
    from hermes_core.agent.defaults import default_context_engine, default_retriever
    from hermes_core.agent.prompt.cache_plan import replan_cache
    from hermes_core.agent.prompt.compaction import HistoryCompactor
    from hermes_core.agent.prompt.token_count import choose_counter, encoding_for
    from hermes_core.agent.prompt_builder import PromptBuilder
    from hermes_core.agent.skill_tool import SKILL_VIEW, SkillSelection

    settings = load_settings(args.config, home=args.home)
    history = load_history(Path(args.history)) if args.history else ()
    provider, model = resolve_target(settings, args.provider, args.model)
    cwd = Path(args.cwd) if args.cwd else None
    if cwd is not None and not cwd.is_dir():
        raise PromptInputError(cwd, "", "--cwd is not a directory")
    # The same per-turn parts as a chat turn: skills picked for the message, and past sessions.
    # Read only: a preview never creates a memory database nor records a skill use, and leaves
    # the rewrite of rows stored before a key was configured to the next chat (it shows them
    # redacted); sessions.db and usage.sqlite3 are opened read-only.
    retriever = default_retriever(settings, warm=False, read_only=True)
    skills = SkillSelection(retriever, learn=False) if retriever is not None else None
    try:
        memory = default_context_engine(settings, create=False, read_only=True)
    except HermesError:
        memory = None
    builder = PromptBuilder(settings.home_path, settings, cwd=cwd, skill_selector=skills,
                            memory_source=memory)
    tools = (SKILL_VIEW,) if skills is not None and skills.has_skills() else ()
    # As Agent.prepare does: the context names a model only when one was asked for (with routing
    # on auto the model is not known while the prompt is built), then the cache plan is redone
    # for the provider and model that will be called.
    message = stdin_text() if args.message == "-" else args.message
    prompt = builder.build(clean_text(message), history, session_id=args.session, model=args.model,
                           provider_kind=provider, tools=tools,
                           encoding=encoding_for(model, provider))
    # no summariser: a preview never calls a model; the folds and the calibration the agent
    # kept in the home, read and never written: what the agent would send, not a fresh fold
    compactor = HistoryCompactor.in_home(settings, redact, read_only=True,
                                         sections=builder.section_tokens)
    prompt = compactor.fit(prompt, history, model=model, provider_kind=provider)
    report = compactor.last
    prompt = replan_cache(prompt, settings, provider_kind=provider, model=model)
    request = render_request(prompt, settings, provider, model)
    if args.json:
        out = {
            "provider": provider, "model": model,
            "system": prompt.system, "context": prompt.context,
            "messages": [_message_dict(m) for m in prompt.messages],
            "prefix_sha256": prompt.prefix_sha256, "tokens": dict(prompt.tokens),
            # compaction off: no report, but the count was still scaled by the kept ratio
            "token_counter": (report.counter if report is not None
                              else choose_counter(model, provider, compactor.ratio_for(model)).name),
            "compaction": report.as_dict() if report is not None else None,
            "summary_index": prompt.summary_index,
            "cache": {"system": prompt.cache.system,
                      "message_indices": list(prompt.cache.message_indices),
                      "ttl": prompt.cache.ttl, "prompt_cache_key": prompt.cache.prompt_cache_key},
            "request": request,
            "sources": [asdict(s) for s in builder.sources(encoding_for(model, provider))],
            "warnings": [asdict(e) for e in builder.events] + _skill_warnings(retriever),
        }
        print(redact(json_text(out, indent=2)))
        return 0
    plan = prompt.cache
    marks = ", ".join(filter(None, (
        "system marker" if plan.system and provider == "anthropic" else "",
        f"{len(plan.message_indices)} message breakpoint(s)" if plan.message_indices else "",
        f"prompt_cache_key {plan.prompt_cache_key}" if provider == "openai" and plan.prompt_cache_key
        else ""))) or "no cache markers"
    # terminal_safe: the files and the history are anyone's text; an escape sequence in them
    # would retitle the window, clear the screen or write the clipboard if printed raw
    print(f"# system  ({prompt.tokens['system']} tokens, prefix sha256 {prompt.prefix_sha256[:16]})")
    print(terminal_safe(redact(prompt.system)))
    print(f"\n# context  ({prompt.tokens['context']} tokens; sent before the last user message)")
    print(terminal_safe(redact(prompt.context)))
    if report is not None:
        print(f"\n# history  ({report.describe()})")
    print(f"\n# messages  ({len(prompt.messages)})")
    for m in prompt.messages:
        print(terminal_safe(redact(f"[{m.role}] {m.content}")))
    print(terminal_safe(f"\n# request  ({provider}, {shorten(model)}; {marks}, ttl {plan.ttl})"))
    print(terminal_safe(redact(json.dumps(request, ensure_ascii=False, indent=2))))
    return 0
