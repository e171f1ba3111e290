"""A loopback HTTP server that speaks the OpenAI and Anthropic wire formats.

For end-to-end tests and benchmarks of the CLI and the call loop against the real SDKs over a real
socket: each API key can be given a behaviour (a sliding-window limit answered with 429 and a
Retry-After that says when the window frees, a status such as 401, a processing latency, or a
fault: a trickled body, a stream of nothing but pings, one that stalls mid-reply, a stream cut
before its end), and every request is recorded with its arrival time and the key's fingerprint
only.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hermes_core.testing.builders import (
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
)
from hermes_core.types import Completion, fingerprint


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024   # http.server's backlog of 5 resets concurrent clients

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up before the answer was written (its read timeout ran out during
        a ``latency_s``) is what a timeout test sets up: not a traceback on the test's stderr."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class KeyBehaviour:
    """How the server treats one key: ``rpm`` limit (429 past it) or ``status`` (e.g. 401)."""

    rpm: int | None = None
    retry_after: float = 30.0
    status: int | None = None
    # with ``status``: how many requests it answers, after which the key is served as usual ("a
    # 429, then success"); None: every request. A 429 or 503 status carries ``retry_after``
    times: int | None = None
    window_s: float = 60.0
    # Retry-After (and retry-after-ms) say exactly when the window frees, not ``retry_after``
    exact_retry_after: bool = False
    latency_s: float = 0.0
    # every answer states the limit, what remains and when the next slot frees, like the real
    # APIs: OpenAI's x-ratelimit-*-requests (reset a duration), Anthropic's
    # anthropic-ratelimit-requests-* (reset an RFC 3339 time). A sliding window has no single
    # reset moment: "reset" is when the window admits a request again
    rate_headers: bool = False
    # None | "trickle" (200 body one byte per ``fault_interval_s``) | "pings" (an SSE stream of
    # keep-alive comments only) | "stall" (a stream that sends "Hello wor", then keep-alive
    # comments only: it stops mid-reply) | "cut" (a stream closed cleanly before its end marker) |
    # "gzip-lie" (a whole answer marked ``content-encoding: gzip`` that is not) | "short" (a
    # whole answer whose ``content-length`` promises more than is sent) | "long" (one whose
    # ``content-length`` says half of what is sent)
    fault: str | None = None
    fault_interval_s: float = 0.5
    # the content type a faulty stream ("pings", "stall", "cut") is labelled with, as a proxy that
    # relabels it sends it (``text/plain``); None: ``text/event-stream``
    fault_content_type: str | None = None


@dataclass
class ServedRequest:
    """One request as served. ``path`` is without its query; ``query`` holds the query's
    parameters, a key-like one (``key``, ``api_key``, ``token``, ...: a proxy taking its key in
    the URL) as its fingerprint, so a failing assertion on a request never prints a key."""

    path: str
    key_fingerprint: str | None
    status: int
    body: dict[str, Any]
    at: float = 0.0                    # arrival, on the server's clock
    retry_after: float | None = None   # what a 429 promised
    query: dict[str, str] = field(default_factory=dict)


@dataclass
class _State:
    behaviours: dict[str, KeyBehaviour] = field(default_factory=dict)
    hits: dict[str, deque[float]] = field(default_factory=dict)
    statused: dict[str, int] = field(default_factory=dict)   # requests answered with ``status``
    requests: list[ServedRequest] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class MockLLMServer:
    """``with MockLLMServer(reply="hi") as srv:`` then point an endpoint at ``srv.url``.

    OpenAI-compatible clients use ``srv.url + "/v1"``; Anthropic clients use ``srv.url``.
    ``reply`` may be a string or ``fn(request_body) -> str | Completion``; a Completion's
    ``tool_calls`` are sent in the wire format asked (streamed as tool-call deltas when streaming),
    so a tool-using agent runs against it end to end.
    """

    def __init__(self, reply: str | Callable[[dict[str, Any]], str | Completion]
                 = "Hello from the mock server",
                 *, clock: Callable[[], float] = time.monotonic, keep_alive: bool = False,
                 echo_keys: bool = False) -> None:
        self.reply = reply
        # a hostile or careless server: the key it received comes back in a response header
        # (x-received-key), in every error message and at the end of every reply text
        self.echo_keys = echo_keys
        self.clock = clock
        self.keep_alive = keep_alive
        self.state = _State()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[ServedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    @property
    def errors(self) -> list[Exception]:
        """What the ``reply`` function raised, in order (each answered with a 500 naming it)."""
        with self.state.lock:
            return list(self.state.errors)

    def set_key(self, key: str, behaviour: KeyBehaviour) -> None:
        with self.state.lock:
            self.state.behaviours[key] = behaviour

    def __enter__(self) -> MockLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _decide(self, key: str | None, anthropic: bool = False) -> tuple[int, dict[str, str]]:
        b = self.state.behaviours.get(key or "")
        if b is None:
            return 200, {}
        if b.status:
            answered = self.state.statused.get(key or "", 0)
            if b.times is None or answered < b.times:
                self.state.statused[key or ""] = answered + 1
                waits = b.status in (429, 503)
                return b.status, ({"retry-after": str(int(b.retry_after))} if waits else {})
        if b.rpm is not None:
            now = self.clock()
            hits = self.state.hits.setdefault(key or "", deque())
            while hits and hits[0] <= now - b.window_s:
                hits.popleft()
            if len(hits) >= b.rpm:
                stated = _limit_headers(b, hits, now, anthropic) if b.rate_headers else {}
                if b.exact_retry_after:
                    wait = max(0.001, hits[len(hits) - b.rpm] + b.window_s - now)
                    return 429, {"retry-after-ms": str(max(1, round(wait * 1000))),
                                 "retry-after": str(max(1, int(wait + 0.999))), **stated}
                return 429, {"retry-after": str(int(b.retry_after)), **stated}
            hits.append(now)
            if b.rate_headers:
                return 200, _limit_headers(b, hits, now, anthropic)
        return 200, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                auth = self.headers.get("authorization", "")
                path, query = _split(self.path)
                key = (auth.removeprefix("Bearer ").strip() or self.headers.get("x-api-key")
                       or next((v for k, v in query.items() if _KEYLIKE.search(k)), None))
                is_anthropic = path.rstrip("/").endswith("/messages")
                behaviour = server.state.behaviours.get(key or "")
                with server.state.lock:
                    status, headers = server._decide(key, is_anthropic)
                    ra = headers.get("retry-after-ms")
                    served = ServedRequest(path, fingerprint(key) if key else None, status,
                                           body, server.clock(), int(ra) / 1000 if ra else None,
                                           {k: f"[{fingerprint(v)}]" if _KEYLIKE.search(k) else v
                                            for k, v in query.items()})
                    server.state.requests.append(served)
                if behaviour is not None and behaviour.latency_s and status == 200:
                    time.sleep(behaviour.latency_s)
                if status == 200 and behaviour is not None and behaviour.fault:
                    self._fault(behaviour, body, is_anthropic)
                    return
                content_type = "application/json"
                if status == 200:
                    try:
                        data, content_type = self._answer(body, key, is_anthropic)
                    except Exception as e:
                        # the author's scripted model failed (or its answer cannot be sent): a
                        # 500 naming the error, not a dropped connection the SDK retries and
                        # the test reports as "connection_error"
                        with server.state.lock:
                            server.state.errors.append(e)
                            served.status = status = 500
                        why = f"the mock server's reply function raised {type(e).__name__}: {e}"
                        data = json.dumps(anthropic_error(500, why) if is_anthropic
                                          else openai_error(500, why)).encode()
                else:
                    why = f"HTTP {status}" + (f": the key {key} was refused"
                                              if server.echo_keys and key else "")
                    data = json.dumps(anthropic_error(status, why) if is_anthropic
                                      else openai_error(status, why)).encode()
                if server.echo_keys and key:
                    headers = {**headers, "x-received-key": key}
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, body: dict[str, Any], key: str | None,
                        is_anthropic: bool) -> tuple[bytes, str]:
                """The 200 body, in the wire format asked, and its content type."""
                answer = server.reply(body) if callable(server.reply) else server.reply
                text, calls = ((answer.text, answer.tool_calls)
                               if isinstance(answer, Completion) else (answer, ()))
                if server.echo_keys and key:
                    text = f"{text} (you sent {key})"
                model = body.get("model", "m")
                if body.get("stream"):  # the chat streams by default: answer with SSE
                    pieces = _pieces(text) if text or not calls else ()
                    return (anthropic_stream(pieces, model=model, tool_calls=calls) if is_anthropic
                            else openai_chat_stream(pieces, model=model, tool_calls=calls),
                            "text/event-stream")
                return json.dumps(
                    anthropic_message(text, model=model, tool_calls=calls) if is_anthropic
                    else openai_chat_completion(text, model=model, tool_calls=calls)
                ).encode(), "application/json"

            def _fault(self, b: KeyBehaviour, body: dict[str, Any], is_anthropic: bool) -> None:
                """A 200 that misbehaves; the connection closes afterwards."""
                model = body.get("model", "m")
                self.close_connection = True
                if b.fault == "trickle":
                    data = json.dumps(anthropic_message("slow", model=model) if is_anthropic
                                      else openai_chat_completion("slow", model=model)).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    chunks = [data[i:i + 1] for i in range(len(data))]
                elif b.fault in ("pings", "stall"):
                    ping = (b'event: ping\ndata: {"type": "ping"}\n\n' if is_anthropic
                            else b": ping\n\n")
                    self.send_response(200)
                    self.send_header("content-type", b.fault_content_type or "text/event-stream")
                    self.end_headers()
                    if b.fault == "stall":
                        self.wfile.write(_unfinished_stream(model, is_anthropic))
                        self.wfile.flush()
                    chunks = [ping] * 10_000
                elif b.fault in ("gzip-lie", "short", "long"):
                    streamed = bool(body.get("stream"))
                    data = ((anthropic_stream(("Hello",), model=model) if is_anthropic
                             else openai_chat_stream(("Hello",), model=model)) if streamed
                            else json.dumps(anthropic_message("Hello", model=model) if is_anthropic
                                            else openai_chat_completion("Hello", model=model)
                                            ).encode())
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream" if streamed
                                     else "application/json")
                    if b.fault == "gzip-lie":
                        self.send_header("content-encoding", "gzip")
                    stated = {"short": len(data) + 100, "long": len(data) // 2}
                    self.send_header("content-length", str(stated.get(b.fault, len(data))))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                else:   # "cut": the stream without its end (no finish, no [DONE]/message_stop)
                    self.send_response(200)
                    self.send_header("content-type", b.fault_content_type or "text/event-stream")
                    self.end_headers()
                    self.wfile.write(_unfinished_stream(model, is_anthropic))
                    return
                try:
                    for c in chunks:
                        self.wfile.write(c)
                        self.wfile.flush()
                        time.sleep(b.fault_interval_s)
                except OSError:   # the client gave up: that is the point
                    pass

        return Handler


#: query parameter names that carry a key (``key``, ``api_key``, ``api-key``, ``access_token``)
_KEYLIKE = re.compile(r"key|token|secret|auth|sig|pass", re.IGNORECASE)


def _split(target: str) -> tuple[str, dict[str, str]]:
    """A request target as its path and its query's parameters."""
    parts = urllib.parse.urlsplit(target)
    return parts.path, dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))


def _limit_headers(b: KeyBehaviour, hits: deque[float], now: float,
                   anthropic: bool) -> dict[str, str]:
    """The request-limit headers of an answer, in the wire format's own names and reset form."""
    rpm = b.rpm or 0
    remaining = max(0, rpm - len(hits))
    reset = max(0.0, hits[max(0, len(hits) - rpm)] + b.window_s - now) if hits else 0.0
    if anthropic:
        when = datetime.fromtimestamp(time.time() + reset, UTC).isoformat()
        return {"anthropic-ratelimit-requests-limit": str(rpm),
                "anthropic-ratelimit-requests-remaining": str(remaining),
                "anthropic-ratelimit-requests-reset": when}
    return {"x-ratelimit-limit-requests": str(rpm),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": f"{reset:.3f}s"}


def _unfinished_stream(model: str, anthropic: bool) -> bytes:
    """The events of a stream saying "Hello wor", without its end (no finish reason, no usage,
    no ``[DONE]``/``message_stop``): what a server that dies or stalls mid-reply has sent."""
    full = (anthropic_stream(("Hello", " wor"), model=model) if anthropic
            else openai_chat_stream(("Hello", " wor"), model=model))
    ends = ((b"message_delta", b"message_stop") if anthropic
            else (b"[DONE]", b'"finish_reason": "stop"', b'"usage"'))
    events = [e for e in full.split(b"\n\n") if e and not any(m in e for m in ends)]
    return b"\n\n".join(events) + b"\n\n"


def _pieces(text: str, size: int = 8) -> tuple[str, ...]:
    """The reply cut into small chunks, as a streaming server sends it."""
    return tuple(text[i:i + size] for i in range(0, len(text), size)) or ("",)
