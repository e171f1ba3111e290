"""Test doubles that ship in the package, so agent authors can unit-test prompts offline.

``FakeProvider`` plays back scripted replies or errors and records every request, so a test can
assert on the exact prompt that would have been sent. ``FunctionProvider`` computes each reply.
A scripted reply may call tools (:func:`tool_calls`), so a tool loop can be tested offline::

    fake = FakeProvider([tool_calls(tool_call("get_weather", city="Paris")), "It is sunny."])

A plain string is streamed word by word; :func:`streamed` scripts the exact chunks a stream
delivers, and the error that cuts it mid-way (a dropped connection after "Hello wor")::

    fake = FakeProvider([streamed("Hello ", "wor", then=IncompleteResponse("dropped"))])

Requests the agent makes for itself -- summarising a finished session for episodic memory, or
folding old turns of a long chat into a "conversation so far" -- carry ``purpose == "summary"``
(on the prompt and on the :class:`RecordedRequest`). ``FakeProvider`` never answers them from the
turn script: it plays its own ``summaries`` script, and with none left it declines (raises
:class:`~hermes_core.errors.SummaryFailed`), so the agent falls back to its extractive summary.
``last_request`` is the last *turn* request; ``summary_requests`` lists the others.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from hermes_core.errors import SummaryFailed
from hermes_core.providers.base import CallOptions
from hermes_core.redact import clip
from hermes_core.tokens import count_tokens
from hermes_core.types import (
    Completion,
    Credential,
    Delta,
    MemoryFragment,
    Prompt,
    ToolCall,
    Usage,
)

_call_ids = itertools.count(1)


class _Unset:
    """A double built without ``default=``: it takes the suite's rule (:func:`strict_scripts`)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

#: Whether a double built without ``default=`` fails a request past its script. Set for a whole
#: suite by the pytest plugin (ini ``hermes_strict_scripts``); off, such a double answers "ok".
_STRICT = [False]


def strict_scripts(on: bool) -> bool:
    """Make every double built from now on without ``default=`` fail a request past its script
    (``on``) or answer it "ok"; returns the previous rule. Why a suite-wide switch: "ok" lets a
    test script only what it asserts on, and a suite that pins every round would otherwise pass
    ``default=None`` to each of its doubles."""
    before, _STRICT[0] = _STRICT[0], on
    return before


def run_out_default(given: Any) -> tuple[Any, str]:
    """A double's ``default`` and why running out is an error when it is None: the double's own
    ``default=None``, or the suite's ``hermes_strict_scripts``."""
    if given is UNSET:
        return (None, "hermes_strict_scripts = true in this suite's pytest config") \
            if _STRICT[0] else ("ok", "")
    return given, "default=None"


@dataclass(frozen=True, slots=True)
class Streamed:
    """A scripted reply delivered as exactly these ``chunks``, then cut by ``then`` if given.

    Why: a reply string is streamed word by word and an exception fails a call before its first
    word, so neither lets a test see what the user is shown when a stream breaks mid-way, or how
    a key or a Chinese sentence split across chunks is shown. Asked without streaming, the
    chunks are one reply (or ``then`` is raised)."""

    chunks: tuple[str, ...]
    then: BaseException | None = None
    tool_calls: tuple[ToolCall, ...] = ()


def streamed(*chunks: str, then: BaseException | None = None,
             calls: Iterable[ToolCall] = ()) -> Streamed:
    """A reply streamed as exactly ``chunks``, ended by the error ``then`` (a cut stream) or
    by the tool ``calls`` the model makes after its text."""
    return Streamed(tuple(chunks), then, tuple(calls))


Reply = str | Completion | Streamed | BaseException


def tool_call(name: str, /, arguments: dict[str, Any] | str | None = None, *,
              id: str | None = None, **kwargs: Any) -> ToolCall:
    """A call the scripted model makes: ``tool_call("add", a=1, b=2)`` or with raw JSON text
    (``tool_call("add", '{"a": "x"}')``, to test bad arguments). An argument called ``name`` is a
    keyword like any other (``tool_call("lookup", name="Oslo")``); one called ``id`` or
    ``arguments`` goes in the dict (``tool_call("get", {"id": 7})``): ``id=`` is the call's id.

    ``id`` is sent as given the first time the conversation meets it; a later call with an id the
    conversation already holds (the same ``id`` in another round or turn, twice in one round, or
    one a generated id took) is renamed ``<id>-2``, ``-3``, ... by the agent, as a real model's
    would be: Anthropic refuses one tool_use id twice. Assert on ``reply.tool_calls`` for the ids
    that were sent."""
    raw = arguments if isinstance(arguments, str) else json.dumps({**(arguments or {}), **kwargs})
    return ToolCall(id or f"call_{next(_call_ids)}", name, raw)


def tool_calls(*calls: ToolCall, text: str = "") -> Completion:
    """A scripted reply calling ``calls`` (in one assistant message, so they run in parallel)."""
    return Completion(text=text, model="", provider="", tool_calls=tuple(calls),
                      finish_reason="tool_calls")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One call a double received. Only the key's fingerprint is kept."""

    prompt: Prompt
    model: str
    key_fingerprint: str | None
    options: CallOptions
    streamed: bool
    purpose: str = "turn"

    @property
    def last_user_message(self) -> str:
        return _user_message(self.prompt)

    @property
    def system(self) -> str:
        """The system prompt sent (persona, context files, tool guidance: the cached part)."""
        return self.prompt.system

    @property
    def context(self) -> str:
        """The per-turn context sent before the last user message (clock, skill hint, memories)."""
        return self.prompt.context

    @property
    def skills_hinted(self) -> tuple[str, ...]:
        """Names of the skills this turn's context offered the model by name and description,
        best first: the retrieval hint (or every skill, retrieval off). Empty when none was, or
        when a trigger phrase loaded one whole (:attr:`skill_loaded`)."""
        turn = self.prompt.turn
        if turn is None or turn.retrieval is None or not turn.skills_block \
                or self.skill_loaded is not None:
            return ()
        return tuple(s.name for s in turn.retrieval.skills)

    @property
    def skill_loaded(self) -> str | None:
        """The skill whose SKILL.md this turn's context carried whole (a trigger phrase in the
        message loads it instead of hinting), or None."""
        turn = self.prompt.turn
        retrieval = turn.retrieval if turn is not None else None
        if turn is None or not turn.skills_block or retrieval is None \
                or retrieval.layer != "L1" or not retrieval.skills:
            return None
        return str(retrieval.skills[0].name)

    @property
    def memories_recalled(self) -> tuple[MemoryFragment, ...]:
        """The past sessions recalled into this turn's context (``.summary``, ``.tags``, ...)."""
        return self.prompt.turn.memories if self.prompt.turn is not None else ()


def _user_message(prompt: Prompt) -> str:
    """The last user message of ``prompt``: the one its turn answers."""
    return next((m.content for m in reversed(prompt.messages) if m.role == "user"), "")


#: Characters of the turn a run-out message quotes whole; a longer turn is shown by its head.
_QUOTE_AT = 80


def _quoted(text: str) -> str:
    """``text`` for a test's failure message: redacted, whole when short, else its head and its
    length (a 10 KB prompt quoted whole buries the message; a key pasted in it is a key)."""
    if len(text) <= _QUOTE_AT:
        return repr(clip(text, _QUOTE_AT))
    return f"{clip(text, _QUOTE_AT // 2)!r}... ({len(text)} characters)"


class _RecordingProvider:
    kind = "fake"
    requires_key = False  # doubles answer without a key

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return {"model": model, "system": prompt.system, "context": prompt.context,
                "messages": [{"role": m.role, "content": m.content} for m in prompt.messages]}

    def _reply(self, prompt: Prompt, model: str) -> Reply:
        raise NotImplementedError

    def _record(self, prompt: Prompt, model: str, cred: Credential | None, options: CallOptions,
                streamed: bool) -> Completion | Streamed:
        with self._lock:
            self.requests.append(RecordedRequest(prompt, model, cred.fingerprint if cred else None,
                                                 options, streamed, prompt.purpose))
            reply = self._reply(prompt, model)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Streamed):
            if streamed:
                return reply
            if reply.then is not None:
                raise reply.then
            return self._completion(prompt, model, Completion(
                "".join(reply.chunks), model, self.name, tool_calls=reply.tool_calls,
                finish_reason="tool_calls" if reply.tool_calls else "stop"))
        return self._completion(prompt, model, reply)

    def _completion(self, prompt: Prompt, model: str, reply: str | Completion) -> Completion:
        if isinstance(reply, Completion):   # model/provider left empty: the ones asked
            return replace(reply, model=reply.model or model, provider=reply.provider or self.name)
        return Completion(text=reply, model=model, provider=self.name, finish_reason="stop",
                          usage=_usage(prompt, reply))

    @property
    def last_request(self) -> RecordedRequest:
        """The last request for a user's turn (summary requests are in ``summary_requests``)."""
        turns = self.turn_requests
        if not turns:
            extra = (f" (only {len(self.requests)} summary request(s))" if self.requests else "")
            raise AssertionError(f"{self.name} received no turn request{extra}")
        return turns[-1]

    @property
    def turn_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.purpose == "turn"]

    @property
    def summary_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.purpose == "summary"]

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        done = self._record(prompt, model, credential, options, False)
        assert isinstance(done, Completion)   # a Streamed script is joined when not streaming
        return done

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion:
        return self.complete(prompt, model, credential, options)

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        done = self._record(prompt, model, credential, options, True)
        if isinstance(done, Streamed):
            yield from _deltas(done, _usage(prompt, "".join(done.chunks)))
            return
        words = done.text.split(" ")
        for i, w in enumerate(words):
            yield Delta(text=w if i == len(words) - 1 else w + " ")
        for call in done.tool_calls:
            yield Delta(tool_call=call)
        yield Delta(usage=done.usage, finish_reason=done.finish_reason)

    async def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                      options: CallOptions) -> AsyncIterator[Delta]:
        for d in self.stream(prompt, model, credential, options):
            yield d


def _usage(prompt: Prompt, reply: str) -> Usage:
    """Token counts a double reports: o200k_base counts of what was sent and of the reply."""
    sent = prompt.system + prompt.context + "".join(m.content for m in prompt.messages)
    return Usage(count_tokens(sent), count_tokens(reply))


def _deltas(script: Streamed, usage: Usage) -> Iterator[Delta]:
    for chunk in script.chunks:
        yield Delta(text=chunk)
    if script.then is not None:
        raise script.then
    for call in script.tool_calls:
        yield Delta(tool_call=call)
    yield Delta(usage=usage, finish_reason="tool_calls" if script.tool_calls else "stop")


class FakeProvider(_RecordingProvider):
    """Scripted replies in order (strings, Completions, or exceptions to raise).

    When the script runs out, ``default`` answers every further request ("ok" unless given), so
    a test that scripts only what it asserts on still runs; ``default=None`` makes one request
    too many an AssertionError naming the double, the request, the turn's message and why it is
    one, for a test that pins how many rounds a turn takes (a whole suite: the pytest plugin's
    ini ``hermes_strict_scripts = true`` makes None the default of every double). Summary
    requests (``prompt.purpose == "summary"``) are answered from ``summaries`` instead, in order;
    with none left they are declined.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, name: str = "fake",
                 default: str | None = UNSET, summaries: Iterable[Reply] = ()) -> None:
        super().__init__(name)
        self._script = list(replies)
        self._played = 0
        self._summaries = list(summaries)
        self.default: str | None
        self.default, self._strict_by = run_out_default(default)

    def add_summaries(self, *summaries: Reply) -> FakeProvider:
        self._summaries.extend(summaries)
        return self

    def add(self, *replies: Reply) -> FakeProvider:
        self._script.extend(replies)
        return self

    def _reply(self, prompt: Prompt, model: str) -> Reply:
        if prompt.purpose == "summary":
            if self._summaries:
                return self._summaries.pop(0)
            return SummaryFailed(f"FakeProvider {self.name!r} declines summary requests with no "
                                 "scripted summary (pass summaries=[...]); the agent falls back "
                                 "to its extractive summary")
        if self._script:
            self._played += 1
            return self._script.pop(0)
        if self.default is None:
            return AssertionError(
                f"FakeProvider {self.name!r}: no scripted reply left for turn request "
                f"{len(self.turn_requests)} (the turn {_quoted(_user_message(prompt))}); "
                f"{_replies(self._played)} scripted and all played ({self._strict_by}: a "
                "request past the script is an error): script more, or pass default='...' to "
                "answer every further request")
        return self.default


def _replies(n: int) -> str:
    return "1 reply was" if n == 1 else f"{n} replies were"


class FunctionProvider(_RecordingProvider):
    """Each reply computed by ``fn(prompt, model)`` (return a string, a Completion, a
    :func:`streamed` script, or raise)."""

    def __init__(self, fn: Callable[[Prompt, str], str | Completion | Streamed], *,
                 name: str = "function") -> None:
        super().__init__(name)
        self.fn = fn

    def _reply(self, prompt: Prompt, model: str) -> Reply:
        return self.fn(prompt, model)
