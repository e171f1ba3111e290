"""What an OpenAI chat request was billed when its response never said.

OpenAI sends a stream's usage only in its last chunk (``stream_options.include_usage``): a stream
cut before it (a proxy closing the connection, an error event, a read timeout, the user's Ctrl-C)
carried no usage, though the provider billed the prompt and everything it generated until then;
and some OpenAI-compatible servers never send usage at all. Those tokens were counted nowhere
(``Usage(reported=False)``: no cost, no wasted tokens). :func:`counted_usage` counts them itself:

* the prompt in the model's own encoding (:mod:`hermes_core.tokens`) with the chat framing
  OpenAI's cookbook gives for its current models (``token_count.framed``, the definition the
  budgets use too: each message's role, content and name, 3 tokens a message, 1 a name, 3
  priming the reply). That is exact for plain messages; tool definitions,
  tool calls, tool answers, structured-output schemas and non-text parts are framed in ways not
  documented, and a model that is not OpenAI's has another tokenizer: such a prompt is counted
  with the same encoding (``o200k_base`` for a model not OpenAI's) and marked an estimate;
* the output from what arrived: the text (a refusal's too) and each tool call's name and argument
  fragments, in the same encoding, always marked an estimate (a reasoning model's hidden
  thinking and tokens generated but not yet delivered are not seen; the count is a floor).

The whole prompt counts as uncached input: a cached part (billed cheaper) cannot be known, so the
price is an upper bound there.

An Anthropic-compatible server that sends no usage is counted the same way
(:func:`messages_usage`), in ``o200k_base`` with the chat framing above: Anthropic's tokenizer is
not public, so every token of that count is an estimate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from hermes_core.agent.prompt.token_count import REPLY_PRIMING, framed, openai_encoding
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import Usage

#: Message keys the cookbook counts as plain text; any other one (tool_calls, tool_call_id)
#: makes the count an estimate.
_PLAIN_KEYS = frozenset({"role", "content", "name"})


def _content(value: Any) -> tuple[list[str], bool]:
    """A message's content as the text counted, and whether it is plain text: a string, or text
    parts (the per-turn context travels as a leading part), counted as their joined text (the
    budgets count the context apart: where the two meet a token may merge, one either way)."""
    if value is None or isinstance(value, str):
        return [value or ""], True
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict) and p.get("type") == "text"]
        plain = len(texts) == len(value) and all(isinstance(t, str) for t in texts)
        return ["".join(t for t in texts if isinstance(t, str))], plain
    return [json.dumps(value, ensure_ascii=False, default=str)], False


def prompt_tokens(payload: Mapping[str, Any], encoding: str) -> tuple[int, bool]:
    """Tokens of a chat.completions ``payload``'s prompt in ``encoding``, and whether the count
    is exact (plain messages only, see the module doc)."""
    exact = True
    n = REPLY_PRIMING

    def count(text: str) -> int:
        return count_tokens(text, encoding)

    for message in payload.get("messages") or ():
        texts, plain = _content(message.get("content"))
        exact = exact and plain and _PLAIN_KEYS.issuperset(message)
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            texts += (str(fn.get("name") or ""), str(fn.get("arguments") or ""))
        texts.append(str(message.get("tool_call_id") or ""))
        n += framed(count, str(message.get("role") or ""), texts, str(message.get("name") or ""))
    for extra in ("tools", "response_format"):
        if payload.get(extra):
            n += count_tokens(json.dumps(payload[extra], ensure_ascii=False, default=str), encoding)
            exact = False
    return n, exact


def counted_usage(payload: Mapping[str, Any], model: str, outputs: Iterable[str]) -> Usage:
    """What a request for ``model`` made of ``payload`` was billed, counted here because the
    response never said: its prompt, and ``outputs`` (the text that arrived, each tool call's
    name and arguments so far) as output. ``Usage.counted``; ``estimated_tokens`` marks the output, and the
    prompt too when its count is not exact."""
    own = openai_encoding(model)
    encoding = own or DEFAULT_ENCODING
    prompt, exact = prompt_tokens(payload, encoding)
    exact = exact and own is not None
    output = sum(count_tokens(piece, encoding) for piece in outputs)
    return Usage(input_tokens=prompt, output_tokens=output, reported=False, counted=True,
                 estimated_tokens=output + (0 if exact else prompt))


def block_texts(value: Any) -> Iterator[str]:
    """The text a Messages API content value carries: a string, or its blocks' text, thinking,
    a tool's name and input (as JSON), a tool result's content. Signatures and redacted
    thinking are opaque data, not tokens the model read as text."""
    if isinstance(value, str):
        yield value
        return
    for block in value if isinstance(value, list) else ():
        if not isinstance(block, dict):
            continue
        for key in ("text", "thinking", "name"):
            if isinstance(block.get(key), str):
                yield block[key]
        if "input" in block:
            yield json.dumps(block["input"], ensure_ascii=False, default=str)
        if "content" in block:
            yield from block_texts(block["content"])


def messages_usage(payload: Mapping[str, Any], outputs: Iterable[str]) -> Usage:
    """What a Messages API request made of ``payload`` was billed, counted here because the
    response never said: its system, messages and tools, and ``outputs`` as output, all in
    ``o200k_base`` and all an estimate (see the module doc)."""
    encoding = DEFAULT_ENCODING
    prompt = REPLY_PRIMING + sum(count_tokens(t, encoding) for t in block_texts(payload.get("system")))
    count = partial(count_tokens, encoding=encoding)
    for message in payload.get("messages") or ():
        prompt += framed(count, str(message.get("role") or ""), block_texts(message.get("content")))
    if payload.get("tools"):
        prompt += count_tokens(json.dumps(payload["tools"], ensure_ascii=False, default=str),
                               encoding)
    output = sum(count_tokens(piece, encoding) for piece in outputs)
    return Usage(input_tokens=prompt, output_tokens=output, reported=False, counted=True,
                 estimated_tokens=prompt + output)
