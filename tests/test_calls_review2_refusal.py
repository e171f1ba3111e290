"""An OpenAI refusal (``message.refusal`` with ``content: null``) is the model's answer.

Structured-output and safety refusals arrive in ``refusal``, not ``content``; the adapter read only
``content`` and returned an empty reply, so the user saw nothing and the history kept an empty turn.
"""

from __future__ import annotations

import httpx

from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import OPENAI_URL, SSE_HEADERS, openai_chat_completion
from hermes_core.testing.builders import _sse
from hermes_core.types import Credential, Message, Prompt

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
CRED = Credential("openai", "sk-review2-SECRET-refusal-0001")
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
