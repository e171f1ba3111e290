"""Tests of ``hermes_core/providers/openai.py``.

An OpenAI refusal (``message.refusal`` with ``content: null``) is the model's answer.

Structured-output and safety refusals arrive in ``refusal``, not ``content``; the adapter read only
``content`` and returned an empty reply, so the user saw nothing and the history kept an empty turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import Settings, load_settings
from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    IncompleteResponse,
    ProviderError,
    RateLimited,
    ServerError,
    error_from_status,
)
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider, render_openai
from hermes_core.redact import redact
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import (
    CachePlan,
    Credential,
    Message,
    Prompt,
    ToolCall,
    ToolSpec,
)
from tests.providers.conftest import (
    CRED,
    OPENAI_OPTS,
    OPENAI_PROMPT,
    OPTS_ERR,
    OPTS_RULES,
    PROMPT_ERR,
    REFUSAL,
    SECRET_ERR,
    _chunks_sse,
    cut_openai_stream,
    refusal_stream,
)


def test_complete_returns_the_refusal_text(respx_mock) -> None:
    body = openai_chat_completion("ignored")
    body["choices"][0]["message"].update(content=None, refusal=REFUSAL)
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=body))
    done = OpenAIProvider().complete(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS)
    assert done.text == REFUSAL and done.finish_reason == "refusal"


def test_stream_yields_the_refusal_text(respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=refusal_stream(), headers=SSE_HEADERS))
    deltas = list(OpenAIProvider().stream(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS))
    assert "".join(d.text for d in deltas) == REFUSAL
    assert deltas[-1].finish_reason == "refusal"   # Anthropic's word: the model declined


async def test_async_stream_yields_the_refusal_text(respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=refusal_stream(), headers=SSE_HEADERS))
    text = ""
    async for d in OpenAIProvider().astream(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS):
        text += d.text
    assert text == REFUSAL


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


PRIMARY = "https://primary.test/v1"


PRIMARY_URL = PRIMARY + "/chat/completions"


def settings_for(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_settings({
        "home": str(home),
        "llm": {"stream": True, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
             "endpoint": PRIMARY},
            {"name": "backup", "type": "anthropic", "priority": 2, "models": ["gpt-4o"]}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
        "skill_utils": {"enabled": False}, "context_engine": {"enabled": False},
    }, env={})


def backup(respx_mock: object) -> object:
    return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("whole",)),
                                             headers=SSE_HEADERS))


async def _astream(agent: Agent, text: str) -> str:
    return "".join([p async for p in agent.astream(text)])


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_before_the_first_token_fails_over(respx_mock: object, tmp_path: Path,
                                                        mode: str) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_openai_stream(()),
                                             headers=SSE_HEADERS))
    used = backup(respx_mock)
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        text = ("".join(agent.stream("hi")) if mode == "stream"
                else asyncio.run(_astream(agent, "hi")))
    finally:
        agent.close()
    assert text == "whole" and used.called  # type: ignore[attr-defined]
    assert [m.content for m in agent.history] == ["hi", "whole"]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_after_tokens_raises_incomplete_and_keeps_the_history(
        respx_mock: object, tmp_path: Path, mode: str) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_openai_stream(("Hello", " wor")),
                                             headers=SSE_HEADERS))
    backup(respx_mock)
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    shown: list[str] = []
    try:
        with pytest.raises(IncompleteResponse) as ei:
            if mode == "stream":
                for piece in agent.stream("hi"):
                    shown.append(piece)
            else:
                asyncio.run(_astream(agent, "hi"))
    finally:
        agent.close()
    assert ei.value.partial_text == "Hello wor"
    assert agent.history == [] and agent.last_reply is None
    if mode == "stream":
        assert "".join(shown) == "Hello wor"


def test_a_whole_stream_is_still_a_reply(respx_mock: object, tmp_path: Path) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("Hello", "!")),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        assert "".join(agent.stream("hi")) == "Hello!"
    finally:
        agent.close()
    assert json.loads(json.dumps(agent.history[-1].content)) == "Hello!"


def _rendered_payloads() -> list[dict[str, Any]]:
    """What render_openai produces across its branches: tools, tool rounds, per-turn context,
    structured output, stop/seed/temperature, a reasoning model, a compatible endpoint."""
    tool = ToolSpec("lookup", "find a thing", {"type": "object", "properties": {
        "q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]})
    call = ToolCall("call_1", "lookup", '{"q": "x"}')
    rounds = Prompt(system="sys", context="ctx", tools=(tool,), messages=(
        Message("user", "find x"), Message("assistant", "", tool_calls=(call,)),
        Message("tool", "found", tool_call_id="call_1", name="lookup"),
        Message("user", "and y?", name="ann")))
    schema = {"name": "Answer", "description": "d", "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}}}
    return [
        render_openai(OPENAI_PROMPT, "gpt-4o-mini", CallOptions()),
        render_openai(rounds, "gpt-4o-mini", CallOptions(
            temperature=0.2, stop=("END",), seed=7, tool_choice="lookup", response_format=schema)),
        render_openai(rounds, "o3-mini", CallOptions(reasoning_effort="low", tool_choice="auto")),
        render_openai(Prompt(system="s", messages=(), context="only context"), "llama3", CallOptions(),
                      official=False),
    ]


@pytest.mark.parametrize("payload", _rendered_payloads())
def test_a_rendered_payload_is_what_the_sdks_typed_create_would_send(payload: dict[str, Any]):
    """complete() posts the rendered payload without ``create``'s walk over the typed request
    schema; that walk must leave every payload render_openai makes unchanged (else the bypass
    would send something create would not)."""
    from openai._utils import maybe_transform
    from openai.types.chat import completion_create_params

    sent = json.loads(json.dumps(payload))
    assert maybe_transform(payload, completion_create_params.CompletionCreateParamsNonStreaming) \
        == sent
    streamed = {**payload, "stream": True, "stream_options": {"include_usage": True}}
    assert maybe_transform(streamed, completion_create_params.CompletionCreateParamsStreaming) \
        == json.loads(json.dumps(streamed))


@pytest.mark.parametrize("use_async", [False, True])
def test_complete_sends_the_same_request_as_the_sdks_create(respx_mock: Any, use_async: bool):
    route = respx_mock.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, json=openai_chat_completion("hello")))
    provider = OpenAIProvider()
    payload = render_openai(OPENAI_PROMPT, "gpt-4o-mini", CallOptions(seed=3))
    if use_async:
        async def both() -> Any:
            done = await provider.acomplete(OPENAI_PROMPT, "gpt-4o-mini", CRED, CallOptions(seed=3))
            client = provider._clients.get(CRED, is_async=True)   # the same client, its way
            await client.chat.completions.create(**payload, timeout=60.0)
            return done

        done = asyncio.run(both())
    else:
        done = provider.complete(OPENAI_PROMPT, "gpt-4o-mini", CRED, CallOptions(seed=3))
        provider._clients.get(CRED).chat.completions.create(**payload, timeout=60.0)
    ours, theirs = route.calls[-2].request, route.calls[-1].request
    assert done.text == "hello"
    assert json.loads(ours.content) == json.loads(theirs.content) == payload
    assert ours.url == theirs.url and ours.method == theirs.method == "POST"
    skip = {"x-stainless-retry-count", "x-stainless-read-timeout", "x-stainless-async",
            "x-stainless-timeout"}
    assert ({k: v for k, v in ours.headers.items() if k not in skip}
            == {k: v for k, v in theirs.headers.items() if k not in skip})
    assert ours.headers["authorization"] == f"Bearer {CRED.secret}"


@pytest.mark.parametrize("use_async", [False, True])
def test_stream_sends_the_same_request_as_the_sdks_create(respx_mock: Any, use_async: bool):
    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(("hel", "lo")), headers=SSE_HEADERS))
    provider = OpenAIProvider()
    opts = CallOptions(seed=3, idle_timeout_s=5)
    payload = {**render_openai(OPENAI_PROMPT, "gpt-4o-mini", opts), "stream": True,
               "stream_options": {"include_usage": True}}
    if use_async:
        async def both() -> str:
            text = "".join([d.text async for d in provider.astream(OPENAI_PROMPT, "gpt-4o-mini", CRED, opts)
                            if d.text])
            client = provider._clients.get(CRED, is_async=True)
            stream = await client.chat.completions.create(**payload, timeout=60.0)
            async for _ in stream:
                pass
            return text

        text = asyncio.run(both())
    else:
        text = "".join(d.text for d in provider.stream(OPENAI_PROMPT, "gpt-4o-mini", CRED, opts) if d.text)
        for _ in provider._clients.get(CRED).chat.completions.create(**payload, timeout=60.0):
            pass
    ours, theirs = route.calls[-2].request, route.calls[-1].request
    assert text == "hello"
    assert json.loads(ours.content) == json.loads(theirs.content) == payload
    skip = {"x-stainless-retry-count", "x-stainless-read-timeout", "x-stainless-timeout"}
    assert ({k: v for k, v in ours.headers.items() if k not in skip}
            == {k: v for k, v in theirs.headers.items() if k not in skip})


def test_reasoning_tokens_are_output_tokens_and_counted_apart(respx_mock: Any) -> None:
    body = openai_chat_completion("ok", model="o3", prompt_tokens=100, completion_tokens=900,
                                  cached_tokens=40)
    body["usage"]["completion_tokens_details"]["reasoning_tokens"] = 850
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=body))
    usage = OpenAIProvider().complete(OPENAI_PROMPT, "o3", CRED, OPENAI_OPTS).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (60, 40, 900)
    assert usage.reasoning_tokens == 850 and usage.reported


# A chunk stream ends its answer with a finish_reason; what a proxy sends after it (the same
# stream played twice, a retried upstream's answer joined on) is not part of the answer: it was
# appended ("HiHi", "Hi and more").

def _chunk(content: str | None = None, finish: str | None = None) -> tuple[None, dict[str, Any]]:
    delta = {"content": content} if content is not None else {}
    return (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("after", [[_chunk("Hi"), _chunk(finish="stop")], [_chunk(" and more")]])
def test_content_after_the_finish_reason_is_not_part_of_the_answer(
        respx_mock: Any, after: list[Any], use_async: bool,
        stream_deltas: Callable[..., list[Any]]) -> None:
    usage = (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                    "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2,
                                             "total_tokens": 6}})
    events = [_chunk("Hi"), _chunk(finish="stop"), *after, usage, (None, "[DONE]")]
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_sse(events), headers=SSE_HEADERS))
    deltas = stream_deltas(OpenAIProvider(), OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS, use_async=use_async)
    assert "".join(d.text for d in deltas) == "Hi"
    assert deltas[-1].finish_reason == "stop" and deltas[-1].usage.output_tokens == 2


def test_a_call_s_nan_arguments_are_echoed_as_strict_json() -> None:
    """A model's ``{"x": NaN}`` went back in the follow-up as it came: strict servers (llama.cpp,
    Go and Rust gateways) refuse the request. The rest of the text is kept as the model wrote it."""
    calls = (ToolCall("c1", "f", '{"x": NaN, "note": "NaN"}'), ToolCall("c2", "f", '{"y": 1}'))
    payload = render_openai(Prompt("s", (Message("user", "hi"),
                                         Message("assistant", "", tool_calls=calls))), "gpt-4o", OPENAI_OPTS)
    sent = [c["function"]["arguments"] for c in payload["messages"][-1]["tool_calls"]]
    assert sent == ['{"x": null, "note": "NaN"}', '{"y": 1}']


# Blocks that carry no ``data:`` line: SSE dispatches no event for them (a proxy's named
# keep-alive, a reconnection hint, an event id on its own).
DATALESS_BLOCKS = {"an event with no data": b"event: keepalive\n\n",
                   "a retry line": b"retry: 3000\n\n",
                   "an id line": b"id: 7\n\n",
                   "all three": b"event: ping\nid: 8\nretry: 10\n\n"}


@pytest.mark.parametrize("block", sorted(DATALESS_BLOCKS))
@pytest.mark.parametrize("use_async", [False, True])
def test_a_stream_block_without_data_is_no_event(
        respx_mock: Any, use_async: bool, block: str,
        stream_deltas: Callable[..., list[Any]]) -> None:
    """The SDK's decoder dispatched a block of only ``event:``, ``id:`` or ``retry:`` fields as
    an event whose data is empty, and parsing it as a chunk raised: the whole answer became a
    malformed-event ServerError (a failover) though every chunk of it had arrived."""
    events = [e + b"\n\n" for e in openai_chat_stream(("Hel", "lo")).split(b"\n\n") if e]
    extra = DATALESS_BLOCKS[block]
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS, content=b"".join([extra, events[0], extra, *events[1:]])))
    deltas = stream_deltas(OpenAIProvider(), OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS, use_async=use_async)
    assert "".join(d.text for d in deltas) == "Hello"
    assert deltas[-1].usage.reported


def test_openai_render_prefix_first_and_cache_key():
    prompt = Prompt(system="S", messages=(Message("user", "q"),), context="CTX",
                    cache=CachePlan(system=True, prompt_cache_key="abc"))
    opts = CallOptions(max_tokens=64, timeout_s=5)   # test_sdk.py's OPENAI_OPTS, where it came from
    payload = OpenAIProvider().render(prompt, "gpt-4o", opts)
    assert payload["messages"][0] == {"role": "system", "content": "S"}
    assert payload["prompt_cache_key"] == "abc"
    assert payload["messages"][1]["content"][0]["text"] == "CTX"
    compat = OpenAIProvider("local", endpoint="http://localhost:11434/v1").render(prompt, "m", opts)
    assert "prompt_cache_key" not in compat and compat["max_tokens"] == 64


@pytest.mark.parametrize("deltas", [
    # Ollama: every call of a parallel set arrives whole, all with index 0
    [[{"index": 0, "id": "call_a", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "git"}'}}],
     [{"index": 0, "id": "call_b", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]],
    # older compatible servers: no index at all
    [[{"id": "call_a", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": '}}],
     [{"function": {"arguments": '"git"}'}}],
     [{"id": "call_b", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]],
])
def test_openai_compatible_stream_keeps_parallel_tool_calls_apart(deltas, respx_mock):
    from hermes_core.providers.openai import OpenAIProvider

    respx_mock.post("http://127.0.0.1:11434/v1/chat/completions").mock(
        return_value=httpx.Response(200, content=_chunks_sse(deltas), headers=SSE_HEADERS))
    provider = OpenAIProvider("ollama", "http://127.0.0.1:11434/v1")
    out = list(provider.stream(Prompt("s", (Message("user", "hi"),)), "m", None, OPTS_RULES))
    calls = [d.tool_call for d in out if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_a", "skill_view", {"name": "git"}), ("call_b", "skill_view", {"name": "docker"})]


def test_openai_compatible_stream_without_call_ids_gets_distinct_ids(respx_mock):
    from hermes_core.providers.openai import OpenAIProvider

    deltas = [[{"index": 0, "type": "function",
                "function": {"name": "skill_view", "arguments": '{"name": "git"}'}}],
              [{"index": 1, "type": "function",
                "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]]
    respx_mock.post("http://127.0.0.1:8000/v1/chat/completions").mock(
        return_value=httpx.Response(200, content=_chunks_sse(deltas), headers=SSE_HEADERS))
    provider = OpenAIProvider("vllm", "http://127.0.0.1:8000/v1")
    out = list(provider.stream(Prompt("s", (Message("user", "hi"),)), "m", None, OPTS_RULES))
    ids = [d.tool_call.id for d in out if d.tool_call is not None]
    assert len(ids) == 2 and all(ids) and len(set(ids)) == 2   # tool results can answer each


def test_openai_compatible_completion_without_call_ids_gets_distinct_ids(respx_mock):
    from hermes_core.providers.openai import OpenAIProvider
    from hermes_core.testing import openai_chat_completion

    body = openai_chat_completion("", tool_calls=[ToolCall("x", "skill_view", '{"name": "git"}'),
                                                  ToolCall("y", "skill_view", '{"name": "a"}')])
    for call in body["choices"][0]["message"]["tool_calls"]:
        del call["id"]
    respx_mock.post("http://127.0.0.1:8000/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=body))
    done = OpenAIProvider("vllm", "http://127.0.0.1:8000/v1").complete(
        Prompt("s", (Message("user", "hi"),)), "m", None, OPTS_RULES)
    ids = [c.id for c in done.tool_calls]
    assert len(ids) == 2 and all(isinstance(i, str) and i for i in ids) and len(set(ids)) == 2


def openai_error_stream(err_type: str, message: str = "boom") -> bytes:
    return _sse([(None, {"error": {"message": message, "type": err_type}})])


@pytest.mark.parametrize(("err_type", "expected"), [
    ("server_error", ServerError),
    ("rate_limit_exceeded", RateLimited),
    ("invalid_request_error", BadRequest),
])
def test_openai_stream_error_chunk_maps_by_type(err_type, expected, respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_error_stream(err_type), headers=SSE_HEADERS))
    with pytest.raises(ProviderError) as info:
        list(OpenAIProvider().stream(PROMPT_ERR, "gpt-4o", Credential("openai", SECRET_ERR), OPTS_ERR))
    assert type(info.value) is expected


@pytest.mark.parametrize(("error", "expected"), [
    # LiteLLM, vLLM and other compatible servers put the HTTP status in ``code``
    ({"message": "rate limited", "type": "None", "code": 429}, RateLimited),
    ({"message": "rate limited", "code": "429"}, RateLimited),
    ({"message": "bad", "type": "BadRequestError", "code": 400}, BadRequest),
    ({"message": "boom", "code": 503}, ServerError),
    ({"message": "what", "code": 200}, ServerError),   # no error status: the server failing
])
def test_openai_stream_error_chunk_with_an_http_status_code_maps_by_it(error, expected,
                                                                        respx_mock) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_sse([(None, {"error": error})]), headers=SSE_HEADERS))
    with pytest.raises(ProviderError) as info:
        list(OpenAIProvider().stream(PROMPT_ERR, "gpt-4o", Credential("openai", SECRET_ERR), OPTS_ERR))
    assert type(info.value) is expected


def test_openai_error_chunk_mid_stream_echoing_the_key_keeps_it_out(respx_mock) -> None:
    """A provider that streams a token, then an error chunk quoting the key it received (any
    shape): the error, its body and its headers hold the key's fingerprint at most."""
    echoed = "cu5tom.Stream.Key.7f3e19"
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=_sse([
        (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]}),
        (None, {"error": {"message": f"internal failure for key {echoed}", "type": "server_error"}})]),
        headers={**SSE_HEADERS, "x-received-key": echoed}))
    with pytest.raises(ProviderError) as info:
        list(OpenAIProvider().stream(PROMPT_ERR, "gpt-4o", Credential("openai", echoed), OPTS_ERR))
    e = info.value
    assert type(e) is ServerError and "internal failure for key" in str(e)
    for text in (str(e), repr(e.body), repr(e.headers), repr(e.args)):
        assert echoed not in text and "cu5tom.Str" not in text, text


def test_calls_without_ids_get_ids_no_earlier_round_used(respx_mock):
    """Round after round a server that sends no ids must not get call_0 again: one conversation
    holding two tool_use blocks with one id is refused by Anthropic after a failover."""
    from hermes_core.providers.openai import OpenAIProvider
    from hermes_core.testing import openai_chat_completion

    body = openai_chat_completion("", tool_calls=[ToolCall("x", "skill_view", '{"name": "git"}')])
    del body["choices"][0]["message"]["tool_calls"][0]["id"]
    deltas = [[{"index": 0, "type": "function",
                "function": {"name": "skill_view", "arguments": '{"name": "git"}'}}]]
    route = respx_mock.post("http://127.0.0.1:8000/v1/chat/completions")
    provider = OpenAIProvider("vllm", "http://127.0.0.1:8000/v1")
    prompt = Prompt("s", (Message("user", "hi"),))
    ids: list[str] = []
    for _ in range(2):
        route.mock(return_value=httpx.Response(200, json=body))
        ids += [c.id for c in provider.complete(prompt, "m", None, OPTS_RULES).tool_calls]
        route.mock(return_value=httpx.Response(200, content=_chunks_sse(deltas),
                                               headers=SSE_HEADERS))
        ids += [d.tool_call.id for d in provider.stream(prompt, "m", None, OPTS_RULES)
                if d.tool_call is not None]
    assert len(ids) == 4 and len(set(ids)) == 4, ids


def test_compatible_endpoint_used(respx_mock):
    provider = OpenAIProvider("together", endpoint="https://api.together.xyz/v1")
    route = respx_mock.post("https://api.together.xyz/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_chat_completion("from together")))
    done = provider.complete(OPENAI_PROMPT, "meta-llama/x", Credential("together", SECRET), OPENAI_OPTS)
    assert done.text == "from together" and route.called


SECRET_SHAPE = "sk-testkey-SECRET-shape-0001"


PROMPT_BODY = Prompt(system="s", messages=(Message("user", "hi"),))


OPTS_BODY = CallOptions(max_tokens=32, timeout_s=5)


@pytest.mark.parametrize("body", [
    {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []},
    {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
     "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
])
async def test_an_openai_200_with_no_message_is_a_server_error_not_an_empty_answer(
        body: dict[str, Any], respx_mock: Any) -> None:
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: httpx.Response(200, json=body))
    cred = Credential("openai", SECRET_SHAPE)
    with pytest.raises(ServerError):
        OpenAIProvider().complete(PROMPT_BODY, "m", cred, OPTS_BODY)
    with pytest.raises(ServerError):
        await OpenAIProvider().acomplete(PROMPT_BODY, "m", cred, OPTS_BODY)


def _two_choice_stream() -> bytes:
    """Choice 0 says "Hello world"; a server (or proxy) that answers ``n`` it was never asked
    for interleaves choice 1's "Bonjour", and ends choice 1 before choice 0 has finished."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
        return None, {**base, "choices": [{"index": index, "delta": delta,
                                           "finish_reason": finish}]}
    return _sse([chunk(0, {"role": "assistant", "content": ""}), chunk(0, {"content": "Hello"}),
                 chunk(1, {"content": "Bonjour"}), chunk(1, {}, "stop"),
                 chunk(0, {"content": " world"}), chunk(0, {}, "stop"),
                 (None, {**base, "choices": [], "usage": {"prompt_tokens": 5,
                                                          "completion_tokens": 4,
                                                          "total_tokens": 9}}),
                 (None, "[DONE]")])


@pytest.mark.parametrize("use_async", [False, True])
def test_a_stream_s_other_choices_are_not_joined_into_the_reply(
        respx_mock, stream_deltas, use_async: bool) -> None:
    """The request asks one choice (no ``n``): a chunk for another index is no part of it."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_two_choice_stream(), headers=SSE_HEADERS))
    deltas = stream_deltas(OpenAIProvider(), OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS,
                           use_async=use_async)
    assert "".join(d.text for d in deltas) == "Hello world"
    assert deltas[-1].finish_reason == "stop"
