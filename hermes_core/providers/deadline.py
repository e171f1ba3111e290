"""A deadline on the whole response, and an idle timeout between a stream's content events.

An HTTP client's timeouts bound socket silence: a body trickled one byte every half second, or an
SSE stream that sends nothing but ``: ping`` comments, never trips them, and the request runs for
as long as the server likes. The SDKs offer nothing else, so the bound is enforced one layer down,
in the HTTP transport both SDK clients are built on:

* :func:`bounded` sets the budget for the requests made inside it (a context variable, so it
  reaches the transport through the SDK without touching its signatures, sync and async);
* :class:`DeadlineTransport` / :class:`AsyncDeadlineTransport` wrap the real transport and check,
  at every chunk the server sends, that the response is still within ``total_s`` of the request
  and, for ``text/event-stream`` bodies, that a content event arrived within ``idle_s``. Comments
  (``: ping``) and Anthropic's ``event: ping`` keep a connection alive but are not content.
  The watch reads the stream as the SDK will (any SSE line end; a gzip, deflate, br or zstd body
  inflated, once, as the response's own decoder: the client and any hook still see the headers
  and raw bytes the server sent), and the
  guard takes a leading byte order mark off an event stream, which SSE strips and the SDKs do
  not.

A response past its budget raises :class:`ResponseBudgetExceeded` (an ``httpx`` read timeout), so
the SDKs and the call loop treat it as the timeout it is: a typed ``Timeout`` that fails over.
Socket silence itself is still bounded by the client's read timeout, which the providers set to
the idle timeout for streams; the transports re-raise the client's bare "timed out" as
:class:`ServerSilent`, saying whether no first byte came or the body stopped, for how long, and
how far into the response: a stalled provider's final error is what a person reads to act on.
"""

from __future__ import annotations

import contextvars
import functools
import re
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
from httpx2._decoders import SUPPORTED_DECODERS, ContentDecoder, MultiDecoder

from hermes_core.providers.observed import note
from hermes_core.providers.steps import Steps, arun, run


class ResponseBudgetExceeded(httpx2.ReadTimeout):
    """The response outlived its whole-response budget, or a stream went idle (pings aside)."""


class EventTooLarge(httpx2.RemoteProtocolError):
    """One event of a stream grew past :data:`MAX_EVENT_BYTES` before it ended: no API sends such
    an event, and the SDK would hold all of it (several times over) before parsing it."""


class BodyTooLarge(httpx2.RemoteProtocolError):
    """A whole (non-stream) answer grew past :data:`MAX_BODY_BYTES`: the HTTP client holds all
    of it before the SDK parses it, so its size, not only its time, must be bounded."""


class StreamTooLarge(httpx2.RemoteProtocolError):
    """A stream grew past its size limit (``llm.max_stream_bytes``, else :data:`MAX_STREAM_BYTES`):
    its events were each small, but a stream that should have ended runs on until its time
    budget, however many bytes (and billed tokens) that is."""


class ServerSilent(httpx2.ReadTimeout):
    """The socket carried nothing for the client's read timeout: before the response's first byte,
    or in the middle of its body."""


def _read_timeout(request: httpx2.Request) -> float | None:
    """The read timeout the client set on ``request`` (what a silent socket waited for)."""
    timeouts = request.extensions.get("timeout")
    value = timeouts.get("read") if isinstance(timeouts, dict) else None
    return float(value) if isinstance(value, int | float) else None


def _no_first_byte(request: httpx2.Request, e: httpx2.ReadTimeout) -> httpx2.ReadTimeout:
    read = _read_timeout(request)
    if read is None:
        return e
    return ServerSilent(f"no first byte for {read:g}s after the request was sent", request=request)


class Answered:
    """The headers of the last response received under a :class:`bounded` block (kept by
    reference, not decoded): a 200 whose body is an error is mapped with them, its Retry-After
    included, after the SDK has parsed the body. ``sent``: the last request's body was written
    whole to the connection, or an answer came (the server may be working on it, and bills
    it): a request given up while it was still connecting or being written never reached it;
    ``status``: its answer's, once one came."""

    __slots__ = ("headers", "sent", "status")

    def __init__(self) -> None:
        self.headers: httpx2.Headers | None = None
        self.sent = False
        self.status: int | None = None

    def billable(self) -> bool:
        """Whether the last request reached the server and was not refused with an error status:
        a whole answer cut, timed out or abandoned now was billed (at least its prompt)."""
        return self.sent and (self.status is None or self.status < 300)


#: What a request raises when it never reached the server whole: no provider bills it.
_UNSENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.WriteError, httpx2.WriteTimeout,
           httpx2.ProxyError, httpx2.UnsupportedProtocol, httpx2.PoolTimeout)


class _Sending(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A request's body that marks the request sent once the connection has taken all of it.
    Being handed to the transport is not reaching the server: Ctrl-C or a cancelled task while
    the connection is still being made (or the body written) leaves a request no provider saw.
    A test's mock transport reads the body before it answers, as a server does."""

    __slots__ = ("_answered", "_inner")

    def __init__(self, inner: Any, answered: Answered) -> None:
        self._inner = inner
        self._answered = answered

    def __iter__(self) -> Iterator[bytes]:
        yield from self._inner
        self._answered.sent = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk
        self._answered.sent = True


def _sending(request: httpx2.Request, budget: Budget | None) -> None:
    """Start a request under ``budget``: not sent until its body is written (see
    :class:`_Sending`), no answer yet."""
    if budget is not None:
        answered = budget.answered
        answered.sent, answered.status = False, None
        request.stream = _Sending(request.stream, answered)


def _answered(response: httpx2.Response, budget: Budget | None) -> None:
    note(response.headers)
    if budget is not None:
        budget.answered.headers = response.headers
        budget.answered.status = response.status_code
        budget.answered.sent = True   # an answer came: the server had the request


@dataclass(frozen=True, slots=True)
class Budget:
    total_s: float
    idle_s: float | None = None
    clock: Callable[[], float] = time.monotonic
    answered: Answered = field(default_factory=Answered, compare=False)
    #: the caller reads the answer whole (not streamed): its body is capped at
    #: :data:`MAX_BODY_BYTES` whatever its label says (an event stream too: the SDK holds it all)
    whole: bool = False
    #: the most bytes of a stream read (inflated): None for :data:`MAX_STREAM_BYTES`
    max_stream_bytes: int | None = None


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("hermes_budget",
                                                                      default=None)


class bounded:
    """Requests sent inside this block get ``total_s`` for their whole response and, when they
    stream, ``idle_s`` between content events; what came of the last one is noted on
    ``answered`` (a new :class:`Answered` when not given); ``whole``: they are read whole, so
    their bodies are capped in size too (:data:`MAX_BODY_BYTES`); a stream is capped at
    ``max_stream_bytes`` (None: :data:`MAX_STREAM_BYTES`). The bound stays with the response
    after the block (a stream is read later). A class, not a generator context manager: it is
    entered once per request, and a generator costs several times more to set up."""

    __slots__ = ("_token", "budget")

    def __init__(self, total_s: float, idle_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 answered: Answered | None = None, whole: bool = False,
                 max_stream_bytes: int | None = None) -> None:
        self.budget = Budget(total_s, idle_s, clock, answered or Answered(), whole,
                             max_stream_bytes)

    def __enter__(self) -> Budget:
        self._token = _BUDGET.set(self.budget)
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _BUDGET.reset(self._token)


class _Watch:
    """The checks, shared by the sync and async guards: one call per chunk received.

    A gzip, deflate, br or zstd body (br and zstd when the client decodes them) is inflated
    here, once: the watch must read an event stream's lines, a whole answer in several gzip
    members is read through all of them (the client stops at the first), and the budgets are
    checked at every 64 KB inflated; the HTTP client reads the body through it (:class:`_Inflating`,
    the response's decoder). Other bodies pass as they came."""

    def __init__(self, budget: Budget, started: float, sse: bool,
                 read_s: float | None = None, encoding: str = "") -> None:
        self.budget = budget
        self.started = started
        self.last_content = started
        self.sse = sse
        self.read_s = read_s        # the client's read timeout: how long a silence lasted
        self.received = 0           # bytes of the body so far, as sent
        self._partial = b""
        self._event = b""
        self._event_bytes = 0       # bytes of the event not yet ended (its start: an estimate)
        self._passed = 0            # bytes of the body passed on, as read (inflated)
        self._unread = False        # the last chunk passed on has not been inflated yet
        plain = encoding.strip().lower() in ("", "identity")
        # the body's bytes as the SDK will read them, inflated here: an event stream's lines are
        # watched, and a whole answer is read through every gzip member and bounded piece by piece
        # as a stream is (the client stops at the first member, and inflates a megabyte at a
        # time between two checks)
        self._inflate = _inflater(encoding)
        if self._inflate is None and not plain:
            self.sse = False   # no event can be seen (a coding the client does not decode,
            #                    or more than it takes): the whole budget bounds it
        #: the response reads the body inflated through the watch (:class:`_Inflating`); the
        #: guard passes the raw chunks on as they came
        self.decodes = self._inflate is not None
        #: the client holds all of the body: capped at MAX_BODY_BYTES (a stream event by event)
        self.whole = budget.whole or not self.sse
        # a leading BOM may still be taken off (its first bytes held until they tell)
        self._opening = self.sse
        self._head = b""

    def feed(self, chunk: bytes) -> bytes:
        """Check the response's budgets at ``chunk`` (a body the watch does not decode); returns
        the chunk to pass on: an event stream's start without a UTF-8 byte order mark, which SSE
        strips and neither SDK's decoder does (its first field was read as ``\\ufeffdata`` and
        dropped: OpenAI's first chunk lost in silence, Anthropic's ``message_start``, so the
        answer failed over); empty while the first bytes might still be a mark's (``EF BB``
        sent alone)."""
        self.received += len(chunk)
        if self._opening:
            chunk = self._open(chunk)
        self._check(self.sse and self._lines_have_content(chunk))
        self._held(len(chunk))
        return chunk

    def arrived(self) -> None:
        """A chunk of a body the watch decodes came off the socket: the whole-response budget
        is checked (the content, hence the idle timeout, is seen as it is inflated)."""
        self._unread = True
        self._within_total(self.budget.clock())

    def caught_up(self, chunk: bytes) -> None:
        """The reader is done with ``chunk`` (the last that :meth:`arrived`): if the response's
        decoder did not inflate it, the reader reads the raw bytes alone (``iter_raw``), and the
        watch inflates it here (the pieces dropped), so the idle timeout and the size caps hold
        for that reader too; else a server sending a compressed byte a minute ran to the
        whole-response budget."""
        if self._unread:
            for _ in self.inflate(chunk):
                pass

    def inflate(self, chunk: bytes) -> Iterator[bytes]:
        """:meth:`feed` for a body the watch decodes: ``chunk``'s inflated pieces, lazily (a small
        chunk may inflate a thousandfold; it is read in bounded pieces, as the HTTP client reads
        it), the budgets checked before each piece is passed on (the SDK's reading of 64 MB of
        pings inflated from one 62 KB chunk would otherwise overrun them by tens of seconds),
        or once for a chunk that inflates to nothing yet."""
        assert self._inflate is not None
        self._unread = False
        self.received += len(chunk)
        return self._inflated(chunk, self._inflate)

    def end(self) -> tuple[bytes, ...]:
        """What is left to pass on once the body has ended: first bytes held as a mark's start
        that the body ended before telling, the inflater's last bytes."""
        tail = b""
        if self._inflate is not None:
            try:
                tail = self._inflate.flush()
            except zlib.error as e:
                raise _undecodable(self._inflate, e) from None
        held, self._head, self._opening = self._head, b"", False
        return tuple(piece for piece in (held, tail) if piece)

    def _inflated(self, chunk: bytes, inflate: _Inflater | _Decoded) -> Iterator[bytes]:
        checked = False
        try:
            for piece in inflate.pieces(chunk):
                if not piece:   # fed, nothing out yet: the budgets still hold
                    self._check(False)
                    checked = True
                    continue
                if self._opening and not (piece := self._open(piece)):
                    continue
                self._check(self.sse and self._lines_have_content(piece))
                self._held(len(piece))
                checked = True
                yield piece
        except zlib.error as e:   # what the HTTP client raises for a body it cannot decode
            raise _undecodable(inflate, e) from None
        if not checked:
            self._check(False)

    def _open(self, piece: bytes) -> bytes:
        """``piece`` without the stream's leading BOM, once its first three bytes are in (sent
        one by one, or the first inflated); until then they are held and nothing is passed on."""
        head = self._head + piece if self._head else piece
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head
            return b""
        self._opening, self._head = False, b""
        return head.removeprefix(_BOM)

    def _check(self, found: bool) -> None:
        now = self.budget.clock()
        if found:
            self.last_content = now
        self._within_total(now)
        idle = self.budget.idle_s
        if self.sse and idle is not None and now - self.last_content > idle:
            raise ResponseBudgetExceeded(
                f"no content for {idle:g}s mid-stream, {self._where(now)} (keep-alive pings do "
                "not count)")

    def _held(self, size: int) -> None:
        """``size`` more bytes of the body passed on. A whole body the client holds until it
        ends: past :data:`MAX_BODY_BYTES` it is cut (a few KB of gzip inflate to gigabytes
        within any time budget). A stream is bounded event by event (:data:`MAX_EVENT_BYTES`)
        and in all by its size limit, far larger (the SDK holds one event at a time)."""
        self._passed += size
        if self.whole:
            if self._passed > MAX_BODY_BYTES:
                raise BodyTooLarge(f"a whole answer grew past {MAX_BODY_BYTES:,} bytes, "
                                   f"{self._where(self.budget.clock())}")
            return
        limit = self.budget.max_stream_bytes or MAX_STREAM_BYTES
        if self._passed > limit:
            raise StreamTooLarge(f"a stream grew past its limit of {limit:,} bytes "
                                 f"(llm.max_stream_bytes), {self._where(self.budget.clock())}")

    def _within_total(self, now: float) -> None:
        if now - self.started > self.budget.total_s:
            raise ResponseBudgetExceeded(
                f"the response took longer than its {self.budget.total_s:g}s budget")

    def silence(self, e: httpx2.ReadTimeout) -> httpx2.ReadTimeout:
        """The client's read timeout, raised while the body was read, said as what it was."""
        if isinstance(e, ResponseBudgetExceeded) or self.read_s is None:
            return e
        body = "mid-stream" if self.sse else "mid-response"
        return ServerSilent(f"no bytes for {self.read_s:g}s {body}, "
                            f"{self._where(self.budget.clock())}")

    def _where(self, now: float) -> str:
        unit = "byte" if self.received == 1 else "bytes"
        return f"{now - self.started:.1f}s into the response, {self.received} {unit} received"

    def _lines_have_content(self, chunk: bytes) -> bool:
        """Whether the chunk completes a data line of an event other than a ping. Lines end as
        SSE lets them (``\\n``, ``\\r\\n`` or a bare ``\\r``: split on ``\\n`` alone, a stream of
        ``\\r`` line ends never had content and was cut as idle); a gzip or deflate body is
        read inflated, as the SDK reads it (its raw bytes never held a ``data:`` line, so it
        was cut as idle too)."""
        data = self._partial + chunk
        held = data.endswith(b"\r")   # its \n, if one follows, is in the next chunk
        # the common form (no \r at all) is split without the pattern
        lines = (_LINE_END.split(data[:-1] if held else data) if b"\r" in data
                 else data.split(b"\n"))
        # an unfinished line is known by its start (its field, a ping's few bytes): the rest of
        # an endless one is not kept, nor copied again at every chunk
        tail = lines.pop()
        self._partial = tail[:_LINE_START] + (b"\r" if held else b"")
        found = ended = False
        since = 0   # bytes after the last event's end in this chunk
        for line in lines:
            since += len(line) + 1
            if not line:
                self._event = b""
                ended, since = True, 0
            elif line.startswith(b":"):
                continue
            elif line.startswith(b"event:"):
                self._event = line[6:].strip()
            elif line.startswith(b"data:"):
                payload = line[5:].strip()
                if self._event != b"ping" and b'"type":"ping"' not in payload.replace(b" ", b""):
                    found = True
        self._event_bytes = since + len(tail) if ended else self._event_bytes + len(chunk)
        if self._event_bytes > MAX_EVENT_BYTES:
            raise EventTooLarge(
                f"a stream event grew past {MAX_EVENT_BYTES:,} bytes without ending, "
                f"{self._where(self.budget.clock())}")
        return found


#: The UTF-8 byte order mark SSE takes off the front of a stream.
_BOM = b"\xef\xbb\xbf"
#: An SSE line end: ``\r\n``, ``\n`` or a bare ``\r``.
_LINE_END = re.compile(rb"\r\n|\r|\n")


#: The largest stream event read: an API's events are deltas of a few hundred bytes, and a whole
#: answer sent as one event (a long reply, an image in base64) a few MB; past this the stream is cut
#: (the SDK's line buffer would hold it all, and copy it at every chunk).
MAX_EVENT_BYTES = 16 * 2**20
#: The largest whole (non-stream) answer read, inflated: a chat answer is text, tool calls and
#: thinking of at most the model's output limit (a few MB, escaped), an image in base64 tens of
#: MB; past this the response is cut (held whole, then parsed: several times this in memory).
MAX_BODY_BYTES = 64 * 2**20
#: The most bytes of a stream read (inflated) when the call sets no limit (``llm.max_stream_bytes``):
#: a 128k-token answer sent a token an event at a few hundred bytes each is ~50 MB; past this a
#: stream that should have ended is cut rather than run (and billed) until its time budget.
MAX_STREAM_BYTES = 256 * 2**20
#: The most of an unfinished line the watch keeps.
_LINE_START = 1024
#: The most bytes the watch inflates at once, as the HTTP client bounds its own pieces: a small
#: compressed chunk can inflate a thousandfold (a decompression bomb).
_PIECE = 64 * 1024
#: The most compressed bytes a br/zstd decoder is handed at once (the budgets checked between):
#: each feed is a call of the decoder; 1 KB feeds cost a large body ~1.3x its decoding CPU, 4 KB
#: ~1.07x, and 4 KB of empty zstd frames are still milliseconds of it.
_FED = 4 * 1024
#: Compressed bytes that inflate to nothing past which a br/zstd body is not what it says.
_NOTHING = 256 * 1024
#: How a gzip member begins.
_GZIP_MAGIC = b"\x1f\x8b"


class _Inflater:
    """A gzip or deflate body's bytes inflated in bounded pieces, as the HTTP client reads them:
    ``deflate`` zlib-wrapped or, when its first chunk is not, raw (servers send both). A gzip body
    is read through every member, as gzip(1) reads a file: the HTTP client stops at the first
    member's end, and a proxy that compresses what it relays piece by piece sends one member per
    piece (the rest of the stream was lost). Bytes after a member that begin no other (zero
    padding, garbage) are ignored, as before."""

    def __init__(self, encoding: str) -> None:
        self.name = encoding
        self._deflate = encoding == "deflate"
        self._first = True
        self._past_end = False   # bytes past the last member came: the rest is ignored
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else 16 + zlib.MAX_WBITS)

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        if self._past_end:
            return
        first, self._first = self._first, self._first and not chunk
        try:
            piece = self._zlib.decompress(chunk, _PIECE)
        except zlib.error:
            if not (first and self._deflate):
                raise
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            piece = self._zlib.decompress(chunk, _PIECE)
        while True:
            while piece:
                yield piece
                piece = self._zlib.decompress(self._zlib.unconsumed_tail, _PIECE)
            # the common case, a member still open, decided without a call
            if not self._zlib.eof or (member := self._next_member()) is None:
                return
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
            piece = self._zlib.decompress(member, _PIECE)

    def _next_member(self) -> bytes | None:
        """The next gzip member's first bytes, once the one read has ended and they begin with
        the gzip magic; None until then (the bytes after an ended member, which zlib keeps as
        ``unused_data`` and adds each later chunk to, may be a magic's first byte alone). A
        deflate body has one stream: all that follows its end is past it (zlib would keep it all)."""
        if not self._zlib.eof:
            return None
        rest = self._zlib.unused_data
        if rest.startswith(_GZIP_MAGIC) and not self._deflate:
            return rest
        if self._deflate or not _GZIP_MAGIC.startswith(rest):
            self._past_end = True
        return None

    def flush(self) -> bytes:
        """The last inflated bytes, once the body has ended."""
        return self._zlib.flush()


class _Decoded:
    """A brotli or zstd body, or one in several codings, inflated by the HTTP client's own
    decoder (br and zstd present when their optional codecs are installed), in its bounded
    pieces (a megabyte at most) sliced to :data:`_PIECE`: a few KB inflate to gigabytes, and
    the budgets are checked before each slice, as for gzip. Its errors are the client's
    (``DecodingError``).

    The decoder is handed :data:`_FED` bytes at a time, and an empty piece passes after each
    feed that gave nothing (the watch checks the budgets at it): a zstd frame costs its decoder
    a new context (~26 us), so a 64 KB chunk of empty frames took it ~0.26 s with no check. A
    body :data:`_NOTHING` bytes long that inflates to nothing is no compressor's (a zstd block
    holds at most 128 KB): a ``DecodingError``, not seconds of CPU until the budget ends it."""

    def __init__(self, encoding: str, decoder: ContentDecoder) -> None:
        self.name = encoding
        self._decoder = decoder
        self._barren = 0   # bytes fed since the last that inflated to something

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        for at in range(0, len(chunk) or 1, _FED):   # an empty chunk is fed too, as before
            fed = chunk[at:at + _FED]
            gave = False
            for piece in self._decoder.decode(fed):
                gave = gave or bool(piece)
                if len(piece) <= _PIECE:
                    yield piece
                else:
                    for cut in range(0, len(piece), _PIECE):
                        yield piece[cut:cut + _PIECE]
            if gave:
                self._barren = 0
                continue
            self._barren += len(fed)
            if self._barren > _NOTHING:
                raise httpx2.DecodingError(
                    f"the {self.name} body inflates to nothing in {self._barren} bytes")
            yield b""

    def flush(self) -> bytes:
        """The last bytes, once the body has ended (a truncated zstd frame raises)."""
        return b"".join(self._decoder.flush())


def _undecodable(inflate: _Inflater | _Decoded, e: zlib.error) -> httpx2.DecodingError:
    """What the HTTP client raises for a body that is not the encoding it is labelled with."""
    return httpx2.DecodingError(f"the {inflate.name} body does not inflate ({e})")


def _inflater(encoding: str) -> _Inflater | _Decoded | None:
    """The inflater for a body sent with ``content-encoding`` ``encoding``: gzip or deflate (what
    zlib reads), or another one coding the HTTP client decodes (br, zstd: when their optional
    codecs are installed, which is also when the client asks for them), or several of those (the
    client's decoders, last applied first); a listed coding the client does not know it skips,
    and so does the watch; else None: the watch reads such chunks as they come (a coding the
    client passes on as it is)."""
    encoding = encoding.strip().lower()
    codings = ["gzip"] if encoding == "x-gzip" else [
        c for c in (c.strip() for c in encoding.split(",")) if c in SUPPORTED_DECODERS and c != "identity"]
    if codings in (["gzip"], ["deflate"]):   # "gzip", "identity, gzip", "x-unknown, gzip"
        return _Inflater(codings[0])
    if not 0 < len(codings) <= MultiDecoder.max_decode_links:
        return None
    # one coding or several, through the client's own decoders: left to the client, a body in
    # two gzip layers would inflate past every cap, only its compressed bytes counted
    return _Decoded(encoding if len(codings) > 1 else codings[0], MultiDecoder(codings))


def _is_sse(response: httpx2.Response, budget: Budget) -> bool:
    """Whether the body is watched as an event stream: it says so, or it answers a streamed
    request (an idle timeout was set). A proxy that labels the stream ``text/plain``, JSON or
    nothing changes nothing for the SDKs, which parse the events all the same; watched by its
    label, a stream of pings ran until the whole-response budget instead of the idle timeout."""
    return (budget.idle_s is not None
            or "text/event-stream" in response.headers.get("content-type", ""))


class _Inflating(ContentDecoder):
    """The decoder of a response whose body the watch inflates: the client hands it each chunk
    as sent and reads back the watch's inflated pieces (once, every gzip member, the budgets
    checked between pieces). The response keeps the headers and the raw bytes the server sent,
    so an event hook, an outer transport or ``iter_raw`` sees ``content-encoding`` over the
    compressed body, and ``read()`` / ``iter_bytes()`` the inflated one, as for any response."""

    __slots__ = ("_watch",)

    def __init__(self, watch: _Watch) -> None:
        self._watch = watch

    def decode(self, data: bytes) -> Iterator[bytes]:
        return self._watch.inflate(data)

    def flush(self) -> Iterator[bytes]:
        return iter(self._watch.end())


class _Guard(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, watch: _Watch) -> None:
        self._inner = inner
        self._watch = watch

    def __iter__(self) -> Iterator[bytes]:
        watch = self._watch
        try:
            if watch.decodes:   # inflated and watched by the response's decoder (_Inflating)
                for chunk in self._inner:
                    watch.arrived()
                    yield chunk
                    watch.caught_up(chunk)   # read raw: not inflated by the decoder
                return
            for chunk in self._inner:
                yield watch.feed(chunk)
        except httpx2.ReadTimeout as e:
            raise self._watch.silence(e) from e
        yield from self._watch.end()

    def close(self) -> None:
        self._inner.close()


class _AsyncGuard(httpx2.AsyncByteStream):
    """Its own iterator rather than an async generator: one of those per response costs the event
    loop's generator bookkeeping (a hook call and a weak reference) on every request."""

    def __init__(self, inner: httpx2.AsyncByteStream, watch: _Watch) -> None:
        self._inner = inner
        self._watch = watch
        self._chunks: AsyncIterator[bytes] | None = None
        self._pending: Iterator[bytes] = iter(())   # held bytes passed on once the body ended
        self._ended = False
        self._last = b""   # the last chunk passed on, of a body the decoder inflates

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._chunks = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        assert self._chunks is not None
        while (piece := next(self._pending, None)) is None:
            if self._ended:
                raise StopAsyncIteration
            if self._watch.decodes:
                self._watch.caught_up(self._last)   # read raw: not inflated by the decoder
            try:
                chunk = await self._chunks.__anext__()
            except httpx2.ReadTimeout as e:
                raise self._watch.silence(e) from e
            except StopAsyncIteration:
                self._ended = True
                # a body the decoder inflates ends in its flush
                self._pending = iter(() if self._watch.decodes else self._watch.end())
                continue
            if self._watch.decodes:
                self._watch.arrived()
                self._last = chunk
                return chunk
            return self._watch.feed(chunk)
        return piece

    async def aclose(self) -> None:
        await self._inner.aclose()


def _handled(request: httpx2.Request, handle: Callable[[httpx2.Request], Any],
             stream_type: type[Any], guard: Callable[[Any, _Watch], Any]) -> Steps[httpx2.Response]:
    """One request through the wrapped transport's ``handle`` (see :mod:`.steps`: the sync and
    async transports differ only in how it is called): under a :func:`bounded` block, noted on
    its ``Answered`` (sent or not, the answer's status and headers), a read timeout before the
    first byte said as such, and a body of ``stream_type`` guarded by ``guard``."""
    budget = _BUDGET.get()
    started = budget.clock() if budget is not None else 0.0
    _sending(request, budget)
    try:
        response: httpx2.Response = yield functools.partial(handle, request)
    except httpx2.ReadTimeout as e:
        raise _no_first_byte(request, e) from e
    except _UNSENT:
        if budget is not None:
            budget.answered.sent = False
        raise
    _answered(response, budget)
    if budget is not None and isinstance(response.stream, stream_type):
        watch = _Watch(budget, started, _is_sse(response, budget), _read_timeout(request),
                       response.headers.get("content-encoding", ""))
        if watch.decodes:   # sent as it came; the response's decoder is the watch's inflating
            # (httpx2 reads a response's decoder from ``_decoder`` when set: its only seam)
            response._decoder = _Inflating(watch)
        response.stream = guard(response.stream, watch)
    return response


class DeadlineTransport(httpx2.BaseTransport):
    """Wraps a transport; responses to requests made under :func:`bounded` are guarded."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return run(_handled(request, self.inner.handle_request, httpx2.SyncByteStream, _Guard))

    def close(self) -> None:
        self.inner.close()


class AsyncDeadlineTransport(httpx2.AsyncBaseTransport):
    """The async twin of :class:`DeadlineTransport`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await arun(_handled(request, self.inner.handle_async_request,
                                   httpx2.AsyncByteStream, _AsyncGuard))

    async def aclose(self) -> None:
        await self.inner.aclose()
