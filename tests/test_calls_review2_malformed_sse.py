"""A stream event whose JSON is cut or malformed (a proxy truncating lines) is a server failure.

The SDKs raise ``json.JSONDecodeError`` from the stream iterator; it escaped the adapters as a
plain ValueError, so the call loop treated it as a bug: no failover before the first token and a
non-hermes exception for the caller.
"""

from __future__ import annotations

import random

import httpx
import pytest
from routing_doubles import FakeClock

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool_state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.errors import ServerError
from hermes_core.providers import build_providers
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
    cred = Credential(kind, SECRET)
    with pytest.raises(ServerError):
        list(provider.stream(PROMPT, "m", cred, OPTS))
    with pytest.raises(ServerError):
        async for _ in provider.astream(PROMPT, "m", cred, OPTS):
            pass


def test_call_loop_fails_over_past_a_malformed_stream(respx_mock) -> None:
    settings = load_settings({
        "llm": {"routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"]},
            {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": SECRET}]},
                        "backup": {"keys": [{"key": "sk-ant-review2-SECRET-0002"}]}},
        "credential_pool": {"retries_per_provider": 0},
    })
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=BROKEN["openai"][1], headers=SSE_HEADERS))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, Router.from_settings(settings).select("hi"), OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.decision for a in s.attempts] == ["failover", "done"]
    assert all(k.in_flight == 0 for k in pool.status())
