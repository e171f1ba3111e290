"""A stream event whose JSON is cut or malformed (a proxy truncating lines) is a server failure.

The SDKs raise ``json.JSONDecodeError`` from the stream iterator; it escaped the adapters as a
plain ValueError, so the call loop treated it as a bug: no failover before the first token and a
non-hermes exception for the caller.
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

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=16, timeout_s=5)
SECRET = "sk-review2-SECRET-malformed-01"
BROKEN = {
    "openai": (OPENAI_URL, b'data: {"id": "x", "cho\n\n'),
    "anthropic": (ANTHROPIC_URL, b'event: message_start\ndata: {"type": "message_st\n\n'),
}


@pytest.mark.parametrize("kind", BROKEN)
async def test_malformed_event_is_a_server_error(kind: str, respx_mock) -> None:
    url, body = BROKEN[kind]
    provider = OpenAIProvider() if kind == "openai" else AnthropicProvider()
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=body, headers=SSE_HEADERS))
    await assert_both_streams_raise(provider, Credential(kind, SECRET), ServerError)


def test_call_loop_fails_over_past_a_malformed_stream(respx_mock) -> None:
    loop, router = failover_loop("openai", SECRET, "sk-ant-review2-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=BROKEN["openai"][1], headers=SSE_HEADERS))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.decision for a in s.attempts] == ["failover", "done"]
    assert all(k.in_flight == 0 for k in loop.pool.status())
