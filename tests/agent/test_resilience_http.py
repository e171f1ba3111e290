"""Tests of ``hermes_core/agent/resilience.py`` over HTTP: the call loop driving the real
openai and anthropic SDKs (respx answering), for each error a provider can give, for streams
and for the failover sweep in priority order.
"""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import AllProvidersFailed, ProviderError
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    SSE_HEADERS,
    FakeClock,
    anthropic_error,
    anthropic_message,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.types import Message, Prompt
from tests.agent.conftest import K1, K2, K3, LOW, OPTS, PRIMARY_URL, PROMPT_HTTP, settings_for


def build(settings: Settings) -> tuple[CallLoop, Router, FakeClock]:
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(3))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(5),
                    audit_path=None if settings.credential_pool.audit_log else False)
    return loop, Router.from_settings(settings), clock


def key_of(request: httpx.Request) -> str:
    auth = request.headers.get("authorization", "")
    return auth.removeprefix("Bearer ").strip() or request.headers.get("x-api-key", "")


def per_key(table: dict[str, Callable[[], httpx.Response]]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        return table[key_of(request)]()
    return handler


def ok_openai() -> httpx.Response:
    return httpx.Response(200, json=openai_chat_completion("primary ok", model="gpt-4o"))


def ok_anthropic() -> httpx.Response:
    return httpx.Response(200, json=anthropic_message("backup ok", model="claude-haiku"))


@pytest.mark.parametrize("form", ["retry-after", "retry-after-ms", "http-date", "openai-reset",
                                  "anthropic-reset"])
def test_429_each_retry_after_form_rotates_without_waiting(form: str, respx_mock) -> None:
    loop, router, clock = build(settings_for())
    headers = retry_after_headers(form, 30)
    route = respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({
        K1: lambda: httpx.Response(429, json=openai_error(429, "slow down"), headers=headers),
        K2: ok_openai}))
    done, attempts = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.text == "primary ok"
    assert [a.status for a in attempts] == ["429", "ok"]
    assert clock.sleeps == []
    blocked = {s.fingerprint: s for s in loop.pool.status(["primary"])}
    k1 = next(s for s in blocked.values() if s.state == "blocked")
    assert 28.0 <= k1.blocked_for_s <= 30.5
    # while K1 is blocked it is never sent another request
    for _ in range(3):
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    sent = [key_of(c.request) for c in route.calls]
    assert sent.count(K1) == 1 and sent.count(K2) == 4


def test_all_keys_blocked_fails_over_to_second_provider(respx_mock) -> None:
    loop, router, clock = build(settings_for())
    limited = lambda: httpx.Response(429, json=openai_error(429), headers={"retry-after": "30"})  # noqa: E731
    respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({K1: limited, K2: limited}))
    backup = respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
    for _ in range(3):
        done, _ = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
        assert done.provider == "backup" and done.text == "backup ok"
    assert backup.call_count == 3 and clock.sleeps == []
    assert respx_mock.calls.call_count == 5      # two 429s, then only the backup


def test_401_quarantines_the_key(respx_mock, caplog: pytest.LogCaptureFixture) -> None:
    loop, router, _ = build(settings_for())
    route = respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({
        K1: lambda: httpx.Response(401, json=openai_error(401, f"Incorrect API key provided: {K1}")),
        K2: ok_openai}))
    with caplog.at_level("DEBUG"):
        for _ in range(4):
            done, _ = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
            assert done.text == "primary ok"
    assert [key_of(c.request) for c in route.calls].count(K1) == 1
    assert "quarantined" in [s.state for s in loop.pool.status(["primary"])]
    assert K1 not in caplog.text and "credential alert" in caplog.text


def test_500_twice_retried_within_budget_then_failover_over_http(respx_mock) -> None:
    loop, router, clock = build(settings_for())
    primary = respx_mock.post(PRIMARY_URL).mock(
        return_value=httpx.Response(500, json=openai_error(500, "internal")))
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
    done, attempts = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.provider == "backup"
    assert [(a.provider, a.status, a.decision) for a in attempts] == [
        ("primary", "500", "retry"), ("primary", "500", "failover"), ("backup", "ok", "done")]
    assert primary.call_count == 2 and len(clock.sleeps) == 1


def test_529_overloaded_backs_off_by_retry_after_then_fails_over(respx_mock) -> None:
    loop, router, clock = build(settings_for("anthropic"))
    overloaded = lambda: httpx.Response(529, json=anthropic_error(529), headers={"retry-after": "2"})  # noqa: E731
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=per_key({
        K1: overloaded, K2: overloaded, K3: ok_anthropic}))
    done, attempts = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.provider == "backup"
    assert [a.status for a in attempts] == ["529", "529", "ok"]
    assert clock.sleeps == [2.0]          # Retry-After wins over jitter


def test_timeout_retried_then_failover(respx_mock) -> None:
    loop, router, _ = build(settings_for())
    respx_mock.post(PRIMARY_URL).mock(side_effect=httpx.ReadTimeout("slow"))
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
    done, attempts = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.provider == "backup"
    assert [a.status for a in attempts] == ["timeout", "timeout", "ok"]


def test_connection_refused_on_a_real_socket_fails_over() -> None:
    with socket.socket() as s:          # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = load_settings({
        "llm": {"routing": {"default_model": "gpt-4o", "providers": [
            {"name": "dead", "type": "openai", "priority": 1, "models": ["gpt-4o"],
             "endpoint": f"http://127.0.0.1:{port}/v1"},
            {"name": "local", "type": "offline", "priority": 2, "models": ["offline"]}]}},
        "credentials": {"dead": {"keys": [{"key": K1}]}}})
    loop, router, _ = build(settings)
    done, attempts = loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.provider == "local"
    assert [a.status for a in attempts] == ["connection_error", "connection_error", "ok"]


def test_stream_fails_over_before_first_token_over_http(respx_mock) -> None:
    loop, router, _ = build(settings_for(retries_per_provider=0))
    respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({
        K1: lambda: httpx.Response(503, json=openai_error(503, "unavailable")),
        K2: lambda: httpx.Response(503, json=openai_error(503, "unavailable"))}))
    backup_stream = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        b'"role":"assistant","model":"claude-haiku","content":[],"stop_reason":null,'
        b'"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"from backup"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
        b'"stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    respx_mock.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(200, content=backup_stream, headers=SSE_HEADERS))
    s = loop.stream(PROMPT_HTTP, router.select("hi"), OPTS)
    assert "".join(d.text for d in s) == "from backup"
    assert [a.status for a in s.attempts] == ["503", "ok"]


def test_stream_error_after_first_token_reaches_caller_over_http(respx_mock) -> None:
    loop, router, _ = build(settings_for())
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(("Hel", "lo"), fail_after=1), headers=SSE_HEADERS))
    backup = respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
    s = loop.stream(PROMPT_HTTP, router.select("hi"), OPTS)
    got = []
    with pytest.raises(ProviderError):
        for d in s:
            got.append(d.text)
    assert got == ["Hel"] and backup.call_count == 0
    assert s.attempts[-1].decision == "raise_mid_stream"
    assert all(k.in_flight == 0 for k in loop.pool.status())


async def test_async_stream_and_complete_fail_over(respx_mock) -> None:
    loop, router, clock = build(settings_for())
    respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({
        K1: lambda: httpx.Response(429, json=openai_error(429), headers={"retry-after-ms": "30000"}),
        K2: lambda: httpx.Response(401, json=openai_error(401))}))
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
    done, attempts = await loop.acomplete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert done.provider == "backup" and clock.sleeps == []
    assert [a.status for a in attempts] == ["429", "401", "all_keys_blocked", "ok"]


def test_keys_never_in_any_output(respx_mock, tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit.jsonl"
    loop, router, _ = build(settings_for(audit=audit))
    respx_mock.post(PRIMARY_URL).mock(side_effect=per_key({
        K1: lambda: httpx.Response(401, json=openai_error(401, f"bad key {K1}")),
        K2: lambda: httpx.Response(500, json=openai_error(500, f"key {K2} broke"))}))
    respx_mock.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(403, json=anthropic_error(403, f"no access for {K3}")))
    with caplog.at_level("DEBUG"), pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    err = ei.value
    texts = [caplog.text, audit.read_text(), str(err), repr(err), repr(err.attempts),
             repr(err.last_error), str(err.last_error), json.dumps([r.as_dict() for r in
                                                                    loop.pool.status()]),
             repr(loop.pool.credentials("primary"))]
    print(*texts)
    out = capsys.readouterr()
    for secret in (K1, K2, K3):
        for t in (*texts, out.out, out.err):
            assert secret not in t
    assert len(audit.read_text().splitlines()) == len(err.attempts) >= 4


def _built_for_openai(settings: Settings) -> Prompt:
    """A PromptBuilder-shaped prompt (a token count per part) planned for the first candidate."""
    from hermes_core.agent.prompt.cache_plan import replan_cache

    turns = tuple(Message(role, f"{role} turn {i}: " + "details " * 400)
                  for i in range(3) for role in ("user", "assistant"))
    long = Prompt(system="You are Hermes. " + "Keep answers exact. " * 1500,
                  messages=(*turns, Message("user", "hi")), tokens={"system": 6000})
    return replan_cache(long, settings, provider_kind="openai", model="gpt-4o")


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_failover_to_another_provider_kind_replans_the_cache(mode: str, respx_mock) -> None:
    """A multi-turn prompt planned for OpenAI (prompt_cache_key, no message markers) fails over to
    Anthropic: the backup request must carry Anthropic's message breakpoints too, or every
    failover turn pays for the whole conversation again."""
    settings = settings_for(retries_per_provider=0)
    loop, router, _ = build(settings)
    prompt = _built_for_openai(settings)
    assert prompt.cache.system and prompt.cache.prompt_cache_key and not prompt.cache.message_indices
    respx_mock.post(PRIMARY_URL).mock(return_value=httpx.Response(500, json=openai_error(500, "x")))
    if mode == "complete":
        backup = respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: ok_anthropic())
        done, _ = loop.complete(prompt, router.select("hi"), OPTS)
        assert done.provider == "backup"
    else:
        from hermes_core.testing import anthropic_stream

        backup = respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: httpx.Response(
            200, content=anthropic_stream(("ok",)), headers=SSE_HEADERS))
        assert "".join(d.text for d in loop.stream(prompt, router.select("hi"), OPTS)) == "ok"
    sent = json.loads(backup.calls.last.request.content)
    assert sent["system"][0]["cache_control"]["type"] == "ephemeral"
    assert sent["system"][0]["text"] == prompt.system
    marked = [i for i, m in enumerate(sent["messages"])
              if any("cache_control" in b for b in m["content"])]
    assert marked and marked[-1] < len(sent["messages"]) - 1   # on history, never the new message


def test_first_candidate_and_hand_made_prompts_keep_their_plan() -> None:
    from hermes_core.types import CachePlan, Candidate, RouteDecision

    settings = settings_for()
    loop, _, _ = build(settings)
    prompt = _built_for_openai(settings)
    dec = RouteDecision("gpt-4o", (Candidate("primary", "gpt-4o"), Candidate("backup", "claude-haiku")),
                        "test")
    first, second = dec.candidates
    # the loop plans every candidate: the first one's plan is the builder's for that provider
    assert loop.planned(prompt, first).cache == prompt.cache
    assert loop.planned(prompt, second).cache.prompt_cache_key == prompt.cache.prompt_cache_key
    assert loop.planned(prompt, second).cache.message_indices   # Anthropic's breakpoints
    hand_made = Prompt(system="s", messages=(Message("user", "hi"),), cache=CachePlan(system=True))
    assert loop.planned(hand_made, second) is hand_made


K1_BILLING, K2_BILLING = "sk-ant-testkey-SECRET-broke-001", "sk-ant-testkey-SECRET-funded-02"


def test_broke_key_is_removed_and_the_next_key_answers(respx_mock) -> None:
    settings = load_settings({
        "llm": {"routing": {"default_model": "claude-sonnet-4", "providers": [
            {"name": "anthropic", "type": "anthropic", "priority": 1,
             "models": ["claude-sonnet-4"]}]}},
        "credentials": {"anthropic": {"keys": [{"key": K1_BILLING}, {"key": K2_BILLING}]}},
        "credential_pool": {"rotation": "fill_first"},
    })
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") == f"Bearer {K1_BILLING}":
            return httpx.Response(400, json=anthropic_error(400, LOW))
        return httpx.Response(200, json=anthropic_message("funded", model="claude-sonnet-4"))

    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=answer)
    prompt = Prompt(system="s", messages=(Message("user", "hi"),))
    done, attempts = loop.complete(prompt, Router.from_settings(settings).select("hi"),
                                   CallOptions(max_tokens=16, timeout_s=5))
    assert done.text == "funded"
    assert [a.decision for a in attempts] == ["remove_key", "done"]
    loop.complete(prompt, Router.from_settings(settings).select("hi"), CallOptions(max_tokens=16))
    assert route.call_count == 3   # the broke key is not tried again before its recheck
    assert ({s.fingerprint: s.state for s in pool.status()}[attempts[0].key_fingerprint]
            == "quarantined")


def test_when_every_provider_fails_the_error_says_what_each_last_answered(respx_mock) -> None:
    loop, router, _ = build(settings_for())
    respx_mock.post(PRIMARY_URL).mock(side_effect=lambda r: httpx.Response(
        200, text="<html><body>Sign in to the corporate proxy</body></html>"))
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: httpx.Response(
        503, json=anthropic_error(503, f"upstream down for {K3}")))
    with pytest.raises(AllProvidersFailed) as e:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    text = str(e.value)
    assert "primary: HTTP 200 but the body is not" in text     # the proxy's page, named
    assert "backup: HTTP 503: upstream down for" in text
    assert text.count("primary: HTTP 200") == 1 and text.count("backup: HTTP 503") == 1
    assert K1 not in text and K2 not in text and K3 not in text


# --------------------------------------------------------------------------- a sweep by priority

SWEEP = {name: f"https://{name}.test/v1" for name in ("first", "second", "third")}


SWEEP_KEYS = {"first": "sk-first-SECRET-0001", "second": "sk-second-SECRET-0002",
              "third": "sk-third-SECRET-0003"}


def sweep_settings(deadline_s: float = 120) -> Settings:
    """Three OpenAI-compatible providers, listed against their priority order."""
    return load_settings({
        "llm": {"deadline_s": deadline_s, "routing": {
            "default_model": "m",
            "providers": [{"name": name, "type": "openai", "priority": prio, "models": ["m"],
                           "endpoint": SWEEP[name]}
                          for name, prio in (("third", 3), ("first", 1), ("second", 2))]}},
        "credentials": {name: {"keys": [{"key": key}]} for name, key in SWEEP_KEYS.items()},
        "credential_pool": {"retries_per_provider": 1}})


def ok_from(name: str) -> httpx.Response:
    return httpx.Response(200, json=openai_chat_completion(f"{name} ok", model="m"))


def test_failover_sweeps_providers_by_priority_and_each_attempt_says_why(respx_mock) -> None:
    loop, router, _ = build(sweep_settings())
    respx_mock.post(SWEEP["first"] + "/chat/completions").mock(
        return_value=httpx.Response(401, json=openai_error(401, "Incorrect API key provided")))
    second = respx_mock.post(SWEEP["second"] + "/chat/completions").mock(side_effect=[
        httpx.Response(503, json=openai_error(503, "busy")), ok_from("second")])
    third = respx_mock.post(SWEEP["third"] + "/chat/completions").mock(
        side_effect=lambda r: ok_from("third"))
    decision = router.select("hi")
    assert [c.provider for c in decision.candidates] == ["first", "second", "third"]
    done, attempts = loop.complete(PROMPT_HTTP, decision, OPTS)
    assert (done.provider, done.text) == ("second", "second ok")
    assert [(a.provider, a.status, a.decision) for a in attempts] == [
        ("first", "401", "remove_key"), ("second", "503", "retry"), ("second", "ok", "done")]
    assert second.call_count == 2 and third.call_count == 0


def test_when_every_provider_fails_the_error_lists_each_in_priority_order(respx_mock) -> None:
    loop, router, _ = build(sweep_settings())
    respx_mock.post(SWEEP["first"] + "/chat/completions").mock(
        return_value=httpx.Response(401, json=openai_error(401, "Incorrect API key provided")))
    respx_mock.post(SWEEP["second"] + "/chat/completions").mock(
        return_value=httpx.Response(500, json=openai_error(500, "internal")))
    respx_mock.post(SWEEP["third"] + "/chat/completions").mock(
        side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(AllProvidersFailed) as info:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    tried = [(a.provider, a.status) for a in info.value.attempts]
    assert tried == [("first", "401"), ("second", "500"), ("second", "500"),
                     ("third", "timeout"), ("third", "timeout")]
    text = str(info.value)
    assert all(name in text for name in SWEEP) and "first/m:401" in text
    assert not any(key in text for key in SWEEP_KEYS.values())


def test_a_provider_slow_past_the_deadline_ends_the_request_saying_so(respx_mock) -> None:
    loop, router, clock = build(sweep_settings(deadline_s=30))

    def slow(request: httpx.Request) -> httpx.Response:
        clock.t += 31.0          # the answer comes after the whole deadline has passed
        raise httpx.ReadTimeout("slow")

    respx_mock.post(SWEEP["first"] + "/chat/completions").mock(side_effect=slow)
    second = respx_mock.post(SWEEP["second"] + "/chat/completions").mock(
        side_effect=lambda r: ok_from("second"))
    with pytest.raises(AllProvidersFailed) as info:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert [(a.provider, a.status) for a in info.value.attempts] == [("first", "timeout")]
    assert second.call_count == 0 and info.value.untried == ("second/m", "third/m")
    assert "the 30s deadline was spent before trying second/m, third/m" in str(info.value)


def test_each_failed_attempt_names_the_provider_request_in_its_attempt_and_the_audit(
        respx_mock, tmp_path: Path) -> None:
    """A 500 the retry replaced is still a request the provider can look up: its id is on its
    attempt and its audit line, and the final error names the last one of each provider."""
    audit = tmp_path / "audit.jsonl"
    loop, router, _ = build(settings_for(audit=audit))
    ids = iter(["req_first500", "req_second500"])
    respx_mock.post(PRIMARY_URL).mock(side_effect=lambda r: httpx.Response(
        500, json=openai_error(500, "internal"), headers={"x-request-id": next(ids)}))
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=lambda r: httpx.Response(
        503, json=anthropic_error(503, "down"), headers={"request-id": "req_011Backup"}))
    with pytest.raises(AllProvidersFailed) as e:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    assert [(a.status, a.request_id) for a in e.value.attempts] == [
        ("500", "req_first500"), ("500", "req_second500"), ("503", "req_011Backup"),
        ("503", "req_011Backup")]
    rows = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [r["provider_request_id"] for r in rows] == [
        "req_first500", "req_second500", "req_011Backup", "req_011Backup"]
    assert "(x-request-id req_second500)" in str(e.value)
    assert "(request-id req_011Backup)" in str(e.value)


@pytest.mark.parametrize("mode", ["complete", "stream", "acomplete", "astream"])
def test_the_attempt_that_answered_names_its_provider_request_too(
        respx_mock, tmp_path: Path, mode: str) -> None:
    """Every attempt's audit line names the provider request it made: the one that answered
    had none (``provider_request_id: null``), though its reply, the one a bill is disputed
    for, stated its id like the 500 before it. Scrubbed and cut as a failed one's is."""
    import asyncio

    audit = tmp_path / "audit.jsonl"
    loop, router, _ = build(settings_for(audit=audit))
    streamed = mode in ("stream", "astream")
    body = (openai_chat_stream(("ok",)) if streamed
            else json.dumps(openai_chat_completion("ok", model="gpt-4o")).encode())
    labels = SSE_HEADERS if streamed else {"content-type": "application/json"}
    respx_mock.post(PRIMARY_URL).mock(side_effect=[
        httpx.Response(500, json=openai_error(500, "internal"),
                       headers={"x-request-id": "req_first500"}),
        httpx.Response(200, content=body, headers={**labels,
                                                   "x-request-id": "req_ok\x1b[2J" + "9" * 200})])
    decision = router.select("hi")
    if mode == "complete":
        loop.complete(PROMPT_HTTP, decision, OPTS)
    elif mode == "stream":
        list(loop.stream(PROMPT_HTTP, decision, OPTS))
    elif mode == "acomplete":
        asyncio.run(loop.acomplete(PROMPT_HTTP, decision, OPTS))
    else:
        async def drain() -> None:
            async for _ in loop.astream(PROMPT_HTTP, decision, OPTS):
                pass
        asyncio.run(drain())
    loop.audit.close()   # its writer thread writes every line queued
    rows = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["status"], r["provider_request_id"]) for r in rows] == [
        ("500", "req_first500"), ("ok", "req_ok[2J" + "9" * 91)]


@pytest.mark.parametrize("mode", ["complete", "stream"])
def test_a_key_the_answer_s_request_id_echoes_past_its_cut_leaves_no_head_in_the_audit(
        respx_mock, tmp_path: Path, mode: str) -> None:
    """A proxy that echoes the key after a long request id: the answering attempt's id was cut
    to 100 characters before it was scrubbed, so the key across the cut was no longer whole and
    its head ("sk-primary-one-S") was written to the audit line."""
    audit = tmp_path / "audit.jsonl"
    loop, router, _ = build(settings_for(audit=audit))
    streamed = mode == "stream"
    body = (openai_chat_stream(("ok",)) if streamed
            else json.dumps(openai_chat_completion("ok", model="gpt-4o")).encode())
    labels = SSE_HEADERS if streamed else {"content-type": "application/json"}
    respx_mock.post(PRIMARY_URL).mock(side_effect=lambda r: httpx.Response(
        200, content=body, headers={**labels, "x-request-id": "req_" + "9" * 80 + key_of(r)}))
    if streamed:
        list(loop.stream(PROMPT_HTTP, router.select("hi"), OPTS))
    else:
        loop.complete(PROMPT_HTTP, router.select("hi"), OPTS)
    loop.audit.close()
    text = audit.read_text()
    assert json.loads(text.splitlines()[-1])["provider_request_id"].startswith("req_999")
    assert "sk-primary" not in text, text
