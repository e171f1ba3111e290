"""Async SDK clients are per event loop.

The client cache handed the async client built under one event loop to calls made under the next
(``asyncio.run`` per request, a notebook, a worker restarting its loop). Its kept-alive connections
belong to the closed loop, so the next call against any keep-alive server failed with
``RuntimeError: Event loop is closed`` (not even a ProviderError, so no failover).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import anthropic_message, openai_chat_completion
from hermes_core.types import Credential, Message, Prompt

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=16, timeout_s=5)


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # connections stay open between requests, as real APIs do

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = (anthropic_message("ok") if self.path.endswith("/messages")
                else openai_chat_completion("ok"))
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_async_calls_from_successive_event_loops(kind: str, server_url: str) -> None:
    provider = (OpenAIProvider("local", endpoint=server_url + "/v1") if kind == "openai"
                else AnthropicProvider("local", endpoint=server_url))
    cred = Credential("local", "sk-review2-SECRET-loops-0001")
    texts = [asyncio.run(provider.acomplete(PROMPT, "m", cred, OPTS)).text for _ in range(3)]
    assert texts == ["ok", "ok", "ok"]
