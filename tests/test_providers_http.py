"""Both official SDKs at the HTTP level (respx): success, streaming, and every failure mapped."""

from __future__ import annotations

import httpx
import pytest

from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextWindowExceeded,
    Overloaded,
    RateLimited,
    ServerError,
    Timeout,
)
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.types import CachePlan, Credential, Message, Prompt, ToolCall, ToolSpec

SECRET = "sk-test-SECRET-1234567890abcdef"
OPTS = CallOptions(max_tokens=64, timeout_s=5)
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),), context="## ctx")

PROVIDERS = {
    "openai": (OpenAIProvider, "openai", OPENAI_URL, "gpt-4o-mini"),
    "anthropic": (AnthropicProvider, "anthropic", ANTHROPIC_URL, "claude-3-5-sonnet-20241022"),
}


def make(kind: str):
    cls, name, url, model = PROVIDERS[kind]
    return cls(name), Credential(name, SECRET), url, model


def ok_body(kind: str, text: str = "Hello!"):
    return openai_chat_completion(text) if kind == "openai" else anthropic_message(text)


def err_body(kind: str, status: int, message: str = "boom"):
    return openai_error(status, message) if kind == "openai" else anthropic_error(status, message)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_complete_success_sends_system_and_context(kind, respx_mock):
    provider, cred, url, model = make(kind)
    route = respx_mock.post(url).mock(return_value=httpx.Response(200, json=ok_body(kind)))
    done = provider.complete(PROMPT, model, cred, OPTS)
    assert done.text == "Hello!"
    assert done.provider == kind
    assert done.usage.output_tokens == 5
    sent = route.calls.last.request
    body = sent.content.decode()
    assert "You are Hermes." in body and "## ctx" in body
    assert SECRET in (sent.headers.get("authorization", "") + sent.headers.get("x-api-key", ""))
    assert route.call_count == 1  # max_retries=0: the SDK never retries on its own


@pytest.mark.parametrize("kind", PROVIDERS)
def test_stream_yields_text_then_usage(kind, respx_mock):
    provider, cred, url, model = make(kind)
    body = openai_chat_stream(cached_tokens=4) if kind == "openai" else anthropic_stream(cache_read=4)
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=body, headers=SSE_HEADERS))
    deltas = list(provider.stream(PROMPT, model, cred, OPTS))
    assert "".join(d.text for d in deltas) == "Hello!"
    assert deltas[-1].usage is not None and deltas[-1].usage.cache_read_tokens == 4
    assert deltas[-1].finish_reason in ("stop", "end_turn")


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_async_complete_and_stream(kind, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, json=ok_body(kind, "async!")),
        httpx.Response(200, content=openai_chat_stream() if kind == "openai" else anthropic_stream(),
                       headers=SSE_HEADERS)])
    done = await provider.acomplete(PROMPT, model, cred, OPTS)
    assert done.text == "async!"
    text = "".join([d.text async for d in provider.astream(PROMPT, model, cred, OPTS)])
    assert text == "Hello!"


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("form,expected", [("retry-after", 30.0), ("retry-after-ms", 1.5),
                                           ("http-date", 30.0), ("openai-reset", 90.0),
                                           ("anthropic-reset", 30.0)])
def test_429_retry_after_forms(kind, form, expected, respx_mock):
    provider, cred, url, model = make(kind)
    headers = retry_after_headers(form, expected)
    respx_mock.post(url).mock(return_value=httpx.Response(429, json=err_body(kind, 429), headers=headers))
    with pytest.raises(RateLimited) as info:
        provider.complete(PROMPT, model, cred, OPTS)
    assert info.value.retry_after == pytest.approx(expected, abs=1.5)
    assert info.value.status_code == 429


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("status,error", [(401, AuthenticationFailed), (403, AuthenticationFailed),
                                          (400, BadRequest), (500, ServerError), (529, Overloaded),
                                          (503, ServerError)])
def test_status_mapping(kind, status, error, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(status, json=err_body(kind, status)))
    with pytest.raises(error) as info:
        provider.complete(PROMPT, model, cred, OPTS)
    assert info.value.status_code == status


@pytest.mark.parametrize("kind", PROVIDERS)
def test_context_window_400(kind, respx_mock):
    provider, cred, url, model = make(kind)
    body = (openai_error(400, "This model's maximum context length is 128000 tokens",
                         code="context_length_exceeded") if kind == "openai"
            else anthropic_error(400, "prompt is too long: 210000 tokens > 200000 maximum"))
    respx_mock.post(url).mock(return_value=httpx.Response(400, json=body))
    with pytest.raises(ContextWindowExceeded):
        provider.complete(PROMPT, model, cred, OPTS)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_timeout_and_connection_refused(kind, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(side_effect=[httpx.ReadTimeout("slow"), httpx.ConnectError("refused")])
    with pytest.raises(Timeout):
        provider.complete(PROMPT, model, cred, OPTS)
    with pytest.raises(ConnectionFailed):
        provider.complete(PROMPT, model, cred, OPTS)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_401_echoing_the_key_never_leaks_it(kind, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(
        401, json=err_body(kind, 401, f"Incorrect API key provided: {SECRET}")))
    with pytest.raises(AuthenticationFailed) as info:
        provider.complete(PROMPT, model, cred, OPTS)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.body)
    assert cred.fingerprint in str(info.value)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_stream_error_before_first_token_maps(kind, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(429, json=err_body(kind, 429),
                                                          headers={"retry-after": "7"}))
    with pytest.raises(RateLimited) as info:
        list(provider.stream(PROMPT, model, cred, OPTS))
    assert info.value.retry_after == 7


@pytest.mark.parametrize("kind", PROVIDERS)
def test_tool_calls_pass_through(kind, respx_mock):
    provider, cred, url, model = make(kind)
    call = ToolCall("call_1", "skill_view", '{"name": "git-rebase"}')
    body = (openai_chat_completion("", tool_calls=[call]) if kind == "openai"
            else anthropic_message("", tool_calls=[call]))
    route = respx_mock.post(url).mock(return_value=httpx.Response(200, json=body))
    prompt = Prompt(system="s", messages=(Message("user", "hi"),),
                    tools=(ToolSpec("skill_view", "Load a skill", {"type": "object", "properties": {
                        "name": {"type": "string"}}}),))
    done = provider.complete(prompt, model, cred, OPTS)
    assert done.tool_calls[0].name == "skill_view"
    assert '"git-rebase"' in done.tool_calls[0].arguments
    assert "skill_view" in route.calls.last.request.content.decode()


def test_anthropic_render_cache_markers_and_limit():
    msgs = tuple(Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(9))
    prompt = Prompt(system="S" * 10, messages=msgs, context="CTX",
                    cache=CachePlan(system=True, message_indices=(4, 5, 6, 7, 8), ttl="1h"))
    payload = AnthropicProvider().render(prompt, "claude-3-5-sonnet-20241022", OPTS)
    assert payload["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    marks = sum(1 for m in payload["messages"] for b in m["content"] if "cache_control" in b)
    assert marks + 1 == 4  # never more than four breakpoints in total
    last = payload["messages"][-1]["content"]
    assert last[0] == {"type": "text", "text": "CTX"}  # per-turn context leads the last user message


def test_openai_render_prefix_first_and_cache_key():
    prompt = Prompt(system="S", messages=(Message("user", "q"),), context="CTX",
                    cache=CachePlan(system=True, prompt_cache_key="abc"))
    payload = OpenAIProvider().render(prompt, "gpt-4o", OPTS)
    assert payload["messages"][0] == {"role": "system", "content": "S"}
    assert payload["prompt_cache_key"] == "abc"
    assert payload["messages"][1]["content"][0]["text"] == "CTX"
    compat = OpenAIProvider("local", endpoint="http://localhost:11434/v1").render(prompt, "m", OPTS)
    assert "prompt_cache_key" not in compat and compat["max_tokens"] == 64


def test_compatible_endpoint_used(respx_mock):
    provider = OpenAIProvider("together", endpoint="https://api.together.xyz/v1")
    route = respx_mock.post("https://api.together.xyz/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_chat_completion("from together")))
    done = provider.complete(PROMPT, "meta-llama/x", Credential("together", SECRET), OPTS)
    assert done.text == "from together" and route.called
