"""A loopback HTTP server that speaks the OpenAI and Anthropic wire formats.

For end-to-end tests of the CLI and the call loop against the real SDKs over a real socket: each
API key can be given a behaviour (a per-minute limit answered with 429 + Retry-After, or 401), and
every request is recorded with the key's fingerprint only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class KeyBehaviour:
    """How the server treats one key: ``rpm`` limit (429 past it) or ``status`` (e.g. 401)."""

    rpm: int | None = None
    retry_after: float = 30.0
    status: int | None = None
    window_s: float = 60.0


@dataclass
class ServedRequest:
    path: str
    key_fingerprint: str | None
    status: int
    body: dict[str, Any]


@dataclass
class _State:
    behaviours: dict[str, KeyBehaviour] = field(default_factory=dict)
    hits: dict[str, deque[float]] = field(default_factory=dict)
    requests: list[ServedRequest] = field(default_factory=list)
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
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self.reply = reply
        self.clock = clock
        self.state = _State()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[ServedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def set_key(self, key: str, behaviour: KeyBehaviour) -> None:
        with self.state.lock:
            self.state.behaviours[key] = behaviour

    def __enter__(self) -> MockLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _decide(self, key: str | None) -> tuple[int, dict[str, str]]:
        b = self.state.behaviours.get(key or "")
        if b is None:
            return 200, {}
        if b.status:
            return b.status, {}
        if b.rpm is not None:
            now = self.clock()
            hits = self.state.hits.setdefault(key or "", deque())
            while hits and hits[0] <= now - b.window_s:
                hits.popleft()
            if len(hits) >= b.rpm:
                return 429, {"retry-after": str(int(b.retry_after))}
            hits.append(now)
        return 200, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                auth = self.headers.get("authorization", "")
                key = auth.removeprefix("Bearer ").strip() or self.headers.get("x-api-key")
                is_anthropic = self.path.rstrip("/").endswith("/messages")
                with server.state.lock:
                    status, headers = server._decide(key)
                    server.state.requests.append(ServedRequest(
                        self.path, fingerprint(key) if key else None, status, body))
                content_type = "application/json"
                if status == 200:
                    answer = server.reply(body) if callable(server.reply) else server.reply
                    text, calls = ((answer.text, answer.tool_calls)
                                   if isinstance(answer, Completion) else (answer, ()))
                    model = body.get("model", "m")
                    if body.get("stream"):  # the chat streams by default: answer with SSE
                        pieces = _pieces(text) if text or not calls else ()
                        data = (anthropic_stream(pieces, model=model, tool_calls=calls)
                                if is_anthropic else
                                openai_chat_stream(pieces, model=model, tool_calls=calls))
                        content_type = "text/event-stream"
                    else:
                        data = json.dumps(
                            anthropic_message(text, model=model, tool_calls=calls) if is_anthropic
                            else openai_chat_completion(text, model=model,
                                                        tool_calls=calls)).encode()
                else:
                    data = json.dumps(anthropic_error(status, f"HTTP {status}") if is_anthropic
                                      else openai_error(status, f"HTTP {status}")).encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _pieces(text: str, size: int = 8) -> tuple[str, ...]:
    """The reply cut into small chunks, as a streaming server sends it."""
    return tuple(text[i:i + size] for i in range(0, len(text), size)) or ("",)
