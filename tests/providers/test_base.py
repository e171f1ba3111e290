"""Tests of ``hermes_core/providers/base.py``.

One contract suite for every Provider: the two SDK adapters behind respx, the
offline provider and the shipped test doubles must behave alike wherever the call loop and the
Agent rely on it. Add a provider by extending ``CASES``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions, Provider, requires_key
from hermes_core.providers.offline import OfflineProvider
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeProvider,
    FunctionProvider,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.types import Completion, Credential, Delta, Message, Prompt

SECRET = "sk-contract-SECRET-0123456789abcdef"
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi there"),), context="## ctx")
OPTS = CallOptions(max_tokens=64, timeout_s=5)


@dataclass
class Case:
    make: Callable[[], Provider]
    mock: Callable[[object], None] = lambda respx_mock: None   # HTTP routes, if any
    keyed: bool = False                                         # needs a credential


def _routes(url: str, stream: Callable[[], bytes], body: Callable[[], dict]) -> Callable[[object], None]:
    """respx routes answering ``stream: true`` requests with SSE and the rest with JSON."""
    def install(respx_mock) -> None:  # type: ignore[no-untyped-def]
        def reply(request: httpx.Request) -> httpx.Response:
            if json.loads(request.content).get("stream"):
                return httpx.Response(200, content=stream(), headers=SSE_HEADERS)
            return httpx.Response(200, json=body())
        respx_mock.post(url).mock(side_effect=reply)
    return install


_openai_routes = _routes(OPENAI_URL, lambda: openai_chat_stream(("Hel", "lo")),
                         lambda: openai_chat_completion("Hello"))
_anthropic_routes = _routes(ANTHROPIC_URL, lambda: anthropic_stream(("Hel", "lo")),
                            lambda: anthropic_message("Hello"))


CASES: dict[str, Case] = {
    "openai": Case(lambda: OpenAIProvider("openai"), _openai_routes, keyed=True),
    "anthropic": Case(lambda: AnthropicProvider("anthropic"), _anthropic_routes, keyed=True),
    "offline": Case(lambda: OfflineProvider()),
    "fake": Case(lambda: FakeProvider(["Hello"] * 4)),
    "function": Case(lambda: FunctionProvider(lambda prompt, model: "Hello")),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, respx_mock) -> tuple[Provider, Credential | None]:  # type: ignore[no-untyped-def]
    c = CASES[request.param]
    c.mock(respx_mock)
    provider = c.make()
    return provider, (Credential(provider.name, SECRET) if c.keyed else None)


def _model(provider: Provider) -> str:
    return "claude-3-5-sonnet-20241022" if provider.kind == "anthropic" else "gpt-4o-mini"


def test_contract_shape(case: tuple[Provider, Credential | None]) -> None:
    provider, cred = case
    assert isinstance(provider, Provider)
    assert isinstance(provider.name, str) and provider.name
    assert isinstance(provider.kind, str) and provider.kind
    assert requires_key(provider) is (cred is not None)
    payload = provider.render(PROMPT, _model(provider), OPTS)
    assert isinstance(payload, dict) and json.dumps(payload)    # JSON-serialisable, as sent
    assert SECRET not in repr(provider) and SECRET not in json.dumps(payload)


def test_contract_complete_and_stream_agree(case: tuple[Provider, Credential | None]) -> None:
    provider, cred = case
    model = _model(provider)
    done = provider.complete(PROMPT, model, cred, OPTS)
    assert isinstance(done, Completion) and done.text and done.provider == provider.name
    deltas = list(provider.stream(PROMPT, model, cred, OPTS))
    assert deltas and all(isinstance(d, Delta) for d in deltas)
    assert "".join(d.text for d in deltas) == done.text
    u = done.usage
    assert min(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) >= 0
    # the stream ends with the usage and finish reason, once, on the last delta
    finals = [d for d in deltas if d.usage is not None or d.finish_reason is not None]
    assert len(finals) <= 1 and (not finals or finals[0] is deltas[-1])
    if provider.kind in ("openai", "anthropic"):
        # both report what the API counted (the mocked bodies say 12 in; outputs differ by body)
        assert finals and finals[0].usage is not None and finals[0].usage.input_tokens == 12
        assert u.input_tokens == 12 and u.output_tokens > 0 and finals[0].usage.output_tokens > 0


async def test_contract_async_mirrors_sync(case: tuple[Provider, Credential | None]) -> None:
    provider, cred = case
    model = _model(provider)
    done = await provider.acomplete(PROMPT, model, cred, OPTS)
    assert isinstance(done, Completion) and done.provider == provider.name
    text = "".join([d.text async for d in provider.astream(PROMPT, model, cred, OPTS)])
    assert text == done.text == provider.complete(PROMPT, model, cred, OPTS).text


# Async SDK clients are per event loop.
#
# The client cache handed the async client built under one event loop to calls made under the next
# (``asyncio.run`` per request, a notebook, a worker restarting its loop). Its kept-alive connections
# belong to the closed loop, so the next call against any keep-alive server failed with
# ``RuntimeError: Event loop is closed`` (not even a ProviderError, so no failover).

PROMPT_LOOPS = Prompt(system="s", messages=(Message("user", "hi"),))
OPTS_LOOPS = CallOptions(max_tokens=16, timeout_s=5)


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


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_async_calls_from_successive_event_loops(
        kind: str, serve: Callable[[type[BaseHTTPRequestHandler]], str]) -> None:
    server_url = serve(_KeepAlive)
    provider = (OpenAIProvider("local", endpoint=server_url + "/v1") if kind == "openai"
                else AnthropicProvider("local", endpoint=server_url))
    cred = Credential("local", "sk-testkey-SECRET-loops-0001")
    texts = [asyncio.run(provider.acomplete(PROMPT_LOOPS, "m", cred, OPTS_LOOPS)).text for _ in range(3)]
    assert texts == ["ok", "ok", "ok"]


class _PortTeller(_KeepAlive):
    """Answers every request with the client's port: which connection it came on."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        data = json.dumps(openai_chat_completion(str(self.client_address[1]))).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_forked_child_calls_on_connections_of_its_own(
        serve: Callable[[type[BaseHTTPRequestHandler]], str],
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A preloaded app called the API once, then forked its workers: a worker's request on the
    parent's kept-alive connection shares one socket with the parent, whose requests and replies
    then interleave with the worker's."""
    provider = OpenAIProvider("local", endpoint=serve(_PortTeller) + "/v1")
    cred = Credential("local", "sk-testkey-SECRET-forked-0001")

    def port() -> str:
        return provider.complete(PROMPT_LOOPS, "m", cred, OPTS_LOOPS).text

    parent = port()
    child = in_forked_child(port)
    assert port() == parent                       # the parent's connection is still its own
    assert child != parent and str(child).isdigit()


def test_a_child_forked_while_a_thread_was_building_a_client_gets_one(
        serve: Callable[[type[BaseHTTPRequestHandler]], str],
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    provider = OpenAIProvider("local", endpoint=serve(_PortTeller) + "/v1")
    cred = Credential("local", "sk-testkey-SECRET-forked-0002")

    def child() -> object:
        return provider.complete(PROMPT_LOOPS, "m", cred, OPTS_LOOPS).text.isdigit()

    with held_by_a_thread(provider._clients._lock):
        assert in_forked_child(child) is True
