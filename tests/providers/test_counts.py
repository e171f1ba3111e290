"""Token counts a provider or proxy reports that are no counts: negative, fractional, NaN, text
that is no number, a usage that is not an object. A count that is text of a whole number is read
as it (``"12"``); anything else makes the report unreadable, and the reply is counted on our count
as one that reported nothing is, marked so; across both SDKs, whole and streamed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_message,
    openai_chat_completion,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import (
    Credential,
    Message,
    Prompt,
    Usage,
)
from tests.providers.conftest import (
    OPTS,
)

# Token counts a provider or proxy reports that are no counts: negative, fractional, NaN, text
# that is no number, a usage that is not an object. A count that is text of a whole number is
# read as it (``"12"``); anything else makes the report unreadable, and the reply is counted on
# our count as one that reported nothing is, marked so.

SECRET_COUNT = "sk-testkey-SECRET-counts-0001"


PROMPT_COUNT = Prompt(system="s", messages=(Message("user", "hi"),))


def _openai_usage_stream(usage: Any) -> bytes:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    return _sse([
        (None, {**base, "choices": [{"index": 0, "delta": {"content": "Hi"},
                                     "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        (None, {**base, "choices": [], "usage": usage}), (None, "[DONE]")])


def _anthropic_usage_stream(start: Any, delta: Any) -> bytes:
    message = anthropic_message("", output_tokens=1)
    message.update(stop_reason=None, usage=start)
    return _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": delta,
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"})])


OPENAI_LIES = {
    "negative prompt": {"prompt_tokens": -5, "completion_tokens": 2},
    "text prompt": {"prompt_tokens": "abc", "completion_tokens": 2},
    "NaN prompt": {"prompt_tokens": float("nan"), "completion_tokens": 2},
    "fractional prompt": {"prompt_tokens": 12.5, "completion_tokens": 2},
    "true prompt": {"prompt_tokens": True, "completion_tokens": 2},
    "negative cached": {"prompt_tokens": 12, "completion_tokens": 2,
                        "prompt_tokens_details": {"cached_tokens": -4}},
    "text cached": {"prompt_tokens": 12, "completion_tokens": 2,
                    "prompt_tokens_details": {"cached_tokens": "x"}},
    "usage as text": "lots",
    # int() of over 4,300 digits raises ValueError (CPython's limit on converting text)
    "5,000-digit text prompt": {"prompt_tokens": "9" * 5000, "completion_tokens": 2},
}


ANTHROPIC_LIES = {
    "negative input": ({"input_tokens": -9, "output_tokens": 1}, {"output_tokens": 3}),
    "text input": ({"input_tokens": "abc", "output_tokens": 1}, {"output_tokens": 3}),
    "fractional input": ({"input_tokens": 9.5, "output_tokens": 1}, {"output_tokens": 3}),
    "negative output": ({"input_tokens": 9, "output_tokens": 1}, {"output_tokens": -3}),
    "text output": ({"input_tokens": 9, "output_tokens": 1}, {"output_tokens": "x"}),
    "negative cache read": ({"input_tokens": 9, "output_tokens": 1,
                             "cache_read_input_tokens": -100}, {"output_tokens": 3}),
    "5,000-digit text output": ({"input_tokens": 9, "output_tokens": 1},
                                {"output_tokens": "9" * 5000}),
    "usage as text": ("lots", {"output_tokens": 3}),
    "usage as a list": ([9, 1], {"output_tokens": 3}),
    "delta usage as text": ({"input_tokens": 9, "output_tokens": 1}, "lots"),
}


def _lying_response(kind: str, lie: str, streamed: bool) -> httpx.Response:
    if kind == "openai":
        usage = OPENAI_LIES[lie]
        if streamed:
            return httpx.Response(200, content=_openai_usage_stream(usage), headers=SSE_HEADERS)
        body = openai_chat_completion("Hi")
        body["usage"] = usage
    else:
        start, delta = ANTHROPIC_LIES[lie]
        if streamed:
            return httpx.Response(200, content=_anthropic_usage_stream(start, delta),
                                  headers=SSE_HEADERS)
        body = anthropic_message("Hi")
        body["usage"] = ({**start, **delta} if isinstance(start, dict) and isinstance(delta, dict)
                         else delta if isinstance(start, dict) else start)
    # json.dumps writes NaN as the bare token a lying server sends, which both SDKs parse
    return httpx.Response(200, content=json.dumps(body).encode(),
                          headers={"content-type": "application/json"})


def _reply_usage(kind: str, mode: str) -> tuple[str, Usage | None]:
    provider = OpenAIProvider() if kind == "openai" else AnthropicProvider()
    cred = Credential(kind, SECRET_COUNT)
    if mode == "complete":
        done = provider.complete(PROMPT_COUNT, "m", cred, OPTS)
        return done.text, done.usage
    if mode == "acomplete":
        done = asyncio.run(provider.acomplete(PROMPT_COUNT, "m", cred, OPTS))
        return done.text, done.usage
    if mode == "stream":
        deltas = list(provider.stream(PROMPT_COUNT, "m", cred, OPTS))
    else:
        async def read() -> list[Any]:
            return [d async for d in provider.astream(PROMPT_COUNT, "m", cred, OPTS)]
        deltas = asyncio.run(read())
    return "".join(d.text for d in deltas), deltas[-1].usage


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize(("kind", "lie"), [*(("openai", k) for k in OPENAI_LIES),
                                           *(("anthropic", k) for k in ANTHROPIC_LIES)])
def test_a_usage_report_with_a_count_that_is_no_count_is_replaced_by_our_count(
        kind: str, lie: str, mode: str, respx_mock: Any) -> None:
    """A negative count was billed as a refund (-9 input tokens, a cached -4 made the input 16
    of 12), text that is no number or NaN escaped as a bare ValueError (the call loop takes it
    for a bug: no failover, a traceback), 12.5 was read as 12, ``true`` as 1, and a usage that
    is not an object as a reported zero. The report is unreadable: the reply is counted as one
    that reported nothing is (the prompt and what arrived, marked counted)."""
    url = OPENAI_URL if kind == "openai" else ANTHROPIC_URL
    respx_mock.post(url).mock(side_effect=lambda r: _lying_response(kind, lie, "stream" in mode))
    text, usage = _reply_usage(kind, mode)
    assert text == "Hi"
    assert usage is not None and usage.counted and not usage.reported
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert min(usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == 0


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_count_sent_as_the_text_of_a_whole_number_is_read_as_that_number(
        kind: str, mode: str, respx_mock: Any) -> None:
    url = OPENAI_URL if kind == "openai" else ANTHROPIC_URL
    if kind == "openai":
        usage: Any = {"prompt_tokens": "12", "completion_tokens": "2"}
        body: Any = openai_chat_completion("Hi")
        stream = _openai_usage_stream(usage)
    else:
        usage = {"input_tokens": "12", "output_tokens": "2"}
        body = anthropic_message("Hi")
        stream = _anthropic_usage_stream(usage, {"output_tokens": "2"})
    body["usage"] = usage
    respx_mock.post(url).mock(side_effect=lambda r: (
        httpx.Response(200, content=stream, headers=SSE_HEADERS) if mode == "stream"
        else httpx.Response(200, json=body)))
    _, got = _reply_usage(kind, mode)
    assert got is not None and got.reported and not got.counted
    assert (got.input_tokens, got.output_tokens) == (12, 2)
