"""A deadline that bounds the whole response: trickled bodies and ping-only streams become a typed
Timeout that fails over, for both wire formats and for complete, stream, acomplete and astream.

The real SDKs run behind respx; each chunk a body sends steps the injected clock by half a second,
so a "30 s" trickle takes no real time. The watch also inflates what it reads: compressed
streams and whole answers reach the SDK whole, once.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.errors import (
    Timeout,
)
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.testing.clock import FakeClock
from hermes_core.types import Credential
from tests.conftest import CancelledOnce, Loopback
from tests.providers.conftest import (
    LOOP_OPTS,
    LOOP_PROMPT,
    PRIMARY_OPENAI,
    PRIMARY_OPENAI_URL,
    PROVIDERS,
    SECRET,
    WHOLE,
    _answer_json,
    _async_chunks,
    _compress,
    _compressed,
    _error_answer,
    _in_gzip_members,
    _rate_limited,
    build,
    make,
    mock_backup,
    primary_url,
    run,
    settings_for,
    stepping,
)


def trickle(body: bytes) -> Iterator[bytes]:
    for i in range(len(body)):
        yield body[i:i + 1]


def pings(kind: str) -> Iterator[bytes]:
    ping = b": ping\n\n" if kind == "openai" else b'event: ping\ndata: {"type": "ping"}\n\n'
    for _ in range(10_000):
        yield ping


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_trickled_body_times_out_within_the_budget_and_fails_over(
        respx_mock: object, clock: FakeClock, primary: str, mode: str) -> None:
    loop, router = build(primary, clock)
    body = json.dumps(openai_chat_completion("slow") if primary == "openai"
                      else anthropic_message("slow")).encode()
    respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(
            200, headers={"content-type": "application/json"},
            content=stepping(trickle(body), clock, mode.startswith("a"))))
    backup = mock_backup(respx_mock, primary, stream=False)
    start = clock.t
    assert run(loop, router, mode) == "ok"
    assert backup.called  # type: ignore[attr-defined]
    # cut off at the 6 s budget (one chunk of slack), far before the body would have ended
    assert clock.t - start <= LOOP_OPTS.timeout_s + 0.5 < len(body) * 0.5


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_short_deadline_still_leaves_the_backup_time_after_a_stalled_primary(
        respx_mock: object, clock: FakeClock, primary: str, mode: str) -> None:
    """``deadline_s: 6`` with every other setting at its default (a 60 s attempt budget, one retry
    of the same provider): the primary may not spend the whole deadline while a backup remains."""
    settings = settings_for(primary).with_overrides(**{
        "llm.deadline_s": 6, "credential_pool.retries_per_provider": 1})
    loop, router = build(primary, clock, settings)
    streaming = mode in ("stream", "astream")
    body = json.dumps(openai_chat_completion("slow") if primary == "openai"
                      else anthropic_message("slow")).encode()
    respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(
            200, headers=SSE_HEADERS if streaming else {"content-type": "application/json"},
            content=stepping(pings(primary) if streaming else trickle(body), clock,
                             mode.startswith("a"))))
    backup = mock_backup(respx_mock, primary, stream=streaming)
    defaults = CallOptions(max_tokens=32, timeout_s=60.0, idle_timeout_s=30.0)
    decision, start = router.select("hi"), clock.t
    if mode == "complete":
        text = loop.complete(LOOP_PROMPT, decision, defaults)[0].text
    elif mode == "acomplete":
        text = asyncio.run(loop.acomplete(LOOP_PROMPT, decision, defaults))[0].text
    elif mode == "stream":
        text = "".join(d.text for d in loop.stream(LOOP_PROMPT, decision, defaults))
    else:
        async def collect() -> str:
            return "".join([d.text async for d in loop.astream(LOOP_PROMPT, decision, defaults)])
        text = asyncio.run(collect())
    assert text == "ok" and backup.called  # type: ignore[attr-defined]
    assert clock.t - start <= 6.0 + 0.5


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_stream_of_only_pings_is_idle_and_fails_over(respx_mock: object, clock: FakeClock,
                                                       primary: str, mode: str) -> None:
    loop, router = build(primary, clock)
    respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(
            200, headers=SSE_HEADERS,
            content=stepping(pings(primary), clock, mode == "astream")))
    backup = mock_backup(respx_mock, primary, stream=True)
    start = clock.t
    assert run(loop, router, mode) == "ok"
    assert backup.called  # type: ignore[attr-defined]
    assert clock.t - start <= LOOP_OPTS.idle_timeout_s + 0.5  # type: ignore[operator]


# A proxy that labels the event stream as something else: the SDKs parse the events all the
# same, but the idle check ran only for ``text/event-stream`` bodies, so a stream of pings (or of
# a byte now and then) ran until the whole-response budget instead of its idle timeout.
@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream",
                                          "application/json", None])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_of_only_pings_under_another_content_type_is_still_idle(
        respx_mock: object, clock: FakeClock, mode: str, content_type: str | None) -> None:
    loop, router = build("anthropic", clock)
    headers = {"content-type": content_type} if content_type else {}
    respx_mock.post(primary_url("anthropic")).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(
            200, headers=headers,
            content=stepping(pings("anthropic"), clock, mode == "astream")))
    backup = mock_backup(respx_mock, "anthropic", stream=True)
    start = clock.t
    assert run(loop, router, mode) == "ok"
    assert backup.called  # type: ignore[attr-defined]
    assert clock.t - start <= LOOP_OPTS.idle_timeout_s + 0.5  # type: ignore[operator]


@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_stream_trickling_content_is_cut_by_the_whole_response_budget(
        respx_mock: object, clock: FakeClock, primary: str) -> None:
    """Content every half second never goes idle; the whole-response budget still ends it."""
    loop, router = build(primary, clock)
    pieces = tuple(f"w{i} " for i in range(200))
    body = (openai_chat_stream(pieces) if primary == "openai" else anthropic_stream(pieces))
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, headers=SSE_HEADERS,
                                             content=stepping(iter(events), clock, False)))
    mock_backup(respx_mock, primary, stream=True)
    got: list[str] = []
    with pytest.raises(Timeout, match="budget"):
        for d in loop.stream(LOOP_PROMPT, router.select("hi"), LOOP_OPTS):
            got.append(d.text)
    assert got and len(got) < len(pieces)   # after the first token the error reaches the caller


# Socket silence, over a real socket: the HTTP client's own read timeout said only "timed out",
# so a stalled provider's final error could not tell a server that never answered from one that
# stopped mid-reply, nor say how long either was waited for.
SILENT_KEY = "sk-testkey-SECRET-silent-000001"


SILENT_OPTS = CallOptions(max_tokens=16, timeout_s=0.4, idle_timeout_s=0.4)


def _silent_call(srv: object, kind: str, mode: str) -> str:
    from hermes_core.types import Credential

    url = srv.url  # type: ignore[attr-defined]
    provider = (OpenAIProvider("custom", endpoint=url + "/v1") if kind == "openai"
                else AnthropicProvider("custom", endpoint=url))
    cred = Credential("custom", SILENT_KEY)
    if mode == "complete":
        return str(provider.complete(LOOP_PROMPT, "m1", cred, SILENT_OPTS).text)
    if mode == "stream":
        return "".join(d.text for d in provider.stream(LOOP_PROMPT, "m1", cred, SILENT_OPTS))

    async def drain() -> str:
        return "".join([d.text async for d in provider.astream(LOOP_PROMPT, "m1", cred, SILENT_OPTS)])

    return asyncio.run(drain())


@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_server_silent_before_its_first_byte_times_out_saying_so_and_for_how_long(
        kind: str, mode: str) -> None:
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer

    with MockLLMServer() as srv:
        srv.set_key(SILENT_KEY, KeyBehaviour(latency_s=3.0))
        with pytest.raises(Timeout) as info:
            _silent_call(srv, kind, mode)
    text = str(info.value)
    assert "custom: " in text and "no first byte for 0.4s" in text, text
    assert SILENT_KEY not in text and SILENT_KEY[:12] not in text


@pytest.mark.parametrize(("mode", "fault", "where"), [
    ("complete", "trickle", "mid-response"), ("stream", "stall", "mid-stream"),
    ("astream", "stall", "mid-stream")])
def test_a_server_silent_after_some_bytes_times_out_saying_where_and_how_long_into_it(
        mode: str, fault: str, where: str) -> None:
    """``trickle`` sends a byte a second, ``stall`` "Hello wor" then a ping a second: the socket
    is silent for longer than the 0.4 s read timeout after bytes have come."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer

    with MockLLMServer() as srv:
        srv.set_key(SILENT_KEY, KeyBehaviour(fault=fault, fault_interval_s=1.0))
        with pytest.raises(Timeout) as info:
            _silent_call(srv, "openai", mode)
    text = str(info.value)
    assert f"no bytes for 0.4s {where}" in text and "s into the response" in text, text
    assert SILENT_KEY not in text and SILENT_KEY[:12] not in text


def test_a_provider_that_never_answers_ends_in_an_error_saying_what_stalled_and_how_long() -> None:
    """The whole story in the call loop's final error: each attempt and how long it waited, and
    what the last one saw (no first byte), with no piece of the key."""
    from hermes_core.errors import AllProvidersFailed
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer

    with MockLLMServer() as srv:
        srv.set_key(SILENT_KEY, KeyBehaviour(latency_s=3.0))
        settings = load_settings({
            "llm": {"routing": {"default_model": "m1", "providers": [
                {"name": "custom", "type": "openai", "endpoint": srv.url + "/v1",
                 "models": ["m1"]}]}},
            "credentials": {"custom": {"keys": [{"key": SILENT_KEY}]}},
            "credential_pool": {"retries_per_provider": 1}}, env={})
        loop = CallLoop.from_settings(settings, audit_path=False, sleep=lambda s: None)
        with pytest.raises(AllProvidersFailed) as info:
            "".join(d.text for d in loop.stream(LOOP_PROMPT, Router.from_settings(settings).select(
                "hi"), SILENT_OPTS))
    text = str(info.value)
    waited = [float(s) for s in re.findall(r"custom/m1:timeout after (\d+\.\d)s", text)]
    assert len(waited) == 2 and min(waited) >= 0.4, text
    assert "custom: request timed out (no first byte for 0.4s" in text, text
    assert SILENT_KEY[:12] not in text


@pytest.mark.parametrize(("answer", "billable"), [
    (httpx.ConnectError("refused"), False), (httpx.ConnectTimeout("no route"), False),
    (httpx.Response(500, json={}), False), (httpx.Response(429, json={}), False),
    (httpx.ReadTimeout("no first byte"), True), (httpx.Response(200, json={}), True)])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_request_is_billable_once_it_reached_the_server_unless_refused(
        respx_mock: Any, answer: Any, billable: bool, is_async: bool) -> None:
    """What a whole request cut or abandoned was billed hangs on this: a request that never
    connected, or that an error status refused, costs nothing; one the server took may have."""
    from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport, bounded

    respx_mock.post(PRIMARY_OPENAI_URL).mock(side_effect=[answer])

    async def asend() -> None:
        transport = AsyncDeadlineTransport(httpx.AsyncHTTPTransport())
        async with httpx.AsyncClient(transport=transport) as client:
            await client.post(PRIMARY_OPENAI_URL, json={})

    with bounded(5.0) as budget:
        assert not budget.answered.billable()
        try:
            if is_async:
                asyncio.run(asend())
            else:
                with httpx.Client(transport=DeadlineTransport(httpx.HTTPTransport())) as client:
                    client.post(PRIMARY_OPENAI_URL, json={})
        except httpx.HTTPError:
            pass
    assert budget.answered.billable() is billable


def _interrupted_post(server: Loopback, is_async: bool, cancelled_once: CancelledOnce) -> None:
    """Post to ``server`` through the deadline transport and give up as soon as its request is
    where the server holds it: a cancelled task (async) or Ctrl-C (sync, a real SIGALRM sent
    to this thread raising it)."""
    from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport

    async def asend() -> None:
        transport = AsyncDeadlineTransport(httpx.AsyncHTTPTransport())
        async with httpx.AsyncClient(transport=transport, timeout=5.0) as client:
            await cancelled_once(client.post(server.url, json={"model": "m"}), server.reached)

    if is_async:
        asyncio.run(asend())
        return

    def ctrl_c(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    def interrupt_once_reached() -> None:
        guard = time.monotonic() + 30.0
        while not server.reached() and not done.is_set() and time.monotonic() < guard:
            time.sleep(0.005)
        if not done.is_set():
            signal.pthread_kill(main, signal.SIGALRM)

    main, done = threading.get_ident(), threading.Event()
    before = signal.signal(signal.SIGALRM, ctrl_c)
    interrupter = threading.Thread(target=interrupt_once_reached, daemon=True)
    try:
        with httpx.Client(transport=DeadlineTransport(httpx.HTTPTransport()),
                          timeout=5.0) as client, pytest.raises(KeyboardInterrupt):
            interrupter.start()
            client.post(server.url, json={"model": "m"})
    finally:
        done.set()
        interrupter.join()
        signal.signal(signal.SIGALRM, before)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_request_given_up_while_still_connecting_never_reached_the_server(
        still_connecting: Loopback, is_async: bool, cancelled_once: CancelledOnce) -> None:
    """Ctrl-C or a cancelled task while the connection is still being made: the request never
    left, and no provider bills it (it was marked sent as soon as the transport had it)."""
    from hermes_core.providers.deadline import bounded

    with bounded(5.0) as budget:
        _interrupted_post(still_connecting, is_async, cancelled_once)
    assert not budget.answered.sent and not budget.answered.billable()


@pytest.mark.parametrize("is_async", [False, True])
def test_a_request_given_up_while_its_answer_is_awaited_reached_the_server(
        never_answering: Loopback, is_async: bool, cancelled_once: CancelledOnce) -> None:
    """The same give-up once the server read the whole request: it has it and may bill it."""
    from hermes_core.providers.deadline import bounded

    with bounded(5.0) as budget:
        _interrupted_post(never_answering, is_async, cancelled_once)
    assert budget.answered.sent and budget.answered.billable()


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_compressed_stream_is_inflated_once_and_reaches_the_client_as_sent(
        encoding: str, is_async: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch inflates a compressed event stream to read its lines; the HTTP client must not
    inflate the same bytes again. The response keeps the headers and raw bytes the server sent
    (``content-encoding``, ``content-length``, the compressed chunks), and the client reads the
    body through the watch's inflating, once (a second inflating of plain text would raise)."""
    import zlib

    from hermes_core.providers import deadline
    from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport, bounded

    events = [b'data: {"n": %d}\n\n' % i for i in range(5)]
    if encoding in ("br", "zstd"):   # one piece, sent in chunks of 7 bytes
        whole = _compress(encoding, b"".join(events))
        body = [whole[i:i + 7] for i in range(0, len(whole), 7)]
    else:
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        gz = zlib.compressobj(wbits=wbits)
        body = [gz.compress(e) + gz.flush(zlib.Z_SYNC_FLUSH) for e in events] + [gz.flush()]
    headers = {**SSE_HEADERS, "content-encoding": encoding,
               "content-length": str(sum(map(len, body)))}
    through_watch: list[bytes] = []
    decode = deadline._Inflating.decode

    def spied(self: Any, data: bytes) -> Iterator[bytes]:
        for piece in decode(self, data):
            through_watch.append(piece)
            yield piece

    monkeypatch.setattr(deadline._Inflating, "decode", spied)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, content=iter(body) if not is_async
                              else _async_chunks(body))

    url = "https://primary.test/v1/chat/completions"
    with bounded(10.0, 3.0):
        if is_async:
            async def read() -> tuple[httpx.Headers, bytes, bytes]:
                transport = AsyncDeadlineTransport(httpx.MockTransport(answer))
                async with httpx.AsyncClient(transport=transport) as client:
                    async with client.stream("POST", url) as response:
                        raw = b"".join([c async for c in response.aiter_raw()])
                    async with client.stream("POST", url) as response:
                        return response.headers, raw, await response.aread()
            seen, raw, read_body = asyncio.run(read())
        else:
            with httpx.Client(transport=DeadlineTransport(httpx.MockTransport(answer))) as client:
                with client.stream("POST", url) as response:
                    raw = b"".join(response.iter_raw())
                with client.stream("POST", url) as response:
                    seen, read_body = response.headers, response.read()
    assert raw == b"".join(body)
    assert seen["content-encoding"] == encoding and seen["content-length"] == headers[
        "content-length"]
    assert read_body == b"".join(events) == b"".join(through_watch)


def _hooked_client(kind: str, seen: list[tuple[dict[str, str], bytes]]) -> Any:
    """A real SDK client on the deadline transport, as the providers build theirs, with a
    response event hook that keeps what it saw: the headers, and the body it read."""
    import anthropic
    import openai

    from hermes_core.providers.deadline import DeadlineTransport

    def hook(response: httpx.Response) -> None:
        seen.append((dict(response.headers), response.read()))

    sdk: Any = openai if kind == "openai" else anthropic
    http_client = sdk.DefaultHttpxClient(transport=DeadlineTransport(httpx.HTTPTransport()),
                                         event_hooks={"response": [hook]})
    cls = sdk.OpenAI if kind == "openai" else sdk.Anthropic
    base = PRIMARY_OPENAI if kind == "openai" else None
    return cls(api_key="sk-hook-SECRET-0000004", base_url=base, max_retries=0,
               http_client=http_client)


def _sdk_text(kind: str, client: Any) -> str:
    if kind == "openai":
        done = client.chat.completions.create(model="gpt-4o", max_tokens=8,
                                              messages=[{"role": "user", "content": "hi"}])
        return str(done.choices[0].message.content)
    done = client.messages.create(model="claude-sonnet-4", max_tokens=8,
                                  messages=[{"role": "user", "content": "hi"}])
    return str(done.content[0].text)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_event_hook_sees_a_compressed_answer_as_the_server_sent_it(
        kind: str, respx_mock: Any) -> None:
    """A response hook on the SDK's client saw a watched gzip answer inflated but without its
    ``content-encoding`` (taken off so the client would not inflate it again): its headers and
    its body told another story than the wire. It sees the headers as sent and reads the body
    inflated, as for any response; the SDK still gets the answer, read through every member."""
    import gzip

    from hermes_core.providers.deadline import bounded

    plain = _answer_json(kind, "as sent")
    body = _in_gzip_members(plain, 50)
    sent = {"content-type": "application/json", "content-encoding": "gzip",
            "content-length": str(len(body))}
    respx_mock.post(WHOLE[kind][0]).mock(
        return_value=httpx.Response(200, headers=sent, content=body))
    seen: list[tuple[dict[str, str], bytes]] = []
    with bounded(10.0):
        text = _sdk_text(kind, _hooked_client(kind, seen))
    assert text == "as sent"
    [(headers, read)] = seen
    assert headers["content-encoding"] == "gzip" and headers["content-length"] == str(len(body))
    assert read == plain and gzip.decompress(body) == plain


class _Tee(httpx.BaseTransport):
    """An author's transport around the deadline transport: keeps each response's headers and
    the raw bytes it passes on (a wire log)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.headers: list[dict[str, str]] = []
        self.raw: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        self.headers.append(dict(response.headers))
        stream, raw = response.stream, self.raw

        class Logged(httpx.SyncByteStream):
            def __iter__(self) -> Iterator[bytes]:
                for chunk in stream:   # type: ignore[union-attr]
                    raw.append(chunk)
                    yield chunk

            def close(self) -> None:
                stream.close()   # type: ignore[union-attr]

        response.stream = Logged()
        return response


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_transport_around_the_deadline_transport_sees_the_bytes_the_server_sent(
        kind: str, respx_mock: Any) -> None:
    """An author's transport wrapping the deadline transport logged an inflated body under
    headers that no longer named its coding. It now sees the headers and the compressed bytes
    as sent (they inflate to the answer), and the SDK reads the answer."""
    import gzip

    import openai

    from hermes_core.providers.deadline import DeadlineTransport, bounded

    plain = _answer_json(kind, "logged")
    body = gzip.compress(plain)
    respx_mock.post(WHOLE[kind][0]).mock(return_value=httpx.Response(
        200, headers={"content-type": "application/json", "content-encoding": "gzip"},
        content=body))
    tee = _Tee(DeadlineTransport(httpx.HTTPTransport()))
    import anthropic
    sdk: Any = openai if kind == "openai" else anthropic
    cls = sdk.OpenAI if kind == "openai" else sdk.Anthropic
    client = cls(api_key="sk-tee-SECRET-0000005", max_retries=0,
                 base_url=PRIMARY_OPENAI if kind == "openai" else None,
                 http_client=sdk.DefaultHttpxClient(transport=tee))
    with bounded(10.0):
        assert _sdk_text(kind, client) == "logged"
    assert tee.headers[0]["content-encoding"] == "gzip"
    assert b"".join(tee.raw) == body


def _read_raw(chunks: list[bytes], encoding: str, is_async: bool, step_s: float = 60.0,
              limit: int | None = None) -> bytes:
    """A compressed event stream read with ``iter_raw`` / ``aiter_raw`` alone, chunks
    ``step_s`` apart on an injected clock, under a 3600 s budget with a 5 s idle timeout
    (and ``limit``, the stream's size limit)."""
    from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport, bounded

    now = [0.0]

    def body() -> object:
        def sync() -> Iterator[bytes]:
            for c in chunks:
                now[0] += step_s
                yield c

        async def asyn() -> AsyncIterator[bytes]:
            for c in chunks:
                now[0] += step_s
                yield c
        return asyn() if is_async else sync()

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={**SSE_HEADERS, "content-encoding": encoding},
                              content=body())  # type: ignore[arg-type]

    url = "https://primary.test/v1/chat/completions"
    with bounded(3600.0, 5.0, lambda: now[0], max_stream_bytes=limit):
        if is_async:
            async def read() -> bytes:
                transport = AsyncDeadlineTransport(httpx.MockTransport(answer))
                async with httpx.AsyncClient(transport=transport) as client, client.stream(
                        "POST", url) as response:
                    return b"".join([c async for c in response.aiter_raw()])
            return asyncio.run(read())
        with httpx.Client(transport=DeadlineTransport(httpx.MockTransport(answer))) as client, \
                client.stream("POST", url) as response:
            return b"".join(response.iter_raw())


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_compressed_stream_read_raw_is_cut_when_idle_not_only_at_its_whole_budget(
        encoding: str, is_async: bool) -> None:
    """A reader of ``iter_raw`` alone never has the response's decoder inflate the body, and the
    watch saw a compressed stream's content only there: a server sending one byte a minute ran
    to the whole-response budget (an hour here), never cut by the 5 s idle timeout. The watch
    now inflates what the decoder did not, so the first chunk past the idle timeout ends it: a
    read timeout saying so, which the providers map to a typed Timeout naming no secret."""
    from hermes_core.errors import Timeout as TimeoutError_
    from hermes_core.providers._sdk import read_error

    body = (_compress(encoding, b": ping\n\n" * 20) if encoding == "zstd"
            else next(iter(_compressed([b": ping\n\n" * 20]))))
    with pytest.raises(httpx.ReadTimeout, match=r"no content for 5s mid-stream, 60\.0s into") as info:
        _read_raw([body[i:i + 1] for i in range(len(body))], encoding, is_async)
    mapped = read_error("primary", info.value, Credential("primary", "sk-raw-SECRET-0001"))
    assert isinstance(mapped, TimeoutError_) and "no content for 5s" in str(mapped)
    assert "sk-raw-SECRET" not in str(mapped)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_compressed_stream_read_raw_with_content_in_time_is_read_whole(is_async: bool) -> None:
    """The idle timeout counts content, inflated, for a raw reader as for the SDK's: events
    arriving a second apart for a minute are read whole, raw, as sent."""
    chunks = list(_compressed([b'data: {"n": %d}\n\n' % i for i in range(60)]))
    assert _read_raw(chunks, "gzip", is_async, step_s=1.0) == b"".join(chunks)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_compressed_stream_read_raw_is_cut_past_its_size_limit(is_async: bool) -> None:
    """The size limit counts the stream inflated for a raw reader too (the watch inflates what
    the decoder did not): ~22 KB of events in a few hundred bytes of gzip, read raw under a
    10,000-byte limit, are cut saying the limit; under no limit the same bytes are read whole."""
    from hermes_core.providers.deadline import StreamTooLarge

    chunks = list(_compressed([b'data: {"n": "' + b"x" * 200 + b'"}\n\n' for _ in range(100)]))
    assert len(b"".join(chunks)) < 10_000
    with pytest.raises(StreamTooLarge, match=r"past its limit of 10,000 bytes \(llm\.max_stream_"
                       r"bytes\), .* bytes? received \(10,\d{3} inflated\)"):
        _read_raw(chunks, "gzip", is_async, step_s=0.01, limit=10_000)
    assert _read_raw(chunks, "gzip", is_async, step_s=0.01) == b"".join(chunks)


@pytest.mark.parametrize("is_async", [False, True])
def test_the_http_client_reads_the_decoder_the_watch_sets(is_async: bool) -> None:
    """The watch is a compressed body's decoder through httpx2's private ``Response._decoder``
    (no public seam sets one; pyproject bounds httpx2 to the releases read). A release that
    stopped reading it would inflate the body a second time (or hand the SDK the raw bytes)
    and leave the idle timeout and caps unapplied: this fails first, by name."""
    import gzip

    import httpx2
    from httpx2._decoders import ContentDecoder

    class Marking(ContentDecoder):
        def decode(self, data: bytes) -> Iterator[bytes]:
            yield b"<" + data + b">"

        def flush(self) -> Iterator[bytes]:
            yield b"."

    sent = gzip.compress(b"data: {}\n\n")
    if is_async:
        async def read() -> bytes:
            response = httpx2.Response(200, headers={"content-encoding": "gzip"},
                                       stream=_AsyncBytes([sent]))
            response._decoder = Marking()
            return await response.aread()
        got = asyncio.run(read())
    else:
        response = httpx2.Response(200, headers={"content-encoding": "gzip"},
                                   stream=httpx2.ByteStream(sent))
        response._decoder = Marking()
        got = response.read()
    assert got == b"<" + sent + b">.", (
        f"httpx2 {httpx2.__version__} no longer reads Response._decoder: deadline._Inflating "
        "is not the body's decoder; find the new seam before widening pyproject's bound")


class _AsyncBytes(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for c in self._chunks:
            yield c


@pytest.mark.parametrize("status", [429, 200])
@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_compressed_error_answer_keeps_its_encoding_headers_and_no_secret(
        kind: str, mode: str, status: int, respx_mock: Any) -> None:
    """The watch inflates a compressed body itself (as the response's decoder); the error's
    headers are what was on the wire, ``content-encoding`` and ``content-length`` included (the
    caller can tell a proxy compressed it, and how long it was), and a header echoing the key is
    still masked."""
    import gzip

    provider, cred, url, model = make(kind)
    body = gzip.compress(json.dumps(_error_answer(kind, status)).encode())
    sent = {"content-type": "application/json", "content-encoding": "gzip",
            "retry-after": "7", "x-echoed-key": SECRET}
    respx_mock.post(url).mock(return_value=httpx.Response(status, headers=sent, content=body))
    e = _rate_limited(provider, cred, model, mode)
    assert e.headers["content-encoding"] == "gzip"
    assert e.headers["content-length"] == str(len(body))
    assert e.retry_after == 7
    assert SECRET not in repr(e.headers) and SECRET not in str(e)


@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_stream_s_first_byte_is_held_to_the_request_s_timeout_not_the_idle_one(
        kind: str, mode: str) -> None:
    """A reasoning model or a long prefill is silent before its first byte: streamed, that wait
    was cut at the idle timeout (0.4 s) although the request's own timeout (3 s) is what the
    same request asked whole is held to. The idle timeout is for gaps once the stream began."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer
    from hermes_core.types import Credential

    with MockLLMServer() as srv:
        srv.set_key(SILENT_KEY, KeyBehaviour(latency_s=1.0))
        provider = (OpenAIProvider("custom", endpoint=srv.url + "/v1") if kind == "openai"
                    else AnthropicProvider("custom", endpoint=srv.url))
        opts = CallOptions(max_tokens=16, timeout_s=3.0, idle_timeout_s=0.4)
        cred = Credential("custom", SILENT_KEY)
        if mode == "complete":
            text = str(provider.complete(LOOP_PROMPT, "m1", cred, opts).text)
        elif mode == "stream":
            text = "".join(d.text for d in provider.stream(LOOP_PROMPT, "m1", cred, opts))
        else:
            async def drain() -> str:
                return "".join([d.text async for d in provider.astream(LOOP_PROMPT, "m1", cred,
                                                                       opts)])
            text = asyncio.run(drain())
    assert text


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_redirected_stream_s_first_byte_is_held_to_the_request_s_timeout_too(
        mode: str, serve) -> None:
    """An endpoint that answers 307 first (a path moved, a gateway's new route; both SDKs follow
    redirects): the idle timeout was set on the request's timeouts when the 307 arrived, and the
    SDK's client carries that same mapping to the redirected request, so its first byte was
    waited for only the idle timeout (0.4 s) again, not the request's own (3 s)."""
    from http.server import BaseHTTPRequestHandler

    body = openai_chat_stream(("ok",))

    class Moved(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path.startswith("/old/"):
                self.send_response(307)
                self.send_header("location", self.path.removeprefix("/old"))
                self.send_header("content-length", "0")
                self.end_headers()
                return
            time.sleep(1.0)   # thinking before the first byte
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    provider = OpenAIProvider("custom", endpoint=serve(Moved) + "/old/v1")
    opts = CallOptions(max_tokens=16, timeout_s=3.0, idle_timeout_s=0.4)
    cred = Credential("custom", SILENT_KEY)
    if mode == "stream":
        text = "".join(d.text for d in provider.stream(LOOP_PROMPT, "m1", cred, opts))
    else:
        async def drain() -> str:
            return "".join([d.text async for d in provider.astream(LOOP_PROMPT, "m1", cred, opts)])
        text = asyncio.run(drain())
    assert text == "ok"
