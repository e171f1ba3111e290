"""Fixtures for the provider tests: a real call loop over the real SDK adapters, a check that
both stream paths fail alike, and what several adapters' tests share (a prompt and options for
error cases, the Messages API's structural rules, an OpenAI-compatible tool-call stream, an
Anthropic prompt, key and options with a usage-free stream), and
what the deadline, watch and inflate tests share (a call loop whose primary misbehaves on an
injected clock, compressed bodies, a whole answer read through either SDK)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import (
    RateLimited,
)
from hermes_core.providers import build_providers
from hermes_core.providers._sdk import delta_completion
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeClock,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import (
    Completion,
    Credential,
    Message,
    Prompt,
    ToolCall,
)


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


def reply_text(provider: Any, prompt: Prompt, model: str, credential: Credential,
               options: CallOptions, how: str) -> str:
    """The reply's text, asked whole (``complete``, ``acomplete``) or streamed (``stream``,
    ``astream``)."""
    if how == "complete":
        return str(provider.complete(prompt, model, credential, options).text)
    if how == "acomplete":
        return str(asyncio.run(provider.acomplete(prompt, model, credential, options)).text)
    deltas = _deltas(provider, prompt, model, credential, options, use_async=how == "astream")
    return delta_completion(deltas, model, provider.name).text


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


PRIMARY_OPENAI = "https://primary.test/v1"


PRIMARY_OPENAI_URL = PRIMARY_OPENAI + "/chat/completions"


BACKUP_OPENAI = "https://backup.test/v1"


BACKUP_OPENAI_URL = BACKUP_OPENAI + "/chat/completions"


LOOP_PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


LOOP_OPTS = CallOptions(max_tokens=32, timeout_s=6.0, idle_timeout_s=3.0)


def settings_for(primary: str) -> Settings:
    """``primary`` is the wire format that misbehaves; the backup speaks the other one."""
    if primary == "openai":
        provs = [{"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                  "endpoint": PRIMARY_OPENAI},
                 {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]
    else:
        provs = [{"name": "primary", "type": "anthropic", "priority": 1,
                  "models": ["claude-sonnet-4"]},
                 {"name": "backup", "type": "openai", "priority": 2, "models": ["gpt-4o-mini"],
                  "endpoint": BACKUP_OPENAI}]
    return load_settings({
        "llm": {"deadline_s": 30, "routing": {"default_model": provs[0]["models"][0],
                                              "providers": provs}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
    }, env={})


def build(primary: str, clock: FakeClock,
          settings: Settings | None = None) -> tuple[CallLoop, Router]:
    settings = settings or settings_for(primary)
    providers = build_providers(settings)
    for p in providers.values():
        p.clock = clock  # type: ignore[attr-defined]
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, pool, settings, clock=clock, sleep=clock.sleep, asleep=clock.asleep,
                    rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


def stepping(chunks: Iterator[bytes], clock: FakeClock, is_async: bool) -> object:
    """A response body that advances the clock half a second before each chunk."""
    def sync() -> Iterator[bytes]:
        for c in chunks:
            clock.t += 0.5
            yield c

    async def asyn() -> AsyncIterator[bytes]:
        for c in chunks:
            clock.t += 0.5
            yield c

    return asyn() if is_async else sync()


def mock_backup(respx_mock: object, primary: str, stream: bool) -> object:
    if primary == "openai":   # the backup speaks Anthropic
        return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
            side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("ok",)),
                                                 headers=SSE_HEADERS) if stream
            else httpx.Response(200, json=anthropic_message("ok")))
    return respx_mock.post(BACKUP_OPENAI_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("ok",)),
                                             headers=SSE_HEADERS) if stream
        else httpx.Response(200, json=openai_chat_completion("ok")))


def primary_url(primary: str) -> str:
    return PRIMARY_OPENAI_URL if primary == "openai" else ANTHROPIC_URL


def run(loop: CallLoop, router: Router, mode: str) -> str:
    decision = router.select("hi")
    if mode == "complete":
        return loop.complete(LOOP_PROMPT, decision, LOOP_OPTS)[0].text
    if mode == "stream":
        return "".join(d.text for d in loop.stream(LOOP_PROMPT, decision, LOOP_OPTS))
    if mode == "acomplete":
        return asyncio.run(loop.acomplete(LOOP_PROMPT, decision, LOOP_OPTS))[0].text

    async def collect() -> str:
        return "".join([d.text async for d in loop.astream(LOOP_PROMPT, decision, LOOP_OPTS)])

    return asyncio.run(collect())


def _compressed(events: list[bytes]) -> Iterator[bytes]:
    """Each event gzip-compressed and flushed as it is sent, as a compressing proxy streams."""
    import zlib

    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    for e in events:
        yield gz.compress(e) + gz.flush(zlib.Z_SYNC_FLUSH)
    yield gz.flush()


def _gzip_members(pieces: Iterable[bytes]) -> list[bytes]:
    """Each piece a gzip member of its own, as a proxy that compresses what it relays piece by
    piece sends them (gzip(1) reads such a file whole)."""
    import gzip

    return [gzip.compress(piece) for piece in pieces]


def _in_gzip_members(body: bytes, size: int) -> bytes:
    """``body`` as gzip members of ``size`` of its bytes each, one after another."""
    return b"".join(_gzip_members(body[at:at + size] for at in range(0, len(body), size)))


def _compress(encoding: str, data: bytes) -> bytes:
    """``data`` in brotli or zstd, with the codec the HTTP client decodes it with; the test is
    skipped where that optional codec is not installed (the client then decodes neither, and
    such a body reaches the SDK as it came: nothing inflates)."""
    if encoding == "br":
        brotli = pytest.importorskip("brotli", reason="brotli not installed (httpx2[brotli])")
        return bytes(brotli.compress(data, quality=1))
    try:
        from compression import zstd  # type: ignore[import-not-found]   # Python 3.14+
    except ImportError:
        zstd = pytest.importorskip("backports.zstd", reason="zstd not installed (httpx2[zstd])")
    return bytes(zstd.compress(data))


async def _async_chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for c in chunks:
        yield c


WHOLE = {"openai": (PRIMARY_OPENAI_URL, "gpt-4o"), "anthropic": (ANTHROPIC_URL, "claude-sonnet-4")}


def _whole_text(kind: str, mode: str, encoding: str, body: bytes, sent: str,
                respx_mock: Any) -> str:
    """The text of the whole answer ``body`` (in ``encoding``), sent in one chunk or in chunks of
    7 bytes, as ``complete`` or ``acomplete`` reads it."""
    chunks = [body] if sent == "in one chunk" else [body[i:i + 7] for i in range(0, len(body), 7)]

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "application/json", "content-encoding": encoding}
        return httpx.Response(200, headers=headers, content=iter(chunks) if mode == "complete"
                              else _async_chunks(chunks))

    url, model = WHOLE[kind]
    respx_mock.post(url).mock(side_effect=answer)
    provider = (OpenAIProvider("openai", endpoint=PRIMARY_OPENAI) if kind == "openai"
                else AnthropicProvider())
    cred = Credential(kind, "sk-whole-SECRET-0000003")
    if mode == "acomplete":
        return asyncio.run(provider.acomplete(LOOP_PROMPT, model, cred, LOOP_OPTS)).text
    return provider.complete(LOOP_PROMPT, model, cred, LOOP_OPTS).text


def _answer_json(kind: str, text: str) -> bytes:
    body = openai_chat_completion(text) if kind == "openai" else anthropic_message(text)
    return json.dumps(body).encode()


def _packed(encoding: str, body: bytes) -> bytes:
    """``body`` in brotli, or in zstd as two frames (a frame per piece, as a proxy compressing
    what it relays sends), with the codec the HTTP client decodes it with; skipped where that
    optional codec is not installed (the client then asks for neither)."""
    if encoding == "br":
        return _compress("br", body)
    half = len(body) // 2
    return _compress("zstd", body[:half]) + _compress("zstd", body[half:])


SECRET = "sk-test-SECRET-1234567890abcdef"


OPTS = CallOptions(max_tokens=64, timeout_s=5)


PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),), context="## ctx")


PROVIDERS = {
    "openai": (OpenAIProvider, "openai", OPENAI_URL, "gpt-4o-mini"),
    "anthropic": (AnthropicProvider, "anthropic", ANTHROPIC_URL, "claude-3-5-sonnet-20241022"),
}


def make(kind: str):
    cls, name, url, model = PROVIDERS[kind]
    return cls(name), Credential(name, SECRET), url, model


# A body that lies about itself: ``content-encoding: gzip`` over plain bytes (a proxy that
# decompressed and kept the header), or a ``content-length`` longer than what is sent (the
# connection closes short). The server was reached and answered: a retryable failure, not "cannot
# connect"; and a stream must not let the HTTP client's own exception escape: the call loop took
# that for a bug (no failover, an httpx error for the caller). A stream cut only after its end
# marker is whole. Over a real socket: respx hands the SDKs a body already read.

SECRET_LIE = "sk-testkey-SECRET-gziplie-0001"


def _run_mode(provider: Any, kind: str, mode: str) -> str:
    cred = Credential(kind, SECRET_LIE)
    prompt = Prompt(system="s", messages=(Message("user", "hi"),))

    async def adrain() -> str:
        return "".join([d.text async for d in provider.astream(prompt, "m", cred, OPTS)])

    if mode == "complete":
        return str(provider.complete(prompt, "m", cred, OPTS).text)
    if mode == "stream":
        return "".join(d.text for d in provider.stream(prompt, "m", cred, OPTS))
    return asyncio.run(adrain())


def _faulty(srv: Any, kind: str) -> Any:
    return PROVIDERS[kind][0](kind, endpoint=srv.url + ("/v1" if kind == "openai" else ""))


# A 200 whose body is the API's error (a proxy or gateway answering every status with 200 and the
# upstream's error in the body): the SDKs parse it as an empty completion, or, on a streamed
# request, as an SSE stream of no events. It was a bare "HTTP 200 but the body is not a ...
# response (TypeError)" / "the stream ended without a single chunk": a rate limit opened the key's
# breaker instead of cooling it, a rejected key was retried, and the error's own words were lost.

SECRET_200 = "sk-testkey-SECRET-err200-00042"


# A whole request answered with an event stream: a server or gateway that ignores
# ``stream: false`` (or streams every answer). The SDKs hand such a body back as text, which was a
# ServerError that failed over; it is the answer, read as the stream it is.

def _whole(provider: Any, cred: Credential, model: str, mode: str) -> Completion:
    if mode == "acomplete":
        return asyncio.run(provider.acomplete(PROMPT, model, cred, OPTS))
    done: Completion = provider.complete(PROMPT, model, cred, OPTS)
    return done


def _error_answer(kind: str, status: int) -> dict[str, Any]:
    if status == 200:   # a gateway that answers every status with 200, the error in its body
        return {"error": {"message": "slow down", "type": "rate_limit_error",
                          "code": "rate_limit_exceeded"}}
    return (openai_error(429, "slow down") if kind == "openai"
            else anthropic_error(429, "slow down"))


def _rate_limited(provider: Any, cred: Credential, model: str, mode: str) -> RateLimited:
    """The rate limit a call in ``mode`` (whole or streamed, sync or async) raises."""
    with pytest.raises(RateLimited) as info:
        if mode in ("complete", "acomplete"):
            _whole(provider, cred, model, mode)
        elif mode == "stream":
            list(provider.stream(PROMPT, model, cred, OPTS))
        else:
            async def drain() -> None:
                async for _ in provider.astream(PROMPT, model, cred, OPTS):
                    pass
            asyncio.run(drain())
    return info.value


OPENAI_PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


CRED = Credential("openai", "sk-testkey-SECRET-refusal-0001")


OPENAI_OPTS = CallOptions(max_tokens=32, timeout_s=5)


def cut_openai_stream(pieces: tuple[str, ...]) -> bytes:
    """The stream as a proxy that closes the connection early leaves it: no finish, no [DONE]."""
    events = [e for e in openai_chat_stream(pieces).split(b"\n\n") if e]
    kept = [e for e in events if b'"finish_reason": "stop"' not in e and b"[DONE]" not in e
            and b'"usage"' not in e]
    return b"\n\n".join(kept) + b"\n\n"


UNSUPPORTED_TEMPERATURE = openai_error(
    400, "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default "
    "(1) value is supported.", code="unsupported_value", param="temperature")


def _sent(route: Any) -> list[dict[str, Any]]:
    return [json.loads(c.request.content) for c in route.calls]


ANTHROPIC_PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


ANTHROPIC_CRED = Credential("anthropic", "sk-ant-testkey-SECRET-usage-01")


ANTHROPIC_OPTS = CallOptions(max_tokens=32, timeout_s=5)


ENABLED_REFUSED = {"type": "error", "error": {
    "type": "invalid_request_error",
    "message": '"thinking.type.enabled" is not supported for this model. Use '
               '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'}}


def unmetered_anthropic_stream(pieces: tuple[str, ...]) -> bytes:
    """:func:`anthropic_stream` as a compatible server sends it: no usage anywhere."""
    cleaned = []
    for e in (e for e in anthropic_stream(pieces).split(b"\n\n") if e):
        name, _, data = e.partition(b"\ndata: ")
        obj = json.loads(data)
        obj.get("message", {}).pop("usage", None)
        obj.pop("usage", None)
        cleaned.append(name + b"\ndata: " + json.dumps(obj).encode())
    return b"\n\n".join(cleaned) + b"\n\n"


def anthropic_last(provider: AnthropicProvider, prompt: Prompt, how: str,
                   stream_deltas: Callable[..., list[Any]]) -> Any:
    """The whole reply (``complete``, ``acomplete``) or the last piece of the stream (``stream``,
    ``astream``): each carries the usage and the container."""
    if how == "complete":
        return provider.complete(prompt, "claude-sonnet-4-5", ANTHROPIC_CRED, ANTHROPIC_OPTS)
    if how == "acomplete":
        return asyncio.run(provider.acomplete(prompt, "claude-sonnet-4-5", ANTHROPIC_CRED,
                                              ANTHROPIC_OPTS))
    return stream_deltas(provider, prompt, "claude-sonnet-4-5", ANTHROPIC_CRED, ANTHROPIC_OPTS,
                         use_async=how == "astream")[-1]


# The answers and adapters the SDK tests share (test_sdk*.py).
def ok_body(kind: str, text: str = "Hello!"):
    """A whole answer saying ``text`` in ``kind``'s wire format."""
    return openai_chat_completion(text) if kind == "openai" else anthropic_message(text)


def url_and_provider(kind: str) -> tuple[str, OpenAIProvider | AnthropicProvider]:
    """The endpoint to mock for ``kind`` and a fresh adapter of that kind."""
    return (OPENAI_URL, OpenAIProvider()) if kind == "openai" else (ANTHROPIC_URL,
                                                                     AnthropicProvider())


# The refusal the OpenAI adapter's tests share (test_openai*.py).
REFUSAL = "I'm sorry, I can't help with that."


def refusal_stream(lead: str = "") -> bytes:
    """A refusal in two pieces; ``lead``: content the model wrote before it refused."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    return _sse([
        *([(None, {**base, "choices": [{"index": 0, "finish_reason": None,
                                        "delta": {"content": lead}}]})] if lead else []),
        (None, {**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "role": "assistant", "content": None, "refusal": ""}}]}),
        (None, {**base, "choices": [{"index": 0, "finish_reason": None,
                                     "delta": {"refusal": REFUSAL[:9]}}]}),
        (None, {**base, "choices": [{"index": 0, "finish_reason": "stop",
                                     "delta": {"refusal": REFUSAL[9:]}}]}),
        (None, "[DONE]")])


#: A conversation whose first turn had a tool round, now asking on: sent where the request offers
#: no tools (the agent's tools removed, or the history handed to an agent without them).
EARLIER_ROUND = (
    Message("user", "weather in Oslo?"),
    Message("assistant", "Let me check.",
            tool_calls=(ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)),
    Message("tool", "cold", tool_call_id="c1", name="get_weather"),
    Message("assistant", "It is cold in Oslo."),
    Message("user", "and yesterday?"))
