"""The prompt as it may leave the process: configured keys and key-shaped strings scrubbed.

A key reaches a prompt from many sides: typed or pasted into a turn (and kept in the in-memory
history for every later turn), a context file (MEMORY.md, HERMES.md), a recalled memory, a tool's
answer, the model's own text or tool-call arguments echoed back. Redacting each writer leaves the
ones not thought of; the call loop instead scrubs the prompt it is about to hand a provider
(:meth:`hermes_core.agent.resilience_run._Run.prompt_for`), the last step before any provider's
``render`` builds the request, so every wire format and every part of the prompt is covered. The
key is replaced by the redactor's marker (``[fingerprint]``), so the model sees that something
was there, and the caller can tell the user which key was withheld (:func:`withheld_keys`).

**Once per text.** Most of a prompt is the same from turn to turn: the system prompt (until a
context file changes) and every earlier message of the history. Scrubbing all of it each turn
cost ~3 ms of a production turn (the ~19 k-character system, 80 messages). A :class:`ScrubMemo`
(the call loop keeps one) remembers what the redactor made of those texts, so each is scrubbed
once; the tool definitions are scrubbed once while the tool list (compared spec by spec) and
the secrets stay; the turn's own parts (the per-turn context, the new message, the decisions'
copies) are scrubbed every time. The result is the same text for text: a memo entry
is a whole part, exactly what was scrubbed whole before, and the memo is dropped when the
redactor or the process-wide registered secrets change (:func:`~hermes_core.redact.registered_generation`).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from hermes_core.forked import child_lock
from hermes_core.redact import redact_data, registered_generation
from hermes_core.types import Message, Prompt, ToolSpec, TurnContext, fingerprint


class ScrubMemo:
    """What a scrub made of the texts a prompt repeats each turn (the system prompt, the
    history's messages): each is scrubbed once. Good for one scrub and one state of the
    registered secrets; emptied when either changes, or when it holds ``max_chars`` characters
    (a long session's history is let go of, then scrubbed once more). Thread-safe."""

    def __init__(self, max_chars: int = 4_000_000) -> None:
        self.max_chars = max_chars
        self.misses = 0      # texts actually scrubbed
        self._done: dict[str, str] = {}
        self._chars = 0
        self._for: tuple[object, int] | None = None
        #: (scrub, generation, a deep copy of the tools as given, each one as scrubbed or None
        #: where the scrub left it as it was): the last tool list's result
        self._tools: tuple[object, int, tuple[ToolSpec, ...],
                           tuple[ToolSpec | None, ...]] | None = None
        # free in a forked child (one a thread held at the fork hung the child's first use)
        self._lock = child_lock(threading.Lock())

    def tools(self, tools: tuple[ToolSpec, ...], scrub: Callable[[str], str]
              ) -> tuple[ToolSpec, ...]:
        """``tools`` with their descriptions and parameters scrubbed, done again only when the
        list (spec by spec: a turn builds a new tuple of the same specs), ``scrub`` or the
        registered secrets changed. The result is kept under the generation read before the
        scrub, so one made while a secret was being registered is never used after it.

        The list is compared by value against a deep copy taken when it was scrubbed: a spec's
        parameters are a mutable mapping, and the same spec object changed in place since (a
        key's text put in a description) is a new list. A spec the scrub left alone is handed
        on as the one given now, never as a remembered object someone may have changed."""
        generation = registered_generation()
        with self._lock:
            held = self._tools
        if (held is not None and held[0] is scrub and held[1] == generation
                and held[2] == tools):
            return tuple(t if c is None else c for t, c in zip(tools, held[3], strict=True))
        try:
            snapshot = copy.deepcopy(tools)
        except Exception:   # an object in a schema that refuses a copy: scrubbed, not remembered
            with self._lock:
                self.misses += len(tools)
            return tuple(_tool(t, scrub) for t in tools)
        clean = tuple(_tool(t, scrub) for t in snapshot)
        with self._lock:
            self.misses += len(tools)
            self._tools = (scrub, generation, snapshot,
                           tuple(None if c is t else c for t, c in zip(snapshot, clean, strict=True)))
        return tuple(t if c is s else c for t, s, c in zip(tools, snapshot, clean, strict=True))

    def bind(self, scrub: Callable[[str], str]) -> Callable[[str], str]:
        """``scrub``, remembering: call it on the stable parts only (a per-turn text would take
        room and never be asked for again). A bind whose generation is older than the memo's
        (it was read before a registration another turn's bind saw) gets ``scrub`` itself: made
        the memo's again, it would let a scrub begun before the registration store its text for
        the later turns. Each bind reads and stores only the texts of its own state."""
        generation = registered_generation()
        with self._lock:
            if self._for is not None and self._for[0] is scrub and self._for[1] > generation:
                return scrub
            if self._for != (scrub, generation):
                self._done, self._chars, self._for = {}, 0, (scrub, generation)
            done = self._done

        def scrub_once(text: str) -> str:
            hit = done.get(text)
            if hit is not None:
                return hit
            clean = scrub(text)
            with self._lock:
                self.misses += 1
                if self._done is not done:   # the secrets moved meanwhile: keep nothing
                    return clean
                if self._chars + len(text) > self.max_chars:
                    done.clear()
                    self._chars = 0
                done[text] = clean
                self._chars += len(text)
            return clean

        return scrub_once


def _message(m: Message, scrub: Callable[[str], str]) -> Message:
    content = scrub(m.content)
    calls = tuple(c if (a := scrub(c.arguments)) == c.arguments else replace(c, arguments=a)
                  for c in m.tool_calls)
    if content == m.content and all(a is b for a, b in zip(calls, m.tool_calls, strict=True)):
        return m
    return replace(m, content=content, tool_calls=calls)


def _tool(t: ToolSpec, scrub: Callable[[str], str]) -> ToolSpec:
    description = scrub(t.description)
    parameters = redact_data(dict(t.parameters), getattr(scrub, "secrets", ()))
    if description == t.description and parameters == dict(t.parameters):
        return t
    return replace(t, description=description, parameters=parameters)


def scrub_format(response_format: Mapping[str, Any], scrub: Callable[[str], str]
                 ) -> Mapping[str, Any]:
    """A structured request's ``response_format`` (an output model's docstring and schema)
    scrubbed as the tool definitions are: it leaves beside them, as OpenAI's ``response_format``
    or Anthropic's output tool, and its descriptions are an author's words as much as a tool's.
    The same object when nothing changed."""
    clean: dict[str, Any] = {k: scrub(v) if k == "description" and isinstance(v, str) else v
                             for k, v in response_format.items()}
    schema = clean.get("schema")
    if isinstance(schema, Mapping):
        clean["schema"] = redact_data(dict(schema), getattr(scrub, "secrets", ()))
    return response_format if clean == dict(response_format) else clean


def _turn(turn: TurnContext | None, scrub: Callable[[str], str]) -> TurnContext | None:
    """The turn's decisions with their copies of the message scrubbed: not sent, but carried with
    the prompt to the provider (a test double records it, and pytest prints that record when an
    assertion on it fails) and shown by ``Reply.prompt`` and ``Reply.retrieval``."""
    if turn is None:
        return None
    changed: dict[str, object] = {
        name: new for name in ("skills_block", "memories_block", "clock_line")
        if (new := scrub(old := getattr(turn, name))) != old}
    extra = tuple(scrub(e) for e in turn.extra)
    if extra != turn.extra:
        changed["extra"] = extra
    found = turn.retrieval
    if found is not None and hasattr(found, "query"):
        query, translation = scrub(found.query), scrub(getattr(found, "translation", ""))
        if (query, translation) != (found.query, getattr(found, "translation", "")):
            changed["retrieval"] = replace(found, query=query, translation=translation)
    asked = turn.query
    if asked is not None:
        clean = replace(asked, message=scrub(asked.message),
                        history=tuple(scrub(h) for h in asked.history),
                        previous_users=tuple(scrub(u) for u in asked.previous_users))
        if clean != asked:
            changed["query"] = clean
    return replace(turn, **changed) if changed else turn  # type: ignore[arg-type]


def scrub_prompt(prompt: Prompt, scrub: Callable[[str], str],
                 memo: ScrubMemo | None = None) -> Prompt:
    """``prompt`` with ``scrub`` (the settings' redactor) applied to every text a provider would
    send: system, per-turn context, each message's content and tool-call arguments, tool
    definitions; and to the copies of the message the turn's decisions carry with it. The same
    object when nothing changed (the common case: no allocation). With ``memo``, the system
    prompt and the messages before the last are scrubbed through it (once each), and the tool
    definitions once while they and the secrets stay (:meth:`ScrubMemo.tools`)."""
    stable = scrub if memo is None else memo.bind(scrub)
    system, context = stable(prompt.system), scrub(prompt.context)
    last = len(prompt.messages) - 1
    messages = tuple(_message(m, stable if i < last else scrub)
                     for i, m in enumerate(prompt.messages))
    tools = (tuple(_tool(t, scrub) for t in prompt.tools) if memo is None
             else memo.tools(prompt.tools, scrub))
    turn = _turn(prompt.turn, scrub)
    if (system == prompt.system and context == prompt.context and turn is prompt.turn
            and all(a is b for a, b in zip(messages, prompt.messages, strict=True))
            and all(a is b for a, b in zip(tools, prompt.tools, strict=True))):
        return prompt
    return replace(prompt, system=system, context=context, messages=messages, tools=tools,
                   turn=turn)


def withheld_keys(sent: Prompt, secrets: Iterable[str]) -> tuple[str, ...]:
    """Fingerprints of the configured ``secrets`` whose marker is in ``sent`` (a scrubbed
    prompt): the keys the model saw as ``[fingerprint]`` instead. Never the keys themselves."""
    texts = [sent.system, sent.context]
    for m in sent.messages:
        texts.append(m.content)
        texts.extend(c.arguments for c in m.tool_calls)
    found = []
    for secret in secrets:
        fp = fingerprint(secret)
        if any(f"[{fp}]" in t for t in texts):
            found.append(fp)
    return tuple(dict.fromkeys(found))
