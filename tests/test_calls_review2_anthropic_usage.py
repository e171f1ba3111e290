"""Anthropic stream usage: the counts in ``message_delta`` are cumulative and win when present.

The API (and proxies in front of it) may report input and cache tokens only, or finally, in
``message_delta``; the SDK's own accumulator takes them from there. The adapter kept the
``message_start`` numbers (often 0 or provisional), under-reporting input and cache tokens.
"""

from __future__ import annotations

import httpx

from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.testing import ANTHROPIC_URL, SSE_HEADERS
from hermes_core.testing.builders import _sse
from hermes_core.types import Credential, Message, Prompt, Usage

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
CRED = Credential("anthropic", "sk-ant-review2-SECRET-usage-01")
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
