"""Tests of ``hermes_core/providers/_sdk.py`` and the SDK adapters built on it (openai.py and
anthropic.py alike).

Both official SDKs at the HTTP level (respx): success, streaming, and every failure mapped.
"""

from __future__ import annotations

import gzip
import json
import pickle
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextWindowExceeded,
    IncompleteResponse,
    Overloaded,
    RateLimited,
    ServerError,
    Timeout,
)
from hermes_core.providers._sdk import completion_deltas, delta_completion
from hermes_core.providers.base import Accumulator, CallOptions
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.types import (
    Completion,
    Credential,
    Delta,
    Message,
    Prompt,
    ToolCall,
    ToolSpec,
    Usage,
)
from tests.providers.conftest import (
    OPENAI_PROMPT,
    OPTS,
    PROMPT,
    PROVIDERS,
    SECRET,
    _deltas,
    _error_answer,
    _rate_limited,
    make,
    ok_body,
)


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
def test_the_repr_never_shows_an_endpoint_password(kind):
    cls = PROVIDERS[kind][0]
    provider = cls("proxy", endpoint="https://team:s3cret-proxy-pw@llm-proxy.internal/v1")
    assert "s3cret-proxy-pw" not in repr(provider)
    assert "llm-proxy.internal/v1" in repr(provider)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_retry_after_header_sent_twice_is_still_read(kind, respx_mock):
    """A proxy adding its own Retry-After beside the origin's: the SDK's headers join them."""
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(
        429, json=err_body(kind, 429), headers=[("retry-after", "5"), ("retry-after", "5")]))
    with pytest.raises(RateLimited) as info:
        provider.complete(PROMPT, model, cred, OPTS)
    assert info.value.retry_after == 5.0


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


# Secrets echoed back by a proxy never survive into an error, whatever shape the body has.

SECRET_ECHO = "tg-0123456789abcdefSECRET"     # not key-shaped: only the exact-secret net catches it


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("status, error", [(401, AuthenticationFailed), (400, BadRequest)])
def test_a_json_array_body_echoing_the_key_is_redacted(kind, status, error, respx_mock):
    cls, _, url, model = PROVIDERS[kind]
    echoed = [{"message": "gateway rejected the request",
               "received_headers": {"authorization": f"Bearer {SECRET_ECHO}", "x-api-key": SECRET_ECHO}}]
    respx_mock.post(url).mock(return_value=httpx.Response(status, json=echoed))
    with pytest.raises(error) as info:
        cls(kind).complete(OPENAI_PROMPT, model, Credential(kind, SECRET_ECHO), CallOptions(timeout_s=5))
    e = info.value
    assert SECRET_ECHO not in str(e) and SECRET_ECHO not in repr(e.body) and SECRET_ECHO not in repr(e.args)
    assert "gateway rejected" in str(e.body)


SECRET_HEADER = "gw-7f3a9c2e1b4d6a80HEADERECHO"   # not key-shaped: only the credential's net


@pytest.mark.parametrize("encoding", ["gzip", None])
@pytest.mark.parametrize("status", [429, 200])
@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_header_echoing_a_key_of_no_known_shape_is_masked_on_the_error(
        kind: str, mode: str, status: int, encoding: str | None, respx_mock: Any,
        caplog: pytest.LogCaptureFixture) -> None:
    """The error's message and body were scrubbed of the call's own key, its headers only of
    key shapes and registered keys: a gateway echoing a key of another shape (a proxy's own
    token) kept it in ``headers``, and so in its repr and its pickle. Plain or compressed, a
    whole answer or a stream's."""
    provider, _, url, model = make(kind)
    cred = Credential(provider.name, SECRET_HEADER)
    body = json.dumps(_error_answer(kind, status)).encode()
    sent = {"content-type": "application/json", "x-echoed-key": SECRET_HEADER,
            "x-forwarded-auth": f"Token {SECRET_HEADER}; scope=all"}
    if encoding is not None:
        body, sent["content-encoding"] = gzip.compress(body), encoding
    respx_mock.post(url).mock(return_value=httpx.Response(status, headers=sent, content=body))
    e = _rate_limited(provider, cred, model, mode)
    assert set(e.headers) >= {"x-echoed-key", "x-forwarded-auth"}
    assert e.headers["x-forwarded-auth"].endswith("; scope=all")   # the rest of the value kept
    shown = [repr(e.headers), str(e), repr(e), repr(e.body), caplog.text,
             repr(pickle.loads(pickle.dumps(e)).headers)]
    assert not [s for s in shown if SECRET_HEADER in s]
    assert SECRET_HEADER.encode() not in pickle.dumps(e)


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_stream_cut_inside_an_event_is_an_incomplete_answer(
        kind: str, mode: str, respx_mock: Any, stream_deltas: Callable[..., list[Any]]) -> None:
    """A connection closed in the middle of an event's data line (not between events): the
    half event is dropped, and the answer is an ``IncompleteResponse`` (a ServerError), not a
    parse error's traceback nor a short reply taken as whole."""
    provider, cred, url, model = make(kind)
    body = (openai_chat_stream(("Hel", "lo", " there")) if kind == "openai"
            else anthropic_stream(("Hel", "lo", " there")))
    cut = body[:body.index(b'lo"') + 1]
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=cut, headers=SSE_HEADERS))
    with pytest.raises(IncompleteResponse) as info:
        stream_deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream")
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize(("sent", "wait"), [
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),        # a date long past: retry now
    ("999999999", 999999999.0),                    # decades (the pool caps its cool-down)
    ("-30", None),                                 # no wait a server can mean: the pool's default
])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_429_whose_retry_after_is_past_huge_or_negative_is_a_rate_limit(
        kind: str, sent: str, wait: float | None, mode: str, respx_mock: Any) -> None:
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(
        429, json=err_body(kind, 429), headers={"retry-after": sent}))
    e = _rate_limited(provider, cred, model, mode)
    assert e.retry_after == wait and e.status_code == 429


REASONING = {"type": "thinking", "thinking": "hm", "signature": "s"}
PAUSED_BLOCKS = ({"type": "text", "text": "Searching. "},)
#: A stream's pieces and the whole reply they amount to (``delta_completion``): its text joined,
#: calls and reasoning in order, the last piece's usage, finish, model, pause and container.
DELTA_REPLIES = {
    "words": ([Delta(text="It is "), Delta(text="sunny."),
               Delta(usage=Usage(3, 2), finish_reason="end_turn", model="claude-x")],
              Completion("It is sunny.", "claude-x", "p", Usage(3, 2), finish_reason="end_turn",
                         request_id="req_1")),
    "no usage came": ([Delta(text="hi"), Delta(finish_reason="stop")],
                      Completion("hi", "m", "p", Usage(reported=False), finish_reason="stop",
                                 request_id="req_1")),
    "no model named": ([Delta(text="hi"), Delta(usage=Usage(1, 1), finish_reason="stop")],
                       Completion("hi", "m", "p", Usage(1, 1), finish_reason="stop",
                                  request_id="req_1")),
    "calls and reasoning": (
        [Delta(reasoning=REASONING), Delta(text="Checking."),
         Delta(tool_call=ToolCall("c1", "add", "{}")), Delta(tool_call=ToolCall("c2", "add", "{}")),
         Delta(usage=Usage(5, 5), finish_reason="tool_use")],
        Completion("Checking.", "m", "p", Usage(5, 5),
                   (ToolCall("c1", "add", "{}"), ToolCall("c2", "add", "{}")), "tool_use",
                   "req_1", reasoning=(REASONING,))),
    "paused in a container": (
        [Delta(text="Searching. "),
         Delta(usage=Usage(1, 1), finish_reason="pause_turn", paused=PAUSED_BLOCKS,
               container="ctr_1")],
        Completion("Searching. ", "m", "p", Usage(1, 1), finish_reason="pause_turn",
                   request_id="req_1", paused=PAUSED_BLOCKS, container="ctr_1")),
    "output tool": ([Delta(text='{"a": 1}', from_output_tool=True),
                     Delta(usage=Usage(1, 1), finish_reason="tool_use")],
                    Completion('{"a": 1}', "m", "p", Usage(1, 1), finish_reason="tool_use",
                               request_id="req_1", from_output_tool=True)),
}


@pytest.mark.parametrize("case", sorted(DELTA_REPLIES))
def test_a_stream_s_pieces_amount_to_the_whole_reply_they_came_in(case: str) -> None:
    deltas, whole = DELTA_REPLIES[case]
    done = delta_completion(deltas, "m", "p", "req_1")
    assert done == whole
    assert (done.reasoning, done.paused, done.container) == (
        whole.reasoning, whole.paused, whole.container)   # not compared by ==
    assert completion_deltas(done)[-1].usage == done.usage   # and back, as a stream of it


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_streamed_reply_carries_the_request_id_and_usage_a_whole_one_does(
        kind: str, mode: str, respx_mock: Any) -> None:
    """A stream's pieces, joined (``Accumulator``, as the agent joins a round), carry the
    request id its header states, else its message's id, and the usage of the SDK's real
    shapes: OpenAI's include_usage chunk with no choices after the finish, Anthropic's
    message_start input and message_delta output counts. Failed before: request_id None."""
    provider, cred, url, model = make(kind)
    body = (openai_chat_stream(("It ", "is ", "sunny."), prompt_tokens=21) if kind == "openai"
            else anthropic_stream(("It ", "is ", "sunny."), input_tokens=21))
    header = "x-request-id" if kind == "openai" else "request-id"
    respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, content=body, headers={**SSE_HEADERS, header: "req_0123abc"}),
        httpx.Response(200, content=body, headers=SSE_HEADERS)])
    for stated in ("req_0123abc", "chatcmpl-test" if kind == "openai" else "msg_test"):
        acc = Accumulator(model)
        for d in _deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream"):
            acc.add(d)
        done = acc.completion(kind)
        assert (done.text, done.request_id) == ("It is sunny.", stated)
        assert (done.usage.input_tokens, done.usage.output_tokens, done.usage.reported) == (
            21, 3, True)


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_streamed_request_answered_whole_carries_the_header_s_request_id(
        kind: str, mode: str, respx_mock: Any) -> None:
    """A gateway ignoring ``stream: true`` answers with the whole JSON: its id is the one a
    whole answer to a whole request gets, the response's request-id header (what a provider's
    support asks for), else the body's. Failed before: the body's id with a header stated."""
    provider, cred, url, model = make(kind)
    header = "x-request-id" if kind == "openai" else "request-id"
    respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, json=ok_body(kind, "whole"), headers={header: "req_0123abc"}),
        httpx.Response(200, json=ok_body(kind, "whole"))])
    for stated in ("req_0123abc", "chatcmpl-test" if kind == "openai" else "msg_test"):
        acc = Accumulator(model)
        for d in _deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream"):
            acc.add(d)
        assert (acc.completion(kind).text, acc.request_id) == ("whole", stated)


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and every exception it links to, suppressed context included."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__]
    return seen


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_no_exception_linked_to_the_error_holds_the_echoed_key(kind, stream, respx_mock):
    """The error was raised ``from None`` inside the SDK exception's handler: hidden from a
    traceback, but still its ``__context__``, whose text quotes the server's body with the key
    in it, for any reporter or debugger that walks the chain regardless."""
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(
        401, json=err_body(kind, 401, f"Incorrect API key provided: {SECRET}")))
    with pytest.raises(AuthenticationFailed) as info:
        if stream:
            list(provider.stream(PROMPT, model, cred, OPTS))
        else:
            provider.complete(PROMPT, model, cred, OPTS)
    for link in _chain(info.value):
        assert SECRET not in f"{link} {link!r} {link.args!r}", type(link)


CF_PAGE = (b"<!DOCTYPE html><html><head><title>example.com | 502: Bad gateway</title></head>"
           b"<body><h1>Bad gateway</h1><p>Cloudflare Ray ID: 8abc123def-SJC</p></body></html>")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_failed_request_names_the_request_the_provider_answered(kind, stream, respx_mock):
    """What support asks for: the provider's request id (OpenAI's ``x-request-id``, Anthropic's
    ``request-id``) is in the error's words and on the error, streamed or not."""
    provider, cred, url, model = make(kind)
    header = "x-request-id" if kind == "openai" else "request-id"
    respx_mock.post(url).mock(return_value=httpx.Response(
        500, json=err_body(kind, 500, "internal"), headers={header: "req_7Hq2ab"}))
    with pytest.raises(ServerError) as info:
        if stream:
            list(provider.stream(PROMPT, model, cred, OPTS))
        else:
            provider.complete(PROMPT, model, cred, OPTS)
    assert info.value.request_id == "req_7Hq2ab"
    assert f"({header} req_7Hq2ab)" in str(info.value)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_proxy_s_error_page_names_its_ray(kind, stream, respx_mock):
    provider, cred, url, model = make(kind)
    respx_mock.post(url).mock(return_value=httpx.Response(
        502, content=CF_PAGE, headers={"content-type": "text/html", "cf-ray": "8abc123def-SJC"}))
    with pytest.raises(ServerError) as info:
        if stream:
            list(provider.stream(PROMPT, model, cred, OPTS))
        else:
            provider.complete(PROMPT, model, cred, OPTS)
    assert info.value.request_id == "8abc123def-SJC"
    assert str(info.value).endswith("(cf-ray 8abc123def-SJC)")


@pytest.mark.parametrize("kind", PROVIDERS)
def test_an_error_event_in_a_stream_names_the_stream_s_request(kind, respx_mock):
    provider, cred, url, model = make(kind)
    header = "x-request-id" if kind == "openai" else "request-id"
    event = (b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'
             if kind == "openai" else
             b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
             b'"message": "Overloaded"}}\n\n')
    respx_mock.post(url).mock(return_value=httpx.Response(
        200, content=event, headers={**SSE_HEADERS, header: "req_7Hq2ab"}))
    with pytest.raises(ServerError) as info:
        list(provider.stream(PROMPT, model, cred, OPTS))
    assert info.value.request_id == "req_7Hq2ab"


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_stream_cut_after_its_headers_names_the_request_it_answered(
        kind: str, mode: str, respx_mock: Any, stream_deltas: Callable[..., list[Any]]) -> None:
    """A stream that ends before its end (a proxy closing it, an upstream that died) is the
    provider's request all the same: its id, stated in the headers, is what support asks for."""
    provider, cred, url, model = make(kind)
    header = "x-request-id" if kind == "openai" else "request-id"
    body = (openai_chat_stream(("Hel", "lo", " there")) if kind == "openai"
            else anthropic_stream(("Hel", "lo", " there")))
    cut = body[:body.index(b'lo"') + 1]
    respx_mock.post(url).mock(return_value=httpx.Response(
        200, content=cut, headers={**SSE_HEADERS, header: "req_cut42"}))
    with pytest.raises(IncompleteResponse) as info:
        stream_deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream")
    assert info.value.request_id == "req_cut42"
    assert str(info.value).endswith(f"({header} req_cut42)")


#: Ids an answered request's header may state that are no id to print: the key echoed by a
#: proxy, a page's worth of junk, terminal escapes (ESC and the one-byte CSI ``\x9b``) and a
#: next-line control (``\x85``) in the latin-1 a header is read in.
ODD_IDS = {"key": (f"req-{SECRET}", "req-"), "long": ("req_" + "A" * 10_000, "req_" + "A" * 96),
           "escapes": ("req_1\x1b[31mRED\x9b2J\x85\ttail", "req_1[31mRED2Jtail")}


@pytest.mark.parametrize("odd", ODD_IDS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_an_answered_request_s_id_is_shown_as_a_failed_one_s_is(kind, stream, odd, respx_mock):
    """A failed request's id was scrubbed, one line, cut to 100 characters; the id of the
    request that answered (``Completion.request_id``, hence ``Reply.request_ids``) was the
    header as it came: the key, 10 KB, terminal escapes."""
    provider, cred, url, model = make(kind)
    header = "x-request-id" if kind == "openai" else "request-id"
    stated, shown = ODD_IDS[odd]
    body = ((openai_chat_stream(("Hi",)) if kind == "openai" else anthropic_stream(("Hi",)))
            if stream else json.dumps(ok_body(kind, "Hi")).encode())
    labels = SSE_HEADERS if stream else {"content-type": "application/json"}
    respx_mock.post(url).mock(return_value=httpx.Response(
        200, content=body, headers={**labels, header: stated.encode("latin-1")}))
    got = ([d.request_id for d in provider.stream(PROMPT, model, cred, OPTS) if d.request_id][-1]
           if stream else provider.complete(PROMPT, model, cred, OPTS).request_id)
    assert got is not None and got.startswith(shown) and len(got) <= 100, got
    assert SECRET not in got and SECRET[-12:] not in got
    assert all(c.isprintable() for c in got), got
