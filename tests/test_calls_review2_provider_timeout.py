"""A provider's ``timeout_s`` ("per-attempt timeout for this provider") bounds its attempts.

The adapters built their SDK clients with it but passed ``timeout=options.timeout_s`` on every
call, which overrides the client's default: a provider configured with ``timeout_s: 5`` (fail over
fast when the primary hangs) still waited the full ``llm.request_timeout_s`` (60 s).
The attempt timeout is now the shorter of the two (and the call loop keeps it within the deadline).
"""

from __future__ import annotations

import httpx
import pytest

from hermes_core.config import load_settings
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.types import Credential, Message, Prompt

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
SETTINGS = load_settings({"llm": {"routing": {"default_model": "gpt-4o", "providers": [
    {"name": "openai", "type": "openai", "models": ["gpt-4o"], "timeout_s": 5},
    {"name": "anthropic", "type": "anthropic", "models": ["claude"], "timeout_s": 5}]}}})
CASES = {
    "openai": (OPENAI_URL, openai_chat_completion("ok"), openai_chat_stream(("ok",))),
    "anthropic": (ANTHROPIC_URL, anthropic_message("ok"), anthropic_stream(("ok",))),
}


def _read_timeout(request: httpx.Request) -> float:
    return float(request.extensions["timeout"]["read"])


@pytest.mark.parametrize("kind", CASES)
async def test_provider_timeout_caps_each_attempt(kind: str, respx_mock) -> None:
    url, body, sse = CASES[kind]
    provider = build_providers(SETTINGS)[kind]
    cred = Credential(kind, "sk-review2-SECRET-timeout-0001")
    seen: list[float] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(_read_timeout(request))
        if b'"stream": true' in request.content or b'"stream":true' in request.content:
            return httpx.Response(200, content=sse, headers=SSE_HEADERS)
        return httpx.Response(200, json=body)

    respx_mock.post(url).mock(side_effect=answer)
    slow = CallOptions(timeout_s=60)
    provider.complete(PROMPT, "m", cred, slow)
    await provider.acomplete(PROMPT, "m", cred, slow)
    list(provider.stream(PROMPT, "m", cred, slow))
    async for _ in provider.astream(PROMPT, "m", cred, slow):
        pass
    provider.complete(PROMPT, "m", cred, CallOptions(timeout_s=2))  # the deadline's cap wins
    assert seen == [5.0, 5.0, 5.0, 5.0, 2.0]
