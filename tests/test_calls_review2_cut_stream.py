"""An Anthropic stream closed cleanly mid-answer (a proxy or load balancer ending the connection
without an error) is incomplete, not a whole answer: before the first token the call loop fails
over; after it the caller gets the error instead of a silently truncated reply."""

from __future__ import annotations

import httpx
import pytest
from routing_doubles import assert_both_streams_raise, failover_loop

from hermes_core.errors import ServerError
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.testing import ANTHROPIC_URL, OPENAI_URL, SSE_HEADERS, anthropic_stream, openai_chat_stream
from hermes_core.types import Credential, Message, Prompt

SECRET = "sk-ant-cut-SECRET-0123456789"
PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


def _cut(body: bytes, keep_events: int) -> bytes:
    """The first ``keep_events`` SSE events of ``body``, as a connection closed early would leave."""
    events = body.split(b"\n\n")
    return b"\n\n".join(events[:keep_events]) + b"\n\n"


def test_the_builder_stream_really_ends_with_message_stop() -> None:
    body = anthropic_stream(("Hel", "lo"))
    assert b"message_stop" in body.split(b"\n\n")[-2]


@pytest.mark.parametrize("keep", [1, 3, 5])      # after message_start, mid-text, before the stop
async def test_a_cut_stream_is_a_server_error(keep: int, respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("Hel", "lo", " there")), keep), headers=SSE_HEADERS))
    await assert_both_streams_raise(AnthropicProvider(), Credential("anthropic", SECRET), ServerError)


def test_a_whole_stream_still_passes(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("Hel", "lo")), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "m", Credential("anthropic", SECRET), _opts()))
    assert "".join(d.text for d in deltas) == "Hello" and deltas[-1].finish_reason == "end_turn"


def test_cut_before_the_first_token_fails_over(respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-777666555")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("never",)), 2), headers=SSE_HEADERS))
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), _opts())
    assert "".join(d.text for d in s) == "from backup"


def test_cut_after_the_first_token_reaches_the_caller(respx_mock) -> None:
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
