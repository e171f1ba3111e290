"""Tests of ``hermes_core/providers/anthropic.py``: events a proxy sends out of the API's order.

The API opens one message, starts each block before its deltas, states the stop reason in
message_delta and then ends with message_stop; a proxy that retries upstream mid-stream and
joins both answers, one that ends the stream early, or one that reorders events made a reply the
model never gave, passed as whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.errors import IncompleteResponse, ServerError
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.testing import ANTHROPIC_URL, SSE_HEADERS
from hermes_core.testing.builders import _sse
from hermes_core.types import ToolCall
from tests.providers.conftest import ANTHROPIC_CRED as CRED
from tests.providers.conftest import ANTHROPIC_OPTS as OPTS
from tests.providers.conftest import ANTHROPIC_PROMPT as PROMPT


def _start() -> tuple[str, dict[str, Any]]:
    message = {"id": "m", "type": "message", "role": "assistant", "model": "claude",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 3, "output_tokens": 1}}
    return ("message_start", {"type": "message_start", "message": message})


def _event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return (kind, {"type": kind, **fields})


def _text(index: int, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [_event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
            _event("content_block_delta", index=index,
                   delta={"type": "text_delta", "text": text})]


_STOP_REASON = _event("message_delta", delta={"stop_reason": "end_turn", "stop_sequence": None},
                      usage={"output_tokens": 5})


_TOOL_START = _event("content_block_start", index=0, content_block={
    "type": "tool_use", "id": "t1", "name": "lookup", "input": {}})


_TOOL_JSON = _event("content_block_delta", index=0,
                    delta={"type": "input_json_delta", "partial_json": '{"q": "oslo"}'})


@pytest.fixture
def drain(respx_mock: Any, stream_deltas: Callable[..., list[Any]]
          ) -> Callable[[list[tuple[str, dict[str, Any]]], bool], list[Any]]:
    """``drain(events, use_async)``: every piece of a claude stream made of ``events``."""
    def run(events: list[tuple[str, dict[str, Any]]], use_async: bool) -> list[Any]:
        respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
            200, content=_sse(events), headers=SSE_HEADERS))
        return stream_deltas(AnthropicProvider(), PROMPT, "claude", CRED, OPTS,
                             use_async=use_async)
    return run


@pytest.mark.parametrize("use_async", [False, True])
def test_a_message_stop_before_any_stop_reason_is_an_incomplete_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hel"), _event("message_stop")]
    with pytest.raises(IncompleteResponse) as info:
        drain(events, use_async)
    assert info.value.partial_text == "Hel"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_second_message_start_is_a_spliced_stream_not_one_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hello wor"), _start(), *_text(0, "Hello world"),
              _event("content_block_stop", index=0), _STOP_REASON, _event("message_stop")]
    with pytest.raises(IncompleteResponse) as info:
        drain(events, use_async)
    assert info.value.partial_text == "Hello wor"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_s_input_before_its_block_starts_is_an_error_not_an_empty_call(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), _TOOL_JSON, _TOOL_START, _event("content_block_stop", index=0),
              _STOP_REASON, _event("message_stop")]
    with pytest.raises(ServerError, match="out of order"):
        drain(events, use_async)


@pytest.mark.parametrize("use_async", [False, True])
def test_events_after_message_stop_are_not_part_of_the_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hi"), _event("content_block_stop", index=0), _STOP_REASON,
              _event("message_stop"), *_text(1, " and more")]
    deltas = drain(events, use_async)
    assert "".join(d.text for d in deltas) == "Hi"
    assert deltas[-1].finish_reason == "end_turn"


def test_the_api_s_own_order_is_still_one_whole_answer(drain: Callable[..., list[Any]]) -> None:
    events = [_start(), _TOOL_START, _TOOL_JSON, _event("content_block_stop", index=0),
              _STOP_REASON, _event("message_stop")]
    deltas = drain(events, False)
    assert [d.tool_call for d in deltas if d.tool_call] == [ToolCall("t1", "lookup",
                                                                     '{"q": "oslo"}')]
    assert deltas[-1].finish_reason == "end_turn"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_call_cut_at_max_tokens_mid_input_is_the_call_not_a_malformed_stream(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    """Its input is JSON cut short (or, streamed fine-grained, not JSON at all): the stream was
    failed as malformed and the whole request sent again, though it ended as the API says."""
    cut = _event("content_block_delta", index=0,
                 delta={"type": "input_json_delta", "partial_json": '{"q": "os'})
    events = [_start(), _TOOL_START, cut, _event("content_block_stop", index=0),
              _event("message_delta", delta={"stop_reason": "max_tokens", "stop_sequence": None},
                     usage={"output_tokens": 5}), _event("message_stop")]
    deltas = drain(events, use_async)
    assert [d.tool_call for d in deltas if d.tool_call] == [ToolCall("t1", "lookup", '{"q": "os')]
    assert deltas[-1].finish_reason == "max_tokens"
