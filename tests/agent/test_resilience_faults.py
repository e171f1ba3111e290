"""Tests of ``hermes_core/agent/resilience.py``: the same faults (persistent 429s in every
Retry-After form, a model the primary lacks, a reset mid-response, rejected keys) through
``complete``, ``stream`` and ``acomplete``, with either wire format as the primary; and a
request limit learned from the headers of 200s, on the loopback server.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import AllProvidersFailed, AuthenticationFailed, ModelNotFound, ServerError
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeClock,
    ScriptedProvider,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.types import Credential, Message, Prompt
from tests.agent.conftest import B1, PRIMARY, PRIMARY_URL, PROMPT, decision, make

FAULT_PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


FAULT_OPTS = CallOptions(max_tokens=32, timeout_s=20.0, idle_timeout_s=10.0)


FORMS = ["retry-after", "http-date", "retry-after-ms", "openai-reset", "anthropic-reset"]


def fault_settings(**pool: object) -> Settings:
    return load_settings({
        "llm": {"deadline_s": 30, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
             "endpoint": PRIMARY},
            {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0, "max_wait_s": 10, **pool},
    }, env={})


def build_fault_loop(clock: FakeClock, **pool: object) -> tuple[CallLoop, Router]:
    settings = fault_settings(**pool)
    providers = build_providers(settings)
    cp = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, cp, settings, clock=clock, sleep=clock.sleep, asleep=clock.asleep,
                    rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


def run(loop: CallLoop, router: Router, mode: str) -> tuple[str, tuple[object, ...]]:
    decision = router.select("hi")
    if mode == "complete":
        done, attempts = loop.complete(FAULT_PROMPT, decision, FAULT_OPTS)
        return done.text, attempts
    if mode == "stream":
        s = loop.stream(FAULT_PROMPT, decision, FAULT_OPTS)
        return "".join(d.text for d in s), tuple(s.attempts)
    done, attempts = asyncio.run(loop.acomplete(FAULT_PROMPT, decision, FAULT_OPTS))
    return done.text, attempts


def backup_ok(respx_mock: object) -> object:
    return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("ok",)),
                                             headers=SSE_HEADERS)
        if json.loads(r.content).get("stream") else httpx.Response(200, json=anthropic_message("ok")))


@pytest.mark.parametrize("mode", ["complete", "stream", "acomplete"])
@pytest.mark.parametrize("form", FORMS)
def test_persistent_429s_wait_at_most_max_wait_in_total_then_fail_over(
        respx_mock: object, clock: FakeClock, form: str, mode: str) -> None:
    loop, router = build_fault_loop(clock)
    primary = respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(429, json=openai_error(429, "slow down"),
                                             headers=dict(retry_after_headers(form, 4.0,
                                                                              now=time.time()))))
    backup = backup_ok(respx_mock)
    text, attempts = run(loop, router, mode)
    assert text == "ok" and backup.called  # type: ignore[attr-defined]
    assert sum(clock.sleeps) <= 10.0 + 0.25          # max_wait_s bounds the whole wait
    assert primary.call_count <= 4                    # not 14 429s  # type: ignore[attr-defined]
    assert [a.decision for a in attempts][-2:] == ["failover", "done"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["complete", "stream", "acomplete"])
def test_a_model_the_primary_does_not_have_moves_to_the_next_candidate(
        respx_mock: object, clock: FakeClock, mode: str) -> None:
    loop, router = build_fault_loop(clock)
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        404, json=openai_error(404, "The model `gpt-4o` does not exist", code="model_not_found")))
    backup_ok(respx_mock)
    text, attempts = run(loop, router, mode)
    assert text == "ok"
    assert attempts[0].decision == "model_not_found"  # type: ignore[attr-defined]


def test_the_final_error_names_each_model_tried(respx_mock: object, clock: FakeClock) -> None:
    loop, router = build_fault_loop(clock)
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        400, json=openai_error(400, "invalid model ID 'gpt-4o'")))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        404, json=anthropic_error(404, "model: claude-haiku")))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(FAULT_PROMPT, router.select("hi"), FAULT_OPTS)
    assert "model not found: primary/gpt-4o, backup/claude-haiku" in str(ei.value)
    assert isinstance(ei.value.last_error, ModelNotFound)


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_a_connection_reset_mid_response_is_reported_as_a_reset(
        respx_mock: object, clock: FakeClock, mode: str) -> None:
    loop, router = build_fault_loop(clock)

    def cut() -> object:
        def sync():  # type: ignore[no-untyped-def]
            yield b'{"id": "chatcmpl-1", "obj'
            raise httpx.RemoteProtocolError("peer closed connection without sending complete "
                                             "message body")

        async def asyn():  # type: ignore[no-untyped-def]
            yield b'{"id": "chatcmpl-1", "obj'
            raise httpx.RemoteProtocolError("peer closed connection without sending complete "
                                             "message body")
        return asyn() if mode == "acomplete" else sync()

    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, headers={"content-type": "application/json"},
                                             content=cut()))
    backup_ok(respx_mock)
    text, attempts = run(loop, router, mode)
    assert text == "ok"
    assert attempts[0].status == "connection_reset"  # type: ignore[attr-defined]


def test_reply_prompt_is_the_request_exactly_as_sent_after_a_failover_to_another_kind(
        respx_mock: object, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "SOUL.md").write_text("You are Hermes. " + "Always answer exactly. " * 1500,
                                  encoding="utf-8")
    settings = load_settings({
        "home": str(home),
        "llm": {"stream": False, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1,
             "models": ["gpt-4o", "claude-sonnet-4-5"], "endpoint": PRIMARY},
            {"name": "backup", "type": "anthropic", "priority": 2,
             "models": ["gpt-4o", "claude-sonnet-4-5"]}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
        "skill_utils": {"enabled": False}, "context_engine": {"enabled": False},
    }, env={})
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        return_value=httpx.Response(500, json=openai_error(500, "down")))
    backup = respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        return_value=httpx.Response(200, json=anthropic_message("ok")))
    agent = Agent(settings, retriever=None, context_engine=None)
    try:
        for _ in range(3):   # a history, so Anthropic breakpoints land on messages too
            reply = agent.chat("tell me more " * 200)
    finally:
        agent.close()
    sent = json.loads(backup.calls.last.request.content)  # type: ignore[attr-defined]
    assert reply.provider == "backup" and reply.prompt is not None
    shown = agent.providers["backup"].render(reply.prompt, sent["model"], agent.options())
    assert shown == sent                                   # what /prompt shows is what went out
    assert sent["system"][0]["cache_control"]["type"] == "ephemeral"
    assert reply.prompt.cache.message_indices              # Anthropic's plan, not OpenAI's


# --------------------------------------------------------------------------- limits from 200s

LIMITED = "sk-loopback-limited-SECRET-01"


def limited_loop(srv: object, kind: str) -> tuple[CallLoop, Router]:
    url = srv.url + ("/v1" if kind == "openai" else "")  # type: ignore[attr-defined]
    settings = load_settings({
        "llm": {"deadline_s": 5, "routing": {"default_model": "m", "providers": [
            {"name": "only", "type": kind, "models": ["m"], "endpoint": url}]}},
        "credentials": {"only": {"keys": [{"key": LIMITED}]}},      # no max_rpm: learned
        # no pacing: the three go back to back, the window is what refuses the fourth
        "credential_pool": {"retries_per_provider": 0, "max_wait_s": 1, "pace_burst": 1.0},
    }, env={})
    return CallLoop.from_settings(settings, audit_path=False), Router.from_settings(settings)


@pytest.mark.parametrize("mode", ["complete", "stream", "acomplete"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_the_limit_a_200_states_is_learned_before_any_429(kind: str, mode: str) -> None:
    """The server states its request limit and what remains on every 200 (both providers'
    headers): after three successes the pool knows the window is full and never sends the
    fourth request the server would refuse."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer

    with MockLLMServer(reply="fine") as srv:
        srv.set_key(LIMITED, KeyBehaviour(rpm=3, window_s=60.0, rate_headers=True))
        loop, router = limited_loop(srv, kind)
        for _ in range(3):
            assert run(loop, router, mode)[0] == "fine"
        with pytest.raises(AllProvidersFailed) as ei:
            run(loop, router, mode)
        served = srv.requests
    assert [r.status for r in served] == [200, 200, 200]           # no 429 at all
    assert ei.value.attempts[-1].status == "all_keys_blocked"
    assert loop.pool.backend.snapshot(
        "only", loop.pool._specs["only"], loop.pool.policy).keys[0].learned_rpm == 3


# ---- the same faults with either wire format as the primary, for complete, stream and acomplete

SECRETS = {"primary": "sk-primary-SECRET-000001", "backup": "sk-backup-SECRET-0000002"}


MODES = ["complete", "stream", "acomplete"]


def kind_loop(clock: FakeClock, primary: str) -> tuple[CallLoop, Router]:
    """A primary speaking ``primary``'s wire format and a backup speaking the other one."""
    other = "anthropic" if primary == "openai" else "openai"
    models = {"openai": "gpt-4o", "anthropic": "claude-haiku"}
    settings = load_settings({
        "llm": {"deadline_s": 30, "routing": {"default_model": models[primary], "providers": [
            {"name": "primary", "type": primary, "priority": 1, "models": [models[primary]],
             "equivalents": {models[other]: models[primary]}},
            {"name": "backup", "type": other, "priority": 2, "models": [models[other]],
             "equivalents": {models[primary]: models[other]}}]}},
        "credentials": {name: {"keys": [{"key": key}]} for name, key in SECRETS.items()},
        "credential_pool": {"retries_per_provider": 0, "max_wait_s": 10},
    }, env={})
    cp = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), cp, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


def url_of(kind: str) -> str:
    return OPENAI_URL if kind == "openai" else ANTHROPIC_URL


def answers_ok(kind: str) -> Callable[[httpx.Request], httpx.Response]:
    def answer(r: httpx.Request) -> httpx.Response:
        if json.loads(r.content).get("stream"):
            return httpx.Response(200, headers=SSE_HEADERS, content=(
                openai_chat_stream(("ok",)) if kind == "openai" else anthropic_stream(("ok",))))
        return httpx.Response(200, json=(openai_chat_completion("ok") if kind == "openai"
                                         else anthropic_message("ok")))
    return answer


def error_json(kind: str, status: int, message: str) -> dict[str, object]:
    return openai_error(status, message) if kind == "openai" else anthropic_error(status, message)


def backup_of(respx_mock: object, primary: str) -> object:
    other = "anthropic" if primary == "openai" else "openai"
    return respx_mock.post(url_of(other)).mock(side_effect=answers_ok(other))  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("form", FORMS)
def test_persistent_429s_from_an_anthropic_primary_wait_at_most_max_wait_then_fail_over(
        respx_mock: object, clock: FakeClock, form: str, mode: str) -> None:
    loop, router = kind_loop(clock, "anthropic")
    primary = respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(429, json=anthropic_error(429, "slow down"),
                                             headers=dict(retry_after_headers(form, 4.0,
                                                                              now=time.time()))))
    backup = backup_of(respx_mock, "anthropic")
    text, attempts = run(loop, router, mode)
    assert text == "ok" and backup.called  # type: ignore[attr-defined]
    assert 4.0 <= sum(clock.sleeps) <= 10.0 + 0.25   # waited for the key, but 10 s in total
    assert 2 <= primary.call_count <= 4  # type: ignore[attr-defined]
    assert [a.decision for a in attempts][-2:] == ["failover", "done"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
@pytest.mark.parametrize("status,message", [
    (404, "model: {model}"),
    (400, "The model `{model}` does not exist or you do not have access to it."),
    (400, "model: {model} is not a valid model"),
])
def test_a_model_one_wire_format_lacks_moves_to_the_next_candidate(
        respx_mock: object, clock: FakeClock, primary: str, mode: str, status: int,
        message: str) -> None:
    loop, router = kind_loop(clock, primary)
    model = router.select("hi").candidates[0].model
    respx_mock.post(url_of(primary)).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        status, json=error_json(primary, status, message.format(model=model))))
    backup_of(respx_mock, primary)
    text, attempts = run(loop, router, mode)
    assert text == "ok"
    assert [a.decision for a in attempts] == ["model_not_found", "done"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_a_connection_reset_mid_response_is_a_reset_in_either_wire_format(
        respx_mock: object, clock: FakeClock, primary: str, mode: str) -> None:
    start = (b'data: {"id": "chatcmpl-1", "obj' if mode == "stream" else b'{"id": "x1", "obj')

    def body() -> object:
        def sync():  # type: ignore[no-untyped-def]
            yield start
            raise httpx.RemoteProtocolError("peer closed connection without sending complete "
                                             "message body")

        async def asyn():  # type: ignore[no-untyped-def]
            yield start
            raise httpx.RemoteProtocolError("peer closed connection without sending complete "
                                             "message body")
        return asyn() if mode == "acomplete" else sync()

    ctype = "text/event-stream" if mode == "stream" else "application/json"
    respx_mock.post(url_of(primary)).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, headers={"content-type": ctype}, content=body()))
    backup_of(respx_mock, primary)
    text, attempts = run(*kind_loop(clock, primary), mode)
    assert text == "ok"
    assert attempts[0].status == "connection_reset"  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("primary", ["openai", "anthropic"])
def test_rejected_keys_in_either_wire_format_say_where_they_were_configured(
        respx_mock: object, clock: FakeClock, primary: str, mode: str) -> None:
    loop, router = kind_loop(clock, primary)
    other = "anthropic" if primary == "openai" else "openai"
    for kind, name in ((primary, "primary"), (other, "backup")):
        respx_mock.post(url_of(kind)).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
            401, json=error_json(kind, 401, f"Incorrect API key provided: {SECRETS[name]}")))
    with pytest.raises(AllProvidersFailed) as ei:
        run(loop, router, mode)
    said = str(ei.value)
    assert [a.status for a in ei.value.attempts] == ["401", "401"]
    assert "credentials.backup.keys[0]" in said and "was rejected" in said
    assert not any(s in said or s in repr(ei.value.last_error.headers)  # type: ignore[union-attr]
                   for s in SECRETS.values())
    assert [s.state for s in loop.pool.status(["primary", "backup"])] == ["quarantined"] * 2


@pytest.mark.parametrize("backup_fails", ["no_key", "server_error"])
def test_a_rejected_key_is_named_even_when_a_later_candidate_failed_otherwise(backup_fails: str) -> None:
    """The primary's key gets a 401; the backup has no key, or answers 500. The final error must
    still say which key was rejected and where it came from: only the last error was shown."""
    key = Credential("a", "sk-a-rejected-secret", source="OPENAI_API_KEY")
    a = ScriptedProvider("a", script=[AuthenticationFailed("HTTP 401: bad key", status_code=401)])
    b = ScriptedProvider("b", default=ServerError("HTTP 500", status_code=500))
    loop, _ = make({"a": a, "b": b}, {"a": [key], "b": [] if backup_fails == "no_key" else [B1]})
    with pytest.raises(AllProvidersFailed) as info:
        loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    said = str(info.value)
    assert info.value.attempts[0].status == "401"
    assert key.fingerprint in said and "OPENAI_API_KEY" in said and "was rejected" in said
    assert "sk-a-rejected" not in said
