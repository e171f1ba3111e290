"""Anthropic messages over the official SDK.

The system prompt is sent as content blocks so a ``cache_control`` marker can sit on the stable
prefix; the per-turn context is the leading text block of the last user message, after the
breakpoint, or, in a tool round's follow-up, the text block after its tool answers (see
:func:`render_anthropic`). At most four breakpoints are placed (Anthropic's limit).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from hermes_core.errors import IncompleteResponse, ProviderError, ServerError
from hermes_core.finite_json import nulled
from hermes_core.providers._sdk import (
    SDKProvider,
    a_page,
    completion_deltas,
    delta_completion,
    event_deltas,
)
from hermes_core.providers.base import (
    STRUCTURED_OUTPUT_TOOL,
    THINKING_BUDGETS,
    CallOptions,
)
from hermes_core.providers.counts import not_an_object, token_count
from hermes_core.providers.deadline import Answered
from hermes_core.providers.lessons import RefusalMemory
from hermes_core.providers.observed import bill
from hermes_core.providers.refused import bad_request
from hermes_core.providers.unreported import block_texts, messages_usage
from hermes_core.request_ids import naming, shown_id
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import Completion, Credential, Delta, Message, Prompt, ToolCall, Usage

log = logging.getLogger(__name__)

MAX_BREAKPOINTS = 4
#: ``reasoning_effort`` as adaptive thinking's ``output_config.effort`` (no "minimal" there).
ADAPTIVE_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
#: The reasoning blocks a reply carries and its tool round must send back as they came.
THINKING_BLOCKS = ("thinking", "redacted_thinking")
#: The stop reason of a turn the API paused (server tools): it goes on when the paused content is
#: sent back as it came.
PAUSED = "pause_turn"
#: The lesson (:mod:`.lessons`) of a model that refused budgeted thinking.
ADAPTIVE = "thinking:adaptive"


def _cache_control(ttl: str) -> dict[str, str]:
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def _blocks(m: Message) -> list[dict[str, Any]]:
    """The content blocks of one message; none for a message with no text and no tool calls.

    The API rejects text blocks that are empty or whitespace only, and an assistant reply can be
    empty (an end_turn with no content, a turn that ended on tool calls), so such text is left out.
    """
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}]
    if m.role == "assistant" and m.replay:   # a paused reply goes back exactly as it came
        return [nulled(dict(b)) for b in m.replay]   # but for a NaN the SDK cannot write
    blocks: list[dict[str, Any]] = [dict(b) for b in m.reasoning] if m.role == "assistant" else []
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        try:
            # a model's or a proxy's NaN is taken by Python's parser and refused by the SDK's
            # writer (``allow_nan=False``): the turn ended with a bare ValueError
            args = nulled(json.loads(c.arguments or "{}"))
        except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, nested too deep
            args = {}
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name,
                       "input": args if isinstance(args, dict) else {}})
    return blocks


def render_anthropic(prompt: Prompt, model: str, options: CallOptions, *,
                     adaptive: bool = False) -> dict[str, Any]:
    """The exact messages.create payload for ``prompt``; pure. ``adaptive``: the model takes
    thinking as ``adaptive`` with an effort, not as a budget (it refused one).

    A follow-up (the prompt ends on tool answers) carries the per-turn context after them, not
    before the user's message: history keeps that message without the context, so a context
    leading it made the next turn's request differ from there on, and the tool answers the
    round's breakpoint had cached were written to the cache again."""
    plan = prompt.cache
    budget = MAX_BREAKPOINTS
    system_block: dict[str, Any] = {"type": "text", "text": prompt.system}
    has_system = bool(prompt.system.strip())   # an empty text block is a 400: send no system
    if plan.system and budget and has_system:
        system_block["cache_control"] = _cache_control(plan.ttl)
        budget -= 1
    marked = set(sorted(plan.message_indices, reverse=True)[:budget])

    messages: list[dict[str, Any]] = []
    last_user = max((i for i, m in enumerate(prompt.messages) if m.role == "user"), default=None)
    after_tools = bool(prompt.messages) and prompt.messages[-1].role == "tool"
    for i, m in enumerate(prompt.messages):
        role = "assistant" if m.role == "assistant" else "user"  # tool results travel as user
        blocks = _blocks(m)
        if i == last_user and prompt.context and not after_tools:
            blocks = [{"type": "text", "text": prompt.context}, *blocks]
        if i in marked:
            # An empty message adds nothing to the prefix: the breakpoint goes on the block before.
            target = blocks if blocks else (messages[-1]["content"] if messages else [])
            if target:
                target[-1] = {**target[-1], "cache_control": _cache_control(plan.ttl)}
        if not blocks:
            continue   # the neighbours merge below, so the roles still alternate
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)   # the API wants alternating roles
        else:
            messages.append({"role": role, "content": blocks})
    if after_tools and prompt.context:
        messages[-1]["content"].append({"type": "text", "text": prompt.context})
    elif last_user is None and prompt.context:
        messages.append({"role": "user", "content": [{"type": "text", "text": prompt.context}]})

    payload: dict[str, Any] = {"model": model, "max_tokens": options.max_tokens}
    if has_system:
        payload["system"] = [system_block]
    payload["messages"] = messages
    container = next((m.container for m in reversed(prompt.messages) if m.container), None)
    if container is not None:   # a paused code-execution turn goes on in its container
        payload["container"] = container
    if options.temperature is not None:
        payload["temperature"] = min(options.temperature, 1.0)
    tools = [{"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
             for t in prompt.tools]
    rf = options.response_format
    if rf:
        tools.append({"name": STRUCTURED_OUTPUT_TOOL,
                      "description": rf.get("description") or "Give the final answer.",
                      "input_schema": dict(rf["schema"])})
    choice = _tool_choice(options.tool_choice, forced_output=bool(rf), other_tools=bool(prompt.tools))
    if not tools and (tools := _called_before(prompt.messages)):
        choice = {"type": "none"}   # declared for the history's blocks, never to be called
    if tools:
        payload["tools"] = tools
    if choice is not None:
        payload["tool_choice"] = choice
    if options.stop:
        payload["stop_sequences"] = list(options.stop)
    thinking = thinking_budget(options, model)
    # Extended thinking: not with a forced tool (the API refuses the pair), and on a tool round's
    # follow-up only when the round's thinking blocks go back with it (the API requires them
    # first in the assistant message; a round answered by another provider kind has none).
    replayed = _replays_thinking(prompt.messages)
    if thinking and replayed is not False and (choice is None or choice["type"] in ("auto", "none")):
        payload["thinking"] = {"type": "enabled", "budget_tokens": thinking}
        if adaptive:
            payload["thinking"] = {"type": "adaptive"}
            if options.reasoning_effort:
                payload["output_config"] = {"effort": ADAPTIVE_EFFORT[options.reasoning_effort]}
        payload["max_tokens"] = options.max_tokens + thinking   # thinking counts toward it
        payload.pop("temperature", None)   # thinking requires the default temperature
    return payload


#: A tool's name as the API takes it in a definition.
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")


def _called_before(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Definitions of the tools ``messages`` called, for a request that offers none: the API
    refuses a request holding ``tool_use`` or ``tool_result`` blocks that defines no tools
    (400, "must define tools"), so a history with tool rounds sent where tools are no longer
    offered (an agent whose tools were removed, a history handed to another agent) failed
    every turn. Declared by name only (the history keeps no schema) and sent with
    ``tool_choice`` none, so none can be called; the rounds stay blocks, as the model made
    them. A name the API would refuse in a definition (a compatible server's) is left out."""
    names: dict[str, None] = {}
    for m in messages:
        if m.role == "assistant" and m.replay:
            found = [str(b.get("name", "")) for b in m.replay if b.get("type") == "tool_use"]
        elif m.role == "assistant":
            found = [c.name for c in m.tool_calls]
        elif m.role == "tool":
            found = [m.name or ""]
        else:
            continue
        names.update(dict.fromkeys(n for n in found if _TOOL_NAME.fullmatch(n)))
    return [{"name": n, "description": "Called earlier in this conversation; not offered now.",
             "input_schema": {"type": "object"}} for n in names]


def _replays_thinking(messages: tuple[Message, ...]) -> bool | None:
    """None when ``messages`` do not continue a tool round; else whether the round's assistant
    message carries its thinking blocks."""
    if not messages or messages[-1].role != "tool":
        return None
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    return last is not None and any(b.get("type") in THINKING_BLOCKS for b in last.reasoning)


def supports_thinking(model: str) -> bool:
    """Claude models with extended thinking (3.7 Sonnet and the 4 family)."""
    name = model.rsplit("/", 1)[-1].lower()
    return name.startswith(("claude-3-7", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4"))


def thinking_budget(options: CallOptions, model: str) -> int | None:
    if not supports_thinking(model):
        return None
    if options.thinking_budget_tokens:
        return max(1024, options.thinking_budget_tokens)
    return THINKING_BUDGETS.get(options.reasoning_effort or "")


def _tool_choice(choice: str | None, *, forced_output: bool,
                 other_tools: bool) -> dict[str, Any] | None:
    """Anthropic's tool_choice. Structured output forces its tool, or any tool while the author's
    tools may still be called (the model answers through the output tool when done)."""
    if forced_output and choice != "none":
        return ({"type": "any"} if other_tools else
                {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL})
    if not choice or not other_tools:
        return None
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _reasoning_block(block: Any) -> dict[str, Any]:
    """A thinking or redacted_thinking block as the API wants it back: every field, unchanged
    (the signature vouches for the text)."""
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _container_id(part: Any) -> str | None:
    """The id of the code-execution container a message (or a ``message_delta``) names: the
    SDK's ``container``, set when a container tool ran."""
    container = getattr(part, "container", None)
    return getattr(container, "id", None) or None


#: The header a response states its request id in (what Anthropic's support asks for).
_ID_HEADER = "request-id"
#: A usage report's counts, in :class:`Usage`'s order.
_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
           "cache_creation_input_tokens")


def _usage(u: Any, required: tuple[str, ...] = _COUNTS[:2]) -> Usage:
    """A message's usage; unreported when it has none or one that cannot be read (a count that
    is no count, see :func:`token_count`, or a ``required`` one left out). ``message_start``
    requires none: a compatible server may leave counts to ``message_delta``."""
    if u is None or not_an_object(u):   # a compatible server's message with no usage: unknown
        return Usage(reported=False)
    counts = [token_count(u, name, required=name in required) for name in _COUNTS]
    read = [c for c in counts if c is not None]
    return _reported(read) if len(read) == len(counts) else Usage(reported=False)


def _reported(counts: list[int]) -> Usage:
    """A usage report read whole: its counts in :data:`_COUNTS`'s order."""
    return Usage(input_tokens=counts[0], output_tokens=counts[1], cache_read_tokens=counts[2],
                 cache_write_tokens=counts[3])


def dropped_beside_output(provider: str, chars: int) -> None:
    """Say that words beside the output tool (a proxy's) were dropped, the tool's input being
    the answer: their length only, at debug level; the words may hold a key."""
    log.debug("%s: %d characters of words beside the output tool dropped (its input is the "
              "answer)", provider, chars)


class _StreamState:
    """Accumulates Anthropic stream events into deltas, tool calls and usage. ``counted``: what
    the stream was billed when it reports no usage, from what arrived (see :meth:`so_far`)."""

    def __init__(self, provider: str = "anthropic",
                 counted: Callable[[Iterable[str]], Usage] | None = None,
                 before: Callable[[], Usage | None] | None = None, *, hold: bool = False,
                 goes_on: bool = False) -> None:
        self.provider = provider
        # a structured request (``response_format``): the output tool was offered, and its call
        # alone is the answer (in any other request it is a call like any, for the tool runner
        # to answer as unknown: the model saw the tool in an earlier turn, or made it up); text
        # (a proxy ignoring the forced tool) is held until whole as the tool's input is, its
        # pieces drafts
        self.hold = hold
        self.released = 0   # how many of ``text``'s pieces were given out whole (see release)
        # the output tool began: it is the answer, as a whole reply's is (``_completion``), and
        # the words held before or beside it (a proxy's) are not
        self.answered = False
        # one of the author's tools began: a tool round, whose words and output tool input (a
        # guess its call then corrects) are no draft of the answer: those drafted are void,
        # later ones not drafted
        self.called = False
        # drafts were given out since the last void (see ``called``); ``goes_on``: the request
        # goes on from a paused reply whose words were drafted in its own request, and a tool
        # beginning here voids them as it would have there
        self.drafted = hold and goes_on
        self.counted = counted
        self.before = before   # what the request was billed before message_start
        self.usage = Usage()
        self.unreadable = False   # a usage report held a count that is no count
        # a message_delta stated the output count: message_start's (1) is a placeholder
        self.output_stated = False
        self.finish: str | None = None
        self.tools: dict[int, dict[str, str]] = {}
        self.thinking: dict[int, dict[str, str]] = {}
        # the input JSON of the block that stopped last, as :meth:`_keep` joined it at its stop
        # (its pieces are kept once, in ``inputs``): a tool's arguments
        self.stopped_input = ""
        self.started = False
        self.stopped = False
        self.text: list[str] = []
        # every block as it came, filled by its deltas: a paused reply is sent back whole
        self.blocks: dict[int, dict[str, Any]] = {}
        # pieces of a block's text or thinking not yet joined into it, and of a tool's input
        # JSON: kept in lists and joined once (see :meth:`_joined`)
        self.pieces: dict[tuple[int, str], list[str]] = {}
        self.inputs: dict[int, list[str]] = {}
        self.container: str | None = None   # the code-execution container it ran in
        self.model: str | None = None   # the model message_start says answers
        self.id: str | None = None   # the message's id, from message_start
        self.stated_id: str | None = None   # the request id the response's header states
        self.page = False   # the 200, read whole, was a page of another type (see a_page)

    def step(self, event: Any) -> list[Delta]:
        """The deltas ``event`` makes, read whole (see :func:`event_deltas`): the one per-event
        step both shells (``stream``'s ``for``, ``astream``'s ``async for``) and a whole answer
        read as a stream feed."""
        return event_deltas(self.provider, self.feed(event))

    def tail(self, answered: Completion | None) -> list[Delta]:
        """What a stream ends with: the whole answer a server sent instead (``answered``) as
        deltas, else the finish of the events read (:meth:`end`, which raises for a stream cut
        short or empty)."""
        if answered is not None:
            return list(completion_deltas(answered))
        last = self.end(self.provider)   # raises for a stream cut short: the held text unseen
        return [*self.release(), last]

    def feed(self, event: Any) -> Iterator[Delta]:
        kind = event.type
        if self.stopped:   # the message ended: what a proxy sends after it is not the answer
            return
        self._in_order(event)
        self._keep(event)
        if kind == "message_start":
            self.started = True
            usage = getattr(event.message, "usage", None)
            self.usage = _usage(usage, ())
            self.unreadable = usage is not None and not self.usage.reported
            self.container = _container_id(event.message)
            self.model = getattr(event.message, "model", None) or None
            self.id = getattr(event.message, "id", None) or None
        elif kind == "content_block_start" and event.content_block.type in THINKING_BLOCKS:
            block = event.content_block
            self.thinking[event.index] = _reasoning_block(block)
            if block.type == "thinking":   # the API starts it empty and sends it in deltas
                self.thinking[event.index].update(thinking=block.thinking or "",
                                                  signature=block.signature or "")
        elif kind == "content_block_start" and event.content_block.type == "tool_use":
            # the API starts with ``input: {}`` and sends the JSON in deltas; a compatible server
            # may send the whole input here and no delta (kept, as the SDK's own stream does)
            given = getattr(event.content_block, "input", None)
            self.tools[event.index] = {"id": event.content_block.id,
                                       "name": event.content_block.name,
                                       "given": json.dumps(given, ensure_ascii=False)
                                       if isinstance(given, dict) and given else ""}
            output = self.hold and event.content_block.name == STRUCTURED_OUTPUT_TOOL
            if self.drafted and not (output and self.answered):
                # void: the words' drafts, a tool beginning; the output tool's input too, an
                # author's tool beginning (parallel tool use: the message is a tool round)
                self.drafted = False
                yield Delta(redraft=True)
            if output:
                self.answered = True
            else:
                self.called = True
        elif kind == "content_block_delta":
            d = event.delta
            if d.type == "text_delta" and d.text:
                self.text.append(d.text)
                if not self.hold:
                    yield Delta(text=d.text)
                elif not (self.answered or self.called):
                    self.drafted = True
                    yield Delta(draft=d.text)
            elif d.type == "input_json_delta" and event.index in self.tools:
                output = self.hold and self.tools[event.index]["name"] == STRUCTURED_OUTPUT_TOOL
                if output and d.partial_json and not self.called:
                    self.drafted = True
                    yield Delta(draft=d.partial_json)   # the answer so far: progress, not text
            elif d.type == "signature_delta" and event.index in self.thinking:
                self.thinking[event.index]["signature"] = d.signature or ""
        elif kind == "content_block_stop" and event.index in self.thinking:
            reasoning = self.thinking.pop(event.index)
            # its text as the block kept it (:meth:`_keep`, joined at this stop): read once
            if (thought := self.blocks[event.index].get("thinking")) is not None:
                reasoning["thinking"] = thought
            yield Delta(reasoning=reasoning)
        elif kind == "content_block_stop" and event.index in self.tools:
            t = self.tools.pop(event.index)
            arguments = self.stopped_input or t["given"] or "{}"
            if self.hold and t["name"] == STRUCTURED_OUTPUT_TOOL:   # the answer: it is the text
                yield Delta(text=arguments, from_output_tool=True)
            else:
                yield Delta(tool_call=ToolCall(t["id"], t["name"], arguments))
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "message_delta":
            self.finish = event.delta.stop_reason
            self.container = _container_id(event.delta) or self.container
            self._delta_usage(getattr(event, "usage", None))

    def release(self) -> Iterator[Delta]:
        """The text held since the last release (see ``hold``), whole; none once the output tool
        answers (see ``answered``)."""
        if self.hold and (held := self.text[self.released:]):
            self.released = len(self.text)
            if self.answered:
                dropped_beside_output(self.provider, sum(map(len, held)))
            else:
                yield Delta(text="".join(held))

    def _delta_usage(self, du: Any) -> None:
        """A message_delta's cumulative counts: any present replace message_start's (as the SDK
        does; an output count of 0 keeps the earlier one). A count that is no count (see
        :func:`token_count`), here or at message_start, leaves the message unreported for good:
        it is then counted from what arrived (:meth:`so_far`)."""
        u = self.usage
        if du is None:
            return
        counts = [token_count(du, name) if getattr(du, name, None) is not None else old
                  for name, old in zip(_COUNTS, (u.input_tokens, u.output_tokens,
                                                 u.cache_read_tokens, u.cache_write_tokens),
                                       strict=True)]
        read = [c for c in counts if c is not None]
        # a usage that is no object leaves every count out: it would keep message_start's
        self.unreadable = self.unreadable or not_an_object(du) or len(read) < len(counts)
        if self.unreadable:
            self.usage = Usage(reported=False)
            return
        self.output_stated = self.output_stated or bool(token_count(du, "output_tokens"))
        read[1] = read[1] or u.output_tokens
        self.usage = _reported(read)

    def _in_order(self, event: Any) -> None:
        """Events out of the API's order end the stream: a second message_start is a proxy that
        retried upstream mid-stream and joined both answers ("Hello worHello world" passed as
        one), and a tool's input or a thinking delta before its block started was dropped (the
        tool then called with ``{}``). A text delta needs no block to be read: it is kept."""
        kind = event.type
        if kind == "message_start" and self.started:
            raise self.billed(IncompleteResponse(
                f"{self.provider}: the stream began a second message before the first ended (a "
                "proxy joining two answers): the answer is incomplete", provider=self.provider,
                partial_text="".join(self.text)))
        if (kind == "content_block_delta" and event.index not in self.blocks
                and event.delta.type != "text_delta"):
            raise self.billed(ServerError(
                f"{self.provider}: a stream event out of order ({event.delta.type} for block "
                f"{event.index} before its start)", provider=self.provider))

    def _keep(self, event: Any) -> None:
        """Each content block as the API would have returned it whole (what the SDK's own
        accumulator does): started from its start event, its text, input JSON, thinking,
        signature and citations added by the deltas."""
        kind = event.type
        if kind == "content_block_start":
            self.blocks[event.index] = event.content_block.to_dict()
        elif kind == "content_block_delta" and event.index in self.blocks:
            block, d = self.blocks[event.index], event.delta
            if d.type == "text_delta":
                self.pieces.setdefault((event.index, "text"), []).append(d.text or "")
            elif d.type == "input_json_delta":
                self.inputs.setdefault(event.index, []).append(d.partial_json or "")
            elif d.type == "thinking_delta":
                self.pieces.setdefault((event.index, "thinking"), []).append(d.thinking or "")
            elif d.type == "signature_delta":
                block["signature"] = d.signature or ""
            elif d.type == "citations_delta":
                block["citations"] = [*(block.get("citations") or ()), d.citation.to_dict()]
        elif kind == "content_block_stop":
            self._joined()
            pieces = self.inputs.pop(event.index, None)
            self.stopped_input = "".join(pieces or ())
            if pieces is not None:
                # an input cut at max_tokens (or, streamed fine-grained, not JSON) is still the
                # call: the tool runner answers it as cut off; only a paused reply's copy keeps
                # the start's
                try:
                    self.blocks[event.index]["input"] = json.loads(self.stopped_input or "{}")
                except ValueError:
                    pass

    def _joined(self) -> None:
        """The pieces kept since the last join added to their blocks' text or thinking, one join
        a block: a concatenation a piece copied the text so far each time (quadratic: 20,000
        pieces cost ~6x per piece what 200 do)."""
        for (i, name), parts in self.pieces.items():
            block = self.blocks[i]
            block[name] = (block.get(name) or "") + "".join(parts)
        self.pieces.clear()

    def paused(self) -> tuple[dict[str, Any], ...]:
        """The reply's blocks in order when the API paused it, else none."""
        if self.finish != PAUSED:
            return ()
        self._joined()
        return tuple(self.blocks[i] for i in sorted(self.blocks))

    @property
    def complete(self) -> bool:
        """The message ended (a stop reason or message_stop arrived): its text is whole."""
        return self.started and (self.stopped or self.finish is not None)

    def so_far(self) -> Usage | None:
        """What the attempt has been billed: the usage reported since message_start; from a
        server that reports none, our count of the prompt and of what arrived; before
        message_start, what ``before`` says (the prompt, once the request reached the server),
        else None."""
        if not self.started:
            return self.before() if self.before is not None else None
        if self.usage.reported:
            return self.usage if self.output_stated else self._output_counted()
        return None if self.counted is None else self.counted(self._arrived())

    def _arrived(self) -> list[str]:
        """The text of what arrived: each block's text and thinking, each tool's name and input."""
        self._joined()
        return [*block_texts([self.blocks[i] for i in sorted(self.blocks)]),
                *map("".join, self.inputs.values())]

    def _output_counted(self) -> Usage:
        """The reported usage with the output counted from what arrived, when no message_delta
        stated it (a compatible server's, or a stream cut before it): message_start's count is a
        placeholder (1), kept as the bill of a reply of any length. Counted in ``o200k_base``
        (Anthropic's tokenizer is not public: an estimate, a floor), never below the stated one."""
        output = sum(count_tokens(piece, DEFAULT_ENCODING) for piece in self._arrived())
        if output <= self.usage.output_tokens:
            return self.usage
        return replace(self.usage, output_tokens=output, reported=False, counted=True,
                       estimated_tokens=output)

    def billed(self, error: ProviderError) -> ProviderError:
        """``error`` carrying the usage message_start reported (the attempt was billed), and
        naming the request the stream's header stated (see :func:`naming`)."""
        error.usage = self.so_far()
        return naming(error, _ID_HEADER, self.stated_id)

    def end(self, provider: str) -> Delta:
        if not self.started:   # a proxy page or an empty body parses as an SSE stream of nothing
            # an empty 200 reached the server and was not refused; a page is billed nothing
            empty = ServerError(f"{provider}: the stream ended without a message_start event",
                                provider=provider)
            raise empty if self.page else self.billed(empty)
        if self.finish is None:
            # The API always ends with a stop reason, then message_stop: a stream cut short (a
            # proxy or load balancer closing the connection cleanly, or ending it early with a
            # message_stop of its own) must not pass for a whole answer.
            raise self.billed(IncompleteResponse(
                f"{provider}: the stream ended before the message finished (no stop reason): "
                "the answer is incomplete", provider=provider, partial_text="".join(self.text)))
        return Delta(usage=self.so_far() or self.usage, finish_reason=self.finish,
                     paused=self.paused(), container=self.container, model=self.model,
                     request_id=shown_id(self.stated_id or self.id))


class AnthropicProvider(SDKProvider):
    """Messages API over the official SDK (``max_retries=0``: hermes_core owns retries)."""

    kind = "anthropic"
    request_id_header = _ID_HEADER
    sdk_module = "anthropic"
    client_names = ("Anthropic", "AsyncAnthropic")
    sdk_error_name = "AnthropicError"

    def __init__(self, name: str = "anthropic", endpoint: str | None = None,
                 timeout_s: float = 60.0) -> None:
        super().__init__(name, endpoint, timeout_s)
        self.adaptive: set[str] = set()   # models that refused budgeted thinking
        self._memory: RefusalMemory | None = None

    def keep_lessons(self, memory: RefusalMemory) -> None:
        self._memory = memory
        self.adaptive |= {model for model, what in memory.lessons(self.name) if what == ADAPTIVE}

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return render_anthropic(prompt, model, options, adaptive=model in self.adaptive)

    def learned(self, exc: BaseException, payload: dict[str, Any], model: str) -> bool:
        """A 400 refusing budgeted thinking (Claude Opus 4.7 on: "thinking.type.enabled is not
        supported ... use thinking.type.adaptive"): ``model`` is sent adaptive thinking from now
        on. Which models refuse it, no name rule keeps up with; the refusal says so itself."""
        thinking = payload.get("thinking")
        err = bad_request(exc)
        if (err is None or model in self.adaptive
                or not isinstance(thinking, dict) or thinking.get("type") != "enabled"):
            return False
        message = str(err.get("message") or "")
        if "thinking.type.adaptive" not in message and "thinking.type.enabled" not in message:
            return False
        self.adaptive.add(model)
        if self._memory is not None:
            self._memory.remember(self.name, model, ADAPTIVE)
        log.warning("%s: model %s refuses budgeted thinking; it is sent adaptive thinking "
                    "(output_config.effort) from now on", self.name, model)
        return True

    def _api(self, client: Any) -> Any:
        return client.messages

    def _stream_payload(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return self.render(prompt, model, options)

    def _whole_type(self) -> Any:
        return self.sdk.types.Message

    def _open_stream(self, client: Any, payload: dict[str, Any], timeout: Any, *,
                     is_async: bool) -> Any:
        return client.messages.create(**payload, stream=True, timeout=timeout)

    def _metered(self, done: Completion, payload: dict[str, Any]) -> Completion:
        """A reply whose body carried no usage (an Anthropic-compatible server that never sends
        it) was billed all the same: counted here (:func:`.unreported.messages_usage`)."""
        if done.usage.reported:
            return done
        outputs = [*(str(b.get("thinking") or "") for b in done.reasoning), done.text,
                   *(v for c in done.tool_calls for v in (c.name, c.arguments))]
        return replace(done, usage=messages_usage(payload, outputs))

    def _event_type(self) -> Any:
        return self.sdk.types.RawMessageStreamEvent

    def _from_events(self, events: Iterable[Any], payload: dict[str, Any],
                     model: str) -> Completion:
        # a structured request (the output tool offered) held as a stream holds it: the output
        # tool, once begun, is the answer and words beside it (a proxy's) are not, as
        # ``_completion`` reads a JSON answer; in any other request it is an ordinary call
        held = any(t.get("name") == STRUCTURED_OUTPUT_TOOL for t in payload.get("tools", ()))
        state = _StreamState(self.name, lambda arrived: messages_usage(payload, arrived), hold=held)
        deltas = [d for event in events for d in state.step(event)]
        deltas.extend(state.tail(None))
        return delta_completion(deltas, model, self.name, state.id)

    def _state(self, prompt: Prompt, model: str, options: CallOptions,
               reached: Answered) -> _StreamState:
        """A stream's state, counting what it was billed from ``prompt`` if it reports none
        (before any event: if the request ``reached`` the server)."""
        payload = functools.partial(self._stream_payload, prompt, model, options)
        last = prompt.messages[-1] if prompt.messages else None
        return _StreamState(self.name, lambda arrived: messages_usage(payload(), arrived),
                            self._unstarted(reached, payload), hold=bool(options.response_format),
                            goes_on=last is not None and bool(last.replay and last.content))

    def _completion(self, resp: Any, model: str, *, structured: bool) -> Completion:
        text = "".join(b.text for b in resp.content if b.type == "text")
        # structured output arrives as the forced tool's input: that JSON is the answer, in a
        # request that offered the tool; in any other its call is a call like any (the model
        # saw the tool in an earlier turn, or made it up), for the tool runner to answer
        def output(b: Any) -> bool:
            return structured and b.type == "tool_use" and b.name == STRUCTURED_OUTPUT_TOOL

        calls = tuple(ToolCall(b.id, b.name, json.dumps(b.input)) for b in resp.content
                      if b.type == "tool_use" and not output(b))
        answer = next((json.dumps(b.input, ensure_ascii=False) for b in resp.content
                       if output(b)), None)
        if answer is not None:
            if text:
                dropped_beside_output(self.name, len(text))
            text = answer
        return Completion(text=text, model=resp.model or model, provider=self.name,
                          usage=_usage(getattr(resp, "usage", None)), tool_calls=calls,
                          finish_reason=resp.stop_reason,
                          request_id=getattr(resp, "_request_id", None) or resp.id,
                          reasoning=tuple(_reasoning_block(b) for b in resp.content
                                          if b.type in THINKING_BLOCKS),
                          paused=tuple(b.to_dict() for b in resp.content)
                          if resp.stop_reason == PAUSED else (), container=_container_id(resp),
                          from_output_tool=answer is not None)

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        client = self._clients.get(credential)
        reached = Answered()
        state = self._state(prompt, model, options, reached)
        bill(state.so_far)
        answered = None
        try:
            stream = self._opened(client, prompt, model, options, credential, reached)
            with stream:
                state.stated_id = self._stated_id(stream)
                answered = self._whole_in_stream(stream, prompt, model, options)
                for event in () if answered is not None else stream:
                    yield from state.step(event)
                state.page = a_page(stream)
        except self._read_errors as e:
            error = self._read_failed(e, credential, state.complete)
            if error is not None:
                raise state.billed(error) from None
        yield from state.tail(answered)

    async def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                      options: CallOptions) -> AsyncIterator[Delta]:
        client = self._clients.get(credential, is_async=True)
        reached = Answered()
        state = self._state(prompt, model, options, reached)
        bill(state.so_far)
        answered = None
        try:
            stream = await self._aopened(client, prompt, model, options, credential, reached)
            async with stream:
                state.stated_id = self._stated_id(stream)
                answered = self._whole_in_stream(stream, prompt, model, options)
                if answered is None:
                    async for event in stream:
                        for d in state.step(event):
                            yield d
                state.page = a_page(stream)
        except self._read_errors as e:
            error = self._read_failed(e, credential, state.complete)
            if error is not None:
                raise state.billed(error) from None
        for d in state.tail(answered):
            yield d
