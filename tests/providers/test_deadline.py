"""A deadline that bounds the whole response: trickled bodies and ping-only streams become a typed
Timeout that fails over, for both wire formats and for complete, stream, acomplete and astream.

The real SDKs run behind respx; each chunk a body sends steps the injected clock by half a second,
so a "30 s" trickle takes no real time. The watch also inflates what it reads: compressed
streams and whole answers reach the SDK whole, once.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx
import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import Timeout
from hermes_core.providers import build_providers
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.deadline import Budget, _Watch
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse as _sse_events
from hermes_core.testing.clock import FakeClock
from hermes_core.types import Credential, Message, Prompt
from tests.conftest import CancelledOnce, Loopback

PRIMARY_OPENAI = "https://primary.test/v1"
OPENAI_URL = PRIMARY_OPENAI + "/chat/completions"
BACKUP_OPENAI = "https://backup.test/v1"
BACKUP_OPENAI_URL = BACKUP_OPENAI + "/chat/completions"
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=6.0, idle_timeout_s=3.0)


def settings_for(primary: str) -> Settings:
    """``primary`` is the wire format that misbehaves; the backup speaks the other one."""
    if primary == "openai":
        provs = [{"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                  "endpoint": PRIMARY_OPENAI},
                 {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]
    else:
        provs = [{"name": "primary", "type": "anthropic", "priority": 1,
                  "models": ["claude-sonnet-4"]},
                 {"name": "backup", "type": "openai", "priority": 2, "models": ["gpt-4o-mini"],
                  "endpoint": BACKUP_OPENAI}]
    return load_settings({
        "llm": {"deadline_s": 30, "routing": {"default_model": provs[0]["models"][0],
                                              "providers": provs}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
    }, env={})


def build(primary: str, clock: FakeClock,
          settings: Settings | None = None) -> tuple[CallLoop, Router]:
    settings = settings or settings_for(primary)
    providers = build_providers(settings)
    for p in providers.values():
        p.clock = clock  # type: ignore[attr-defined]
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, pool, settings, clock=clock, sleep=clock.sleep, asleep=clock.asleep,
                    rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


def stepping(chunks: Iterator[bytes], clock: FakeClock, is_async: bool) -> object:
    """A response body that advances the clock half a second before each chunk."""
    def sync() -> Iterator[bytes]:
        for c in chunks:
            clock.t += 0.5
            yield c

    async def asyn() -> AsyncIterator[bytes]:
        for c in chunks:
            clock.t += 0.5
            yield c

    return asyn() if is_async else sync()


def trickle(body: bytes) -> Iterator[bytes]:
    for i in range(len(body)):
        yield body[i:i + 1]


def pings(kind: str) -> Iterator[bytes]:
    ping = b": ping\n\n" if kind == "openai" else b'event: ping\ndata: {"type": "ping"}\n\n'
    for _ in range(10_000):
        yield ping


def mock_backup(respx_mock: object, primary: str, stream: bool) -> object:
    if primary == "openai":   # the backup speaks Anthropic
        return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
            side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("ok",)),
                                                 headers=SSE_HEADERS) if stream
            else httpx.Response(200, json=anthropic_message("ok")))
    return respx_mock.post(BACKUP_OPENAI_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("ok",)),
                                             headers=SSE_HEADERS) if stream
        else httpx.Response(200, json=openai_chat_completion("ok")))


def primary_url(primary: str) -> str:
    return OPENAI_URL if primary == "openai" else ANTHROPIC_URL


def run(loop: CallLoop, router: Router, mode: str) -> str:
    decision = router.select("hi")
    if mode == "complete":
        return loop.complete(PROMPT, decision, OPTS)[0].text
    if mode == "stream":
        return "".join(d.text for d in loop.stream(PROMPT, decision, OPTS))
    if mode == "acomplete":
        return asyncio.run(loop.acomplete(PROMPT, decision, OPTS))[0].text

    async def collect() -> str:
        return "".join([d.text async for d in loop.astream(PROMPT, decision, OPTS)])

    return asyncio.run(collect())


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
    assert clock.t - start <= OPTS.timeout_s + 0.5 < len(body) * 0.5


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
        text = loop.complete(PROMPT, decision, defaults)[0].text
    elif mode == "acomplete":
        text = asyncio.run(loop.acomplete(PROMPT, decision, defaults))[0].text
    elif mode == "stream":
        text = "".join(d.text for d in loop.stream(PROMPT, decision, defaults))
    else:
        async def collect() -> str:
            return "".join([d.text async for d in loop.astream(PROMPT, decision, defaults)])
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
    assert clock.t - start <= OPTS.idle_timeout_s + 0.5  # type: ignore[operator]


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
    assert clock.t - start <= OPTS.idle_timeout_s + 0.5  # type: ignore[operator]


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
        for d in loop.stream(PROMPT, router.select("hi"), OPTS):
            got.append(d.text)
    assert got and len(got) < len(pieces)   # after the first token the error reaches the caller


def test_the_watch_counts_content_not_pings() -> None:
    now = [0.0]
    watch = _Watch(Budget(100.0, 2.0, lambda: now[0]), 0.0, sse=True)
    now[0] = 1.5
    watch.feed(b'data: {"choices": []}\n\n')          # content: the idle clock restarts
    now[0] = 3.0
    watch.feed(b": ping\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n")   # pings: it does not
    now[0] = 3.6
    with pytest.raises(httpx.ReadTimeout, match="no content for 2s"):
        watch.feed(b": ping\n\n")


# Socket silence, over a real socket: the HTTP client's own read timeout said only "timed out",
# so a stalled provider's final error could not tell a server that never answered from one that
# stopped mid-reply, nor say how long either was waited for.
SILENT_KEY = "sk-testkey-SECRET-silent-000001"
SILENT_OPTS = CallOptions(max_tokens=16, timeout_s=0.4, idle_timeout_s=0.4)


def _silent_call(srv: object, kind: str, mode: str) -> str:
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider
    from hermes_core.types import Credential

    url = srv.url  # type: ignore[attr-defined]
    provider = (OpenAIProvider("custom", endpoint=url + "/v1") if kind == "openai"
                else AnthropicProvider("custom", endpoint=url))
    cred = Credential("custom", SILENT_KEY)
    if mode == "complete":
        return str(provider.complete(PROMPT, "m1", cred, SILENT_OPTS).text)
    if mode == "stream":
        return "".join(d.text for d in provider.stream(PROMPT, "m1", cred, SILENT_OPTS))

    async def drain() -> str:
        return "".join([d.text async for d in provider.astream(PROMPT, "m1", cred, SILENT_OPTS)])

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
            "".join(d.text for d in loop.stream(PROMPT, Router.from_settings(settings).select(
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

    respx_mock.post(OPENAI_URL).mock(side_effect=[answer])

    async def asend() -> None:
        transport = AsyncDeadlineTransport(httpx.AsyncHTTPTransport())
        async with httpx.AsyncClient(transport=transport) as client:
            await client.post(OPENAI_URL, json={})

    with bounded(5.0) as budget:
        assert not budget.answered.billable()
        try:
            if is_async:
                asyncio.run(asend())
            else:
                with httpx.Client(transport=DeadlineTransport(httpx.HTTPTransport())) as client:
                    client.post(OPENAI_URL, json={})
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


def _compressed(events: list[bytes]) -> Iterator[bytes]:
    """Each event gzip-compressed and flushed as it is sent, as a compressing proxy streams."""
    import zlib

    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    for e in events:
        yield gz.compress(e) + gz.flush(zlib.Z_SYNC_FLUSH)
    yield gz.flush()


def _crlf_split_between_chunks(events: list[bytes]) -> Iterator[bytes]:
    """Each event's ``\r\n`` line ends, its last ``\n`` sent at the start of the next chunk."""
    for i, e in enumerate(events):
        yield (b"\n" if i else b"") + e.replace(b"\n", b"\r\n")[:-1]
    yield b"\n"


def _gzip_members(pieces: Iterable[bytes]) -> list[bytes]:
    """Each piece a gzip member of its own, as a proxy that compresses what it relays piece by
    piece sends them (gzip(1) reads such a file whole)."""
    import gzip

    return [gzip.compress(piece) for piece in pieces]


def _in_gzip_members(body: bytes, size: int) -> bytes:
    """``body`` as gzip members of ``size`` of its bytes each, one after another."""
    return b"".join(_gzip_members(body[at:at + size] for at in range(0, len(body), size)))


def _a_gzip_member_per_event(events: list[bytes]) -> Iterator[bytes]:
    """Each event a gzip member of its own, one member's magic split across chunks."""
    for i, member in enumerate(_gzip_members(events)):
        yield from (member[:1], member[1:]) if i == 2 else (member,)


WIRE_FORMS = {
    "CR line ends": ({}, lambda events: (e.replace(b"\n", b"\r") for e in events)),
    "CRLF split between chunks": ({}, _crlf_split_between_chunks),
    "gzip": ({"content-encoding": "gzip"}, _compressed),
    "gzip in several members": ({"content-encoding": "gzip"}, _a_gzip_member_per_event),
    "gzip split inside its blocks": ({"content-encoding": "gzip"}, lambda events: (
        piece for c in _compressed(events) for piece in (c[:len(c) // 2], c[len(c) // 2:]))),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("form", sorted(WIRE_FORMS))
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_stream_sending_content_in_another_wire_form_is_not_idle(
        respx_mock: object, clock: FakeClock, primary: str, form: str, mode: str) -> None:
    """Content every half second for 7-8 s under a 3 s idle timeout. The idle watch read lines
    split on ``\\n`` from the raw bytes: events ended by a bare ``\\r`` (which SSE allows and
    both SDKs read) or sent gzip-compressed never counted as content, so the stream was cut as
    idle 3 s in and failed over though it was answering."""
    loop, router = build(primary, clock)
    pieces = tuple(f"w{i} " for i in range(10))
    body = openai_chat_stream(pieces) if primary == "openai" else anthropic_stream(pieces)
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    headers, shape = WIRE_FORMS[form]
    route = respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, headers={**SSE_HEADERS, **headers},
                                             content=stepping(shape(events), clock,
                                                              mode == "astream")))
    mock_backup(respx_mock, primary, stream=True)
    options = CallOptions(max_tokens=32, timeout_s=20.0, idle_timeout_s=3.0)
    if mode == "stream":
        deltas = list(loop.stream(PROMPT, router.select("hi"), options))
    else:
        async def collect() -> list[Any]:
            return [d async for d in loop.astream(PROMPT, router.select("hi"), options)]
        deltas = asyncio.run(collect())
    assert "".join(d.text for d in deltas) == "".join(pieces)
    assert deltas[-1].usage.reported   # read to its end, not cut after the finish reason
    assert route.call_count == 1   # type: ignore[attr-defined]


def test_a_stream_in_an_encoding_the_watch_cannot_read_is_bounded_by_its_whole_budget() -> None:
    """Bytes of a coding the client does not decode (``compress``; br or zstd without their
    codecs) hold no line the watch can read: taken for silence they cut every
    such stream as idle; only the whole-response budget bounds them."""
    now = [0.0]
    watch = _Watch(Budget(10.0, 2.0, lambda: now[0]), 0.0, sse=True, encoding="compress")
    for t in (1.0, 4.0, 9.0):
        now[0] = t
        watch.feed(b"\x8b\x02\x80opaque")
    now[0] = 10.5
    with pytest.raises(httpx.ReadTimeout, match="budget"):
        watch.feed(b"\x03")


def _bom_split(body: bytes) -> Iterator[bytes]:
    """The mark's first two bytes in one chunk, its last with the first event."""
    yield b"\xef\xbb"
    yield b"\xbf" + body


def _bom_byte_by_byte(body: bytes) -> Iterator[bytes]:
    yield from (b"\xef", b"\xbb", b"\xbf" + body)


BOM_FORMS = {
    "whole": ({}, lambda body: iter((b"\xef\xbb\xbf" + body,))),
    "split across two chunks": ({}, _bom_split),
    "one byte a chunk": ({}, _bom_byte_by_byte),
    "inside a gzip body": ({"content-encoding": "gzip"},
                           lambda body: _compressed([b"\xef\xbb\xbf" + body])),
    "split inside a gzip body": ({"content-encoding": "gzip"}, lambda body: _compressed(
        [b"\xef\xbb", b"\xbf" + body])),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("form", sorted(BOM_FORMS))
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_stream_opening_with_a_byte_order_mark_is_read_whole(
        respx_mock: object, clock: FakeClock, primary: str, form: str, mode: str) -> None:
    """SSE strips one leading UTF-8 BOM; neither SDK's decoder does. Its first line's field was
    read as ``\\ufeffdata`` and dropped: OpenAI's first chunk was lost in silence ("Hel" of
    "Hello"), Anthropic's ``message_start`` too, so the answer failed over. The guard looked for
    the mark in the first raw chunk only: a mark inside a gzip body, or split across the first
    chunks (``EF BB | BF``), reached the SDK."""
    loop, router = build(primary, clock)
    if primary == "openai":
        base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
        body = _sse_events([
            (None, {**base, "choices": [{"index": 0, "delta": {"content": "Hel"},
                                         "finish_reason": None}]}),
            (None, {**base, "choices": [{"index": 0, "delta": {"content": "lo"},
                                         "finish_reason": "stop"}]}), (None, "[DONE]")])
    else:
        body = anthropic_stream(("Hel", "lo"))
    headers, shape = BOM_FORMS[form]
    route = respx_mock.post(primary_url(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, headers={**SSE_HEADERS, **headers},
                                             content=stepping(shape(body), clock,
                                                              mode == "astream")))
    mock_backup(respx_mock, primary, stream=True)
    assert run(loop, router, mode) == "Hello"
    assert route.call_count == 1   # type: ignore[attr-defined]


@pytest.mark.parametrize("body", ["blank lines", "one endless line"])
def test_the_watch_holds_little_of_a_small_gzip_chunk_that_inflates_huge(body: str) -> None:
    """A decompression bomb: 24 MB inflated from a chunk of about 24 KB. The HTTP client inflates
    it in bounded pieces; the watch inflated it whole at once, split it into a list of 24 million
    lines (blank lines: ~200 MB) or kept all of an unfinished line (the endless one: 24 MB held
    for good). It now reads it in pieces and keeps only an unfinished line's start; the endless
    line, one event past ``MAX_EVENT_BYTES``, is cut there."""
    import tracemalloc
    import zlib
    from contextlib import nullcontext

    from hermes_core.providers.deadline import EventTooLarge

    inflated = b"\n" * 24_000_000 if body == "blank lines" else b"data: " + b"x" * 24_000_000
    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    chunk = gz.compress(inflated) + gz.flush(zlib.Z_SYNC_FLUSH)
    assert len(chunk) < 64_000
    watch = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding="gzip")
    tracemalloc.start()
    try:
        with pytest.raises(EventTooLarge) if body == "one endless line" else nullcontext():
            for _ in watch.inflate(chunk):   # passed on piece by piece, as the client reads them
                pass
        _, peak = tracemalloc.get_traced_memory()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000 and held < 100_000


@pytest.mark.parametrize("budget", ["idle", "whole"])
def test_a_small_gzip_chunk_that_inflates_huge_is_cut_piece_by_piece_not_after_it_all(
        budget: str) -> None:
    """A compressing proxy's ping flood: 62 KB of gzip inflate to 16 MB of comments, 256 pieces
    the SDK parses one after another (about 35 s of reading for 64 MB here). The budgets were
    checked once the whole chunk had passed on, so one such chunk held the stream past its idle
    timeout and its whole budget for as long as the SDK took; they are checked at every piece."""
    import zlib

    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    chunk = gz.compress(b": ping\n\n" * 2_000_000) + gz.flush(zlib.Z_SYNC_FLUSH)
    now = [0.0]
    total, idle = (100.0, 2.0) if budget == "idle" else (2.0, None)
    watch = _Watch(Budget(total, idle, lambda: now[0]), 0.0, sse=True, encoding="gzip")
    passed = 0
    with pytest.raises(httpx.ReadTimeout, match="no content for 2s" if idle else "2s budget"):
        for _ in watch.inflate(chunk):
            passed += 1
            now[0] += 0.5   # the SDK's time reading one piece
    assert passed <= 5


@pytest.mark.parametrize("is_async", [False, True])
def test_a_whole_answer_that_inflates_huge_is_cut_by_its_budget_piece_by_piece(
        is_async: bool) -> None:
    """A whole (non-streamed) gzip answer was left to the HTTP client, which inflates it a
    megabyte at a time with the budget checked once per chunk as it came: 62 KB inflating to
    16 MB were read whole past a 2 s budget. Inflated by the watch, it is checked at every
    64 KB, as a stream is."""
    import zlib

    from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport, bounded

    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    bomb = gz.compress(b" " * 16_000_000) + gz.flush()
    assert len(bomb) < 64_000
    now = [0.0]
    headers = {"content-type": "application/json", "content-encoding": "gzip"}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=headers, content=_async_chunks([bomb]) if is_async
                              else iter([bomb]))

    url = "https://primary.test/v1/chat/completions"
    passed = 0
    with pytest.raises(httpx.ReadTimeout, match="2s budget"), \
            bounded(2.0, None, clock=lambda: now[0]):
        if is_async:
            async def read() -> None:
                nonlocal passed
                transport = AsyncDeadlineTransport(httpx.MockTransport(answer))
                async with httpx.AsyncClient(transport=transport) as client, \
                        client.stream("POST", url) as response:
                    async for _ in response.aiter_bytes():
                        passed += 1
                        now[0] += 0.5   # the time reading one piece takes
            asyncio.run(read())
        else:
            transport = DeadlineTransport(httpx.MockTransport(answer))
            with httpx.Client(transport=transport) as client, \
                    client.stream("POST", url) as response:
                for _ in response.iter_bytes():
                    passed += 1
                    now[0] += 0.5
    assert passed <= 5


def _compress(encoding: str, data: bytes) -> bytes:
    """``data`` in brotli or zstd, with the codec the HTTP client decodes it with; the test is
    skipped where that optional codec is not installed (the client then decodes neither, and
    such a body reaches the SDK as it came: nothing inflates)."""
    if encoding == "br":
        brotli = pytest.importorskip("brotli", reason="brotli not installed (httpx2[brotli])")
        return bytes(brotli.compress(data, quality=1))
    try:
        from compression import zstd  # type: ignore[import-not-found]   # Python 3.14+
    except ImportError:
        zstd = pytest.importorskip("backports.zstd", reason="zstd not installed (httpx2[zstd])")
    return bytes(zstd.compress(data))


@pytest.mark.parametrize("budget", ["idle", "whole"])
@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_a_small_brotli_or_zstd_chunk_that_inflates_huge_is_cut_piece_by_piece(
        encoding: str, budget: str) -> None:
    """A real bomb: 16 MB of pings in some KB of brotli or zstd. The watch left such a body to
    the HTTP client, checking the budgets once per chunk as it came: the client then inflated it
    a megabyte at a time for the SDK with no check between, and the idle timeout never applied
    (no line was seen). The watch now inflates it with the client's own decoder, in 64 KB
    pieces, the budgets checked before each, as for gzip."""
    from hermes_core.providers.deadline import DeadlineTransport, bounded

    bomb = _compress(encoding, b": ping\n\n" * 2_000_000)
    assert len(bomb) < 64_000
    now = [0.0]
    total, idle = (100.0, 2.0) if budget == "idle" else (2.0, None)
    headers = {**SSE_HEADERS, "content-encoding": encoding}
    transport = DeadlineTransport(httpx.MockTransport(
        lambda request: httpx.Response(200, headers=headers, content=iter([bomb]))))
    passed = 0
    with pytest.raises(httpx.ReadTimeout, match="no content for 2s" if idle else "2s budget"), \
            bounded(total, idle, clock=lambda: now[0]), httpx.Client(transport=transport) as client, \
            client.stream("POST", "https://primary.test/v1/chat/completions") as response:
        for _ in response.iter_bytes():
            passed += 1
            now[0] += 0.5   # the SDK's time reading one piece
    assert passed <= 5


def test_a_zstd_chunk_of_empty_frames_is_checked_against_the_budget_as_it_is_read() -> None:
    """64 KB of empty zstd frames cost the client's decoder ~0.26 s (a new context per frame)
    and give no piece, so the budgets were checked once, after all of it; the decoder is fed
    4 KB at a time and they are checked between (here each check is 10 ms of the clock: a
    0.08 s budget ends inside the chunk's 16 feeds, after about nine checks)."""
    frames = _compress("zstd", b"") * (64 * 1024 // len(_compress("zstd", b"")))
    checks = [0]

    def clock() -> float:
        checks[0] += 1
        return checks[0] * 0.01

    watch = _Watch(Budget(0.08, None, clock), 0.0, sse=True, encoding="zstd")
    with pytest.raises(httpx.ReadTimeout, match="budget"):
        list(watch.inflate(frames))
    assert 7 <= checks[0] <= 12


@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_a_brotli_or_zstd_chunk_is_handed_to_its_decoder_in_a_few_feeds_not_in_kilobytes(
        encoding: str) -> None:
    """Each feed is a call of the client's decoder (a generator, a codec call, a budget check):
    1 KB feeds made a 64 KB chunk 64 calls, and inflating a large answer took its decoder ~1.3x
    the CPU of whole chunks (1.22-1.30, br and zstd, text and JSON of floats, medians of 15).
    4 KB feeds cost ~1.05-1.09x and still check the budgets every few milliseconds of even the
    slowest body (empty zstd frames), so a 64 KB chunk is at most 16 calls; it inflates whole."""
    from hermes_core.providers.deadline import SUPPORTED_DECODERS, _Decoded

    draw = random.Random(7)
    body = json.dumps([draw.random() for _ in range(20_000)]).encode()
    packed = _compress(encoding, body)[:64 * 1024]
    calls = [0]
    decoder = SUPPORTED_DECODERS[encoding]()
    decode = decoder.decode

    def counted(data: bytes) -> Iterator[bytes]:
        calls[0] += 1
        return decode(data)

    decoder.decode = counted   # type: ignore[method-assign]
    inflate = _Decoded(encoding, decoder)
    out = b"".join(inflate.pieces(packed))   # the first 64 KB of the body: no flush
    assert out == body[:len(out)] and len(out) > 100_000
    assert calls[0] <= 16


def test_a_zstd_body_that_inflates_to_nothing_for_256_kb_is_not_zstd() -> None:
    """No compressor sends hundreds of KB that inflate to nothing (a zstd block holds at most
    128 KB): such a body (empty or skippable frames) only burns the decoder's time until a
    budget ends it; past 256 KB it is a decoding error, as a body that is not zstd is."""
    pytest.importorskip("backports.zstd", reason="zstd not installed (httpx2[zstd])")
    skippable = b"\x50\x2a\x4d\x18" + (65_528).to_bytes(4, "little") + b"\x00" * 65_528
    watch = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding="zstd")
    assert [p for p in watch.inflate(skippable * 4) if p] == []
    with pytest.raises(httpx.DecodingError, match="inflates to nothing"):
        list(watch.inflate(skippable))
    live = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding="zstd")
    event = _compress("zstd", b'data: {"n": 1}\n\n')
    for _ in range(8):   # content between them: never 256 KB of nothing in a row
        assert b"".join(live.inflate(skippable * 3 + event)) == b'data: {"n": 1}\n\n'


@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_the_watch_holds_little_of_a_small_brotli_or_zstd_chunk_that_inflates_huge(
        encoding: str) -> None:
    """The client's decoders bound their pieces (a megabyte); the watch reads lines of 64 KB
    slices of them, so 24 MB of blank lines never become a list of millions of lines."""
    import tracemalloc

    chunk = _compress(encoding, b"\n" * 24_000_000)
    watch = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding=encoding)
    tracemalloc.start()
    try:
        for piece in watch.inflate(chunk):
            assert len(piece) <= 64 * 1024
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000


def test_a_raw_deflate_stream_is_watched_as_the_http_client_reads_it() -> None:
    """``deflate`` is sent raw as often as zlib-wrapped; the HTTP client reads both. The watch
    read only the wrapped form: a raw one failed to inflate and was left to the whole budget, so a
    stream of pings past its idle timeout was never cut as idle."""
    import zlib

    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    now = [0.0]
    watch = _Watch(Budget(100.0, 2.0, lambda: now[0]), 0.0, sse=True, encoding="deflate")
    now[0] = 1.5
    list(watch.inflate(raw.compress(b'data: {"choices": []}\n\n') + raw.flush(zlib.Z_SYNC_FLUSH)))
    now[0] = 3.0
    list(watch.inflate(raw.compress(b'event: ping\ndata: {"type": "ping"}\n\n')
                    + raw.flush(zlib.Z_SYNC_FLUSH)))
    now[0] = 3.6
    with pytest.raises(httpx.ReadTimeout, match="no content for 2s"):
        list(watch.inflate(raw.compress(b": ping\n\n") + raw.flush(zlib.Z_SYNC_FLUSH)))


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


@pytest.mark.parametrize("tail", [b"", b"\x00" * 8, b"\x1f", b"garbage after the end"])
def test_a_gzip_body_is_read_through_every_member_and_bytes_past_the_last_are_ignored(
        tail: bytes) -> None:
    """A gzip body of three members was read to the end of the first, as the HTTP client reads
    it: the rest of the stream was lost with no error. Every member is read now, as gzip(1) does;
    bytes after the last that begin no member (zero padding, a lone magic byte, garbage) are
    ignored, as before."""
    events = [b'data: {"n": %d}\n\n' % i for i in range(3)]
    watch = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding="gzip")
    chunks = _gzip_members(events) + ([tail, b"more"] if tail else [])
    read = b"".join(piece for chunk in chunks for piece in watch.inflate(chunk))
    assert read + b"".join(watch.end()) == b"".join(events)



@pytest.mark.parametrize("encoding", ["deflate", "gzip"])
def test_bytes_past_the_end_of_a_compressed_body_are_not_held(encoding: str) -> None:
    """Bytes after a deflate stream's end are ignored, as after a gzip body's last member; the
    watch kept every one of them (zlib adds each later chunk to ``unused_data``, copied anew at
    each chunk): 16 MB sent past a deflate body's end held 16 MB."""
    import tracemalloc
    import zlib

    wbits = zlib.MAX_WBITS + (16 if encoding == "gzip" else 0)
    pack = zlib.compressobj(wbits=wbits)
    watch = _Watch(Budget(100.0, 2.0, lambda: 0.0), 0.0, sse=True, encoding=encoding)
    body = pack.compress(b'data: {"n": 1}\n\n') + pack.flush()
    assert b"".join(watch.inflate(body)) == b'data: {"n": 1}\n\n'
    tracemalloc.start()
    try:
        for _ in range(16):
            assert list(watch.inflate(b"\x00" * 1_000_000)) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert watch.end() == () and peak < 4_000_000


def test_every_coding_the_client_asks_for_is_read_by_the_watch_through_the_client_s_decoders(
) -> None:
    """The watch reads br and zstd through httpx2's private ``_decoders`` (``SUPPORTED_DECODERS``;
    ``decode`` yielding bytes in bounded pieces, ``flush`` the same), whose own tests skip where
    the codecs are missing. Pinned here with the decoders every install has, so that a change of
    that contract fails a test instead of leaving a br or zstd stream unwatched; and every coding
    a client asks for is one the watch reads (one it did not would be bounded by the whole
    budget alone)."""
    import gzip

    import httpx2

    from hermes_core.providers.deadline import SUPPORTED_DECODERS, _Decoded, _inflater

    asked = [c.strip() for c in httpx2.Client().headers["accept-encoding"].split(",")]
    assert {"gzip", "deflate"} <= set(asked) and all(_inflater(c) is not None for c in asked)
    body = b": ping\n\n" * 300_000
    decoded = _Decoded("gzip", SUPPORTED_DECODERS["gzip"]())
    pieces = list(decoded.pieces(gzip.compress(body)))
    assert all(type(p) is bytes and 0 < len(p) <= 64 * 1024 for p in pieces)
    assert b"".join(pieces) + decoded.flush() == body

async def _async_chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for c in chunks:
        yield c


WHOLE = {"openai": (OPENAI_URL, "gpt-4o"), "anthropic": (ANTHROPIC_URL, "claude-sonnet-4")}


def _whole_text(kind: str, mode: str, encoding: str, body: bytes, sent: str,
                respx_mock: Any) -> str:
    """The text of the whole answer ``body`` (in ``encoding``), sent in one chunk or in chunks of
    7 bytes, as ``complete`` or ``acomplete`` reads it."""
    chunks = [body] if sent == "in one chunk" else [body[i:i + 7] for i in range(0, len(body), 7)]

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json", "content-encoding": encoding}
        return httpx.Response(200, headers=headers, content=iter(chunks) if mode == "complete"
                              else _async_chunks(chunks))

    url, model = WHOLE[kind]
    respx_mock.post(url).mock(side_effect=answer)
    provider = (OpenAIProvider("openai", endpoint=PRIMARY_OPENAI) if kind == "openai"
                else AnthropicProvider())
    cred = Credential(kind, "sk-whole-SECRET-0000003")
    if mode == "acomplete":
        return asyncio.run(provider.acomplete(PROMPT, model, cred, OPTS)).text
    return provider.complete(PROMPT, model, cred, OPTS).text


def _answer_json(kind: str, text: str) -> bytes:
    body = openai_chat_completion(text) if kind == "openai" else anthropic_message(text)
    return json.dumps(body).encode()


@pytest.mark.parametrize("sent", ["in one chunk", "in chunks of 7 bytes"])
@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_answer_in_several_gzip_members_is_read_through_every_member(
        kind: str, mode: str, sent: str, respx_mock: Any) -> None:
    """The HTTP client inflates a gzip body to its first member's end: a whole JSON answer sent
    in several members was cut there, failed to parse and failed over to another provider. It is
    read through every member, as an event stream's is."""
    body = _in_gzip_members(_answer_json(kind, "every member"), 40)
    assert _whole_text(kind, mode, "gzip", body, sent, respx_mock) == "every member"


def _packed(encoding: str, body: bytes) -> bytes:
    """``body`` in brotli, or in zstd as two frames (a frame per piece, as a proxy compressing
    what it relays sends), with the codec the HTTP client decodes it with; skipped where that
    optional codec is not installed (the client then asks for neither)."""
    if encoding == "br":
        brotli = pytest.importorskip("brotli", reason="brotli not installed (httpx2[brotli])")
        return bytes(brotli.compress(body))
    zstd = pytest.importorskip("backports.zstd", reason="zstd not installed (httpx2[zstd])")
    half = len(body) // 2
    return bytes(zstd.compress(body[:half])) + bytes(zstd.compress(body[half:]))


@pytest.mark.parametrize("sent", ["in one chunk", "in chunks of 7 bytes"])
@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("encoding", ["br", "zstd"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_brotli_or_zstd_answer_is_read_whole_by_the_sdk(
        kind: str, encoding: str, mode: str, sent: str, respx_mock: Any) -> None:
    """A whole answer in br or zstd is inflated by the watch now (in 4 KB feeds, not by the
    client): the SDK reads the same JSON, however the body is cut, a zstd body's every frame."""
    draw = random.Random(5)
    words = " ".join(f"长{draw.randrange(10**6)}" for _ in range(12_000))
    body = _packed(encoding, _answer_json(kind, words))
    assert len(body) > 5 * 4096   # several feeds of the decoder in one chunk
    assert _whole_text(kind, mode, encoding, body, sent, respx_mock) == words


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_only_one_event_past_the_largest_is_cut_not_a_long_stream_of_small_ones(
        encoding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap bounds one event, counted from the last event's end: a stream of many small
    events past the cap in all is read whole; an event that grows past it (a data line that
    never ends, or many lines of one event) is cut, saying how much had come, plain or
    inflated."""
    import zlib

    from hermes_core.providers import deadline
    from hermes_core.providers.deadline import EventTooLarge

    monkeypatch.setattr(deadline, "MAX_EVENT_BYTES", 4096)

    def read(chunks: list[bytes]) -> None:
        watch = _Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True, encoding=encoding)
        if not encoding:
            for chunk in chunks:
                watch.feed(chunk)
            return
        gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        for chunk in chunks:
            list(watch.inflate(gz.compress(chunk) + gz.flush(zlib.Z_SYNC_FLUSH)))

    small = b'data: {"n": "' + b"x" * 200 + b'"}\n\n'
    read([small * 5] * 40)                                   # ~44 KB of events, none past 4 KB
    with pytest.raises(EventTooLarge, match=r"grew past 4,096 bytes without ending, .* received"):
        read([b'data: {"n": "'] + [b"x" * 1000] * 5)         # one line that never ends
    with pytest.raises(EventTooLarge):
        read([small + b'data: {"a": 1}\n' * 300])            # one event of many lines


@pytest.mark.parametrize("encoding", ["identity", "gzip", "zstd", "gzip, gzip", "x-unknown, gzip",
                                      "gzip, x-unknown"])
@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_answer_larger_than_any_api_sends_is_a_server_error_not_held_whole(
        kind: str, mode: str, encoding: str, respx_mock: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole (non-stream) answer was bounded by its time budget alone, and the HTTP client holds
    all of it before the SDK parses it: 200 KB of gzip from a loopback server inflated to a 200 MB
    answer in 3.5 s (660 MB peak), a few MB more would take the process down. Past
    ``MAX_BODY_BYTES`` (lowered to 256 KB here; a 4 MB answer) the watch cuts it, plain or
    inflated: a retryable ServerError saying how far it got, no secret. A body in two codings,
    which the watch left to the client, counted as sent, is inflated by the watch too; so is
    one labelled with a coding the client skips beside gzip (the client inflates the gzip)."""
    import gzip

    from hermes_core.errors import ServerError
    from hermes_core.providers import deadline

    monkeypatch.setattr(deadline, "MAX_BODY_BYTES", 256 * 1024, raising=False)
    plain = _answer_json(kind, "长" * 1_400_000)
    body = {"identity": plain, "gzip": gzip.compress(plain),
            "gzip, gzip": gzip.compress(gzip.compress(plain)), "x-unknown, gzip": gzip.compress(
                plain), "gzip, x-unknown": gzip.compress(plain)}.get(encoding) or _packed(
                encoding, plain)
    with pytest.raises(ServerError) as info:
        _whole_text(kind, mode, encoding, body, "in one chunk", respx_mock)
    assert "a whole answer grew past 262,144 bytes" in str(info.value)
    assert "sk-whole-SECRET" not in str(info.value) and "sk-whole-SECRET" not in repr(info.value)


def test_the_whole_answer_cap_counts_a_whole_body_not_a_stream() -> None:
    """A stream's events are bounded one by one (``MAX_EVENT_BYTES``) and its length by time: a
    long stream of small events past the whole-answer cap is read whole; a whole body is counted
    over all its chunks, as the client holds them."""
    from hermes_core.providers import deadline
    from hermes_core.providers.deadline import BodyTooLarge

    small = b'data: {"n": "' + b"x" * 200 + b'"}\n\n'
    stream = _Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True)
    for _ in range(deadline.MAX_BODY_BYTES // len(small * 1000) + 2):
        stream.feed(small * 1000)
    whole = _Watch(Budget(100.0, None, lambda: 0.0), 0.0, sse=False)
    whole.feed(b"x" * deadline.MAX_BODY_BYTES)
    with pytest.raises(BodyTooLarge, match=r"past 67,108,864 bytes, 0\.0s into the response"):
        whole.feed(b"}")


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_answer_labelled_as_an_event_stream_is_capped_as_a_whole_answer(
        kind: str, mode: str, respx_mock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap went by the label: a server answering a whole (non-stream) request with
    ``text/event-stream`` and small events was watched as a stream, bounded event by event, and
    the SDK held all of it (4 MB here, any size there) before failing to parse it. A request the
    SDK reads whole is capped whatever its answer says it is."""
    from hermes_core.errors import ServerError
    from hermes_core.providers import deadline

    monkeypatch.setattr(deadline, "MAX_BODY_BYTES", 256 * 1024)
    respx_mock.post(WHOLE[kind][0]).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"},
        content=(b'data: {"n": "' + b"x" * 200 + b'"}\n\n') * 20_000))
    provider = (OpenAIProvider("openai", endpoint=PRIMARY_OPENAI) if kind == "openai"
                else AnthropicProvider())
    cred = Credential(kind, "sk-whole-SECRET-0000006")
    with pytest.raises(ServerError) as info:
        if mode == "acomplete":
            asyncio.run(provider.acomplete(PROMPT, WHOLE[kind][1], cred, OPTS))
        else:
            provider.complete(PROMPT, WHOLE[kind][1], cred, OPTS)
    assert "a whole answer grew past 262,144 bytes" in str(info.value)
    assert "sk-whole-SECRET" not in str(info.value)


@pytest.mark.parametrize("sent", ["in one chunk", "in chunks of 7 bytes"])
@pytest.mark.parametrize("encoding", ["gzip, gzip", "deflate, gzip", "identity, gzip"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_whole_answer_in_several_codings_is_read_once_through_each(
        kind: str, encoding: str, sent: str, respx_mock: Any) -> None:
    """A body in several codings is inflated by the watch through the client's own decoders,
    each coding once, last applied first; ``identity`` is no coding."""
    import gzip
    import zlib

    codings = [c.strip() for c in encoding.split(",")]
    body = _answer_json(kind, "长 " * 500)
    for coding in codings:
        body = (gzip.compress(body) if coding == "gzip" else zlib.compress(body)
                if coding == "deflate" else body)
    assert _whole_text(kind, "complete", encoding, body, sent, respx_mock) == "长 " * 500


def _read_raw(chunks: list[bytes], encoding: str, is_async: bool, step_s: float = 60.0) -> bytes:
    """A compressed event stream read with ``iter_raw`` / ``aiter_raw`` alone, chunks
    ``step_s`` apart on an injected clock, under a 3600 s budget with a 5 s idle timeout."""
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
    with bounded(3600.0, 5.0, lambda: now[0]):
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


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_a_stream_longer_than_its_size_limit_is_cut_saying_the_limit(encoding: str) -> None:
    """A stream's length was bounded by time alone: small events sent fast ran on until the
    whole-response budget, however many bytes that was (and the call is billed for them). Past
    ``max_stream_bytes`` (inflated, as the SDK reads it) the watch cuts it, naming the limit and
    where; a stream under the limit is read whole."""
    import zlib

    from hermes_core.providers.deadline import StreamTooLarge

    def read(events: int, limit: int | None) -> None:
        budget = Budget(100.0, 50.0, lambda: 0.0, max_stream_bytes=limit)
        watch = _Watch(budget, 0.0, sse=True, encoding=encoding)
        gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        for _ in range(events):
            chunk = b'data: {"n": "' + b"x" * 200 + b'"}\n\n'
            if encoding:
                list(watch.inflate(gz.compress(chunk) + gz.flush(zlib.Z_SYNC_FLUSH)))
            else:
                watch.feed(chunk)

    read(400, 100_000)                                      # ~86 KB: under the limit
    with pytest.raises(StreamTooLarge, match=r"a stream grew past its limit of 100,000 bytes "
                       r"\(llm\.max_stream_bytes\), 0\.0s into the response"):
        read(500, 100_000)                                  # ~108 KB


def test_a_stream_s_size_limit_defaults_to_one_no_answer_reaches() -> None:
    """Without a configured limit a stream is bounded at ``MAX_STREAM_BYTES``: above any answer
    an API streams (128k output tokens at a few hundred bytes an event: ~50 MB), so only a stream
    that should have ended is cut; the setting's default is the same number."""
    from hermes_core.config import LLMSettings
    from hermes_core.providers import deadline

    assert deadline.MAX_STREAM_BYTES == LLMSettings().max_stream_bytes == 256 * 2**20
    watch = _Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True)
    watch.feed(b"data: {}\n\n" * (deadline.MAX_STREAM_BYTES // 10))
    with pytest.raises(deadline.StreamTooLarge, match="268,435,456 bytes"):
        watch.feed(b"data: {}\n\n")


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
