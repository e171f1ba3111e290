"""Tests of ``hermes_core/providers/openai.py``.

An OpenAI refusal (``message.refusal`` with ``content: null``) is the model's answer.

Structured-output and safety refusals arrive in ``refusal``, not ``content``; the adapter read only
``content`` and returned an empty reply, so the user saw nothing and the history kept an empty turn.
"""

from __future__ import annotations

import httpx
import pytest

from hermes_core.errors import AuthenticationFailed, error_from_status
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.redact import redact
from hermes_core.testing import OPENAI_URL, SSE_HEADERS, openai_chat_completion
from hermes_core.testing.builders import _sse
from hermes_core.types import Credential, Message, Prompt

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
CRED = Credential("openai", "sk-testkey-SECRET-refusal-0001")
OPTS = CallOptions(max_tokens=32, timeout_s=5)
REFUSAL = "I'm sorry, I can't help with that."


def test_complete_returns_the_refusal_text(respx_mock) -> None:
    body = openai_chat_completion("ignored")
    body["choices"][0]["message"].update(content=None, refusal=REFUSAL)
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=body))
    done = OpenAIProvider().complete(PROMPT, "gpt-4o", CRED, OPTS)
    assert done.text == REFUSAL


def _refusal_stream() -> bytes:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    return _sse([
        (None, {**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "role": "assistant", "content": None, "refusal": ""}}]}),
        (None, {**base, "choices": [{"index": 0, "finish_reason": None,
                                     "delta": {"refusal": REFUSAL[:9]}}]}),
        (None, {**base, "choices": [{"index": 0, "finish_reason": "stop",
                                     "delta": {"refusal": REFUSAL[9:]}}]}),
        (None, "[DONE]")])


def test_stream_yields_the_refusal_text(respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_refusal_stream(), headers=SSE_HEADERS))
    deltas = list(OpenAIProvider().stream(PROMPT, "gpt-4o", CRED, OPTS))
    assert "".join(d.text for d in deltas) == REFUSAL
    assert deltas[-1].finish_reason == "stop"


async def test_async_stream_yields_the_refusal_text(respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_refusal_stream(), headers=SSE_HEADERS))
    text = ""
    async for d in OpenAIProvider().astream(PROMPT, "gpt-4o", CRED, OPTS):
        text += d.text
    assert text == REFUSAL


# An error message cut at its length limit must not keep the first part of an echoed key.
#
# ``error_from_status`` cut the provider's message to 500 characters and redacted afterwards: a key
# straddling the cut was no longer the exact secret nor long enough for the key patterns, so its
# first characters reached the exception text, the REPL and logs.

# no sk- prefix: a custom gateway key only the exact-secret net can catch
SECRET = "gw-Zq8RtY2pLm4nB6vC9xK1jH3dF5sA7"


@pytest.mark.parametrize("cut", [4, 8, 20, len(SECRET) - 1])
def test_key_straddling_the_cut_is_not_partially_shown(cut: int) -> None:
    message = "x" * (500 - cut) + SECRET + " is not valid"
    err = error_from_status(401, {}, {"error": {"message": message}}, provider="gateway",
                            redact=lambda s: redact(s, [SECRET]))
    assert SECRET[:cut] not in str(err)
    assert SECRET[:cut] not in str(err.body)


def test_http_level_long_401_body(respx_mock) -> None:
    message = "y" * 490 + SECRET
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        401, json={"error": {"message": message, "type": "invalid_request_error"}}))
    with pytest.raises(AuthenticationFailed) as info:
        OpenAIProvider().complete(Prompt(system="s", messages=(Message("user", "hi"),)),
                                  "gpt-4o", Credential("openai", SECRET), CallOptions())
    assert SECRET[:10] not in str(info.value)
