"""A stream that delivers no event at all (a proxy's HTML page, an empty body) is a failure.

The SDKs parse such a body as an SSE stream with no events; the adapters then ended the stream
with an empty usage delta, which the call loop took as a successful, empty answer: no failover,
an empty assistant turn in the history.
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
    cred = Credential(kind, SECRET)
    with pytest.raises(ServerError):
        list(provider.stream(PROMPT, "m", cred, OPTS))
    with pytest.raises(ServerError):
        async for _ in provider.astream(PROMPT, "m", cred, OPTS):
            pass


def test_a_real_empty_answer_is_still_an_answer(respx_mock) -> None:
    """A well-formed stream with no text (e.g. max_tokens hit at once) is not an error."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(()), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "m", Credential("anthropic", SECRET), OPTS))
    assert deltas[-1].finish_reason == "end_turn"


def test_call_loop_fails_over_past_an_empty_stream(respx_mock) -> None:
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
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: BODIES["html"]())
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, Router.from_settings(settings).select("hi"), OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.decision for a in s.attempts] == ["failover", "done"]
