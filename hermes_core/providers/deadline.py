"""A deadline on the whole response, and an idle timeout between a stream's content events.

An HTTP client's timeouts bound socket silence: a body trickled one byte every half second, or an
SSE stream that sends nothing but ``: ping`` comments, never trips them, and the request runs for
as long as the server likes. The SDKs offer nothing else, so the bound is enforced one layer down,
in the HTTP transport both SDK clients are built on:

* :func:`bounded` sets the budget for the requests made inside it (a context variable, so it
  reaches the transport through the SDK without touching its signatures, sync and async);
* :class:`DeadlineTransport` / :class:`AsyncDeadlineTransport` wrap the real transport and check,
  at every chunk the server sends (:class:`.watch.Watch`), that the response is still within
  ``total_s`` of the request
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
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
from httpx2._decoders import ContentDecoder

from hermes_core.providers.observed import note
from hermes_core.providers.steps import Steps, arun, run
from hermes_core.providers.watch import (
    BodyTooLarge,
    EventTooLarge,
    ResponseBudgetExceeded,
    ServerSilent,
    StreamTooLarge,
    TooLarge,
    Watch,
)

__all__ = ["Answered", "AsyncDeadlineTransport", "BodyTooLarge", "Budget", "DeadlineTransport",
           "EventTooLarge", "ResponseBudgetExceeded", "ServerSilent", "StreamTooLarge", "TooLarge",
           "bounded"]


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


def _idle_from_now(request: httpx2.Request, budget: Budget) -> None:
    """A streamed request's socket may stay silent for the idle timeout from its answer's start
    on, not before: the wait for the first byte (a reasoning model thinking, a long prompt's
    prefill) is held to the request's own timeout, as the same request asked whole is, and was
    cut at the idle timeout (30 s by default). The client reads the body's read timeout from
    the request when the body is first read, after this. Not for a redirect the client follows:
    it builds the next request with this one's very timeouts, whose first byte was then held to
    the idle timeout again."""
    timeouts = request.extensions.get("timeout")
    if budget.idle_s is not None and isinstance(timeouts, dict):
        read = timeouts.get("read")
        timeouts["read"] = budget.idle_s if read is None else min(read, budget.idle_s)


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
    #: :data:`.watch.MAX_BODY_BYTES` whatever its label says (an event stream too: the SDK holds it all)
    whole: bool = False
    #: the most bytes of a stream read (inflated): None for :data:`.watch.MAX_STREAM_BYTES`
    max_stream_bytes: int | None = None


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("hermes_budget",
                                                                      default=None)


class bounded:
    """Requests sent inside this block get ``total_s`` for their whole response and, when they
    stream, ``idle_s`` between content events; what came of the last one is noted on
    ``answered`` (a new :class:`Answered` when not given); ``whole``: they are read whole, so
    their bodies are capped in size too (:data:`.watch.MAX_BODY_BYTES`); a stream is capped at
    ``max_stream_bytes`` (None: :data:`.watch.MAX_STREAM_BYTES`). The bound stays with the response
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

    def __init__(self, watch: Watch) -> None:
        self._watch = watch

    def decode(self, data: bytes) -> Iterator[bytes]:
        return self._watch.inflate(data)

    def flush(self) -> Iterator[bytes]:
        return iter(self._watch.end())


class _Guard(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, watch: Watch) -> None:
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

    def __init__(self, inner: httpx2.AsyncByteStream, watch: Watch) -> None:
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
             stream_type: type[Any], guard: Callable[[Any, Watch], Any]) -> Steps[httpx2.Response]:
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
        if not response.has_redirect_location:   # see _idle_from_now
            _idle_from_now(request, budget)
        watch = Watch(budget, started, _is_sse(response, budget), _read_timeout(request),
                       response.headers.get("content-encoding", ""))
        watch.last_content = budget.clock()   # the idle timeout runs from the answer's start
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
