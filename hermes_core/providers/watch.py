"""The checks a response's body is held to, one call per chunk: the budgets, the caps, the BOM.

:class:`Watch` is what :mod:`.deadline`'s transports run at every chunk of a response sent under
:func:`~hermes_core.providers.deadline.bounded`: the whole-response budget, the idle timeout
between a stream's content events (pings are not content), the size caps (one event, a whole
answer, a stream in all), and the byte order mark SSE strips and the SDKs do not. A compressed
body is read inflated (:mod:`.inflate`), as the SDK reads it. Its errors are ``httpx`` errors, so
the SDKs and the call loop treat them as the timeouts and broken answers they are.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx2

from hermes_core.providers.inflate import Decoded, Inflater, inflater, undecodable

if TYPE_CHECKING:
    from hermes_core.providers.deadline import Budget


class ResponseBudgetExceeded(httpx2.ReadTimeout):
    """The response outlived its whole-response budget, or a stream went idle (pings aside)."""


class TooLarge(httpx2.RemoteProtocolError):
    """A body cut by one of the watch's size caps: no API sends it, so the call maps it to a
    retryable server error (one class, so a new cap is mapped where the others are)."""


class EventTooLarge(TooLarge):
    """One event of a stream grew past :data:`MAX_EVENT_BYTES` before it ended: no API sends such
    an event, and the SDK would hold all of it (several times over) before parsing it."""


class BodyTooLarge(TooLarge):
    """A whole (non-stream) answer grew past :data:`MAX_BODY_BYTES`: the HTTP client holds all
    of it before the SDK parses it, so its size, not only its time, must be bounded."""


class StreamTooLarge(TooLarge):
    """A stream grew past its size limit (``llm.max_stream_bytes``, else :data:`MAX_STREAM_BYTES`):
    its events were each small, but a stream that should have ended runs on until its time
    budget, however many bytes (and billed tokens) that is."""


class ServerSilent(httpx2.ReadTimeout):
    """The socket carried nothing for the client's read timeout: before the response's first byte,
    or in the middle of its body."""


class Watch:
    """The checks, shared by the sync and async guards: one call per chunk received.

    A gzip, deflate, br or zstd body (br and zstd when the client decodes them) is inflated
    here, once: the watch must read an event stream's lines, a whole answer in several gzip
    members is read through all of them (the client stops at the first), and the budgets are
    checked at every 64 KB inflated; the HTTP client reads the body through it (``deadline._Inflating``,
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
        self._inflate = inflater(encoding)
        if self._inflate is None and not plain:
            self.sse = False   # no event can be seen (a coding the client does not decode,
            #                    or more than it takes): the whole budget bounds it
        #: the response reads the body inflated through the watch (``deadline._Inflating``); the
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
                raise undecodable(self._inflate, e) from None
        held, self._head, self._opening = self._head, b"", False
        return tuple(piece for piece in (held, tail) if piece)

    def _inflated(self, chunk: bytes, inflate: Inflater | Decoded) -> Iterator[bytes]:
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
            raise undecodable(inflate, e) from None
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
                                   f"{self._where(self.budget.clock())}{self._inflated_to()}")
            return
        limit = self.budget.max_stream_bytes or MAX_STREAM_BYTES
        if self._passed > limit:
            raise StreamTooLarge(f"a stream grew past its limit of {limit:,} bytes "
                                 f"(llm.max_stream_bytes), {self._where(self.budget.clock())}"
                                 f"{self._inflated_to()}")

    def _inflated_to(self) -> str:
        """What a compressed body inflated to, said beside the bytes sent (which the size caps
        do not count: a limit of 100,000 bytes was said cut at "1042 bytes received")."""
        return f" ({self._passed:,} inflated)" if self._inflate is not None else ""

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
