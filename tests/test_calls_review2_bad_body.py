"""A 200 whose body is not the API's response (a proxy's HTML page, a JSON of another shape).

The SDKs hand back the raw text (or a model missing its fields) and the adapters crashed with an
AttributeError, which the call loop treats as a bug: no failover, and the REPL showed a traceback
name. It is the endpoint failing, so it is a retryable ServerError that fails over.
"""

from __future__ import annotations

import httpx
import pytest
from routing_doubles import failover_loop

from hermes_core.errors import ServerError
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import ANTHROPIC_URL, OPENAI_URL, anthropic_message
from hermes_core.types import Credential, Message, Prompt

SECRET = "sk-review2-SECRET-badbody-0001"
PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=5)

BODIES = {
    "html": lambda: httpx.Response(200, text=f"<html>proxy login {SECRET}</html>",
                                   headers={"content-type": "text/html"}),
    "other-json": lambda: httpx.Response(200, json={"status": "ok", "echo": SECRET}),
    "truncated-json": lambda: httpx.Response(200, content=b'{"id": "x", "cho',
                                             headers={"content-type": "application/json"}),
}


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_unexpected_200_body_is_a_server_error(kind, body, respx_mock) -> None:
    url, provider = ((OPENAI_URL, OpenAIProvider()) if kind == "openai"
                     else (ANTHROPIC_URL, AnthropicProvider()))
    respx_mock.post(url).mock(side_effect=lambda r: BODIES[body]())
    cred = Credential(kind, SECRET)
    with pytest.raises(ServerError) as info:
        provider.complete(PROMPT, "m", cred, OPTS)
    assert SECRET not in str(info.value)
    with pytest.raises(ServerError):
        await provider.acomplete(PROMPT, "m", cred, OPTS)


def test_call_loop_fails_over_past_a_proxy_page(respx_mock) -> None:
    loop, router = failover_loop("openai", SECRET, "sk-ant-review2-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: BODIES["html"]())
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, json=anthropic_message("from backup", model="claude-haiku")))
    done, attempts = loop.complete(PROMPT, router.select("hi"), OPTS)
    assert done.text == "from backup"
    assert [a.decision for a in attempts] == ["failover", "done"]
    assert attempts[0].status == "ServerError"   # not "200": the audit must not read as a success
    assert all(k.in_flight == 0 for k in loop.pool.status())
