"""Tests of ``hermes_core/providers/refused.py``: which 400s name an optional field to send
otherwise, and the payload rewritten around what a model refused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.errors import (
    BadRequest,
)
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.providers.refused import RefusedFields, refused_field, refuses_streaming
from hermes_core.testing import (
    OPENAI_URL,
    SSE_HEADERS,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
)
from hermes_core.types import (
    ToolCall,
)
from tests.providers.conftest import (
    CRED,
    OPENAI_OPTS,
    OPENAI_PROMPT,
    UNSUPPORTED_TEMPERATURE,
    _sent,
)

PAYLOAD = {"model": "m", "messages": [], "max_tokens": 9, "temperature": 0.2,
           "reasoning_effort": "minimal"}


@pytest.mark.parametrize("error, field", [
    ({"message": "Unsupported parameter: 'max_tokens' ...", "param": "max_tokens",
      "code": "unsupported_parameter"}, "max_tokens"),
    # gpt-5.1 on 'minimal': the Responses API's spelling of the field
    ({"message": "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.",
      "param": "reasoning.effort", "code": "unsupported_value"}, "reasoning_effort"),
    # a gateway with no param and no code: the quoted name in its message
    ({"message": "Unsupported parameter: 'temperature' for this model"}, "temperature"),
    ({"message": "Function tools with reasoning_effort are not supported for this model.",
      "param": "reasoning_effort", "code": None}, "reasoning_effort"),
])
def test_an_unsupported_optional_field_is_named(error: dict[str, object], field: str) -> None:
    assert refused_field(400, error, PAYLOAD) == field
    assert refused_field(400, {"error": error}, PAYLOAD) == field   # wrapped or not


@pytest.mark.parametrize("status, error", [
    (400, {"message": "Invalid 'messages[0].role'", "param": "messages[0].role",
           "code": "unsupported_value"}),                        # content, not a knob
    (400, {"message": "Unsupported parameter: 'top_p'", "param": "top_p"}),   # not sent
    (400, {"message": "temperature must be at most 2", "param": "temperature",
           "code": "invalid_value"}),                            # a wrong value, not unsupported
    (429, {"message": "Unsupported parameter: 'seed'", "param": "seed"}),
    (400, ["not", "a", "mapping"]),
])
def test_other_errors_name_no_field(status: int, error: object) -> None:
    assert refused_field(status, error, PAYLOAD) is None


def test_a_refused_field_is_renamed_or_left_out_for_that_model_only(caplog) -> None:
    refused = RefusedFields()
    with caplog.at_level(logging.WARNING):
        assert refused.learn("o3", "max_tokens", "azure")
        assert refused.learn("o3", "temperature", "azure")
    assert not refused.learn("o3", "temperature", "azure")   # known: no third send
    assert "sent as 'max_completion_tokens'" in caplog.text and "left out" in caplog.text
    assert refused.apply("o3", dict(PAYLOAD)) == {
        "model": "m", "messages": [], "max_completion_tokens": 9, "reasoning_effort": "minimal"}
    assert refused.apply("gpt-4o", dict(PAYLOAD)) == PAYLOAD


def test_both_spellings_refused_send_neither() -> None:
    refused = RefusedFields()
    refused.learn("m", "max_tokens", "p")
    refused.learn("m", "max_completion_tokens", "p")
    out = refused.apply("m", {"max_tokens": 5, "max_completion_tokens": 5})
    assert out == {}


@pytest.mark.parametrize("status, body, refused", [
    (400, {"error": {"message": "Your organization must be verified to stream this model.",
                     "param": "stream", "code": "unsupported_value"}}, True),
    (400, {"param": "stream", "message": "not allowed"}, True),            # unwrapped
    (400, {"error": {"param": "stream_options", "message": "unsupported"}}, False),
    (400, {"error": {"message": "stream is not supported"}}, False),       # names no field
    (403, {"error": {"param": "stream"}}, False),
    (400, "stream", False),
])
def test_only_a_400_naming_stream_refuses_streaming(status: int, body: object,
                                                     refused: bool) -> None:
    assert refuses_streaming(status, body) is refused


def test_a_model_that_may_not_be_streamed_is_remembered_and_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    fields = RefusedFields()
    assert not fields.unstreamed("o3")
    with caplog.at_level(logging.WARNING, logger="hermes_core.providers.refused"):
        fields.learn_unstreamed("o3", "openai")
        fields.learn_unstreamed("o3", "openai")
    assert fields.unstreamed("o3") and not fields.unstreamed("gpt-4o")
    assert len([r for r in caplog.records if "may not be streamed" in r.getMessage()]) == 1


AZURE = "https://example-resource.openai.azure.com/openai/v1"


UNSUPPORTED_MAX_TOKENS = openai_error(
    400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
    "'max_completion_tokens' instead.", code="unsupported_parameter", param="max_tokens")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_field_the_model_refuses_is_dropped_and_the_call_sent_again(respx_mock: Any,
                                                                       use_async: bool) -> None:
    route = respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.Response(400, json=UNSUPPORTED_TEMPERATURE),
        httpx.Response(200, json=openai_chat_completion("ok", model="o3")),
        httpx.Response(200, json=openai_chat_completion("again", model="o3"))])
    provider, opts = OpenAIProvider(), CallOptions(max_tokens=32, temperature=0.2)
    call = ((lambda: asyncio.run(provider.acomplete(OPENAI_PROMPT, "o3", CRED, opts))) if use_async
            else (lambda: provider.complete(OPENAI_PROMPT, "o3", CRED, opts)))
    assert call().text == "ok"
    assert call().text == "again"   # learned: the next call goes without it, no second 400
    sent = _sent(route)
    assert len(sent) == 3 and sent[0]["temperature"] == 0.2
    assert "temperature" not in sent[1] and "temperature" not in sent[2]
    assert "temperature" not in provider.render(OPENAI_PROMPT, "o3", opts)
    assert provider.render(OPENAI_PROMPT, "gpt-4o", opts)["temperature"] == 0.2   # per model


@pytest.mark.parametrize("use_async", [False, True])
def test_max_tokens_refused_by_a_compatible_endpoint_is_sent_as_max_completion_tokens(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    route = respx_mock.post(f"{AZURE}/chat/completions").mock(side_effect=[
        httpx.Response(400, json=UNSUPPORTED_MAX_TOKENS),
        httpx.Response(200, content=openai_chat_stream(("o", "k"), model="o4-mini"),
                       headers=SSE_HEADERS)])
    provider = OpenAIProvider(endpoint=AZURE)
    deltas = stream_deltas(provider, OPENAI_PROMPT, "o4-mini", CRED, OPENAI_OPTS, use_async=use_async)
    assert "".join(d.text for d in deltas) == "ok"
    first, second = _sent(route)
    assert first["max_tokens"] == 32 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 32 and "max_tokens" not in second


def test_a_refusal_of_what_is_not_an_optional_field_is_a_bad_request_sent_once(
        respx_mock: Any) -> None:
    body = openai_error(400, f"Invalid 'messages[0].role' for key {CRED.secret}",
                        code="unsupported_value", param="messages[0].role")
    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(400, json=body))
    with pytest.raises(BadRequest) as info:
        OpenAIProvider().complete(OPENAI_PROMPT, "o1-mini", CRED, OPENAI_OPTS)
    assert route.call_count == 1 and CRED.secret not in str(info.value)


def test_a_field_refused_twice_is_not_sent_again_in_a_loop(respx_mock: Any) -> None:
    """A server refusing max_tokens and then max_completion_tokens: one retry, then the error."""
    swapped = openai_error(400, "Unsupported parameter: 'max_completion_tokens'",
                           code="unsupported_parameter", param="max_completion_tokens")
    route = respx_mock.post(f"{AZURE}/chat/completions").mock(side_effect=[
        httpx.Response(400, json=UNSUPPORTED_MAX_TOKENS), httpx.Response(400, json=swapped)])
    with pytest.raises(BadRequest, match="max_completion_tokens"):
        OpenAIProvider(endpoint=AZURE).complete(OPENAI_PROMPT, "o3", CRED, OPENAI_OPTS)
    assert route.call_count == 2


UNVERIFIED_STREAM = openai_error(
    400, "Your organization must be verified to stream this model. Please go to: "
    "https://platform.openai.com/settings/organization/general and click on Verify Organization.",
    code="unsupported_value", param="stream")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_model_that_may_not_be_streamed_is_answered_whole_from_then_on(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    """An organisation not verified to stream a model gets a 400 naming ``stream`` on every
    streamed call (the chat streams by default): the reply is asked for whole and handed out as
    the stream's pieces, tool calls, usage and finish reason; later calls do not try again."""
    call = ToolCall("call_1", "get_weather", '{"city": "Oslo"}')
    route = respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.Response(400, json=UNVERIFIED_STREAM),
        httpx.Response(200, json=openai_chat_completion("Checking.", model="o3",
                                                        tool_calls=(call,))),
        httpx.Response(200, json=openai_chat_completion("Sunny.", model="o3"))])
    provider = OpenAIProvider()

    def run() -> list[Any]:
        return stream_deltas(provider, OPENAI_PROMPT, "o3", CRED, OPENAI_OPTS, use_async=use_async)

    first = run()
    assert "".join(d.text for d in first) == "Checking."
    assert [d.tool_call for d in first if d.tool_call] == [call]
    assert first[-1].usage is not None and first[-1].usage.input_tokens == 12
    assert first[-1].finish_reason == "tool_calls"
    assert "".join(d.text for d in run()) == "Sunny."
    sent = _sent(route)
    assert [p.get("stream") for p in sent] == [True, None, None]


def test_a_stream_refusal_of_another_kind_is_a_bad_request(respx_mock: Any) -> None:
    body = openai_error(400, "Invalid value for 'stream_options': not supported here",
                        code="invalid_value", param="stream_options")
    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(400, json=body))
    with pytest.raises(BadRequest):
        list(OpenAIProvider().stream(OPENAI_PROMPT, "o3", CRED, OPENAI_OPTS))
    assert route.call_count == 1


def test_a_child_forked_while_a_thread_was_learning_a_refusal_learns_its_own(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    fields = RefusedFields()

    def child() -> object:
        fields.learn_unstreamed("o1", "openai")
        return fields.learn("o1", "temperature", "openai"), fields.unstreamed("o1")

    with held_by_a_thread(fields._lock):
        assert in_forked_child(child) == (True, True)
