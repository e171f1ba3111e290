"""The watch a response's body is held to: content, not pings, keeps a stream alive, in any wire
form (CR line ends, gzip members, a byte order mark); compressed chunks are checked piece by piece;
one event, a whole answer and a stream in all are capped in size, each saying where it was cut.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from hermes_core.config import load_settings
from hermes_core.errors import (
    ServerError,
)
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.deadline import Budget
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.providers.watch import Watch
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_stream,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse as _sse_events
from hermes_core.testing.clock import FakeClock
from hermes_core.types import Credential
from tests.providers.conftest import (
    LOOP_OPTS,
    LOOP_PROMPT,
    OPTS,
    PRIMARY_OPENAI,
    PROMPT,
    PROVIDERS,
    SECRET,
    WHOLE,
    _answer_json,
    _async_chunks,
    _compress,
    _compressed,
    _gzip_members,
    _packed,
    _run_mode,
    _whole_text,
    build,
    make,
    mock_backup,
    primary_url,
    run,
    stepping,
)


def test_the_watch_counts_content_not_pings() -> None:
    now = [0.0]
    watch = Watch(Budget(100.0, 2.0, lambda: now[0]), 0.0, sse=True)
    now[0] = 1.5
    watch.feed(b'data: {"choices": []}\n\n')          # content: the idle clock restarts
    now[0] = 3.0
    watch.feed(b": ping\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n")   # pings: it does not
    now[0] = 3.6
    with pytest.raises(httpx.ReadTimeout, match="no content for 2s"):
        watch.feed(b": ping\n\n")


def _crlf_split_between_chunks(events: list[bytes]) -> Iterator[bytes]:
    """Each event's ``\r\n`` line ends, its last ``\n`` sent at the start of the next chunk."""
    for i, e in enumerate(events):
        yield (b"\n" if i else b"") + e.replace(b"\n", b"\r\n")[:-1]
    yield b"\n"


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
        deltas = list(loop.stream(LOOP_PROMPT, router.select("hi"), options))
    else:
        async def collect() -> list[Any]:
            return [d async for d in loop.astream(LOOP_PROMPT, router.select("hi"), options)]
        deltas = asyncio.run(collect())
    assert "".join(d.text for d in deltas) == "".join(pieces)
    assert deltas[-1].usage.reported   # read to its end, not cut after the finish reason
    assert route.call_count == 1   # type: ignore[attr-defined]


def test_a_stream_in_an_encoding_the_watch_cannot_read_is_bounded_by_its_whole_budget() -> None:
    """Bytes of a coding the client does not decode (``compress``; br or zstd without their
    codecs) hold no line the watch can read: taken for silence they cut every
    such stream as idle; only the whole-response budget bounds them."""
    now = [0.0]
    watch = Watch(Budget(10.0, 2.0, lambda: now[0]), 0.0, sse=True, encoding="compress")
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
    watch = Watch(Budget(total, idle, lambda: now[0]), 0.0, sse=True, encoding="gzip")
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


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_only_one_event_past_the_largest_is_cut_not_a_long_stream_of_small_ones(
        encoding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap bounds one event, counted from the last event's end: a stream of many small
    events past the cap in all is read whole; an event that grows past it (a data line that
    never ends, or many lines of one event) is cut, saying how much had come, plain or
    inflated."""
    import zlib

    from hermes_core.providers import watch as watch_module
    from hermes_core.providers.deadline import EventTooLarge

    monkeypatch.setattr(watch_module, "MAX_EVENT_BYTES", 4096)

    def read(chunks: list[bytes]) -> None:
        watch = Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True, encoding=encoding)
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
    from hermes_core.providers import watch as watch_module

    monkeypatch.setattr(watch_module, "MAX_BODY_BYTES", 256 * 1024, raising=False)
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
    from hermes_core.providers import watch as watch_module
    from hermes_core.providers.deadline import BodyTooLarge

    small = b'data: {"n": "' + b"x" * 200 + b'"}\n\n'
    stream = Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True)
    for _ in range(watch_module.MAX_BODY_BYTES // len(small * 1000) + 2):
        stream.feed(small * 1000)
    whole = Watch(Budget(100.0, None, lambda: 0.0), 0.0, sse=False)
    whole.feed(b"x" * watch_module.MAX_BODY_BYTES)
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
    from hermes_core.providers import watch as watch_module

    monkeypatch.setattr(watch_module, "MAX_BODY_BYTES", 256 * 1024)
    respx_mock.post(WHOLE[kind][0]).mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"},
        content=(b'data: {"n": "' + b"x" * 200 + b'"}\n\n') * 20_000))
    provider = (OpenAIProvider("openai", endpoint=PRIMARY_OPENAI) if kind == "openai"
                else AnthropicProvider())
    cred = Credential(kind, "sk-whole-SECRET-0000006")
    with pytest.raises(ServerError) as info:
        if mode == "acomplete":
            asyncio.run(provider.acomplete(LOOP_PROMPT, WHOLE[kind][1], cred, LOOP_OPTS))
        else:
            provider.complete(LOOP_PROMPT, WHOLE[kind][1], cred, LOOP_OPTS)
    assert "a whole answer grew past 262,144 bytes" in str(info.value)
    assert "sk-whole-SECRET" not in str(info.value)


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
        watch = Watch(budget, 0.0, sse=True, encoding=encoding)
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


@pytest.mark.parametrize("whole", [False, True])
def test_a_compressed_body_cut_for_size_says_what_it_inflated_to(whole: bool) -> None:
    """The size caps count the body as read, inflated; the error's "N bytes received" counts
    the bytes sent. For a gzip body those are far apart ("past its limit of 100,000 bytes ...,
    3,000 bytes received" read as a cut made too soon): the inflated count is said beside it.
    A plain body's two counts are one, said once."""
    import re
    import zlib

    from hermes_core.providers import watch as watch_module
    from hermes_core.providers.deadline import BodyTooLarge, StreamTooLarge

    def read(encoding: str) -> str:
        budget = Budget(100.0, 50.0, lambda: 0.0, whole=whole, max_stream_bytes=100_000)
        watch = Watch(budget, 0.0, sse=not whole, encoding=encoding)   # whole: a JSON answer
        gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        chunk = b'data: {"n": "' + b"x" * 200 + b'"}\n\n'
        with pytest.raises(BodyTooLarge if whole else StreamTooLarge) as info:
            for _ in range(400_000):
                if encoding:
                    list(watch.inflate(gz.compress(chunk * 200) + gz.flush(zlib.Z_SYNC_FLUSH)))
                else:
                    watch.feed(chunk * 200)
        return str(info.value)

    said = read("gzip")
    got = re.search(r"([\d,]+) bytes? received \(([\d,]+) inflated\)$", said)
    assert got, said
    sent, inflated = (int(n.replace(",", "")) for n in got.groups())
    assert sent < (watch_module.MAX_BODY_BYTES if whole else 100_000) < inflated
    assert "inflated" not in read("")


def test_a_stream_s_size_limit_defaults_to_one_no_answer_reaches(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a configured limit a stream is bounded at ``MAX_STREAM_BYTES``: above any answer
    an API streams (128k output tokens at a few hundred bytes an event: ~50 MB), so only a stream
    that should have ended is cut; the setting's default is the same number. The constant is read
    at each check, so the cut is shown at a smaller one (feeding 256 MiB took 73 s and 2 GB)."""
    from hermes_core.config import LLMSettings
    from hermes_core.providers import watch as watch_module

    assert watch_module.MAX_STREAM_BYTES == LLMSettings().max_stream_bytes == 256 * 2**20
    monkeypatch.setattr(watch_module, "MAX_STREAM_BYTES", 10_000)
    watch = Watch(Budget(100.0, 50.0, lambda: 0.0), 0.0, sse=True)
    watch.feed(b"data: {}\n\n" * 1_000)   # 10,000 bytes: at the limit, not past it
    with pytest.raises(watch_module.StreamTooLarge, match="10,000 bytes"):
        watch.feed(b"data: {}\n\n")


# A server that lies: an event that never ends, a stream cut inside an event, a Retry-After in
# the past, of decades, or as a date. Each is a ProviderError the call loop can act on.


class _EndlessEvent(BaseHTTPRequestHandler):
    """Answers with an event stream whose first content event is one data line that never ends
    (16 MB sent in 64 KB writes, then the connection closes)."""

    protocol_version = "HTTP/1.0"   # the body ends with the connection

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        start = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
                 b'"choices":[{"index":0,"delta":{"content":"' if self.path.endswith("/completions")
                 else anthropic_stream(())[:anthropic_stream(()).index(b"\n\n") + 2]
                 + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                 b'"delta":{"type":"text_delta","text":"')
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            self.wfile.write(start)
            for _ in range(256):
                self.wfile.write(b"x" * 65536)
        except OSError:   # the client cut it: what it should do
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_stream_event_larger_than_any_api_sends_is_a_server_error_in_bounded_memory(
        kind: str, mode: str, monkeypatch: pytest.MonkeyPatch,
        stream_deltas: Callable[..., list[Any]],
        serve: Callable[[type[BaseHTTPRequestHandler]], str]) -> None:
    """A stream whose one event never ends (16 MB of one data line here, against a cap lowered
    to 256 KB) was read whole by the SDK, which held it several times over (a 50 MB event:
    ~210 MB, then a 50 MB text delta); the watch cuts it at the cap: a retryable ServerError
    saying where, no secret, and the call's memory stays within a few times the cap. Over a
    real socket: respx hands a sync client a body already read."""
    import tracemalloc

    from hermes_core.providers import watch as watch_module

    monkeypatch.setattr(watch_module, "MAX_EVENT_BYTES", 256 * 1024)
    url = serve(_EndlessEvent)
    provider = PROVIDERS[kind][0](kind, endpoint=url + ("/v1" if kind == "openai" else ""))
    with pytest.raises(ServerError):   # once untraced: the SDK's lazy imports are not the call's
        stream_deltas(provider, PROMPT, "m", Credential(kind, SECRET), OPTS,
                      use_async=mode == "astream")
    tracemalloc.start()
    try:
        with pytest.raises(ServerError) as info:
            stream_deltas(provider, PROMPT, "m", Credential(kind, SECRET), OPTS,
                          use_async=mode == "astream")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "a stream event grew past 262,144 bytes without ending" in str(info.value)
    assert "bytes received" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert peak < 6 * 2**20, peak


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_stream_past_the_configured_size_limit_is_a_server_error_naming_it(
        kind: str, mode: str, respx_mock: Any, stream_deltas: Callable[..., list[Any]]) -> None:
    """``llm.max_stream_bytes`` reaches the watch through the call's options: a stream of small
    deltas past it (4 KB here) is cut, a retryable ServerError naming the limit and the setting,
    no secret; the same stream under the default limit is read whole."""
    from dataclasses import replace

    llm = load_settings({"llm": {"max_stream_bytes": 4096}}, env={}).llm
    provider, cred, url, model = make(kind)
    pieces = tuple(f"w{i} " for i in range(100))
    body = openai_chat_stream(pieces) if kind == "openai" else anthropic_stream(pieces)
    respx_mock.post(url).mock(return_value=httpx.Response(200, content=body, headers=SSE_HEADERS))
    opts = replace(OPTS, max_stream_bytes=llm.max_stream_bytes)
    with pytest.raises(ServerError) as info:
        stream_deltas(provider, PROMPT, model, cred, opts, use_async=mode == "astream")
    assert "a stream grew past its limit of 4,096 bytes (llm.max_stream_bytes)" in str(info.value)
    assert info.value.retryable and SECRET not in str(info.value) + repr(info.value)
    deltas = stream_deltas(provider, PROMPT, model, cred, OPTS, use_async=mode == "astream")
    assert "".join(d.text for d in deltas) == "".join(pieces)


# A stream as a proxy that lies about its framing sends it. Checked across both SDKs and the three
# ways of asking (a whole request answered with an event stream included): each reads whole.

def _utf8_split(events: list[bytes]) -> list[bytes]:
    """A chunk boundary inside a three-byte UTF-8 character."""
    body = b"".join(events)
    cut = body.index("你".encode()) + 1
    return [body[:cut], body[cut:]]


def _data_split(events: list[bytes]) -> list[bytes]:
    body = b"".join(events)
    cut = body.index(b"data:") + 2
    return [body[:cut], body[cut:]]


FRAMINGS = {
    "a chunk cut inside a UTF-8 character": _utf8_split,
    "a chunk cut inside data:": _data_split,
    "an event with no data": lambda ev: [ev[0], b"event: keepalive\n\n", *ev[1:]],
    "retry lines": lambda ev: [b"retry: 3000\n\n", ev[0], b"retry: 1000\n", *ev[1:]],
    "an id of its own": lambda ev: [b"id: 7\n\n", *ev],
    "comments as keep-alives": lambda ev: [b": ping\n\n", ev[0], b":\n\n", *ev[1:]],
    "the end marker twice": lambda ev: [*ev, ev[-1]],
    "content after the end marker": lambda ev: [*ev, ev[1]],
}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_stream_framed_as_a_lying_proxy_frames_it_is_read_whole(
        respx_mock: Any, kind: str, mode: str, framing: str) -> None:
    """OpenAI's answer failed as a malformed event for an event with no data, a lone ``retry:``
    or ``id:`` block (the SDK parsed an empty event); the other framings read whole before and
    are pinned: text after the end marker is not shown, comments are no event."""
    pieces = ("Hé", "llo 你", "好")
    body = openai_chat_stream(pieces) if kind == "openai" else anthropic_stream(pieces)
    for text in pieces[1:]:   # the characters raw on the wire, not JSON escapes
        body = body.replace(json.dumps(text).encode()[1:-1], text.encode())
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    chunks = FRAMINGS[framing](events)
    assert "你".encode() in b"".join(chunks)
    respx_mock.post(PROVIDERS[kind][2]).mock(side_effect=lambda r: httpx.Response(
        200, headers=SSE_HEADERS, content=b"".join(chunks) if mode == "complete"
        else iter(chunks) if mode == "stream" else _async_chunks(chunks)))
    assert _run_mode(PROVIDERS[kind][0](kind), kind, mode) == "Héllo 你好"
