"""The call loop against faults, at the HTTP level (real SDKs behind respx, injected clock):
bounded total waiting on 429s for every Retry-After form, model-not-found failover, resets
reported as resets, the prompt returned as sent after a cross-kind failover, and the pure
failure decision."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.resilience_policy import (
    FailureState,
    LoopPolicy,
    decide_failure,
    wait_or_failover,
)
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import (
    AllProvidersFailed,
    AuthenticationFailed,
    BadRequest,
    ConnectionReset,
    ModelNotFound,
    RateLimited,
    ServerError,
)
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    SSE_HEADERS,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.types import Message, Prompt

from .conftest import StepClock

PRIMARY = "https://primary.test/v1"
PRIMARY_URL = PRIMARY + "/chat/completions"
PROMPT = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))
OPTS = CallOptions(max_tokens=32, timeout_s=20.0, idle_timeout_s=10.0)
FORMS = ["retry-after", "http-date", "retry-after-ms", "openai-reset", "anthropic-reset"]


def settings_for(**pool: object) -> Settings:
    return load_settings({
        "llm": {"deadline_s": 30, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
             "endpoint": PRIMARY},
            {"name": "backup", "type": "anthropic", "priority": 2, "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0, "max_wait_s": 10, **pool},
    }, env={})


def build(clock: StepClock, **pool: object) -> tuple[CallLoop, Router]:
    settings = settings_for(**pool)
    providers = build_providers(settings)
    cp = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, cp, settings, clock=clock, sleep=clock.sleep, asleep=clock.asleep,
                    rng=random.Random(2), audit_path=False)
    return loop, Router.from_settings(settings)


def run(loop: CallLoop, router: Router, mode: str) -> tuple[str, tuple[object, ...]]:
    decision = router.select("hi")
    if mode == "complete":
        done, attempts = loop.complete(PROMPT, decision, OPTS)
        return done.text, attempts
    if mode == "stream":
        s = loop.stream(PROMPT, decision, OPTS)
        return "".join(d.text for d in s), tuple(s.attempts)
    done, attempts = asyncio.run(loop.acomplete(PROMPT, decision, OPTS))
    return done.text, attempts


def backup_ok(respx_mock: object) -> object:
    return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("ok",)),
                                             headers=SSE_HEADERS)
        if json.loads(r.content).get("stream") else httpx.Response(200, json=anthropic_message("ok")))


@pytest.mark.parametrize("mode", ["complete", "stream", "acomplete"])
@pytest.mark.parametrize("form", FORMS)
def test_persistent_429s_wait_at_most_max_wait_in_total_then_fail_over(
        respx_mock: object, clock: StepClock, form: str, mode: str) -> None:
    loop, router = build(clock)
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
        respx_mock: object, clock: StepClock, mode: str) -> None:
    loop, router = build(clock)
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        404, json=openai_error(404, "The model `gpt-4o` does not exist", code="model_not_found")))
    backup_ok(respx_mock)
    text, attempts = run(loop, router, mode)
    assert text == "ok"
    assert attempts[0].decision == "model_not_found"  # type: ignore[attr-defined]


def test_the_final_error_names_each_model_tried(respx_mock: object, clock: StepClock) -> None:
    loop, router = build(clock)
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        400, json=openai_error(400, "invalid model ID 'gpt-4o'")))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(  # type: ignore[attr-defined]
        404, json=anthropic_error(404, "model: claude-haiku")))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, router.select("hi"), OPTS)
    assert "model not found: primary/gpt-4o, backup/claude-haiku" in str(ei.value)
    assert isinstance(ei.value.last_error, ModelNotFound)


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_a_connection_reset_mid_response_is_reported_as_a_reset(
        respx_mock: object, clock: StepClock, mode: str) -> None:
    loop, router = build(clock)

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


# --------------------------------------------------------------------------- the pure decisions

POLICY = LoopPolicy(retries_per_provider=1, max_wait_s=10.0)


def state(**kw: object) -> FailureState:
    base = {"has_key": True, "key_429s": 0, "retries_here": 0, "budget": 3,
            "context_moved": False, "long_context_target": None, "time_left": 60.0}
    return FailureState(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize("error,decision,report", [
    (RateLimited(retry_after=3.0), "rotate_key", "cool_down"),
    (AuthenticationFailed("no", status_code=401), "remove_key", "remove"),
    (ModelNotFound("no such model", status_code=404), "model_not_found", "release"),
    (BadRequest("bad field", status_code=400), "raise", "release"),
    (ServerError("down", status_code=500), "retry", "failure"),
    (ConnectionReset("reset"), "retry", "failure"),
])
def test_decide_failure_table(error: object, decision: str, report: str) -> None:
    act = decide_failure(error, state(), POLICY, random.Random(0))  # type: ignore[arg-type]
    assert (act.decision, act.report) == (decision, report)


def test_a_key_refusing_twice_cools_down_longer_and_retries_end_in_failover() -> None:
    act = decide_failure(RateLimited(retry_after=0.0), state(key_429s=2), POLICY, random.Random(0))
    assert act.cooldown == POLICY.backoff_base_s * 2
    spent = decide_failure(ServerError("down"), state(retries_here=1), POLICY, random.Random(0))
    assert spent.decision == "failover" and spent.next_candidate
    broke = decide_failure(ServerError("down"), state(budget=0), POLICY, random.Random(0))
    assert broke.decision == "budget_spent"


def test_waiting_is_bounded_in_total_per_provider_and_jittered() -> None:
    rng = random.Random(0)
    assert wait_or_failover(4.0, 8.0, 60.0, True, POLICY, rng) is None      # 8 + 4 > 10
    d = wait_or_failover(4.0, 2.0, 60.0, True, POLICY, rng)
    assert d is not None and 4.0 <= d <= 4.25
    assert wait_or_failover(40.0, 0.0, 60.0, False, POLICY, rng) is not None  # last: deadline
