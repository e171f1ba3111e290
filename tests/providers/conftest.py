"""Fixtures for the provider tests: a real call loop over the real SDK adapters, a check that
both stream paths fail alike, and what several adapters' tests share (a prompt and options for
error cases, the Messages API's structural rules, an OpenAI-compatible tool-call stream)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import threading
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from hermes_core.providers.base import CallOptions
from hermes_core.testing import FakeClock
from hermes_core.types import Credential, Message, Prompt


def _failover_loop(primary_kind: str, primary_key: str, backup_key: str) -> tuple[Any, Any]:
    from hermes_core.agent.credential_pool import CredentialPool
    from hermes_core.agent.pool.state import InMemoryPoolState
    from hermes_core.agent.resilience import CallLoop
    from hermes_core.agent.smart_routing import Router
    from hermes_core.config import load_settings
    from hermes_core.providers import build_providers

    models = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4"}
    backup_kind = "anthropic" if primary_kind == "openai" else "openai"
    backup_model = "claude-haiku" if backup_kind == "anthropic" else "gpt-4o"
    settings = load_settings({
        "llm": {"routing": {"default_model": models[primary_kind], "providers": [
            {"name": "primary", "type": primary_kind, "priority": 1, "models": [models[primary_kind]]},
            {"name": "backup", "type": backup_kind, "priority": 2, "models": [backup_model]}]}},
        "credentials": {"primary": {"keys": [{"key": primary_key}]},
                        "backup": {"keys": [{"key": backup_key}]}},
        "credential_pool": {"retries_per_provider": 0},
    })
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


@pytest.fixture
def failover_loop() -> Callable[[str, str, str], tuple[Any, Any]]:
    """``failover_loop(primary_kind, primary_key, backup_key)`` -> ``(loop, router)``: a real call
    loop (mock the SDKs with respx), "primary" of ``primary_kind`` first, then "backup" of the
    other kind, no retries, a fake clock."""
    return _failover_loop


async def _assert_both_streams_raise(provider: Any, credential: Credential,
                                     error: type[BaseException]) -> None:
    prompt = Prompt(system="s", messages=(Message("user", "hi"),))
    options = CallOptions(max_tokens=16, timeout_s=5)
    with pytest.raises(error):
        list(provider.stream(prompt, "m", credential, options))
    with pytest.raises(error):
        async for _ in provider.astream(prompt, "m", credential, options):
            pass


@pytest.fixture
def assert_both_streams_raise() -> Callable[[Any, Credential, type[BaseException]], Awaitable[None]]:
    """``await assert_both_streams_raise(provider, credential, error)``: ``stream`` and
    ``astream`` both raise ``error`` (the sync and async SDK paths parse separately)."""
    return _assert_both_streams_raise


@pytest.fixture
def clock() -> FakeClock:
    """A clock that only moves when a test body (or a recorded sleep) moves it."""
    return FakeClock(1000.0)


def _deltas(provider: Any, prompt: Prompt, model: str, credential: Credential,
            options: CallOptions, use_async: bool = False) -> list[Any]:
    if not use_async:
        return list(provider.stream(prompt, model, credential, options))

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(prompt, model, credential, options)]
    return asyncio.run(collect())


@pytest.fixture
def stream_deltas() -> Callable[..., list[Any]]:
    """``stream_deltas(provider, prompt, model, credential, options, use_async=False)``: every
    piece of one streamed call, through ``stream`` or (``use_async``) ``astream``."""
    return _deltas


@pytest.fixture
def serve() -> Iterator[Callable[[type[BaseHTTPRequestHandler]], str]]:
    """``serve(handler)``: the URL of a loopback HTTP server answering with ``handler`` (a real
    socket, where respx would hand a sync client a body already read), shut down after the
    test."""
    servers: list[ThreadingHTTPServer] = []

    def start(handler: type[BaseHTTPRequestHandler]) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


OPTS_RULES = CallOptions(max_tokens=64)


def _text_blocks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in payload["messages"] for b in m["content"] if b["type"] == "text"]


def _assert_anthropic_rules(payload: dict[str, Any]) -> None:
    roles = [m["role"] for m in payload["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    for block in _text_blocks(payload):
        assert block["text"].strip(), payload       # "text content blocks must be non-empty"
    for m in payload["messages"]:
        assert m["content"], payload


def _chunks_sse(tool_call_deltas: list[list[dict[str, Any]]]) -> bytes:
    base = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**base, "choices": [{"index": 0, "finish_reason": None,
                                    "delta": {"role": "assistant", "content": None,
                                              "tool_calls": d}}]} for d in tool_call_deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


SECRET_ERR = "sk-ant-testkey-SECRET-000111222"


PROMPT_ERR = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


OPTS_ERR = CallOptions(max_tokens=32, timeout_s=5)
