"""Secrets echoed back by a proxy never survive into an error, whatever shape the body has."""

from __future__ import annotations

import httpx
import pytest

from hermes_core.errors import AuthenticationFailed, BadRequest
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import ANTHROPIC_URL, OPENAI_URL
from hermes_core.types import Credential, Message, Prompt

SECRET = "tg-0123456789abcdefSECRET"     # not key-shaped: only the exact-secret net catches it
PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
KINDS = {"openai": (OpenAIProvider, OPENAI_URL, "gpt-4o"),
         "anthropic": (AnthropicProvider, ANTHROPIC_URL, "claude-3-5-sonnet-20241022")}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status, error", [(401, AuthenticationFailed), (400, BadRequest)])
def test_a_json_array_body_echoing_the_key_is_redacted(kind, status, error, respx_mock):
    cls, url, model = KINDS[kind]
    echoed = [{"message": "gateway rejected the request",
               "received_headers": {"authorization": f"Bearer {SECRET}", "x-api-key": SECRET}}]
    respx_mock.post(url).mock(return_value=httpx.Response(status, json=echoed))
    with pytest.raises(error) as info:
        cls(kind).complete(PROMPT, model, Credential(kind, SECRET), CallOptions(timeout_s=5))
    e = info.value
    assert SECRET not in str(e) and SECRET not in repr(e.body) and SECRET not in repr(e.args)
    assert "gateway rejected" in str(e.body)
