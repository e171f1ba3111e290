"""The prompt as it may leave the process: configured keys and key-shaped strings scrubbed.

A key reaches a prompt from many sides: typed or pasted into a turn (and kept in the in-memory
history for every later turn), a context file (MEMORY.md, HERMES.md), a recalled memory, a tool's
answer, the model's own text or tool-call arguments echoed back. Redacting each writer leaves the
ones not thought of; the call loop instead scrubs the prompt it is about to hand a provider
(:meth:`hermes_core.agent.resilience_run._Run.prompt_for`), the last step before any provider's
``render`` builds the request, so every wire format and every part of the prompt is covered. The
key is replaced by the redactor's marker (``[fingerprint]``), so the model sees that something
was there, and the caller can tell the user which key was withheld (:func:`withheld_keys`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from hermes_core.redact import redact_data
from hermes_core.types import Message, Prompt, ToolSpec, TurnContext, fingerprint


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


def scrub_prompt(prompt: Prompt, scrub: Callable[[str], str]) -> Prompt:
    """``prompt`` with ``scrub`` (the settings' redactor) applied to every text a provider would
    send: system, per-turn context, each message's content and tool-call arguments, tool
    definitions; and to the copies of the message the turn's decisions carry with it. The same
    object when nothing changed (the common case: no allocation)."""
    system, context = scrub(prompt.system), scrub(prompt.context)
    messages = tuple(_message(m, scrub) for m in prompt.messages)
    tools = tuple(_tool(t, scrub) for t in prompt.tools)
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
