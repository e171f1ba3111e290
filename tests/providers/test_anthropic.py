"""Tests of ``hermes_core/providers/anthropic.py``.

Anthropic stream usage: the counts in ``message_delta`` are cumulative and win when present.

The API (and proxies in front of it) may report input and cache tokens only, or finally, in
``message_delta``; the SDK's own accumulator takes them from there. The adapter kept the
``message_start`` numbers (often 0 or provisional), under-reporting input and cache tokens.
"""

from __future__ import annotations

import httpx
import pytest

from hermes_core.errors import ServerError
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.testing import ANTHROPIC_URL, OPENAI_URL, SSE_HEADERS, anthropic_stream, openai_chat_stream
from hermes_core.testing.builders import _sse
from hermes_core.types import Credential, Message, Prompt, Usage

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
CRED = Credential("anthropic", "sk-ant-testkey-SECRET-usage-01")
OPTS = CallOptions(max_tokens=32, timeout_s=5)


def _stream(delta_usage: dict[str, int]) -> bytes:
    start = {"id": "m", "type": "message", "role": "assistant", "model": "claude", "content": [],
             "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 0,
                       "cache_creation_input_tokens": 0}}
    return _sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "hi"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": delta_usage,
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"})])


def test_cumulative_message_delta_usage_wins(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, content=_stream(
        {"input_tokens": 120, "output_tokens": 9, "cache_read_input_tokens": 800,
         "cache_creation_input_tokens": 50}), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "claude", CRED, OPTS))
    assert deltas[-1].usage == Usage(input_tokens=120, output_tokens=9, cache_read_tokens=800,
                                     cache_write_tokens=50)


def test_message_start_usage_kept_when_the_delta_has_only_output(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_stream({"output_tokens": 9}), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "claude", CRED, OPTS))
    assert deltas[-1].usage == Usage(input_tokens=7, output_tokens=9)


# An Anthropic stream closed cleanly mid-answer (a proxy or load balancer ending the connection
# without an error) is incomplete, not a whole answer: before the first token the call loop fails
# over; after it the caller gets the error instead of a silently truncated reply.

SECRET = "sk-ant-cut-SECRET-0123456789"


def _cut(body: bytes, keep_events: int) -> bytes:
    """The first ``keep_events`` SSE events of ``body``, as a connection closed early would leave."""
    events = body.split(b"\n\n")
    return b"\n\n".join(events[:keep_events]) + b"\n\n"


def test_the_builder_stream_really_ends_with_message_stop() -> None:
    body = anthropic_stream(("Hel", "lo"))
    assert b"message_stop" in body.split(b"\n\n")[-2]


@pytest.mark.parametrize("keep", [1, 3, 5])      # after message_start, mid-text, before the stop
async def test_a_cut_stream_is_a_server_error(assert_both_streams_raise, keep: int, respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("Hel", "lo", " there")), keep), headers=SSE_HEADERS))
    await assert_both_streams_raise(AnthropicProvider(), Credential("anthropic", SECRET), ServerError)


def test_a_whole_stream_still_passes(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("Hel", "lo")), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "m", Credential("anthropic", SECRET), _opts()))
    assert "".join(d.text for d in deltas) == "Hello" and deltas[-1].finish_reason == "end_turn"


def test_cut_before_the_first_token_fails_over(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-777666555")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("never",)), 2), headers=SSE_HEADERS))
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), _opts())
    assert "".join(d.text for d in s) == "from backup"


def test_cut_after_the_first_token_reaches_the_caller(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-777666555")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("Hel", "lo", " there")), 5), headers=SSE_HEADERS))
    got: list[str] = []
    with pytest.raises(ServerError, match="incomplete"):
        for d in loop.stream(PROMPT, router.select("hi"), _opts()):
            got.append(d.text)
    assert "".join(got).startswith("Hel")


def _opts():  # type: ignore[no-untyped-def]
    from hermes_core.providers.base import CallOptions
    return CallOptions(max_tokens=16, timeout_s=5)
