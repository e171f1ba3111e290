"""A stream that delivers no event at all (a proxy's HTML page, an empty body) is a failure.

The SDKs parse such a body as an SSE stream with no events; the adapters then ended the stream
with an empty usage delta, which the call loop took as a successful, empty answer: no failover,
an empty assistant turn in the history.
"""

from __future__ import annotations

import httpx
import pytest
from routing_doubles import assert_both_streams_raise, failover_loop

from hermes_core.errors import ServerError
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import ANTHROPIC_URL, OPENAI_URL, SSE_HEADERS, anthropic_stream
from hermes_core.types import Credential, Message, Prompt

SECRET = "sk-review2-SECRET-empty-0001"
PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=5)

BODIES = {
    "html": lambda: httpx.Response(200, text="<html>gateway</html>",
                                   headers={"content-type": "text/html"}),
    "empty-sse": lambda: httpx.Response(200, content=b"", headers=SSE_HEADERS),
    "done-only": lambda: httpx.Response(200, content=b"data: [DONE]\n\n", headers=SSE_HEADERS),
}


def _provider(kind: str) -> tuple[str, OpenAIProvider | AnthropicProvider]:
    return (OPENAI_URL, OpenAIProvider()) if kind == "openai" else (ANTHROPIC_URL,
                                                                     AnthropicProvider())


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_stream_without_any_event_is_a_server_error(kind, body, respx_mock) -> None:
    url, provider = _provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: BODIES[body]())
    await assert_both_streams_raise(provider, Credential(kind, SECRET), ServerError)


def test_a_real_empty_answer_is_still_an_answer(respx_mock) -> None:
    """A well-formed stream with no text (e.g. max_tokens hit at once) is not an error."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(()), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "m", Credential("anthropic", SECRET), OPTS))
    assert deltas[-1].finish_reason == "end_turn"


def test_call_loop_fails_over_past_an_empty_stream(respx_mock) -> None:
    loop, router = failover_loop("openai", SECRET, "sk-ant-review2-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: BODIES["html"]())
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.decision for a in s.attempts] == ["failover", "done"]
