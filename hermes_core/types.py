"""Frozen value types shared by every part of hermes_core.

Everything that crosses a module boundary is one of these immutable dataclasses, so a prompt, a
decision or a completion can be cached, compared and logged without defensive copies.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str = "{}"


ToolStatus = Literal["ok", "error", "invalid", "refused", "timeout", "unknown"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call returned to the model, and how long it took.

    ``status``: ``ok``; ``error`` (the tool raised); ``invalid`` (arguments failed validation);
    ``refused`` (the approval callback said no); ``timeout``; ``unknown`` (no such tool). Every one
    of them is answered to the model as the call's result; none ends the turn.
    """

    call_id: str
    name: str
    output: str
    status: ToolStatus = "ok"
    duration_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call, in provider-neutral form (JSON Schema parameters)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. ``tool_calls`` on assistant turns, ``tool_call_id`` on tool results."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    # An assistant tool round's reasoning blocks as its provider sent them (Anthropic's thinking,
    # with its signature, and redacted_thinking): the API wants them back, unchanged and first,
    # with the round's tool results. Kept only within the turn; other formats leave them out.
    reasoning: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # A paused assistant reply's whole content as its provider sent it (Anthropic's pause_turn:
    # server tool calls, their results, text, thinking), sent back in place of the message's
    # text, calls and reasoning so the model goes on with it; other formats send ``content``.
    # Kept only within the turn.
    replay: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # The code-execution container a paused reply ran in (Anthropic's ``container``): the request
    # that sends the reply back names it, or the rest of the turn runs without the container's
    # files and state. Kept only within the turn.
    container: str | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token accounting of one call; cache figures come from the provider's response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # the part of output_tokens a reasoning model spent thinking (billed as output; OpenAI's
    # completion_tokens_details.reasoning_tokens), shown, never added again
    reasoning_tokens: int = 0
    # False when the response carried no usage (a compatible server that sends none, a stream
    # cut before its usage chunk): the counts are not the provider's
    reported: bool = True
    # True when the provider reported none and hermes_core counted them itself (an OpenAI stream
    # cut before its usage chunk, a server that never sends usage); ``estimated_tokens`` says how
    # many of those counts are estimates (an output counted from what arrived, a prompt whose
    # framing is not documented) rather than exact
    counted: bool = False
    estimated_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.reported and other.reported,
            self.counted or other.counted,
            self.estimated_tokens + other.estimated_tokens,
        )

    @property
    def total_input_tokens(self) -> int:
        """Every prompt token, whether read from cache, written to it or neither.

        OpenAI counts cached tokens inside ``prompt_tokens``; Anthropic reports them apart. The
        providers normalise to the Anthropic shape (``input_tokens`` excludes cache reads/writes).
        """
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def cache_hit_ratio(self) -> float:
        total = self.total_input_tokens
        return self.cache_read_tokens / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Completion:
    """A finished model reply, normalised across providers."""

    text: str
    model: str
    provider: str
    usage: Usage = Usage()
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    request_id: str | None = None
    # The request exactly as sent (the call loop plans cache markers per candidate, so after a
    # failover to another provider kind it differs from what the caller passed in).
    prompt: Prompt | None = field(default=None, repr=False, compare=False)
    # the reply's reasoning blocks, to be sent back with its tool calls (see Message.reasoning)
    reasoning: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # a paused reply's content blocks, to be sent back to continue it (see Message.replay)
    paused: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    # the code-execution container the reply ran in (see Message.container)
    container: str | None = field(default=None, repr=False, compare=False)
    # ``text`` is Anthropic's structured output tool's input: the answer whole, so words before
    # it, in this reply or a paused one it goes on from, are no part of it
    from_output_tool: bool = False


@dataclass(frozen=True, slots=True)
class Delta:
    """One streamed piece: text, a completed tool call, a finished reasoning block, or (last) the
    usage and finish reason, with a paused reply's content blocks and its container."""

    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    reasoning: Mapping[str, Any] | None = None
    paused: tuple[Mapping[str, Any], ...] = ()
    container: str | None = None
    # the model the response says answered (the last piece): a dated name, or what an Azure
    # deployment runs; a whole reply is named after it too (``Completion.model``)
    model: str | None = None
    # a piece of a structured reply the provider holds until whole (its JSON so far): progress
    # to show, not the reply's text; a stream cut after drafts is still asked again unseen
    draft: str = ""
    # the drafts shown so far are void: the attempt that sent them failed and the call loop
    # tries again, or the provider found them no part of the answer (words before a tool call
    # begins: a tool round's, or before Anthropic's output tool; the output tool's input before
    # an author's tool call); the next drafts start anew
    redraft: bool = False
    # ``text`` is the structured output tool's input (see ``Completion.from_output_tool``)
    from_output_tool: bool = False
    # the provider's id of the request (the last piece): its request-id header, else the id of
    # the message the stream carries, as a whole reply's ``Completion.request_id`` is
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class CachePlan:
    """Where prompt-caching markers go.

    ``system`` marks the stable prefix; ``message_indices`` are messages (by index into
    ``Prompt.messages``) that get a breakpoint on their last content block. Anthropic allows
    at most four breakpoints in total.
    """

    system: bool = False
    message_indices: tuple[int, ...] = ()
    ttl: Literal["5m", "1h"] = "5m"
    prompt_cache_key: str | None = None


@lru_cache(maxsize=64)
def _sha256_hex(text: str) -> str:
    """sha256 of a system prompt, remembered: the call loop plans cache markers with it on every
    request, and the same few system texts (tens of KB each) come back turn after turn."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Prompt:
    """What one turn sends: the cache-stable system text, the per-turn context, the messages.

    ``system`` never holds per-turn data, so its hash (``prefix_sha256``) is stable across
    turns and models until a source file changes. ``context`` travels as a leading block of the
    last user message, after the cache breakpoint.

    ``purpose`` says what the request is for: ``"turn"`` (a user's turn) or ``"summary"`` (the
    agent summarising a conversation for itself), so test doubles and logs can tell them apart.
    ``summary_index`` is the message holding the "conversation so far" summary of compacted
    history, if any: the cache planner gives it a breakpoint, since everything up to it stays
    byte-identical until the next compaction.
    """

    system: str
    messages: tuple[Message, ...]
    context: str = ""
    tools: tuple[ToolSpec, ...] = ()
    cache: CachePlan = CachePlan()
    tokens: Mapping[str, int] = field(default_factory=dict)
    purpose: Literal["turn", "summary"] = "turn"
    summary_index: int | None = None
    turn: TurnContext | None = None   # the per-turn decisions behind ``context`` (not sent)

    @property
    def prefix_sha256(self) -> str:
        return _sha256_hex(self.system)


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill from a SKILL.md file or a JSONL catalog line."""

    name: str
    description: str
    body: str = ""
    triggers: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    category: str | None = None
    path: str | None = None
    # agentskills front matter: the operating systems it is for (empty: all), free-form metadata,
    # the tools it expects and its licence; read and shown, never enforced by hermes_core.
    platforms: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    allowed_tools: tuple[str, ...] = ()
    license: str | None = None
    # content_hash, once asked: a refresh reads it for every skill in four places (the index's
    # change check, two calibration keys, the usage layer's pruning)
    _content_hash: str | None = field(default=None, init=False, repr=False, compare=False, hash=False)

    @property
    def id(self) -> str:
        """Deterministic id: stable across restarts and machines."""
        return hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:16]

    @property
    def content_hash(self) -> str:
        if self._content_hash is not None:
            return self._content_hash
        h = hashlib.sha256()
        for part in (self.name, self.description, self.body, *self.triggers, "\x00",
                     *self.synonyms, "\x00", *self.tags, self.category or ""):
            h.update(part.encode("utf-8"))
            h.update(b"\x1f")
        digest = h.hexdigest()
        object.__setattr__(self, "_content_hash", digest)   # frozen: every field it reads is too
        return digest

    def at(self, path: str | None) -> Skill:
        """This skill read at another place (a JSONL line that moved): its content hash, once
        worked out, comes along, since the path is no part of it."""
        values = list(_skill_values(self))   # half of dataclasses.replace's time: an add at the
        values[_SKILL_PATH] = path            # top of a 20,000-line catalog moves every line
        moved = Skill(*values)
        object.__setattr__(moved, "_content_hash", self._content_hash)
        return moved


_SKILL_FIELDS = tuple(f.name for f in dataclasses.fields(Skill) if f.init)   # in __init__'s order
_skill_values = operator.attrgetter(*_SKILL_FIELDS)
_SKILL_PATH = _SKILL_FIELDS.index("path")


@dataclass(frozen=True, slots=True)
class MemoryFragment:
    """A past session recalled from episodic memory."""

    session_id: str
    summary: str
    tags: tuple[str, ...]
    score: float
    age_days: float


#: A follow-up with fewer content words than this (or a CJK one shorter than FOLLOW_UP_CJK_CHARS)
#: says too little on its own ("and in Chinese?", "why?"): it borrows the previous user message.
FOLLOW_UP_WORDS = 3
FOLLOW_UP_CJK_CHARS = 6


@dataclass(frozen=True, slots=True)
class RetrievalQuery:
    """What a turn asks retrieval (skills and episodic memory) about: the message, and apart from
    it the recent turns.

    Every layer scores ``message``. ``history`` (most recent first, each clipped) is a separate,
    lighter signal: it breaks ties, and it stands in only when the message alone is ambiguous (a
    short follow-up such as "and in Chinese?"), so an earlier topic never outvotes a message that
    clearly asks about something else.
    """

    message: str
    history: tuple[str, ...] = ()
    previous_users: tuple[str, ...] = ()   # earlier user messages, most recent first

    @property
    def previous_user(self) -> str:
        """The last user message before this one ("" on the first turn)."""
        return self.previous_users[0] if self.previous_users else ""

    @classmethod
    def of(cls, message: str, history: Sequence[Message] = (), *, turns: int = 5,
           clip: int = 300) -> RetrievalQuery:
        """The query for ``message`` after ``history``: the last ``turns`` user turns and the
        assistant replies that followed them, most recent first, each clipped to ``clip`` chars."""
        recent: list[str] = []
        users: list[str] = []
        seen_users = 0
        for m in reversed(history):
            if m.role not in ("user", "assistant") or not isinstance(m.content, str):
                continue
            content = m.content.strip()
            if seen_users >= turns:
                break
            if not content:
                continue
            recent.append(content[:clip])
            if m.role == "user":
                seen_users += 1
                if content != message.strip():
                    users.append(content)
        return cls(message, tuple(recent), tuple(users))

    @property
    def text(self) -> str:
        """The message and the history as one text (what an old-style selector received)."""
        return "\n".join((self.message, self.message, *self.history))

    @property
    def history_text(self) -> str:
        return "\n".join(self.history)


@dataclass(frozen=True, slots=True)
class TurnContext:
    """Per-turn additions that live after the cache breakpoint, and the decisions behind them.

    ``retrieval`` (the skill retriever's result, or None) and ``memories`` (the past sessions
    recalled) are what ``/skills``, ``/memory`` and ``Reply.retrieval`` report: values carried
    with the prompt, not state left behind on the selector.
    """

    skills_block: str = ""
    memories_block: str = ""
    clock_line: str = ""
    extra: tuple[str, ...] = ()
    retrieval: Any = None
    memories: tuple[MemoryFragment, ...] = ()
    query: RetrievalQuery | None = None
    #: the encoding the context files and recalled sessions were cut to their budgets in
    encoding: str = "o200k_base"

    def render(self) -> str:
        parts = [p for p in (self.clock_line, self.skills_block, self.memories_block, *self.extra) if p]
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One (provider, model) pair the call loop may try."""

    provider: str
    model: str


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """The router's answer: candidates in the order to try, and why."""

    model: str
    candidates: tuple[Candidate, ...]
    reason: str
    features: Mapping[str, Any] = field(default_factory=dict)


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD.

    Python reads bytes that are not UTF-8 (a Latin-1 file on stdin, argv from another locale) as
    lone surrogates. Those cannot be encoded, so one in a message would fail every request body
    that carries the history, and the session record at the end of the chat.
    """
    if text.isascii():
        return text
    try:   # only surrogates fail to encode: checked in C, not character by character in Python
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def fingerprint(secret: str) -> str:
    """A short, non-reversible tag for a secret: safe to log, stable to correlate."""
    return "key-" + hashlib.sha256(secret.encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True, slots=True)
class Credential:
    """An API key with its limits. ``repr``/``str`` show only the fingerprint, never the key."""

    provider: str
    secret: str = field(repr=False)
    weight: float = 1.0
    max_rpm: int | None = None
    max_tpm: int | None = None
    endpoint: str | None = None
    # where the key was configured (``OPENAI_API_KEY``, ``credentials.openai.keys[0]``): what a
    # person fixes when the provider rejects it; never the key itself
    source: str = field(default="", compare=False)
    #: ``fingerprint(secret)``, hashed once: the call loop reads it several times per request
    #: (the client cache's key, the pool's bookkeeping, the audit line), a SHA-256 each time
    fingerprint: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fingerprint", fingerprint(self.secret))

    def __repr__(self) -> str:
        return f"Credential(provider={self.provider!r}, fingerprint={self.fingerprint!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # pickling keeps the secret but never logs it
        return (Credential, (self.provider, self.secret, self.weight, self.max_rpm,
                             self.max_tpm, self.endpoint, self.source))


def unfit_model_name(name: str) -> bool:
    """A name holding a space, a control, format (bidi, zero-width) or unassigned character: no
    provider names a model so, and sent as written it came back as a 404 a turn later, shown
    escaped as something the person never typed (a pasted escape sequence, an invisible space).
    Letters of any script are fine: a local deployment may name its model in Chinese."""
    return any(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Cn")
               for ch in name)
