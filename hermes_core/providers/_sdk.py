"""What both official SDKs share: error translation, client construction and the complete calls.

The openai and anthropic SDKs raise the same shapes (``APIStatusError`` with ``status_code``,
``response`` and ``body``; ``APITimeoutError``; ``APIConnectionError``). This module turns them into
the hermes_core error tree through :func:`hermes_core.errors.error_from_status`, redacting the key.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import replace
from types import ModuleType
from typing import Any

import httpx2

from hermes_core.errors import (
    PAGE_CHARS,
    PAGE_NOTE,
    ConnectionFailed,
    ConnectionReset,
    ProviderError,
    ServerError,
    Timeout,
    error_from_status,
    page_text,
)
from hermes_core.providers.base import Accumulator, CallOptions, ClientCache
from hermes_core.providers.deadline import (
    Answered,
    AsyncDeadlineTransport,
    DeadlineTransport,
    TooLarge,
    bounded,
)
from hermes_core.providers.lessons import RefusalMemory
from hermes_core.providers.observed import bill
from hermes_core.providers.steps import Steps, arun, run
from hermes_core.redact import redact, redact_data, url_passwords
from hermes_core.request_ids import naming, shown_id, stated_request_id
from hermes_core.types import Completion, Credential, Delta, Prompt, Usage

# An error event inside a 200 stream has no status of its own; its error type says what happened.
# Anthropic's documented types, then OpenAI's; anything else mid-stream is the server failing.
_STREAM_ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
    "rate_limit_exceeded": 429, "insufficient_quota": 429, "server_error": 500,
    "invalid_api_key": 401,
}


def _stream_error_status(body: Any) -> int:
    err = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return 500
    # the code first: OpenAI's is the precise one (a rejected key is type
    # ``invalid_request_error``, code ``invalid_api_key``)
    for field in ("code", "type"):
        status = _STREAM_ERROR_STATUS.get(str(err.get(field) or "").lower())
        if status is not None:
            return status
    # compatible servers (LiteLLM, vLLM) put the HTTP status itself in ``code``: a 429 read as
    # a 500 opened the key's breaker instead of cooling it down
    code = str(err.get("code") or "").strip()
    if code.isdigit() and 400 <= int(code) <= 599:
        return int(code)
    return 500


def translate(exc: BaseException, *, provider: str, credential: Credential | None,
              timeout_cls: type[BaseException], connection_cls: type[BaseException],
              status_cls: type[BaseException],
              api_error_cls: type[BaseException] | None = None,
              headers: Any = None) -> ProviderError:
    """Map an SDK exception onto the error tree (the caller raises it ``from None``).

    An error event in a stream that began with HTTP 200 (Anthropic's ``event: error``, OpenAI's
    ``{"error": ...}`` chunk) is mapped by its error type: an ``overloaded_error`` is an
    :class:`~hermes_core.errors.Overloaded`, not a bad request with status 200. ``headers``:
    the stream's response headers, for an error event the SDK raises without its response
    (OpenAI's), so the error names the stream's request id as any other does.
    """
    secrets = [credential.secret] if credential else []
    error = _translated(exc, provider, secrets, timeout_cls, connection_cls, status_cls,
                        api_error_cls, headers)
    _scrub_chain(exc, secrets)
    return error


def _scrub_chain(exc: BaseException, secrets: list[str]) -> None:
    """``exc`` and the exceptions behind it made to say no secret, in place. The translation is
    raised ``from None`` inside the SDK exception's handler: hidden from a traceback, ``exc``
    is still its ``__context__``, and its text quotes the server's body (a key echoed in it) to
    any reporter or debugger that walks the chain regardless. Nothing reads it after this."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 8:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        e.args = tuple(redact_data(a, secrets) for a in e.args)
        for name in ("message", "body"):
            value = getattr(e, name, None)
            if value is not None:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(e, name, redact_data(value, secrets))
        todo += [e.__cause__, e.__context__]


def _translated(exc: BaseException, provider: str, secrets: list[str],
                timeout_cls: type[BaseException], connection_cls: type[BaseException],
                status_cls: type[BaseException],
                api_error_cls: type[BaseException] | None, stream_headers: Any = None
                ) -> ProviderError:
    if isinstance(exc, timeout_cls):
        cause = exc.__cause__ or exc.__context__
        why = f" ({cause})" if isinstance(cause, httpx2.TimeoutException) and str(cause) else ""
        return Timeout(f"{provider}: request timed out{why}", provider=provider)
    if isinstance(exc, connection_cls):
        cause = exc.__cause__ or exc.__context__
        detail = redact(str(cause or exc), secrets)
        if isinstance(cause, httpx2.DecodingError):
            return undecodable(provider, detail)
        if isinstance(cause, TooLarge):   # the watch cut what no API sends
            return ServerError(f"{provider}: {detail}", provider=provider)
        if isinstance(cause, httpx2.RemoteProtocolError | httpx2.ReadError | ConnectionResetError):
            # connected, then dropped mid-response: not the same fix as an unreachable endpoint
            return ConnectionReset(f"{provider}: the connection was reset during the response "
                                   f"({detail})", provider=provider)
        return ConnectionFailed(f"{provider}: cannot connect ({detail})", provider=provider)
    if isinstance(exc, status_cls) or (api_error_cls is not None and isinstance(exc, api_error_cls)
                                       and getattr(exc, "body", None) is not None):
        response: Any = getattr(exc, "response", None)
        headers = dict(response.headers if response is not None else stream_headers or {})
        body = getattr(exc, "body", None)
        status = int(getattr(exc, "status_code", 0) or 0)
        if status < 300:   # an error event inside a 200 stream (0: OpenAI gives none)
            status = _stream_error_status(body)
        return error_from_status(status, headers, body, provider=provider,
                                 redact=lambda s: redact(s, secrets))
    return ProviderError(f"{provider}: {type(exc).__name__}: {redact(str(exc), secrets)}",
                         provider=provider)


def body_error(provider: str, body: Any, headers: Any = None, *,
               credential: Credential | None = None) -> ProviderError | None:
    """The error a 200 body states, or None when it states none. A gateway or proxy that
    answers every status with 200 puts the upstream's error in the body (``{"error": {...}}``,
    Anthropic's ``{"type": "error", "error": {...}}``); it is mapped by its error type or code,
    as an error event inside a stream is: a rate limit cools the key instead of opening its
    breaker, a rejected key is quarantined, and the error's own words reach the caller. An error
    that is only words (``{"error": "upstream connect error"}``) has no type or code to map: a
    server failure saying them (it was "the body is not a response", the words lost)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not (isinstance(err, dict) or (isinstance(err, str) and err.strip())) or not err:
        return None
    secrets = [credential.secret] if credential else []
    return error_from_status(_stream_error_status(body), dict(headers or {}), body,
                             provider=provider, redact=lambda s: redact(s, secrets))


def _content_type_json(response: Any) -> bool:
    """Whether a response says its body is JSON (not an event stream)."""
    content_type = str(response.headers.get("content-type", "")).lower()
    return "json" in content_type and "event-stream" not in content_type


def _content_type_html(response: Any) -> bool:
    """Whether a response says its body is an HTML page (a proxy's, never the API's)."""
    return "html" in str(response.headers.get("content-type", "")).lower()


def _json_body(response: Any) -> Any:
    """A streamed request's answer that says it is JSON, read whole, parsed; None when its
    bytes are not JSON."""
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """An endpoint without its query, and the query's parameters: a proxy that takes the key as
    ``?key=`` gets it on every request. The SDKs join the request's path onto the base URL as
    written, after the query ("/v1?key=K" became "/v1/?key=Kchat/completions")."""
    if not url or "?" not in url:
        return url, {}
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit(parts._replace(query="", fragment="")), query


def undecodable(provider: str, detail: str) -> ServerError:
    """A body that is not the encoding its headers name (``content-encoding: gzip`` over plain
    bytes: a proxy that decompressed and kept the header). The server was reached and answered
    wrongly: a retryable server failure, not an endpoint that cannot be reached."""
    return ServerError(f"{provider}: the response body could not be decoded ({detail})",
                       provider=provider)


def read_error(provider: str, e: httpx2.HTTPError,
               credential: Credential | None = None) -> ProviderError:
    """An HTTP client error raised while a stream's body is read: the SDKs wrap what happens up to
    the response headers, not what the iteration of the body raises."""
    detail = redact(str(e) or type(e).__name__, [credential.secret] if credential else [])
    if isinstance(e, httpx2.DecodingError):
        return undecodable(provider, detail)
    if isinstance(e, TooLarge):
        return ServerError(f"{provider}: {detail}", provider=provider)
    if isinstance(e, httpx2.TimeoutException):
        return Timeout(f"{provider}: timed out ({detail})", provider=provider)
    if isinstance(e, httpx2.RemoteProtocolError | httpx2.ReadError):
        return ConnectionReset(f"{provider}: the connection was reset during the response "
                               f"({detail})", provider=provider)
    return ConnectionFailed(f"{provider}: connection failed ({detail})", provider=provider)


def malformed_event(provider: str, e: ValueError, what: str = "stream event") -> ServerError:
    """A stream event or a 200 body whose JSON is cut or malformed (a proxy truncating it): the
    SDKs raise ``json.JSONDecodeError``. Only the parser's reason is kept, never the data."""
    reason = getattr(e, "msg", None) or type(e).__name__
    return ServerError(f"{provider}: malformed {what} ({reason})", provider=provider)


def event_deltas(provider: str, deltas: Iterable[Delta]) -> list[Delta]:
    """The deltas one stream event makes, read whole. An event of another shape than the API's
    (a proxy's or a compatible server's own JSON: ``choices`` a string, a chunk that is a list, a
    block missing) reaches the adapters as an SDK model missing its fields; reading it raised an
    AttributeError, which the call loop takes for a bug (no failover, a traceback). It is the
    endpoint answering wrongly: a retryable ServerError naming only the error's type."""
    try:
        return list(deltas)
    except (AttributeError, TypeError, KeyError, IndexError) as e:
        raise ServerError(f"{provider}: a stream event of another shape than the API's "
                          f"({type(e).__name__})", provider=provider) from None


def _event_stream(resp: Any, headers: Any) -> bool:
    """Whether a whole request's answer, which the SDKs handed back as text (a body that is not
    JSON), is an event stream: labelled one, or beginning with an SSE field as one does."""
    if not isinstance(resp, str):
        return False
    label = str(headers.get("content-type", "")).lower() if headers is not None else ""
    return "event-stream" in label or resp.lstrip().startswith(("data:", "event:"))


def a_page(stream: Any) -> bool:
    """Whether a streamed request's 200, read to its end, was a page: labelled a type other than
    an event stream and carrying a body (a gateway's HTML, parsed by the SDKs as a stream of no
    events). Such a page is not the API answering, and is billed nothing, as the same page
    answering a whole call is. A 200 that brought no byte is no page whatever its label says
    (``text/plain`` on an empty body): nothing but the status came back, as from an event stream
    that ended before it began, which may have been billed as one timed out before its first
    byte. Asked once the stream has been read: only then is its size known."""
    response = getattr(stream, "response", None)
    if response is None:
        return False
    label = str(response.headers.get("content-type", "")).lower()
    return bool(label) and "event-stream" not in label and response.num_bytes_downloaded > 0


def completion_deltas(done: Completion) -> list[Delta]:
    """A whole reply as the pieces a stream of it would have brought: its reasoning blocks, its
    text, its tool calls, then its usage and finish reason (for a model asked whole where a
    stream was wanted)."""
    out = [Delta(reasoning=block) for block in done.reasoning]
    if done.text:
        out.append(Delta(text=done.text, from_output_tool=done.from_output_tool))
    out.extend(Delta(tool_call=call) for call in done.tool_calls)
    out.append(Delta(usage=done.usage, finish_reason=done.finish_reason, paused=done.paused,
                     container=done.container, model=done.model, request_id=done.request_id))
    return out


def _billed(usage: Usage) -> Callable[[], Usage | None]:
    """What :func:`~.observed.bill` is told once a whole reply is read: its own usage."""
    return lambda: usage


def delta_completion(deltas: Iterable[Delta], model: str, provider: str,
                     request_id: str | None = None) -> Completion:
    """The whole reply a stream's pieces amount to (what :func:`completion_deltas` takes apart):
    for a whole request a server answered with an event stream. Its usage, when no piece
    brought one, is unreported."""
    acc = Accumulator(model)
    for d in deltas:
        acc.add(d)
    return acc.completion(provider, request_id=request_id, unreported=Usage(reported=False))


class SDKProvider:
    """The part of an adapter that is the same for both SDKs: clients, errors, complete calls.

    A subclass names its SDK module and client classes, says where ``create`` lives on a client
    (``_api``), how to render a payload and how to read a response (``_completion``); streaming
    differs per wire format and stays in the subclass.
    """

    kind = ""
    request_id_header = ""                 # the header a response's request id comes in
    sdk_module = ""                        # the SDK's import name: imported on first use
    sdk_error_name = ""                    # the SDK's root exception, by name
    client_names: tuple[str, str]          # (sync, async) client class names in ``sdk``

    @property
    def sdk(self) -> ModuleType:
        """The SDK module, imported the first time a call needs it: building a provider, or
        rendering its payload (``hermes-core prompt``), costs no SDK import."""
        return importlib.import_module(self.sdk_module)

    @property
    def sdk_error(self) -> type[Exception]:
        err: type[Exception] = getattr(self.sdk, self.sdk_error_name)
        return err

    def close_failed(self, e: Exception, finished: bool) -> bool:
        """Whether an SDK error during a stream only lost the connection after the answer's
        end marker: the reply is whole. Newer SDK releases read the body to its end and wrap the
        transport's error (a body shorter than its ``content-length``) as a connection error."""
        return finished and isinstance(e, self.sdk.APIConnectionError)

    def __init__(self, name: str, endpoint: str | None = None, timeout_s: float = 60.0) -> None:
        self.name = name
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        # measures each response's budget (see providers.deadline); tests inject a fake one
        self.clock: Callable[[], float] = time.monotonic
        self._clients = ClientCache(self._make_client)

    def __repr__(self) -> str:
        # a proxy behind basic auth is configured as https://user:password@host/v1
        shown = (None if self.endpoint is None
                 else redact(self.endpoint, url_passwords(self.endpoint)))
        return f"{type(self).__name__}(name={self.name!r}, endpoint={shown!r})"

    def _client_class(self, is_async: bool) -> Any:
        """The SDK's client class a credential's client is built from."""
        return getattr(self.sdk, self.client_names[1] if is_async else self.client_names[0])

    def _make_client(self, cred: Credential | None, is_async: bool) -> Any:
        cls = self._client_class(is_async)
        base_url = (cred.endpoint if cred and cred.endpoint else None) or self.endpoint
        # Compatible local servers often need no key; the SDKs insist on a non-empty one.
        limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
        http_client: Any
        if is_async:
            http_client = self.sdk.DefaultAsyncHttpxClient(
                transport=AsyncDeadlineTransport(httpx2.AsyncHTTPTransport(limits=limits)))
        else:
            http_client = self.sdk.DefaultHttpxClient(
                transport=DeadlineTransport(httpx2.HTTPTransport(limits=limits)))
        base_url, query = split_query(base_url)
        return cls(api_key=cred.secret if cred else "not-needed", base_url=base_url,
                   default_query=query or None, max_retries=0, timeout=self.timeout_s,
                   http_client=http_client)

    def _timeout(self, options: CallOptions) -> float:
        """One attempt's timeout: the shorter of the call's (``llm.request_timeout_s``, already
        capped by the call loop's deadline) and this provider's ``timeout_s``. A per-call timeout
        overrides the client's default, so the provider's own must be applied here."""
        return min(options.timeout_s, self.timeout_s)

    def _stream_timeout(self, options: CallOptions) -> httpx2.Timeout:
        """A stream's first byte is waited for as long as the attempt's timeout; once its answer
        has begun, its socket may stay silent only for the idle timeout (set then by
        :func:`bounded`'s transport; the whole-response budget is enforced there too)."""
        return httpx2.Timeout(self._timeout(options))

    def _bounded(self, options: CallOptions, *, stream: bool = False,
                 answered: Answered | None = None) -> bounded:
        """The requests sent inside get this attempt's whole-response budget (and, streaming, the
        idle timeout between content events and the stream's size limit); ``answered`` notes
        what came of them."""
        return bounded(self._timeout(options), options.idle_timeout_s if stream else None,
                       self.clock, answered, whole=not stream,
                       max_stream_bytes=options.max_stream_bytes)

    @property
    def _read_errors(self) -> tuple[type[Exception], ...]:
        """What reading a stream may raise that :meth:`_read_failed` maps: the SDK's errors, a
        malformed event's JSON, the HTTP client's errors (the SDKs do not wrap the body's)."""
        return (self.sdk_error, json.JSONDecodeError, httpx2.HTTPError)

    def _read_failed(self, e: Exception, credential: Credential | None,
                     finished: bool, headers: Any = None) -> ProviderError | None:
        """The provider error ``e`` (one of :attr:`_read_errors`, raised while a stream was read)
        is; None when the stream had ``finished`` (its end marker came) and only its close
        failed: the reply is whole. Both adapters' streams, sync and async, read it here
        (``headers``: the stream's response's, see :func:`translate`)."""
        if isinstance(e, json.JSONDecodeError):
            return malformed_event(self.name, e)
        if isinstance(e, httpx2.HTTPError):
            return None if finished else read_error(self.name, e, credential)
        return None if self.close_failed(e, finished) else self._error(e, credential, headers)

    def _error(self, exc: BaseException, cred: Credential | None,
               headers: Any = None) -> ProviderError:
        return translate(exc, provider=self.name, credential=cred,
                         timeout_cls=self.sdk.APITimeoutError,
                         connection_cls=self.sdk.APIConnectionError,
                         status_cls=self.sdk.APIStatusError, api_error_cls=self.sdk.APIError,
                         headers=headers)

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        raise NotImplementedError

    def _api(self, client: Any) -> Any:
        raise NotImplementedError

    def _completion(self, resp: Any, model: str, *, structured: bool) -> Completion:
        """The reply ``resp`` carries. ``structured``: the request asked for structured output
        (``response_format``); a wire whose structure arrives in a tool's call reads that call
        as the answer only then."""
        raise NotImplementedError

    def _read(self, resp: Any, model: str, *, structured: bool) -> Completion:
        """``_completion`` of a 200 body that may not be the API's (a proxy's HTML page or another
        JSON shape: the SDKs return the raw text or a model missing its fields). That is the
        endpoint failing, a retryable ServerError, not a crash in the caller."""
        try:
            if isinstance(resp, str | bytes) or resp is None:
                raise TypeError(type(resp).__name__)
            return self._completion(resp, model, structured=structured)
        except (AttributeError, TypeError, KeyError, IndexError) as e:
            raise ServerError(f"{self.name}: HTTP 200 but the body is not a {self.kind} response "
                              f"({type(e).__name__})", provider=self.name) from None

    def _metered(self, done: Completion, payload: dict[str, Any]) -> Completion:
        """``done`` (the reply to ``payload``) with what it was billed when its response did not
        say; as it is, by default."""
        return done

    def _unanswered(self, answered: Answered, payload: dict[str, Any]) -> Usage | None:
        """What a whole request left without an answer it could read (its body cut, a read
        timeout, the caller's Ctrl-C or cancellation) was billed: its prompt at least, counted
        as :meth:`_metered` counts a reply without usage, when it reached the server and was not
        refused with an error status; else None. Nothing arrived, so no output is counted."""
        if not answered.billable():
            return None
        silent = Completion("", str(payload.get("model") or ""), self.name, Usage(reported=False))
        usage = self._metered(silent, payload).usage
        return usage if usage.counted else None

    def _unstarted(self, answered: Answered,
                   payload: Callable[[], dict[str, Any]]) -> Callable[[], Usage | None]:
        """What a streamed request was billed before its first event (a read timeout before the
        first byte, an idle stream, the caller giving up): its prompt, by :meth:`_unanswered`'s
        rule, as a whole request is; nothing when it never reached the server or was refused.
        ``payload`` is rendered only when asked."""
        def billed() -> Usage | None:
            return self._unanswered(answered, payload())
        return billed

    def _billing(self, answered: Answered, payload: dict[str, Any]) -> Callable[[], Usage | None]:
        """Tell the call loop's :func:`~.observed.capture` how to ask what this whole request
        was billed (see :meth:`_unanswered`), should it be abandoned; returned for its errors."""
        billed = self._unstarted(answered, lambda: payload)
        bill(billed)
        return billed

    def _event_type(self) -> Any:
        """The SDK's model of one stream event (what a streamed request's events parse into)."""
        raise NotImplementedError

    def _from_events(self, events: Iterable[Any], payload: dict[str, Any],
                     model: str) -> Completion:
        """The reply a whole request's answer made of stream events (``events``, parsed by the
        SDK) carries, read as the adapter reads a stream, billed as ``payload`` when it says
        nothing of its usage."""
        raise NotImplementedError

    def _streamed_whole(self, text: str, credential: Credential | None, payload: dict[str, Any],
                        model: str, billed: Callable[[], Usage | None],
                        headers: Any = None) -> Completion:
        """A whole request answered with an event stream (a server or gateway ignoring
        ``stream: false``): the SDKs hand its body back as text, read as a ServerError that failed
        over. Parsed by the SDK's own stream reader, events and error events alike; a stream cut
        short is an incomplete answer, as a streamed one is. Its request id is the response's
        header, as the SDKs read a JSON answer's, else the id its message carries."""
        response = httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                   content=text.encode(),
                                   request=httpx2.Request("POST", "https://answer.invalid/"))
        events = self.sdk.Stream(cast_to=self._event_type(), response=response,
                                 client=self._clients.get(credential))
        try:
            done = self._from_events(events, payload, model)
            stated = headers.get(self.request_id_header) if headers is not None else None
            return replace(done, request_id=stated) if stated else done
        except self.sdk_error as e:
            error = self._error(e, credential)
        except json.JSONDecodeError as e:
            error = malformed_event(self.name, e)
        except ProviderError as e:
            error = e
        if error.usage is None:
            error.usage = billed()
        raise error from None

    def _answer(self, resp: Any, headers: Any, credential: Credential | None,
                payload: dict[str, Any], model: str,
                billed: Callable[[], Usage | None], *, structured: bool) -> Completion:
        """The reply a whole request's 200 carries: its stated error raised, an event stream
        read as one, else the API's JSON read, billed on our count when it states no usage.
        ``structured``: the request asked for structured output (see :meth:`_completion`)."""
        if _event_stream(resp, headers):
            done = self._streamed_whole(resp, credential, payload, model, billed, headers)
        elif isinstance(resp, str | bytes) and not resp.strip():
            # nothing but the status came back, whatever the label: the silence an empty JSON
            # or event-stream body is, counted the same way (a page with a body is billed nothing)
            error = ServerError(f"{self.name}: HTTP 200 with an empty body", provider=self.name)
            error.usage = billed()
            raise error
        else:
            self._stated(resp, credential, headers)
            self._raise_page(resp, headers, credential)
            done = self._metered(self._read(resp, model, structured=structured), payload)
        bill(_billed(done.usage))   # abandoned now (a stream handing it out), it was billed
        return done

    def _create(self, client: Any, payload: dict[str, Any], timeout: float) -> Any:
        """Send ``payload`` (as :meth:`render` made it) with ``client``; an awaitable for an async
        client. The SDK's typed ``create`` by default; a subclass may post the payload directly."""
        return self._api(client).create(**payload, timeout=timeout)

    def keep_lessons(self, memory: RefusalMemory) -> None:
        """Read what earlier processes learned this provider's models refuse, and keep what it
        learns, in ``memory`` (the home's file). Nothing is learned by default."""

    def learned(self, exc: BaseException, payload: dict[str, Any], model: str) -> bool:
        """Whether ``exc`` refused an optional field of ``payload`` that this provider now sends
        otherwise for ``model`` (the call is then sent once more). Nothing is, by default."""
        return False

    def _stream_payload(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        raise NotImplementedError

    def _open_stream(self, client: Any, payload: dict[str, Any], timeout: Any, *,
                     is_async: bool) -> Any:
        """Send ``payload`` as a streamed request (an awaitable for an async client)."""
        raise NotImplementedError

    def _stated(self, resp: Any, credential: Credential | None, headers: Any = None) -> None:
        """Raise the error a 200 body states (see :func:`body_error`): the SDKs parse
        ``{"error": {...}}`` as a response missing its fields."""
        # the SDK models keep fields they do not know in ``model_extra``: a dict lookup, while
        # ``getattr(resp, "error")`` on a model without one raises and formats an AttributeError
        # on every answer (about as costly as reading the answer)
        extra = getattr(resp, "model_extra", None)
        if not extra:
            return
        stated = body_error(self.name, {"error": extra.get("error")}, headers,
                            credential=credential)
        if stated is not None:
            raise stated

    def _raise_page(self, body: Any, headers: Any, credential: Credential | None) -> None:
        """Raise a 200 whose body is an HTML page (a captive portal, a proxy's sign-in or
        challenge page) named by its title or text, as a 5xx page is: "not a response
        (TypeError)" or "no single chunk" sent the person to the provider, not the network. A
        page is billed nothing. The words are scrubbed of the key before they are cut."""
        text = body.decode("utf-8", "replace") if isinstance(body, bytes | bytearray) else body
        page = page_text(text) if isinstance(text, str) else None
        if page is None:
            return
        shown = redact(page, [credential.secret] if credential else [])[:PAGE_CHARS]
        error = ServerError(f"{self.name}: HTTP 200 but the body is not a {self.kind} response: "
                            f"{shown} {PAGE_NOTE}".replace(":  (", ": ("), provider=self.name)
        secrets = [credential.secret] if credential else []
        stated = stated_request_id(headers, secrets)
        raise naming(error, *stated, secrets) if stated else error

    def _raise_stated(self, response: Any, credential: Credential | None) -> None:
        stated = body_error(self.name, _json_body(response), response.headers,
                            credential=credential)
        if stated is not None:
            raise stated

    def _whole_type(self) -> Any:
        """The SDK's model of a whole (not streamed) answer."""
        raise NotImplementedError

    def _stated_id(self, stream: Any) -> str | None:
        """The request id a streamed response's header states (``request_id_header``), as the
        SDKs read a whole answer's ``_request_id``: what a provider's support asks for."""
        response = getattr(stream, "response", None)
        stated = response.headers.get(self.request_id_header) if response is not None else None
        return shown_id(stated)

    def _whole_in_stream(self, stream: Any, prompt: Prompt, model: str,
                         options: CallOptions) -> Completion | None:
        """A streamed request answered with the whole JSON answer (a compatible server or a
        gateway that ignores ``stream: true``), as a Completion, billed as any whole reply is
        (:meth:`_metered`); None for an event stream. The SDKs parse such a body as a stream of
        no events, so every streamed turn failed over, or failed with one provider. A JSON
        body of another shape is a ServerError here. Its request id is the header's, as a whole
        request's answer has (the SDKs' ``_request_id``), else the body's id."""
        response = getattr(stream, "response", None)
        if response is None or not _content_type_json(response):
            return None
        body = _json_body(response)
        if not isinstance(body, dict):
            return None
        done = self._read(self._whole_type().construct(**body), model,
                          structured=bool(options.response_format))
        if (stated := self._stated_id(stream) or shown_id(done.request_id)) != done.request_id:
            done = replace(done, request_id=stated)
        return done if done.usage.reported else self._metered(
            done, self._stream_payload(prompt, model, options))

    def _opening(self, client: Any, prompt: Prompt, model: str, options: CallOptions,
                 credential: Credential | None, answered: Answered | None,
                 is_async: bool) -> Steps[Any]:
        """The streamed request (see :mod:`.steps`), sent once more when it was refused for a
        field this provider then sends otherwise (see :meth:`learned`). A streamed request
        answered with a JSON body, not an event stream (a gateway's error with status 200), is
        read whole and its error raised: the SDKs parse it as a stream of no events ("the stream
        ended without a single chunk", the error's words lost). ``answered`` notes whether it
        reached the server."""
        for again in (True, False):
            payload = self._stream_payload(prompt, model, options)
            try:
                with self._bounded(options, stream=True, answered=answered):
                    stream = yield functools.partial(
                        self._open_stream, client, payload, self._stream_timeout(options),
                        is_async=is_async)
                    response = getattr(stream, "response", None)
                    if response is not None and (_content_type_json(response)
                                                 or _content_type_html(response)):
                        yield response.aread if is_async else response.read
                        self._raise_stated(response, credential)
                        self._raise_page(response.content, response.headers, credential)
                    return stream
            except self.sdk_error as e:
                if not (again and self.learned(e, payload, model)):
                    raise
        raise AssertionError("unreachable: the second pass returns or raises")

    def _opened(self, client: Any, prompt: Prompt, model: str, options: CallOptions,
                credential: Credential | None = None, answered: Answered | None = None) -> Any:
        return run(self._opening(client, prompt, model, options, credential, answered, False))

    async def _aopened(self, client: Any, prompt: Prompt, model: str, options: CallOptions,
                       credential: Credential | None = None,
                       answered: Answered | None = None) -> Any:
        return await arun(self._opening(client, prompt, model, options, credential, answered,
                                        True))

    def _whole_call(self, client: Any, prompt: Prompt, model: str,
                    credential: Credential | None, options: CallOptions) -> Steps[Completion]:
        """A whole call (see :mod:`.steps`): sent once more when it was refused for a field this
        provider then sends otherwise; an error raised while it was sent or read carries what it
        was billed (sent and cut, or timed out: billed all the same)."""
        for again in (True, False):
            payload = self.render(prompt, model, options)
            bounds = self._bounded(options)
            billed = self._billing(bounds.budget.answered, payload)
            try:
                with bounds as budget:
                    resp = yield functools.partial(self._create, client, payload,
                                                   self._timeout(options))
            except self.sdk_error as e:
                if again and self.learned(e, payload, model):
                    continue
                error = self._error(e, credential)
                error.usage = billed()
                raise error from None
            except json.JSONDecodeError as e:   # a 200 whose JSON body is cut
                error = malformed_event(self.name, e, "body")
                error.usage = billed()
                raise error from None
            done = self._answer(resp, budget.answered.headers, credential, payload, model,
                                billed, structured=bool(options.response_format))
            shown = shown_id(done.request_id, [credential.secret] if credential else [])
            return done if shown == done.request_id else replace(done, request_id=shown)
        raise AssertionError("unreachable: the second pass returns or raises")

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        return run(self._whole_call(self._clients.get(credential), prompt, model, credential,
                                    options))

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion:
        return await arun(self._whole_call(self._clients.get(credential, is_async=True), prompt,
                                           model, credential, options))
