"""Tests of ``hermes_core/providers/_sdk.py`` and the SDK adapters built on it: answers that are
not the API's response. Proxy pages and JSON of another shape, empty, malformed or misshapen
streams, bodies that lie about their length or encoding, errors inside a 200, and a stream
answered whole or a whole request answered with a stream; each a ServerError or the answer it
is, failed over where it should be."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionReset,
    IncompleteResponse,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
)
from hermes_core.providers._sdk import completion_deltas
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.redact import Redactor, url_passwords
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse
from hermes_core.testing.server import KeyBehaviour, MockLLMServer
from hermes_core.types import (
    Completion,
    Credential,
    Prompt,
    ToolCall,
    Usage,
)
from tests.providers.conftest import (
    OPENAI_OPTS,
    OPENAI_PROMPT,
    OPTS,
    OPTS_ERR,
    PROMPT,
    PROMPT_ERR,
    PROVIDERS,
    SECRET,
    SECRET_200,
    SECRET_ERR,
    SECRET_LIE,
    _deltas,
    _faulty,
    _run_mode,
    _whole,
    make,
    ok_body,
    url_and_provider,
)

# --------------------------------------------------------------------------- through the Agent

# A 200 whose body is not the API's response (a proxy's HTML page, a JSON of another shape).
#
# The SDKs hand back the raw text (or a model missing its fields) and the adapters crashed with an
# AttributeError, which the call loop treats as a bug: no failover, and the REPL showed a traceback
# name. It is the endpoint failing, so it is a retryable ServerError that fails over.

SECRET_BODY = "sk-testkey-SECRET-badbody-0001"

BODIES = {
    "html": lambda: httpx.Response(200, text=f"<html>proxy login {SECRET_BODY}</html>",
                                   headers={"content-type": "text/html"}),
    "other-json": lambda: httpx.Response(200, json={"status": "ok", "echo": SECRET_BODY}),
    "truncated-json": lambda: httpx.Response(200, content=b'{"id": "x", "cho',
                                             headers={"content-type": "application/json"}),
}


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_unexpected_200_body_is_a_server_error(kind, body, respx_mock) -> None:
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: BODIES[body]())
    cred = Credential(kind, SECRET_BODY)
    with pytest.raises(ServerError) as info:
        provider.complete(OPENAI_PROMPT, "m", cred, OPENAI_OPTS)
    assert SECRET_BODY not in str(info.value)
    with pytest.raises(ServerError):
        await provider.acomplete(OPENAI_PROMPT, "m", cred, OPENAI_OPTS)


def test_call_loop_fails_over_past_a_proxy_page(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("openai", SECRET_BODY, "sk-ant-testkey-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: BODIES["html"]())
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, json=anthropic_message("from backup", model="claude-haiku")))
    done, attempts = loop.complete(OPENAI_PROMPT, router.select("hi"), OPENAI_OPTS)
    assert done.text == "from backup"
    assert [a.decision for a in attempts] == ["failover", "done"]
    assert attempts[0].status == "ServerError"   # not "200": the audit must not read as a success
    assert all(k.in_flight == 0 for k in loop.pool.status())


# A stream that delivers no event at all (a proxy's HTML page, an empty body) is a failure.
#
# The SDKs parse such a body as an SSE stream with no events; the adapters then ended the stream
# with an empty usage delta, which the call loop took as a successful, empty answer: no failover,
# an empty assistant turn in the history.

SECRET_EMPTY = "sk-testkey-SECRET-empty-0001"

BODIES_EMPTY = {
    "html": lambda: httpx.Response(200, text="<html>gateway</html>",
                                   headers={"content-type": "text/html"}),
    "empty-sse": lambda: httpx.Response(200, content=b"", headers=SSE_HEADERS),
    "done-only": lambda: httpx.Response(200, content=b"data: [DONE]\n\n", headers=SSE_HEADERS),
}


@pytest.mark.parametrize("body", BODIES_EMPTY)
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_stream_without_any_event_is_a_server_error(assert_both_streams_raise, kind, body,
                                                          respx_mock) -> None:
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: BODIES_EMPTY[body]())
    await assert_both_streams_raise(provider, Credential(kind, SECRET_EMPTY), ServerError)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_proxy_page_in_place_of_a_stream_counts_nothing(kind, respx_mock) -> None:
    """A 200 page of another type (a gateway's HTML) is not the API answering: billed nothing,
    as the same page answering a whole call is (an empty 200 event stream counts its prompt)."""
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: BODIES_EMPTY["html"]())
    cred = Credential(kind, SECRET_EMPTY)
    assert _empty_usage(provider, cred, "stream") is None
    assert _empty_usage(provider, cred, "astream") is None


def _call(provider: Any, cred: Credential, mode: str, prompt: Prompt = OPENAI_PROMPT,
          options: CallOptions = OPENAI_OPTS) -> Any:
    """One call in ``mode`` (complete, acomplete, stream, astream): the answer or its pieces."""
    if mode == "complete":
        return provider.complete(prompt, "m", cred, options)
    if mode == "acomplete":
        return asyncio.run(provider.acomplete(prompt, "m", cred, options))
    return _deltas(provider, prompt, "m", cred, options, use_async=mode == "astream")


def _empty_usage(provider: Any, cred: Credential, mode: str) -> Usage | None:
    """The usage on the ServerError a call in ``mode`` answered by an empty 200 raises."""
    with pytest.raises(ServerError) as caught:
        _call(provider, cred, mode)
    return caught.value.usage


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("label", ["text/plain", "text/html; charset=utf-8"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_empty_200_labelled_another_type_counts_its_prompt_as_an_empty_event_stream_does(
        kind: str, label: str, use_async: bool, respx_mock: Any) -> None:
    """A 200 relabelled ``text/plain`` (or any type) with no body is no page: nothing but the
    status came back, the same silence as an empty event stream, whose prompt is counted as
    possibly billed. It counted nothing; it now counts what the labelled empty stream does."""
    url, provider = url_and_provider(kind)
    cred = Credential(kind, SECRET_EMPTY)
    respx_mock.post(url).mock(side_effect=lambda r: BODIES_EMPTY["empty-sse"]())
    labelled = _empty_usage(provider, cred, "astream" if use_async else "stream")
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        200, content=b"", headers={"content-type": label}))
    relabelled = _empty_usage(provider, cred, "astream" if use_async else "stream")
    assert labelled is not None and labelled.counted and labelled.input_tokens > 0
    assert relabelled == labelled


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("label", ["text/plain", "text/html", None])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_call_answered_by_an_empty_200_of_any_label_counts_its_prompt(
        kind: str, label: str | None, use_async: bool, respx_mock: Any) -> None:
    """The whole call's side of the same silence: an empty 200 labelled JSON or an event stream
    counted its prompt, the same empty 200 labelled ``text/plain`` or ``text/html`` (or not
    labelled) counted nothing."""
    url, provider = url_and_provider(kind)
    cred = Credential(kind, SECRET_EMPTY)
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        200, content=b"", headers={"content-type": "application/json"}))
    labelled = _empty_usage(provider, cred, "acomplete" if use_async else "complete")
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        200, content=b"", headers={"content-type": label} if label else {}))
    relabelled = _empty_usage(provider, cred, "acomplete" if use_async else "complete")
    assert labelled is not None and labelled.counted and labelled.input_tokens > 0
    assert relabelled == labelled


def test_a_real_empty_answer_is_still_an_answer(respx_mock) -> None:
    """A well-formed stream with no text (e.g. max_tokens hit at once) is not an error."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(()), headers=SSE_HEADERS))
    deltas = _call(AnthropicProvider(), Credential("anthropic", SECRET_EMPTY), "stream")
    assert deltas[-1].finish_reason == "end_turn"


def _streams_from_the_backup(failover_loop: Any, respx_mock: Any, secret: str,
                             primary: Callable[[], httpx.Response]) -> None:
    """The call loop's stream, its primary answering ``primary()`` before any token, fails over
    to the backup, which answers; no key is left in flight."""
    loop, router = failover_loop("openai", secret, "sk-ant-testkey-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: primary())
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: httpx.Response(
        200, content=anthropic_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(OPENAI_PROMPT, router.select("hi"), OPENAI_OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.decision for a in s.attempts] == ["failover", "done"]
    assert all(k.in_flight == 0 for k in loop.pool.status())


def test_call_loop_fails_over_past_an_empty_stream(failover_loop, respx_mock) -> None:
    _streams_from_the_backup(failover_loop, respx_mock, SECRET_EMPTY, BODIES_EMPTY["html"])


# A stream event whose JSON is cut or malformed (a proxy truncating lines) is a server failure.
#
# The SDKs raise ``json.JSONDecodeError`` from the stream iterator; it escaped the adapters as a
# plain ValueError, so the call loop treated it as a bug: no failover before the first token and a
# non-hermes exception for the caller.

SECRET_SSE = "sk-testkey-SECRET-malformed-01"

BROKEN = {
    "openai": (OPENAI_URL, b'data: {"id": "x", "cho\n\n'),
    "anthropic": (ANTHROPIC_URL, b'event: message_start\ndata: {"type": "message_st\n\n'),
}


@pytest.mark.parametrize("kind", BROKEN)
async def test_malformed_event_is_a_server_error(assert_both_streams_raise, kind: str, respx_mock) -> None:
    (url, body), (_, provider) = BROKEN[kind], url_and_provider(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=body, headers=SSE_HEADERS))
    await assert_both_streams_raise(provider, Credential(kind, SECRET_SSE), ServerError)


def test_call_loop_fails_over_past_a_malformed_stream(failover_loop, respx_mock) -> None:
    _streams_from_the_backup(failover_loop, respx_mock, SECRET_SSE, lambda: httpx.Response(
        200, content=BROKEN["openai"][1], headers=SSE_HEADERS))


# Error events inside a 200 stream are mapped by their error type, not by the 200 status.
#
# Anthropic sends ``event: error`` (``overloaded_error``, ``api_error``, ...) after the stream has
# started with HTTP 200; OpenAI-compatible servers send ``{"error": {...}}`` chunks. The SDKs raise
# these with the stream's 200 status (Anthropic) or without a status (OpenAI), so mapping by status
# made an overloaded Anthropic stream a non-retryable BadRequest that aborted the whole request
# instead of failing over.


def test_a_redirect_keeps_its_own_status(respx_mock) -> None:
    """Only a 2xx stream takes its status from the error type; a 3xx stays what it was."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        302, text="<html>moved</html>"))   # no location: the SDK cannot follow it
    with pytest.raises(ProviderError) as info:
        AnthropicProvider().complete(PROMPT_ERR, "claude", Credential("anthropic", SECRET_ERR), OPTS_ERR)
    assert info.value.status_code == 302 and type(info.value) is BadRequest


BACKUP_LIE = "sk-testkey-SECRET-backup-00002"


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
def test_a_body_shorter_than_its_content_length(kind: str, mode: str) -> None:
    """A whole JSON body cut short is a reset connection; a stream whose end marker arrived
    before the cut is a whole answer (the close failed, not the reply)."""
    with MockLLMServer(reply="fine") as srv:
        srv.set_key(SECRET_LIE, KeyBehaviour(fault="short"))
        provider = _faulty(srv, kind)
        if mode == "complete":
            with pytest.raises(ConnectionReset) as info:
                _run_mode(provider, kind, mode)
            # the request went out and the answer was cut: its prompt was billed all the same
            billed = info.value.usage
            assert billed is not None and billed.counted and billed.input_tokens > 0
            assert billed.output_tokens == 0
        else:
            assert _run_mode(provider, kind, mode) == "Hello"


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
def test_a_body_longer_than_its_content_length_is_cut_there_and_the_connection_still_serves(
        kind: str, mode: str) -> None:
    """The HTTP client reads what the length says and no more: a whole JSON answer cut there is
    a malformed body (a retryable ServerError billed its prompt), a stream cut before its end is
    incomplete; the bytes past the length do not leak into the next answer on the connection."""
    with MockLLMServer(reply="fine") as srv:
        srv.set_key(SECRET_LIE, KeyBehaviour(fault="long"))
        provider = _faulty(srv, kind)
        expected = ServerError if mode == "complete" else IncompleteResponse
        with pytest.raises(expected) as info:
            _run_mode(provider, kind, mode)
        assert info.value.usage is not None and info.value.usage.input_tokens > 0
        srv.set_key(SECRET_LIE, KeyBehaviour())
        assert _run_mode(provider, kind, mode) == "fine"


@pytest.mark.parametrize("kind", PROVIDERS)
def test_call_loop_fails_over_past_a_stream_that_lies_about_gzip(kind: str) -> None:
    with MockLLMServer(reply="from backup") as srv:
        srv.set_key(SECRET_LIE, KeyBehaviour(fault="gzip-lie"))
        settings = load_settings({
            "llm": {"routing": {"default_model": "m", "providers": [
                {"name": "primary", "type": kind, "priority": 1, "models": ["m"],
                 "endpoint": srv.url + ("/v1" if kind == "openai" else "")},
                {"name": "backup", "type": "openai", "priority": 2, "models": ["m"],
                 "endpoint": srv.url + "/v1"}]}},
            "credentials": {"primary": {"keys": [{"key": SECRET_LIE}]},
                            "backup": {"keys": [{"key": BACKUP_LIE}]}},
            "credential_pool": {"retries_per_provider": 0},
        }, env={})
        loop = CallLoop.from_settings(settings, audit_path=False)
        s = loop.stream(PROMPT, Router.from_settings(settings).select("hi"), OPTS)
        text = "".join(d.text for d in s)
    assert text == "from backup"
    assert [(a.status, a.decision) for a in s.attempts] == [("ServerError", "failover"),
                                                           ("ok", "done")]
    assert all(k.in_flight == 0 for k in loop.pool.status())


# Stream events and 200 bodies of another shape than the API's (a proxy or a compatible server
# sending its own JSON). The adapters raised the SDK model's AttributeError, which the call loop
# treats as a bug (no failover, a traceback); or took a body with no choice for an empty answer.

SECRET_SHAPE = "sk-testkey-SECRET-shape-0001"

MISSHAPEN_STREAMS = {
    "openai-choices-a-string": ("openai", _sse([(None, {
        "id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": "nope"}), (None, "[DONE]")])),
    "openai-chunk-a-list": ("openai", _sse([(None, [1, 2]), (None, "[DONE]")])),
    "anthropic-message-a-string": ("anthropic", _sse([
        ("message_start", {"type": "message_start", "message": "nope"})])),
    "anthropic-block-start-without-block": ("anthropic", _sse([
        ("content_block_start", {"type": "content_block_start", "index": 0})])),
}


@pytest.mark.parametrize("case", MISSHAPEN_STREAMS)
async def test_a_stream_event_of_another_shape_is_a_server_error(
        case: str, respx_mock: Any, assert_both_streams_raise: Any) -> None:
    kind, body = MISSHAPEN_STREAMS[case]
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(200, content=body,
                                                                   headers=SSE_HEADERS))
    await assert_both_streams_raise(provider, Credential(kind, SECRET_SHAPE), ServerError)


def test_call_loop_fails_over_past_a_stream_of_another_shape(failover_loop, respx_mock) -> None:
    _streams_from_the_backup(failover_loop, respx_mock, SECRET_SHAPE, lambda: httpx.Response(
        200, content=MISSHAPEN_STREAMS["openai-chunk-a-list"][1], headers=SSE_HEADERS))


@pytest.mark.parametrize("kind", PROVIDERS)
def test_an_endpoint_taking_the_key_as_a_query_parameter_gets_it_on_every_request(
        kind, respx_mock, caplog: pytest.LogCaptureFixture):
    """Some proxies want the key in the URL (``?key=``). Left in the base URL, the SDK joined
    the path after the query ("...?key=pxy-Key-77chat/completions"): the proxy saw another key
    and no path. The request line httpx logs at -v must not show it either."""
    cls, name, _url, model = PROVIDERS[kind]
    key = "pxy-Key-77"
    base = "https://llm-proxy.internal" + ("/v1" if kind == "openai" else "")
    endpoint = f"{base}?key={key}&region=eu"
    Redactor(url_passwords(endpoint))   # what Settings.secret_values() registers for it
    path = "/v1/chat/completions" if kind == "openai" else "/v1/messages"
    route = respx_mock.post("https://llm-proxy.internal" + path).mock(
        return_value=httpx.Response(200, json=ok_body(kind)))
    with caplog.at_level(logging.DEBUG):
        done = cls(name, endpoint=endpoint).complete(PROMPT, model, Credential(name, SECRET), OPTS)
    assert done.text == "Hello!"
    sent = route.calls.last.request
    assert sent.url.params["key"] == key and sent.url.params["region"] == "eu"
    assert key not in caplog.text and key not in repr(cls(name, endpoint=endpoint))


def test_a_whole_reply_as_stream_pieces_keeps_its_order_and_its_last_piece() -> None:
    call = ToolCall("c1", "get_weather", "{}")
    block = {"type": "thinking", "thinking": "hm", "signature": "s"}
    done = Completion("Checking.", "o3", "openai", usage=Usage(input_tokens=3, output_tokens=2),
                      tool_calls=(call,), finish_reason="tool_calls", reasoning=(block,))
    pieces = completion_deltas(done)
    assert [p.reasoning for p in pieces[:1]] == [block]
    assert [p.text for p in pieces] == ["", "Checking.", "", ""]
    assert [p.tool_call for p in pieces if p.tool_call] == [call]
    assert pieces[-1].usage == done.usage and pieces[-1].finish_reason == "tool_calls"
    empty = completion_deltas(Completion("", "o3", "openai", finish_reason="stop"))
    assert len(empty) == 1 and empty[0].finish_reason == "stop"


ERROR_200 = {
    "openai-rate": ("openai", {"error": {"message": f"Rate limit reached for {SECRET_200}",
                                         "type": "requests", "code": "rate_limit_exceeded"}},
                    RateLimited),
    "openai-status-code": ("openai", {"error": {"message": "Rate limit reached", "code": 429}},
                           RateLimited),
    "openai-bad-key": ("openai", {"error": {"message": "Incorrect API key provided",
                                            "type": "invalid_request_error",
                                            "code": "invalid_api_key"}}, AuthenticationFailed),
    "anthropic-overloaded": ("anthropic", {"type": "error", "error": {
        "type": "overloaded_error", "message": f"Overloaded {SECRET_200}"}}, Overloaded),
    "anthropic-rate": ("anthropic", {"type": "error", "error": {
        "type": "rate_limit_error", "message": "Rate limit reached"}}, RateLimited),
}


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("case", ERROR_200)
def test_a_200_whose_body_is_the_api_s_error_is_that_error(case: str, mode: str,
                                                           respx_mock) -> None:
    kind, body, expected = ERROR_200[case]
    respx_mock.post(OPENAI_URL if kind == "openai" else ANTHROPIC_URL).mock(
        return_value=httpx.Response(200, json=body))
    with pytest.raises(ProviderError) as info:
        _call(url_and_provider(kind)[1], Credential(kind, SECRET_200), mode, PROMPT_ERR, OPTS_ERR)
    assert type(info.value) is expected, repr(info.value)
    message = str(body["error"]["message"]).replace(SECRET_200, "").strip()
    assert message in str(info.value)
    assert SECRET_200 not in str(info.value) and SECRET_200 not in str(info.value.body)


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_200_whose_error_is_only_words_is_a_server_error_saying_them(kind: str, mode: str,
                                                                       respx_mock) -> None:
    """A gateway's ``{"error": "upstream said no"}``: only an error object was read as the error,
    so this was "HTTP 200 but the body is not a response", its words lost. With no type or code
    to map, it is a server failure (retried, failed over) that says what the body said."""
    words = f"upstream connect error for {SECRET_200}"
    respx_mock.post(OPENAI_URL if kind == "openai" else ANTHROPIC_URL).mock(
        return_value=httpx.Response(200, json={"error": words}))
    with pytest.raises(ServerError) as info:
        _call(url_and_provider(kind)[1], Credential(kind, SECRET_200), mode, PROMPT_ERR, OPTS_ERR)
    assert "upstream connect error for" in str(info.value)
    assert SECRET_200 not in str(info.value) and SECRET_200 not in str(info.value.body)


def test_call_loop_cools_the_key_of_a_200_rate_limit_and_fails_over(failover_loop,
                                                                    respx_mock) -> None:
    """The key is cooled (not its breaker opened, not quarantined) and the backup answers."""
    loop, router = failover_loop("openai", SECRET_200, "sk-ant-testkey-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, json=ERROR_200["openai-rate"][1], headers={"retry-after": "20"}))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, json=anthropic_message("from backup", model="claude-haiku")))
    done, attempts = loop.complete(PROMPT_ERR, router.select("hi"), OPTS_ERR)
    assert done.text == "from backup" and done.provider == "backup"
    assert [(a.provider, a.status) for a in attempts] == [
        ("primary", "429"), ("primary", "all_keys_blocked"), ("backup", "ok")]
    states = {k.provider: k for k in loop.pool.status()}
    assert states["primary"].state == "blocked" and states["primary"].auth_failures == 0
    assert states["primary"].blocked_for_s == pytest.approx(20.0, abs=1.0)   # its Retry-After
    assert states["backup"].state == "ok"
    assert all(k.in_flight == 0 for k in states.values())


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_streamed_request_answered_whole_is_that_answer(kind: str, mode: str,
                                                         respx_mock) -> None:
    """A compatible server or gateway that ignores ``stream: true`` answers with the whole JSON:
    it is the answer, handed out as the stream's pieces, not "the stream ended without a single
    chunk" (every turn of a chat, which streams, failed over or failed)."""
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(200, json=ok_body(kind, "whole")))
    deltas = _deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream")
    assert "".join(d.text for d in deltas) == "whole"
    assert deltas[-1].finish_reason in ("stop", "end_turn") and deltas[-1].usage.reported


@pytest.mark.parametrize("label", [SSE_HEADERS, {"content-type": "text/plain"}])
@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_whole_request_answered_with_an_event_stream_is_read_as_the_answer(
        kind: str, mode: str, label: dict[str, str], respx_mock: Any) -> None:
    provider, cred, url, model = make(kind)
    calls = (ToolCall("call_1", "add", '{"a": 1}'),)
    body = (openai_chat_stream(cached_tokens=4, tool_calls=calls) if kind == "openai"
            else anthropic_stream(cache_read=4, tool_calls=calls))
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=body, headers=label))
    done = _whole(provider, cred, model, mode)
    assert done.text == "Hello!" and done.tool_calls == calls and done.provider == kind
    assert done.finish_reason in ("tool_calls", "tool_use")
    assert done.usage.reported and done.usage.cache_read_tokens == 4
    assert done.usage.input_tokens == (12 - 4 if kind == "openai" else 12)


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_whole_answer_read_from_an_event_stream_carries_its_request_id(
        kind: str, mode: str, respx_mock: Any) -> None:
    """The id a support ticket quotes: the response's request-id header, as a JSON answer's
    (the SDK's ``_request_id``), else the id the stream's message carries, as a JSON answer
    without the header falls back to its body's; it was None."""
    provider, cred, url, model = make(kind)
    body = openai_chat_stream() if kind == "openai" else anthropic_stream()
    header = "x-request-id" if kind == "openai" else "request-id"
    respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, content=body, headers={**SSE_HEADERS, header: "req_0123abc"}),
        httpx.Response(200, content=body, headers=SSE_HEADERS)])
    assert _whole(provider, cred, model, mode).request_id == "req_0123abc"
    assert _whole(provider, cred, model, mode).request_id == (
        "chatcmpl-test" if kind == "openai" else "msg_test")


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_whole_request_answered_with_an_event_stream_keeps_its_failures(
        kind: str, mode: str, respx_mock: Any) -> None:
    """An error event is its error; a stream cut before its end is an incomplete answer."""
    provider, cred, url, model = make(kind)
    failing = (openai_chat_stream(fail_after=1) if kind == "openai"
               else anthropic_stream(fail_after=1))
    cut = (openai_chat_stream() if kind == "openai" else anthropic_stream())
    cut = cut[:cut.index(b"[DONE]" if kind == "openai" else b"event: message_delta")]
    if kind == "openai":
        cut = b"\n\n".join(e for e in cut.split(b"\n\n") if b'"finish_reason": "stop"' not in e)
    respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, content=failing, headers=SSE_HEADERS),
        httpx.Response(200, content=cut, headers=SSE_HEADERS)])
    with pytest.raises(ProviderError) as info:
        _whole(provider, cred, model, mode)
    assert not isinstance(info.value, IncompleteResponse)
    with pytest.raises(IncompleteResponse) as cut_info:
        _whole(provider, cred, model, mode)
    assert cut_info.value.partial_text.startswith("Hel")


PORTAL = ("<!DOCTYPE html><html><head><title>Sign in to Example Corp's network</title>"
          "<style>body{font:13px sans-serif}</style></head><body><form>...</form></body></html>")


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_200_proxy_page_is_named_by_its_title(kind: str, mode: str, respx_mock) -> None:
    """A captive portal or a proxy's sign-in page answering 200: the error says what the page
    says, as a 502 page's does ("the body is not a response (TypeError)" and "the stream ended
    without a single chunk" sent the person to the provider, not to the network)."""
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        200, text=PORTAL, headers={"content-type": "text/html; charset=utf-8"}))
    with pytest.raises(ServerError) as caught:
        _call(provider, Credential(kind, SECRET_EMPTY), mode)
    assert str(caught.value) == (f"{kind}: HTTP 200 but the body is not a {kind} response: "
                                 "Sign in to Example Corp's network (an HTML page, not the "
                                 "API's error)")
    assert caught.value.usage is None   # a page is billed nothing


@pytest.mark.parametrize("status", [200, 502])
@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_page_title_s_escapes_and_overrides_are_not_shown(kind: str, mode: str, status: int,
                                                           respx_mock) -> None:
    """A page's title is the server's text: an entity-encoded (or raw) terminal escape in it
    cleared the screen where the error was printed, a right-to-left override reversed what
    followed. Shown as one printable line; the words stay."""
    url, provider = url_and_provider(kind)
    page = ("<html><head><title>Sign &lt;in&gt; &#27;[2J&#x9b;31m\x1b[1m to Corp "
            "&#x202e;exe.gnp</title></head><body>x</body></html>")
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        status, text=page, headers={"content-type": "text/html; charset=utf-8"}))
    with pytest.raises(ServerError) as caught:
        _call(provider, Credential(kind, SECRET_EMPTY), mode)
    text = str(caught.value)
    # html.parser drops ``&#27;`` and reads ``&#x9b;`` as windows-1252's "›", as browsers do
    assert "Sign <in> [2J\u203a31m[1m to Corp exe.gnp" in text, text
    assert all(c.isprintable() for c in text), repr(text)


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_200_page_s_request_id_echoing_the_call_s_key_does_not_name_it(
        kind: str, mode: str, respx_mock) -> None:
    """A portal's page whose request id echoes the key: the page's words were scrubbed of the
    call's key, the id it names only of registered ones, so a key the provider was handed
    (not registered) was named whole in the error."""
    secret = "Zq8xWv3Lp0Tn5Rk2Yh7Jm4Bc9Fd6Gs1Qe"   # no known key shape
    url, provider = url_and_provider(kind)
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(
        200, text=PORTAL, headers={"content-type": "text/html; charset=utf-8",
                                   "x-request-id": f"req-{secret}"}))
    with pytest.raises(ServerError) as caught:
        _call(provider, Credential(kind, secret), mode)
    assert "(x-request-id req-" in str(caught.value)
    assert secret[:6] not in str(caught.value) and secret[:6] not in str(caught.value.request_id)
