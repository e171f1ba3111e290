"""Error events inside a 200 stream are mapped by their error type, not by the 200 status.

Anthropic sends ``event: error`` (``overloaded_error``, ``api_error``, ...) after the stream has
started with HTTP 200; OpenAI-compatible servers send ``{"error": {...}}`` chunks. The SDKs raise
these with the stream's 200 status (Anthropic) or without a status (OpenAI), so mapping by status
made an overloaded Anthropic stream a non-retryable BadRequest that aborted the whole request
instead of failing over.
"""

from __future__ import annotations

import httpx
import pytest
from routing_doubles import failover_loop

from hermes_core.errors import (
    BadRequest,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
)
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_stream,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import Credential, Message, Prompt

SECRET = "sk-ant-review2-SECRET-000111222"
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=5)


def anthropic_error_stream(err_type: str, message: str = "boom") -> bytes:
    start = {"id": "m", "type": "message", "role": "assistant", "model": "claude", "content": [],
             "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 3, "output_tokens": 1}}
    return _sse([("message_start", {"type": "message_start", "message": start}),
                 ("error", {"type": "error", "error": {"type": err_type, "message": message}})])


def openai_error_stream(err_type: str, message: str = "boom") -> bytes:
    return _sse([(None, {"error": {"message": message, "type": err_type}})])


@pytest.mark.parametrize(("err_type", "expected"), [
    ("overloaded_error", Overloaded),
    ("api_error", ServerError),
    ("rate_limit_error", RateLimited),
    ("invalid_request_error", BadRequest),
])
def test_anthropic_stream_error_event_maps_by_type(err_type, expected, respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_error_stream(err_type, f"bad {SECRET}"), headers=SSE_HEADERS))
    with pytest.raises(ProviderError) as info:
        list(AnthropicProvider().stream(PROMPT, "claude", Credential("anthropic", SECRET), OPTS))
    assert type(info.value) is expected
    assert SECRET not in str(info.value) and SECRET not in str(info.value.body)


async def test_anthropic_async_stream_overloaded_is_retryable(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("a",), fail_after=0), headers=SSE_HEADERS))
    with pytest.raises(Overloaded):
        async for _ in AnthropicProvider().astream(PROMPT, "claude",
                                                   Credential("anthropic", SECRET), OPTS):
            pass


@pytest.mark.parametrize(("err_type", "expected"), [
    ("server_error", ServerError),
    ("rate_limit_exceeded", RateLimited),
    ("invalid_request_error", BadRequest),
])
def test_openai_stream_error_chunk_maps_by_type(err_type, expected, respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_error_stream(err_type), headers=SSE_HEADERS))
    with pytest.raises(ProviderError) as info:
        list(OpenAIProvider().stream(PROMPT, "gpt-4o", Credential("openai", SECRET), OPTS))
    assert type(info.value) is expected


def test_overloaded_anthropic_stream_fails_over_before_first_token(respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-999888777")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("a",), fail_after=0), headers=SSE_HEADERS))
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=_sse([
        (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "delta": {"content": "streamed backup"},
                             "finish_reason": "stop"}]}), (None, "[DONE]")]),
        headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), OPTS)
    assert "".join(d.text for d in s) == "streamed backup"
    assert s.attempts[0].status == "529"
    assert s.attempts[-1].status == "ok"


def test_a_redirect_keeps_its_own_status(respx_mock) -> None:
    """Only a 2xx stream takes its status from the error type; a 3xx stays what it was."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        302, text="<html>moved</html>"))   # no location: the SDK cannot follow it
    with pytest.raises(ProviderError) as info:
        AnthropicProvider().complete(PROMPT, "claude", Credential("anthropic", SECRET), OPTS)
    assert info.value.status_code == 302 and type(info.value) is BadRequest
