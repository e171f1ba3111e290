"""Slash commands of the chat REPL: each explains one part of the last turn, or changes the session.

Every command reads what the Agent already holds (the last reply, route, retrieval, the pool's
status), so explaining a turn never re-runs it; ``/skills QUERY`` and ``/memory QUERY`` run a fresh
retrieval for a query of the user's choosing.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.atomic_write import write_atomic
from hermes_core.cli.argtypes import columns, shorten, terminal_safe
from hermes_core.redact import clip, looks_like_secret, redact
from hermes_core.types import unfit_model_name

if TYPE_CHECKING:
    from hermes_core.cli.repl import Repl


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Callable[[Repl, str], None]
    aliases: tuple[str, ...] = ()   # what people type out of habit from other REPLs (/quit, /q)

    @property
    def takes_argument(self) -> bool:
        """Whether its usage shows an argument (``/save [name]``); words given to one that takes
        none (``/exit please``) are refused, not silently dropped."""
        return " " in self.usage


#: Quote pairs a person wraps a command's argument in: a shell's, and those a Chinese input
#: method types (“ ” ‘ ’ 「 」 『 』).
QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u300c": "\u300d",
               "\u300e": "\u300f"}


def unquoted(arg: str) -> str:
    """``arg`` without one pair of quotes around the whole of it: ``/save "weekly notes"`` names
    ``weekly notes.json``, and ``/model 'gpt-4o'`` the model gpt-4o. A lone quote, or quotes
    inside the argument (``/memory "exact phrase" deploy``), are left as typed."""
    if len(arg) >= 2 and QUOTE_PAIRS.get(arg[0]) == arg[-1]:
        inner = arg[1:-1]
        if arg[0] not in inner and arg[-1] not in inner:
            return inner.strip()
    return arg


def _help(repl: Repl, arg: str) -> None:
    listed: list[Command] = []
    for cmd in repl.commands.values():   # an alias maps to its command: list each command once
        if cmd not in listed:
            listed.append(cmd)
    for cmd in listed:
        also = f" (also {', '.join('/' + a for a in cmd.aliases)})" if cmd.aliases else ""
        repl.say(f"  {cmd.usage:<24} {cmd.help}{also}")
    repl.say(f"  {'Ctrl-C':<24} cancel a reply or a slow command; twice on an empty prompt, "
             "leave")
    repl.say(f"  {'Ctrl-D':<24} leave, the chat recorded in memory (as /exit)")


def _exit(repl: Repl, arg: str) -> None:
    repl.running = False


def _reset(repl: Repl, arg: str) -> None:
    recorded = repl.agent.reset()
    repl.last_reply = None
    repl.say("[previous conversation recorded; a new one starts]" if recorded is not None
             else "[nothing to record; a new conversation starts]")


def looks_like_key(agent: Any, name: str) -> bool:
    """Whether a model name typed or passed is a key pasted in the wrong place (a configured key,
    or a provider key's known shape): a model name is sent in every request's body, to whichever
    provider the turn is routed to. Not the generic "long mixed-case token" test: model ids such
    as ``meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo`` pass it."""
    scrub: Callable[[str], str] = getattr(agent, "redact", redact)
    return scrub(name) != name


def _model(repl: Repl, arg: str) -> None:
    if arg and looks_like_key(repl.agent, arg):
        repl.say("error: /model: that looks like a key, not a model name; the model is unchanged")
        return
    if arg and unfit_model_name(arg):
        repl.say("error: /model: a model name has no spaces, control or invisible characters; "
                 "the model is unchanged")
        return
    if arg:
        repl.agent.requested_model = None if arg.lower() == "auto" else arg
    auto = repl.agent.requested_model is None
    repl.say(f"model: {shorten(repl.agent.model)}"
             + (" (auto: routing picks per turn)" if auto else " (fixed)"))
    if arg and not auto and (note := unknown_model_note(repl.agent, arg)):
        repl.say(note)


# what a dated or tagged release adds to a model's name: claude-sonnet-4-5-20250929,
# gpt-4o-2024-08-06, o3-mini-latest (not gpt-4o-mni, which only starts like gpt-4o)
_VERSION_TAIL = re.compile(r"[-@:_.]?(?:\d|latest|preview)")


def known_models(agent: Any) -> set[str]:
    """The model names the configuration or the price table mention."""
    r = agent.settings.llm.routing
    names = {r.default_model, r.fast_model, r.code_model, r.long_context_model,
             *(rule.model for rule in r.rules), *r.context_windows}
    for p in r.providers:
        names |= {*p.models, *p.equivalents, *p.equivalents.values()}
    return {n for n in names if n} | set(agent.prices.names())


def unknown_model_note(agent: Any, model: str) -> str | None:
    """A note for a model nothing knows (a typo would surface as a provider's 404 next turn);
    None for a configured or priced one. The model is still used as written: a provider may
    serve models hermes-core has never heard of."""
    known = known_models(agent)
    if model in known or any(model.startswith(k) and _VERSION_TAIL.match(model[len(k):]) for k in known):
        return None
    near = difflib.get_close_matches(model, sorted(known), n=1, cutoff=0.8)
    # the price table charges it at the longest priced name it starts with: say so, not "no price"
    priced = agent.prices.priced_as(model)
    how = (f"; it is sent as written, priced as '{shorten(priced)}'" if priced
           else " and it has no price; it is sent as written")
    return (f"  note: no provider lists '{shorten(model)}'{how}"
            + (f" (did you mean '{near[0]}'?)" if near else ""))


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


LAYER_WORDS = {"L1": "a trigger phrase in the message", "L2": "keyword match (bm25)",
               "L3": "synonyms", "L4": "meaning (embeddings)", "L5": "all layers combined",
               "none": "no skills are installed", "disabled": "retrieval is off (every skill listed)",
               # the fused layers, as RetrievalResult.answered names them
               "bm25": "keyword match (bm25)", "synonyms": "synonyms", "dense": "meaning (embeddings)",
               "usage": "past use"}
TIMING_WORDS = {"L1": "triggers", "L2": "bm25", "L3": "synonyms", "L4": "dense", "L5": "fusion",
                "L6": "past use", "history": "earlier turns"}
TIER_WORDS = {1: "exact phrase", 2: "Chinese characters in order", 3: "loose phrase"}


def _shares(contrib: Any, name: str) -> str:
    """Each layer's share of a skill's evidence, in percent ("synonyms 87%, bm25 13%")."""
    if not isinstance(contrib, dict) or not contrib:
        return ""
    per = contrib.get(name)
    if isinstance(per, dict):
        parts = {str(k): float(v) for k, v in per.items()}
    else:
        parts = {str(layer): float(by[name]) for layer, by in contrib.items()
                 if isinstance(by, dict) and name in by}
    total = sum(abs(v) for v in parts.values())
    if not total:
        return ""
    ranked = sorted(parts.items(), key=lambda kv: -abs(kv[1]))
    return ", ".join(f"{layer} {abs(v) / total:.0%}" for layer, v in ranked if abs(v) / total >= 0.005)


def table(rows: list[list[str]], header: list[str], *, right: tuple[int, ...] = ()) -> list[str]:
    """Rows as aligned columns (``right``: column indexes aligned right), two-space indented;
    widths are terminal columns, so Chinese skill names line up with English ones. Each cell is
    measured as it is shown: a control character escaped (``\\x1b`` takes four columns)."""
    rows, header = [[terminal_safe(c) for c in r] for r in rows], [terminal_safe(c) for c in header]
    widths = [max(columns(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        cells = [" " * (w - columns(c)) + c if i in right else c + " " * (w - columns(c))
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        return ("  " + "  ".join(cells)).rstrip()

    return [line(header), *(line(r) for r in rows)]


def show_retrieval(repl: Repl, result: Any) -> None:
    if result is None:
        repl.say("no skill retrieval yet (send a message, or /skills QUERY)")
        return
    layer = LAYER_WORDS.get(result.layer, result.layer)
    answered = [LAYER_WORDS.get(a, a) for a in (getattr(result, "answered", ()) or ())]
    repl.say(f"decided by {layer}" + (f"; evidence from {', '.join(answered)}" if answered else ""))
    if getattr(result, "gated", False):
        repl.say("no skill fits well enough, so none was suggested")
    trigger = getattr(result, "trigger", None)
    if trigger is not None:
        how = TIER_WORDS.get(getattr(trigger, "tier", 0), "a trigger")
        repl.say(f"the message contains \"{trigger.trigger}\" ({how}), which loads "
                 f"{trigger.skill} directly")
    scores = getattr(result, "scores", ()) or ()
    if result.skills:
        best = max((abs(x) for x in scores), default=0.0)
        rows = []
        for i, skill in enumerate(result.skills):
            rel = f"{abs(scores[i]) / best:.0%}" if i < len(scores) and best else "-"
            rows.append([str(i + 1), skill.name, rel,
                         _shares(getattr(result, "contributions", None), skill.name)])
        for text in table(rows, ["#", "skill", "match", "evidence by layer"], right=(0, 2)):
            repl.say(text)
        repl.say("  (match is relative to the best skill for this message)")
    else:
        cands = getattr(result, "candidates", ()) or ()
        if cands:
            repl.say("  closest, but below the bar: " + ", ".join(cands[:5]))
    timings = getattr(result, "timings_ms", None) or {}
    if timings:
        repl.say("  took " + ", ".join(f"{TIMING_WORDS.get(k, k)} {v:.1f} ms"
                                       for k, v in timings.items()))


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
    """``/memory``: the past sessions the last message recalled (what its prompt held, read from
    the turn like ``/skills``); ``/memory QUERY``: the ones a message of that text would recall,
    through the same guard (a session left out of a prompt as a possible injection is not listed
    as if the model saw it)."""
    agent = repl.agent
    engine = agent.context_engine
    if engine is None:
        repl.say("episodic memory is off (context_engine.enabled: false)")
        return
    if arg:
        found = list(engine.recall(arg, exclude_session=agent.session_id)[1])
        if not found:
            repl.say(f"no past session matches \"{clip(arg, 60)}\"")
            return
        what = "query"
    else:
        turn = getattr(agent, "last_turn", None)
        if turn is None:
            repl.say("usage: /memory QUERY (or send a message first)")
            return
        found = list(turn.memories)
        if not found:
            repl.say("the last message recalled no past session (/memory QUERY searches)")
            return
        what = "message"
    best = max(f.score for f in found) or 1.0
    rows = [[_age(f.age_days), f"{f.score / best:.0%}",
             terminal_safe(", ".join(readable_tags(f.tags))) or "-",
             terminal_safe(" ".join(f.summary.split())[:100])] for f in found]
    for text in table(rows, ["when", "match", "topics", "summary"], right=(1,)):
        repl.say(text)
    repl.say(f"  (match is relative to the best past session for this {what})")


def _age(days: float) -> str:
    if days < 1:
        return "today"
    if days < 2:
        return "yesterday"
    return f"{days:.0f} days ago" if days < 60 else f"{days / 30:.0f} months ago"


def readable_tags(tags: Any) -> list[str]:
    """Tags a person can read: a Chinese fragment that starts or ends on a function word (``我查``
    from 帮我查一下) or sits inside a longer tag is left out."""
    from hermes_core.tokenize import STOPWORDS, is_cjk

    out = []
    for t in tags or ():
        if t and is_cjk(t[0]) and (t[0] in STOPWORDS or t[-1] in STOPWORDS
                                   or any(t != u and t in u for u in tags)):
            continue
        out.append(t)
    return out


def _route(repl: Repl, arg: str) -> None:
    d = repl.agent.last_decision
    if d is None:
        repl.say("no route decided yet")
        return
    offline = repl.agent.offline_reason
    reason = d.reason
    if offline and reason.endswith(f"; {offline}"):
        reason = reason[: -len(offline) - 2]
    repl.say(f"model: {d.model}; reason: {reason}")
    if offline:
        repl.say("replies come from the offline provider (no API key)")
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
    if reply is not None:
        show_tool_calls(repl, reply)


def show_tool_calls(repl: Repl, reply: Any) -> None:
    """The turn's tool calls: name, status and time (arguments are never shown here)."""
    results = {r.call_id: r for r in getattr(reply, "tool_results", ())}
    for call in getattr(reply, "tool_calls", ()):
        r = results.get(call.id)
        if r is None:
            repl.say(f"  tool {call.name}: not run (the turn's tool-round limit was reached)")
        else:
            repl.say(f"  tool {call.name}: {r.status} ({r.duration_ms:.0f} ms)")


def _keys(repl: Repl, arg: str) -> None:
    rows = repl.agent.pool.status()
    if not rows:
        # the offline reason already says no key is configured and how to add one: say it once
        repl.say(repl.agent.offline_reason or "no API keys configured")
        return
    cells = [[k.provider, k.fingerprint,
              k.state + (f" for {k.blocked_for_s:.0f}s" if k.blocked_for_s > 0 else ""),
              str(k.requests_last_window), str(k.in_flight)] for k in rows]
    for text in table(cells, ["provider", "key", "state", "requests (window)", "in flight"],
                      right=(3, 4)):
        repl.say(text)


#: Longest ``/save NAME`` accepted, in characters (a longer name is a paste gone wrong, not a
#: name), and in UTF-8 bytes: file systems allow 255 for a name, ``.json`` may be added to it,
#: the atomic write's temp file is ``.NAME.XXXXXXXX.tmp`` beside it, and a Chinese character
#: takes three bytes.
MAX_SAVE_NAME = 100
MAX_SAVE_BYTES = 255 - len(".json") - len("..XXXXXXXX.tmp")


def transcript_name(arg: str, default: str, scrub: Callable[[str], str] = redact) -> str:
    """The file name ``/save NAME`` writes in the home's transcripts folder; ValueError (its
    message is the reason, never the name) when NAME is not a plain, short file name or holds a key.

    Why a name and not a path: a path could escape the home (``../``, ``/etc/...``, ``~/``), and a
    key pasted as NAME would be written into the file system in clear, where redacting the file's
    contents cannot reach it. ``scrub`` is the settings' redactor: a configured key of no
    recognisable shape is caught by what it is.
    """
    name = arg.strip()
    if not name:
        return default
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ValueError("the name holds control or invisible characters; choose another name")
    if "\ufffd" in name:   # what the REPL reads bytes of another encoding as: they are lost
        raise ValueError("the name holds bytes the input's encoding could not read (shown as "
                         "\ufffd); type it in UTF-8 or choose another name")
    if "/" in name or "\\" in name or name.startswith((".", "~")):
        raise ValueError("give a file name, not a path")
    if len(name) > MAX_SAVE_NAME:
        raise ValueError(f"the name is longer than {MAX_SAVE_NAME} characters")
    if len(name.encode("utf-8")) > MAX_SAVE_BYTES:
        raise ValueError(f"the name takes more than {MAX_SAVE_BYTES} bytes in UTF-8 (a Chinese "
                         "character takes three); choose a shorter name")
    if scrub(name) != name or any(looks_like_secret(p) for p in (name, *re.split(r"[\s.,;]+", name))):
        raise ValueError("that name looks like a key; choose another name (the transcript's "
                         "contents are redacted, a file name would not be)")
    return name if Path(name).suffix else f"{name}.json"


def _not_a_regular_file(path: Path) -> str | None:
    """What stands at ``path`` if it is there and not a regular file ("a pipe, socket or
    device", "a folder", "a link"), else None. Why refuse it: the atomic write renames its temp
    file over whatever has the name, so a named pipe someone reads, or a link, was replaced by a
    file without a word, and reading a pipe to check whose transcript it holds would block."""
    try:
        mode = path.lstat().st_mode
    except OSError:   # nothing there (or an unreadable folder: the write says so)
        return None
    if stat.S_ISREG(mode):
        return None
    return ("a link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a pipe, socket or device")


#: What is read of a file at the transcript's name to tell whose it is: :func:`_save` writes
#: ``session_id`` as the first key, so a transcript says whose it is in its first line; the rest
#: (a long chat's transcript, or gigabytes someone put there) is never read. The head is this
#: much more than the longest this chat's id can be written (a caller's id may be any length).
_HEAD_BYTES = 4096
_SESSION_HEAD = re.compile(rb'\A\s*\{\s*"session_id"\s*:\s*("(?:[^"\\\n]|\\.)*+")')


def _holds_another_chat(path: Path, session_id: str) -> bool:
    """Whether ``path`` is a file that is not this chat's transcript: another chat saved under
    the same name, or a file put there by hand. Replacing it would lose it without a word; the
    same chat saving again under its name just updates its own file. Opened without blocking
    and without following a link, then checked to be a regular file, so a pipe put there after
    :func:`_not_a_regular_file` looked is not read; only its head is read (``_HEAD_BYTES``): a
    file whose first key is not this chat's ``session_id`` is another's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        try:
            # at most 12 bytes a character however JSON writes it (an escaped surrogate pair)
            head = f.read(_HEAD_BYTES + 12 * len(session_id))
        except OSError:
            return True
    found = _SESSION_HEAD.match(head)
    if found is None:
        return True
    try:
        owner: object = json.loads(found.group(1))
    except ValueError:
        return True
    return owner != session_id


def _save(repl: Repl, arg: str) -> None:
    agent = repl.agent
    scrub: Callable[[str], str] = getattr(agent, "redact", redact)
    folder = agent.home / "transcripts"
    try:
        name = transcript_name(arg, f"{agent.session_id}.json", scrub)
    except ValueError as e:
        repl.say(f"error: not saved: {e}; transcripts are saved in {folder}")
        return
    path = folder / name
    if os.path.lexists(folder) and not folder.is_dir():   # a file, a link or a pipe in the way
        what = ("a file" if folder.is_file() else "nothing" if not folder.exists()
                else "a pipe, socket or device")
        what = f"a link to {what}" if folder.is_symlink() else what
        repl.say(f"error: not saved: {folder} is {what}, not a folder; move it away to save "
                 "transcripts there")
        return
    odd = _not_a_regular_file(path)
    if odd is not None:
        repl.say(f"error: not saved: {path} is {odd}, not a regular file; choose another name")
        return
    if _holds_another_chat(path, agent.session_id):
        repl.say(f"error: not saved: {path} holds another chat's transcript (or another file); "
                 "choose another name")
        return
    data = {"session_id": agent.session_id,     # first: _holds_another_chat reads it alone
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            # what the REPL showed: a key pasted into the chat was printed as [REDACTED]
            "messages": [{"role": m.role, "content": scrub(m.content)} for m in agent.history],
            "usage": {"cache_hit_ratio": round(agent.stats.cache_hit_ratio, 4),
                      "input_tokens": agent.stats.usage.total_input_tokens,
                      "output_tokens": agent.stats.usage.output_tokens}}
    try:
        write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))
    except OSError as e:
        repl.say(f"error: cannot save to {path}: {e.strerror or e}")
        return
    repl.say(f"[saved {len(agent.history)} messages to {path}]")


def _stats(repl: Repl, arg: str) -> None:
    s = repl.agent.stats
    guessed = getattr(s.usage, "estimated_tokens", 0)
    repl.say(f"turns {s.turns}; input tokens {s.usage.total_input_tokens} "
             f"(cache read {s.usage.cache_read_tokens}, write {s.usage.cache_write_tokens}); "
             f"output {s.usage.output_tokens}; cache hit ratio {s.cache_hit_ratio:.0%}"
             + (f"; {guessed} tokens estimated (no usage reported)" if guessed else ""))
    cost = getattr(s, "cost", None)
    if cost is not None:
        repl.say(f"cost {cost}; tool calls {getattr(s, 'tool_calls', 0)}")
    wasted = getattr(s, "wasted", None)
    if wasted is not None and (wasted.total_input_tokens or wasted.output_tokens):
        # counted by us where the provider reported none (a stream cut before its usage chunk)
        guessed = getattr(wasted, "estimated_tokens", 0)
        repl.say(f"of which wasted on failed turns and attempts: input "
                 f"{wasted.total_input_tokens}, output {wasted.output_tokens} tokens"
                 + (f" ({guessed} of them estimated)" if guessed else ""))
    compactor = getattr(repl.agent, "compactor", None)
    if compactor is not None and compactor.last is not None:
        repl.say(compactor.last.describe())
        billing = compactor.describe_billing()
        if billing:
            repl.say(billing)


BUILTIN_COMMANDS = (
    Command("help", "/help", "list commands", _help),
    Command("model", "/model [name|auto]", "show or set the model", _model),
    Command("skills", "/skills [query]", "what the retriever chose and why, per layer", _skills),
    Command("memory", "/memory [query]", "past sessions the last message recalled (or a query would)",
            _memory),
    Command("route", "/route", "the last routing decision, its reason and attempts", _route),
    Command("keys", "/keys", "API key pool status (fingerprints only)", _keys),
    Command("prompt", "/prompt", "the last request exactly as sent", _prompt),
    Command("stats", "/stats", "tokens, cost and prompt-cache savings of this session", _stats),
    Command("reset", "/reset", "record this chat and start a new one", _reset),
    Command("save", "/save [name]", "save the transcript as JSON in HOME/transcripts", _save),
    Command("exit", "/exit", "end the chat (Ctrl-D too)", _exit, aliases=("quit", "q")),
)
