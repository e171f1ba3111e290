"""Tests of ``hermes_core/agent/resilience.py``.

The call loop's decisions, with a scripted provider, a fake clock and no real waiting.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import AcquireResult, InMemoryPoolState, KeySpec, PoolPolicy
from hermes_core.agent.resilience import AuditLog, CallLoop, backoff_delay
from hermes_core.agent.resilience_policy import FailureState, LoopPolicy, decide_failure, wait_or_failover
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings
from hermes_core.errors import (
    AllProvidersFailed,
    Attempt,
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ConnectionReset,
    ContextWindowExceeded,
    ModelNotFound,
    Overloaded,
    ProviderError,
    QuotaExhausted,
    RateLimited,
    ServerError,
    Timeout,
    error_from_status,
)
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
from hermes_core.types import Candidate, Credential, Delta, Message, Prompt, RouteDecision

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


A1, A2 = Credential("a", "sk-a-one-secret"), Credential("a", "sk-a-two-secret")


B1 = Credential("b", "sk-b-one-secret")


def decision(*cands: tuple[str, str]) -> RouteDecision:
    return RouteDecision(cands[0][1], tuple(Candidate(p, m) for p, m in cands), "test")


def make(providers: dict[str, ScriptedProvider], creds: dict[str, list[Credential]], *,
         policy: LoopPolicy | None = None, pool_policy: PoolPolicy | None = None,
         settings: object = None, audit: Path | None = None) -> tuple[CallLoop, FakeClock]:
    clock = FakeClock()
    pool = CredentialPool(creds, policy=pool_policy or PoolPolicy(strategy="fill_first"),
                          backend=InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, pool, settings, clock=clock, sleep=clock.sleep,  # type: ignore[arg-type]
                    asleep=clock.asleep, rng=random.Random(7), audit_path=audit or False,
                    policy=policy or LoopPolicy())
    return loop, clock


def test_success_first_try() -> None:
    a = ScriptedProvider("a", script=["hello"])
    loop, clock = make({"a": a}, {"a": [A1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "hello"
    assert [x.status for x in attempts] == ["ok"]
    assert attempts[0].key_fingerprint == A1.fingerprint
    assert clock.sleeps == []


def test_429_rotates_key_without_waiting_or_budget() -> None:
    a = ScriptedProvider("a", by_key={A1.fingerprint: [RateLimited(retry_after=30.0)]})
    loop, clock = make({"a": a}, {"a": [A1, A2]}, policy=LoopPolicy(retry_budget=0))
    _, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert [(x.key_fingerprint, x.status, x.decision) for x in attempts] == [
        (A1.fingerprint, "429", "rotate_key"), (A2.fingerprint, "ok", "done")]
    assert clock.sleeps == []
    # the blocked key is not tried again while blocked
    loop.complete(PROMPT, decision(("a", "m1")))
    assert [c.fingerprint for c in a.calls] == [A1.fingerprint, A2.fingerprint, A2.fingerprint]


def test_all_keys_blocked_fails_over_to_next_provider() -> None:
    a = ScriptedProvider("a", script=[RateLimited(retry_after=30.0), RateLimited(retry_after=30.0)])
    b = ScriptedProvider("b", script=["from b"])
    loop, clock = make({"a": a, "b": b}, {"a": [A1, A2], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b" and completion.model == "m2"
    assert [x.status for x in attempts] == ["429", "429", "all_keys_blocked", "ok"]
    assert clock.sleeps == []


def test_all_keys_blocked_waits_when_short_and_within_deadline() -> None:
    a = ScriptedProvider("a", script=[RateLimited(retry_after=2.0), "later"])
    b = ScriptedProvider("b")
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, _ = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "a" and completion.text == "later"
    assert len(clock.sleeps) == 1 and 2.0 <= clock.sleeps[0] <= 2.25  # the wait, plus jitter
    assert b.calls == []


@pytest.mark.parametrize("run", ["sync", "async"])
def test_a_wait_for_a_cooling_key_is_announced_with_its_length_before_the_sleep(run: str) -> None:
    """``on_wait`` hears (provider, seconds) before the loop sleeps for a key, so a caller (the
    chat) can say why nothing happens; a call without a wait hears nothing."""
    a = ScriptedProvider("a", script=[RateLimited(retry_after=50.0), "late", "next"])
    loop, clock = make({"a": a}, {"a": [A1]}, policy=LoopPolicy(deadline_s=60.0))
    heard: list[tuple[str, float, int]] = []
    loop.on_wait = lambda provider, s: heard.append((provider, s, len(clock.sleeps)))
    if run == "sync":
        loop.complete(PROMPT, decision(("a", "m1")))
    else:
        asyncio.run(loop.acomplete(PROMPT, decision(("a", "m1"))))
    loop.complete(PROMPT, decision(("a", "m1")))   # the key is free again: no wait, no word
    assert [(p, before) for p, _, before in heard] == [("a", 0)]
    assert 50.0 <= heard[0][1] <= 50.25 and len(clock.sleeps) == 1


@pytest.mark.parametrize("hint", [60.0, 11.0])
def test_a_server_error_asking_for_a_long_wait_fails_over_while_a_backup_remains(
        hint: float) -> None:
    """A 503 with ``Retry-After: 60`` (maintenance) and a backup provider: the request does not
    sleep a minute on the primary; ``max_wait_s`` bounds what it waits on one provider."""
    down = ServerError("maintenance", status_code=503, headers={"retry-after": str(int(hint))})
    a = ScriptedProvider("a", script=[down, "late"])
    b = ScriptedProvider("b", script=["from backup"])
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]},
                       policy=LoopPolicy(retries_per_provider=1, max_wait_s=10.0))
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.text == "from backup"
    assert [x.decision for x in attempts] == ["failover", "done"]
    assert clock.sleeps == []


def test_max_wait_below_the_own_backoff_still_lets_a_server_error_be_retried() -> None:
    """``max_wait_s: 0`` (never wait for a blocked key while a backup remains) bounds how long a
    server may ask us to wait, not the loop's own jittered back-off: a plain 500 is still retried
    on the primary as ``retries_per_provider`` says, not failed over at once."""
    down = ServerError("internal", status_code=500)
    a = ScriptedProvider("a", script=[down, "from primary"])
    b = ScriptedProvider("b", script=["from backup"])
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]},
                   policy=LoopPolicy(retries_per_provider=1, max_wait_s=0.0))
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.text == "from primary"
    assert [x.decision for x in attempts] == ["retry", "done"]
    assert b.calls == []


def test_a_server_error_asking_for_a_long_wait_is_waited_for_when_no_backup_remains() -> None:
    down = ServerError("maintenance", status_code=503, headers={"retry-after": "30"})
    a = ScriptedProvider("a", script=[down, "late"])
    loop, clock = make({"a": a}, {"a": [A1]},
                       policy=LoopPolicy(retries_per_provider=1, max_wait_s=10.0))
    completion, _ = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "late" and clock.sleeps == [30.0]


def test_every_key_limited_past_the_deadline_says_when_one_frees() -> None:
    """The caller (the chat prints the error) learns how long the limit lasts, not only that a
    request failed: "all_keys_blocked" alone reads like an outage. An hour's Retry-After is
    checked again at the cap (a quarter hour): that is when the key frees."""
    for said, frees in ((600.0, "600s"), (3600.0, "900s")):
        a = ScriptedProvider("a", script=[RateLimited(retry_after=said)])
        loop, _ = make({"a": a}, {"a": [A1]}, policy=LoopPolicy(deadline_s=60.0))
        with pytest.raises(AllProvidersFailed) as ei:
            loop.complete(PROMPT, decision(("a", "m1")))
        assert f"a/m1:all_keys_blocked (the first key frees in {frees})" in str(ei.value)


def test_a_server_back_off_past_the_deadline_fails_at_once_saying_how_long() -> None:
    """A 503 asking for longer than the request has left: no sleep past the deadline, and the
    error says the server asked for that wait; a bare "503" reads like an outage to retry at
    once."""
    down = ServerError("maintenance", status_code=503, headers={"retry-after": "120"})
    a = ScriptedProvider("a", script=[down, "late"])
    loop, clock = make({"a": a}, {"a": [A1]},
                       policy=LoopPolicy(retries_per_provider=1, deadline_s=30.0))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1")))
    assert clock.sleeps == [] and len(a.calls) == 1
    assert "a/m1:503 (the server asked to wait 120s, past the deadline)" in str(ei.value)


def test_last_candidate_waits_up_to_the_deadline_else_fails() -> None:
    a = ScriptedProvider("a", script=[RateLimited(retry_after=50.0), "late"])
    loop, clock = make({"a": a}, {"a": [A1]}, policy=LoopPolicy(deadline_s=60.0))
    completion, _ = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "late" and len(clock.sleeps) == 1
    assert 50.0 <= clock.sleeps[0] <= 50.25  # the wait, plus jitter
    a.script = [RateLimited(retry_after=500.0)]
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1")))
    assert [x.status for x in ei.value.attempts] == ["429", "all_keys_blocked"]


def test_401_quarantines_the_key_and_alerts_with_fingerprint_only(
        caplog: pytest.LogCaptureFixture) -> None:
    a = ScriptedProvider("a", by_key={A1.fingerprint: [AuthenticationFailed("bad key", status_code=401)]})
    loop, _ = make({"a": a}, {"a": [A1, A2]})
    with caplog.at_level("WARNING"):
        for _ in range(3):
            loop.complete(PROMPT, decision(("a", "m1")))
    assert [c.fingerprint for c in a.calls].count(A1.fingerprint) == 1
    assert A1.fingerprint in caplog.text and A1.secret not in caplog.text
    # out of rotation until one request rechecks it (auth_recheck_s later), not for good
    assert [s.state for s in loop.pool.status()] == ["quarantined", "ok"]


def test_402_quota_removes_key() -> None:
    a = ScriptedProvider("a", script=[QuotaExhausted("quota", status_code=402)])
    loop, _ = make({"a": a}, {"a": [A1, A2]})
    _, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert [(x.status, x.decision) for x in attempts] == [("402", "remove_key"), ("ok", "done")]


@pytest.mark.parametrize(("error", "says"), [
    (QuotaExhausted("HTTP 429: insufficient_quota", status_code=429), "has no quota left"),
    (QuotaExhausted("HTTP 402: pay up", status_code=402), "has no quota left"),
    (AuthenticationFailed("HTTP 401: bad key", status_code=401), "was rejected"),
])
def test_a_key_out_of_quota_is_told_apart_from_a_rejected_one(error: ProviderError,
                                                              says: str) -> None:
    """"API key ... was rejected" sent the author to replace a key whose account only needed
    paying: a spent quota says so, and where to look (billing)."""
    a = ScriptedProvider("a", script=[error])
    loop, _ = make({"a": a}, {"a": [A1]})
    with pytest.raises(AllProvidersFailed) as got:
        loop.complete(PROMPT, decision(("a", "m1")))
    assert f"API key {A1.fingerprint} {says}" in str(got.value)
    assert ("billing" in str(got.value)) is isinstance(error, QuotaExhausted)


@pytest.mark.parametrize(("strikes", "fate", "not_said"), [
    (3, "is quarantined (one request rechecks it in 60s)", "out of rotation"),
    (1, "is out of rotation", "quarantined"),
])
@pytest.mark.parametrize("error", [AuthenticationFailed("HTTP 401: bad key", status_code=401),
                                   QuotaExhausted("HTTP 402: pay up", status_code=402)])
def test_the_final_error_says_a_quarantined_key_comes_back(
        strikes: int, fate: str, not_said: str, error: ProviderError) -> None:
    """"is out of rotation" of a key the pool only quarantined sent the author to replace a key
    that one request rechecks a minute later: the final error states the pool's own verdict."""
    a = ScriptedProvider("a", script=[error])
    loop, _ = make({"a": a}, {"a": [A1]},
                   pool_policy=PoolPolicy(auth_recheck_s=60.0, auth_max_strikes=strikes))
    with pytest.raises(AllProvidersFailed) as got:
        loop.complete(PROMPT, decision(("a", "m1")))
    said = str(got.value)
    assert fate in said and not_said not in said
    assert [s.state for s in loop.pool.status()] == ["quarantined" if strikes > 1 else "removed"]


def test_500_twice_retried_within_budget_then_failover() -> None:
    a = ScriptedProvider("a", script=[ServerError("boom", status_code=500),
                              ServerError("boom", status_code=500)])
    b = ScriptedProvider("b", script=["from b"])
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b"
    assert [(x.provider, x.status, x.decision) for x in attempts] == [
        ("a", "500", "retry"), ("a", "500", "failover"), ("b", "ok", "done")]
    assert len(clock.sleeps) == 1 and 0.0 <= clock.sleeps[0] <= 0.5   # full jitter, attempt 1


def test_budget_counts_retries_and_every_provider_is_still_tried() -> None:
    """retry_budget counts retries after server errors; failing over is not a retry, so a spent
    budget stops the retrying, not the failover: three failing providers are each tried."""
    a = ScriptedProvider("a", default=ServerError("boom", status_code=502))
    b = ScriptedProvider("b", default=Overloaded("busy", status_code=529))
    c = ScriptedProvider("c", default=ServerError("down", status_code=503))
    loop, _ = make({"a": a, "b": b, "c": c}, {"a": [A1], "b": [B1], "c": [Credential("c", "sk-c")]},
                   policy=LoopPolicy(retry_budget=1))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2"), ("c", "m3")))
    assert [(x.provider, x.status, x.decision) for x in ei.value.attempts] == [
        ("a", "502", "retry"), ("a", "502", "failover"),
        ("b", "529", "budget_spent"), ("c", "503", "budget_spent")]
    assert isinstance(ei.value.last_error, ServerError)


def test_the_last_provider_succeeds_after_the_budget_is_spent() -> None:
    a = ScriptedProvider("a", default=ServerError("boom", status_code=500))
    b = ScriptedProvider("b", default=ServerError("boom", status_code=500))
    c = ScriptedProvider("c", script=["from c"])
    loop, _ = make({"a": a, "b": b, "c": c}, {"a": [A1], "b": [B1], "c": [Credential("c", "sk-c")]},
                   policy=LoopPolicy(retry_budget=2))
    done, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2"), ("c", "m3")))
    assert done.provider == "c"
    assert [x.decision for x in attempts] == ["retry", "failover", "retry", "failover", "done"]


@pytest.mark.parametrize("error", [
    Overloaded("overloaded", status_code=529),
    Timeout("slow"),
    ConnectionFailed("refused"),
    TimeoutError("raw timeout"),
    ConnectionRefusedError("raw refused"),
])
def test_retryable_errors_retry_then_fail_over(error: BaseException) -> None:
    a = ScriptedProvider("a", default=error)
    b = ScriptedProvider("b", script=["ok b"])
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b"
    assert [x.decision for x in attempts] == ["retry", "failover", "done"]


def test_retry_after_takes_precedence_over_jitter() -> None:
    err = Overloaded("busy", status_code=529, headers={"retry-after": "3"})
    assert backoff_delay(1, err, base=0.5, cap=8.0, rng=random.Random(0)) == 3.0
    a = ScriptedProvider("a", script=[err, "ok"])
    loop, clock = make({"a": a}, {"a": [A1]})
    loop.complete(PROMPT, decision(("a", "m1")))
    assert clock.sleeps == [3.0]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 10])
def test_full_jitter_window(n: int) -> None:
    draws = [backoff_delay(n, None, base=0.5, cap=8.0, rng=random.Random(s)) for s in range(200)]
    high = min(8.0, 0.5 * 2 ** (n - 1))
    assert all(0.0 <= d <= high for d in draws)
    assert max(draws) > high * 0.8 and min(draws) < high * 0.2   # spread over the whole window


def test_breaker_opens_and_keeps_failing_provider_out() -> None:
    a = ScriptedProvider("a", default=ServerError("down", status_code=503))
    b = ScriptedProvider("b")
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]},
                       pool_policy=PoolPolicy(strategy="fill_first", breaker_failures=2,
                                              breaker_cooldown_s=30.0),
                       policy=LoopPolicy(retry_budget=10, retries_per_provider=0))
    for _ in range(4):
        completion, _ = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
        assert completion.provider == "b"
    assert len(a.calls) == 2                  # the breaker opened after two failures
    clock.t += 31.0                            # cool-down over: one half-open probe
    a.default = "recovered"
    completion, _ = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "a" and len(a.calls) == 3


def test_context_window_moves_to_long_context_model() -> None:
    settings = load_settings({"llm": {"routing": {
        "default_model": "gpt-4o", "long_context_model": "gpt-4.1",
        "providers": [{"name": "a", "type": "openai", "models": ["gpt-4o", "gpt-4.1"]}]}}})
    a = ScriptedProvider("a", script=[ContextWindowExceeded("too long", status_code=400), "long ok"])
    loop, _ = make({"a": a}, {"a": [A1]}, settings=settings)
    completion, attempts = loop.complete(PROMPT, decision(("a", "gpt-4o")))
    assert completion.model == "gpt-4.1"
    assert attempts[0].decision == "long_context:gpt-4.1"


def test_context_window_without_larger_model_raises() -> None:
    settings = load_settings({"llm": {"routing": {
        "default_model": "gpt-4.1", "long_context_model": "gpt-4o"}}})
    a = ScriptedProvider("a", script=[ContextWindowExceeded("too long", status_code=400)])
    loop, _ = make({"a": a}, {"a": [A1]}, settings=settings)
    with pytest.raises(ContextWindowExceeded):
        loop.complete(PROMPT, decision(("a", "gpt-4.1")))
    assert [s.in_flight for s in loop.pool.status()] == [0]


def test_bad_request_is_raised_and_not_retried() -> None:
    a = ScriptedProvider("a", script=[BadRequest("bad", status_code=422)])
    b = ScriptedProvider("b")
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    with pytest.raises(BadRequest):
        loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert b.calls == []


def test_deadline_bounds_attempt_timeouts_and_ends_the_request() -> None:
    a = ScriptedProvider("a", default=ServerError("x", status_code=500))
    loop, clock = make({"a": a}, {"a": [A1]},
                       policy=LoopPolicy(deadline_s=5.0, retry_budget=100, retries_per_provider=100,
                                         backoff_base_s=1.0, backoff_max_s=4.0))
    with pytest.raises(AllProvidersFailed):
        loop.complete(PROMPT, decision(("a", "m1")), CallOptions(timeout_s=60.0))
    assert all(c.timeout_s <= 5.0 for c in a.calls)
    assert clock.t - 1_000_000.0 < 5.0 + 1e-9


def test_an_attempt_leaves_half_the_deadline_only_for_a_candidate_that_can_be_tried() -> None:
    a = ScriptedProvider("a", default="fine")
    b, c = ScriptedProvider("b"), ScriptedProvider("c", requires_key=True)
    loop, _ = make({"a": a, "b": b, "c": c}, {"a": [A1], "b": [B1], "c": []},
                   policy=LoopPolicy(deadline_s=6.0))
    loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")), CallOptions(timeout_s=60.0))
    loop.complete(PROMPT, decision(("a", "m1"), ("c", "m3")), CallOptions(timeout_s=60.0))
    loop.complete(PROMPT, decision(("a", "m1"), ("nope", "m4")), CallOptions(timeout_s=60.0))
    # a backup with a key: half for the primary; a backup without one (or no provider): all of it
    assert [x.timeout_s for x in a.calls] == [3.0, 6.0, 6.0]


def test_missing_provider_and_keys_fail_over() -> None:
    b = ScriptedProvider("b", requires_key=True)
    offline = ScriptedProvider("off", kind="offline")
    loop, _ = make({"b": b, "off": offline}, {"b": []})
    completion, attempts = loop.complete(
        PROMPT, decision(("nope", "m"), ("b", "m2"), ("off", "m3")))
    assert completion.provider == "off"
    assert [x.status for x in attempts] == ["no_provider", "no_key", "ok"]
    assert offline.calls[0].fingerprint is None


def test_audit_log_jsonl_has_every_attempt_and_no_secret(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    a = ScriptedProvider("a", script=[RateLimited(retry_after=30.0),
                              AuthenticationFailed("x", status_code=401)])
    b = ScriptedProvider("b")
    loop, _ = make({"a": a, "b": b}, {"a": [A1, A2], "b": [B1]}, audit=audit)
    loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")), request_id="req-1")
    text = audit.read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r["status"] for r in rows] == ["429", "401", "all_keys_blocked", "ok"]
    assert {r["request_id"] for r in rows} == {"req-1"}
    assert set(rows[0]) >= {"time", "request_id", "provider", "model", "key", "status",
                            "latency_ms", "retry_after", "decision"}
    assert rows[0]["retry_after"] == 30.0
    for c in (A1, A2, B1):
        assert c.secret not in text


def test_stream_fails_over_before_first_token() -> None:
    a = ScriptedProvider("a", script=[ServerError("x", status_code=500), [ServerError("y", status_code=502)]])
    b = ScriptedProvider("b", script=[["he", "llo"]])
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    s = loop.stream(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert "".join(d.text for d in s) == "hello"
    assert [x.status for x in s.attempts] == ["500", "502", "ok"]


def test_stream_error_after_first_token_reaches_caller() -> None:
    a = ScriptedProvider("a", script=[["he", ServerError("mid", status_code=500)]])
    b = ScriptedProvider("b")
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    s = loop.stream(PROMPT, decision(("a", "m1"), ("b", "m2")))
    got = []
    with pytest.raises(ServerError):
        for d in s:
            got.append(d.text)
    assert got == ["he"] and b.calls == []
    assert s.attempts[-1].decision == "raise_mid_stream"
    assert [k.in_flight for k in loop.pool.status()] == [0, 0]


def test_drafts_before_the_first_delta_leave_a_failed_attempt_retried_and_then_void() -> None:
    """A held structured reply's drafts are progress, not the answer: a cut after them is
    tried again, and the retry's deltas begin with a redraft."""
    a = ScriptedProvider("a", script=[[Delta(draft='{"ci'), ServerError("cut", status_code=502)],
                                      [Delta(draft='{"city"'), Delta(draft=': 1}'), "{}"]])
    loop, _ = make({"a": a}, {"a": [A1]})
    s = loop.stream(PROMPT, decision(("a", "m1")))
    got = [(d.draft, d.redraft, d.text) for d in s]
    assert got == [('{"ci', False, ""), ("", True, ""), ('{"city"', False, ""),
                   (": 1}", False, ""), ("", False, "{}")]
    assert [x.status for x in s.attempts] == ["502", "ok"]


async def test_async_drafts_before_the_first_delta_leave_a_failed_attempt_retried() -> None:
    a = ScriptedProvider("a", script=[[Delta(draft='{"ci'), ServerError("cut", status_code=502)],
                                      ["{}"]])
    loop, _ = make({"a": a}, {"a": [A1]})
    s = loop.astream(PROMPT, decision(("a", "m1")))
    got = [(d.draft, d.redraft, d.text) async for d in s]
    assert got == [('{"ci', False, ""), ("", True, ""), ("", False, "{}")]


def test_a_stream_closed_at_a_draft_is_recorded_aborted_and_frees_its_key() -> None:
    a = ScriptedProvider("a", script=[[Delta(draft='{"ci'), Delta(draft='ty"'), "{}"]])
    loop, _ = make({"a": a}, {"a": [A1]})
    s = loop.stream(PROMPT, decision(("a", "m1")))
    assert next(s).draft == '{"ci'
    s.close()
    assert [k.in_flight for k in loop.pool.status()] == [0]
    assert s.attempts[-1].status == "aborted"


def test_stream_closed_early_releases_the_key() -> None:
    a = ScriptedProvider("a", script=[["a", "b", "c"]])
    loop, _ = make({"a": a}, {"a": [A1]})
    s = loop.stream(PROMPT, decision(("a", "m1")))
    assert next(s).text == "a"
    s.close()
    assert [k.in_flight for k in loop.pool.status()] == [0]
    assert s.attempts[-1].status == "aborted"


async def test_async_complete_and_stream_mirror_sync() -> None:
    a = ScriptedProvider("a", script=[RateLimited(retry_after=9.0), ServerError("x", status_code=500),
                              "async ok"])
    loop, clock = make({"a": a}, {"a": [A1, A2]})
    completion, attempts = await loop.acomplete(PROMPT, decision(("a", "m1")))
    assert completion.text == "async ok"
    assert [x.decision for x in attempts] == ["rotate_key", "retry", "done"]
    assert len(clock.sleeps) == 1
    a.script = [ServerError("x", status_code=500), ["x", "y"]]
    s = loop.astream(PROMPT, decision(("a", "m1")))
    assert [d.text async for d in s] == ["x", "y"]
    b = ScriptedProvider("b")
    a.script = [["1", ServerError("mid", status_code=500)]]
    loop.providers["b"] = b
    s = loop.astream(PROMPT, decision(("a", "m1"), ("b", "m2")))
    seen = []
    with pytest.raises(ServerError):
        async for d in s:
            seen.append(d.text)
    assert seen == ["1"] and b.calls == []


def test_audit_defaults_to_home_and_can_be_turned_off(tmp_path: Path) -> None:
    settings = load_settings({"home": str(tmp_path)})
    pool = CredentialPool({"a": [A1]})
    on = CallLoop({"a": ScriptedProvider("a")}, pool, settings)
    on.complete(PROMPT, decision(("a", "m1")))
    assert json.loads((tmp_path / "audit.jsonl").read_text())["status"] == "ok"
    off = CallLoop({"a": ScriptedProvider("a")}, pool, settings, audit_path=False)
    assert off.audit.path is None
    assert CallLoop({"a": ScriptedProvider("a")}, pool).audit.path is None   # no settings: no file


def test_zero_retry_after_cannot_spin() -> None:
    a = ScriptedProvider("a", default=RateLimited(retry_after=0.0))
    loop, clock = make({"a": a}, {"a": [A1, A2]}, policy=LoopPolicy(deadline_s=30.0))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1")))
    # each key's repeated 429s cool it for 0.5, 1, 2, 4, 8, 8 ... seconds: a handful of calls
    # before the 30 s deadline, not a busy loop
    assert len(a.calls) < 25
    waits = [x.retry_after for x in ei.value.attempts if x.key_fingerprint == A1.fingerprint]
    assert waits[:5] == [0.0, 0.5, 1.0, 2.0, 4.0]
    assert sum(clock.sleeps) <= 30.0


def test_waiting_for_a_blocked_key_uses_the_backend_time_of_the_acquire() -> None:
    """The wait comes from the time the backend answered the failed acquire with (Redis TIME for
    a shared pool), not from a second round trip to ask the backend for the time."""

    class CountingState(InMemoryPoolState):
        now_calls = 0

        def now(self) -> float:
            CountingState.now_calls += 1
            return super().now()

    clock = FakeClock()
    a = ScriptedProvider("a", script=[RateLimited(retry_after=2.0), "later"])
    pool = CredentialPool({"a": [A1]}, policy=PoolPolicy(strategy="fill_first"),
                          backend=CountingState(clock), rng=random.Random(1))
    loop = CallLoop({"a": a}, pool, clock=clock, sleep=clock.sleep,  # type: ignore[dict-item]
                    asleep=clock.asleep, rng=random.Random(7), audit_path=False, policy=LoopPolicy())
    completion, _ = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "later" and len(clock.sleeps) == 1
    assert 2.0 <= clock.sleeps[0] <= 2.25  # the wait, plus jitter
    assert CountingState.now_calls == 0


K1, K2 = "sk-primary-one-SECRET-0001", "sk-primary-two-SECRET-0002"


K3 = "sk-ant-backup-SECRET-0003"


PRIMARY = "https://primary.test/v1"


PRIMARY_URL = PRIMARY + "/chat/completions"


PROMPT_HTTP = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


OPTS = CallOptions(max_tokens=32, timeout_s=5)


def settings_for(primary_kind: str = "openai", *, retries_per_provider: int = 1,
                 audit: Path | None = None) -> Settings:
    primary = ({"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                "endpoint": PRIMARY} if primary_kind == "openai" else
               {"name": "primary", "type": "anthropic", "priority": 1, "models": ["claude-sonnet-4"]})
    return load_settings({
        "llm": {"deadline_s": 120, "routing": {
            "default_model": primary["models"][0],
            "providers": [primary, {"name": "backup", "type": "anthropic", "priority": 2,
                                    "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": K1}, {"key": K2}]},
                        "backup": {"keys": [{"key": K3}]}},
        "credential_pool": {"rotation": "fill_first", "retries_per_provider": retries_per_provider,
                            "audit_log": str(audit) if audit else None},
    })


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


A1_CANCEL = Credential("a", "sk-a-one-secret")


class SlowBackend(InMemoryPoolState):
    """An io-bound backend whose acquire waits for ``gate`` (a slow Redis round trip)."""

    io_bound = True

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.finished = threading.Event()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        self.entered.set()
        assert self.gate.wait(5.0)
        try:
            return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)
        finally:
            self.finished.set()


async def _cancel_during_acquire(backend: SlowBackend, coro_factory: object) -> None:
    task = asyncio.ensure_future(coro_factory())  # type: ignore[operator]
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    task.cancel()
    await asyncio.sleep(0)
    backend.gate.set()
    assert await asyncio.to_thread(backend.finished.wait, 5.0)
    for _ in range(50):        # let the done-callbacks run
        await asyncio.sleep(0.01)
    try:
        await task
    except asyncio.CancelledError:
        pass


async def test_cancelled_acomplete_does_not_leak_in_flight() -> None:
    backend = SlowBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a")}, pool, audit_path=False, policy=LoopPolicy())  # type: ignore[dict-item]
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    await _cancel_during_acquire(backend, lambda: loop.acomplete(PROMPT, dec))
    assert [k.in_flight for k in pool.status()] == [0]


async def test_cancelled_aacquire_does_not_leak_in_flight() -> None:
    backend = SlowBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    await _cancel_during_acquire(backend, lambda: pool.aacquire("a"))
    assert [k.in_flight for k in pool.status()] == [0]


class SlowReleaseBackend(InMemoryPoolState):
    """An io-bound backend whose outcome report waits until the event loop itself sets ``gate``:
    reported on the loop's thread, it would wait forever (the loop cannot run the setter)."""

    io_bound = True

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.released = threading.Event()
        self.threads: list[str] = []

    def release(self, provider, fingerprint, outcome, policy, *, lease=""):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        assert self.gate.wait(5.0), "the outcome report blocked the event loop"
        try:
            return super().release(provider, fingerprint, outcome, policy, lease=lease)
        finally:
            self.released.set()


async def _open_gate(backend: SlowReleaseBackend) -> None:
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    backend.gate.set()


async def test_acomplete_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    (completion, attempts), _ = await asyncio.gather(loop.acomplete(PROMPT, dec), _open_gate(backend))
    assert completion.text == "hello" and [a.status for a in attempts] == ["ok"]
    assert backend.threads and threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]


async def test_astream_reports_outcomes_off_the_event_loop() -> None:
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")

    async def consume() -> str:
        return "".join([d.text async for d in loop.astream(PROMPT, dec)])

    text, _ = await asyncio.gather(consume(), _open_gate(backend))
    assert text == "hello"
    assert threading.main_thread().name not in backend.threads
    assert [k.in_flight for k in pool.status()] == [0]


async def _cancelled_at_the_provider(
        respx_mock: Any, **loop_kw: Any) -> tuple[CredentialPool, SlowReleaseBackend, asyncio.Future[Any]]:
    """A call whose request hangs at the provider (the real SDK awaiting the answer), its task
    cancelled there once: the pool behind a networked backend whose release waits for a gate."""
    settings = settings_for()
    pool = CredentialPool.from_settings(settings, backend := SlowReleaseBackend())
    loop = CallLoop(build_providers(settings), pool, settings, audit_path=False, **loop_kw)
    at_provider, never = asyncio.Event(), asyncio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        at_provider.set()
        await never.wait()
        raise AssertionError("never answered")

    respx_mock.post(PRIMARY_URL).mock(side_effect=hang)
    task = asyncio.ensure_future(loop.acomplete(PROMPT_HTTP, Router.from_settings(settings)
                                                .select("hi"), OPTS))
    await at_provider.wait()
    task.cancel()
    return pool, backend, task


async def test_a_task_cancelled_mid_request_frees_its_key_off_the_loop_before_it_unwinds(
        respx_mock: Any) -> None:
    """A task cancelled while its request is at the provider (the real SDK awaiting the
    answer): the key's release is a round trip to a networked pool, made in a worker thread
    while the loop serves other tasks (here the task that lets the release through), and the key
    is free once the caller's await of the task returns. The release ran on the loop's thread
    and held every other task up for the round trip."""
    pool, backend, task = await _cancelled_at_the_provider(respx_mock)
    gate = asyncio.ensure_future(_open_gate(backend))   # a task of the loop lets it through
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [k.in_flight for k in pool.status("primary")] == [0, 0]
    assert threading.main_thread().name not in backend.threads
    await gate


async def test_a_second_cancellation_while_the_abort_s_release_is_on_its_way_keeps_the_attempt(
        respx_mock: Any) -> None:
    """Cancelled, then cancelled again while the aborted attempt's key release waits for a
    networked pool: the task ends at once (the release finishes in its thread), and the aborted
    attempt was recorded only once the release was done, so the caller's exception carried no
    attempts and the audit hook never heard of a request that was sent and billed."""
    heard: list[Attempt] = []
    pool, backend, task = await _cancelled_at_the_provider(respx_mock, on_attempt=heard.append)
    assert await asyncio.to_thread(backend.entered.wait, 5.0)   # the release is on its way
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as raised:
        await task
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]
    assert [a.status for a in heard] == ["aborted"]
    backend.gate.set()
    assert await asyncio.to_thread(backend.released.wait, 5.0)
    assert [k.in_flight for k in pool.status("primary")] == [0, 0]


def test_a_second_ctrl_c_during_the_abort_s_release_keeps_the_attempt() -> None:
    """Ctrl-C mid-request, then again while the key's release is at the pool (a Redis round
    trip): the attempt was recorded after the release, so the second interrupt reached the
    caller carrying no attempts."""

    class InterruptedRelease(InMemoryPoolState):
        def release(self, provider, fingerprint, outcome, policy, *, lease=""):  # type: ignore[no-untyped-def]
            super().release(provider, fingerprint, outcome, policy, lease=lease)
            raise KeyboardInterrupt   # the second Ctrl-C, once the key is free

    pool = CredentialPool({"a": [A1_CANCEL]}, backend=InterruptedRelease())
    loop = CallLoop({"a": ScriptedProvider("a", script=[KeyboardInterrupt()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy())
    with pytest.raises(KeyboardInterrupt) as raised:
        loop.complete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]
    assert [k.in_flight for k in pool.status()] == [0]


def test_a_second_ctrl_c_while_the_abort_is_recorded_still_frees_the_key() -> None:
    """Recording the abort before the release opened a window the other way: a second Ctrl-C
    while the attempt was being recorded (the audit line, the ``on_attempt`` hook) skipped the
    release, and the key stayed in flight for the rest of the process."""

    def hook(attempt: Attempt) -> None:
        if attempt.status == "aborted":
            raise KeyboardInterrupt   # the second Ctrl-C, in the middle of the record

    pool = CredentialPool({"a": [A1_CANCEL]})
    loop = CallLoop({"a": ScriptedProvider("a", script=[KeyboardInterrupt()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy(), on_attempt=hook)
    with pytest.raises(KeyboardInterrupt) as raised:
        loop.complete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]


async def test_an_async_abort_whose_record_raises_still_frees_the_key() -> None:
    """The async twin: a hook that raises while the cancelled attempt is recorded left the key
    in flight, its release never reached the pool."""

    def hook(attempt: Attempt) -> None:
        if attempt.status == "aborted":
            raise RuntimeError("the audit hook failed")

    pool = CredentialPool({"a": [A1_CANCEL]})
    loop = CallLoop({"a": ScriptedProvider("a", script=[asyncio.CancelledError()])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy(), on_attempt=hook)
    with pytest.raises((RuntimeError, asyncio.CancelledError)) as raised:
        await loop.acomplete(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in getattr(raised.value, "attempts", ())] == ["aborted"]


async def test_an_async_stream_closed_mid_answer_frees_its_key_off_the_loop_before_aclose_returns(
        ) -> None:
    """The caller stops reading after the first delta: the abort's release goes through a
    worker thread (it blocked the loop) and is done when ``aclose`` returns."""
    backend = SlowReleaseBackend()
    pool = CredentialPool({"a": [A1_CANCEL]}, backend=backend)
    loop = CallLoop({"a": ScriptedProvider("a", script=[["one ", "two"]])}, pool,  # type: ignore[dict-item]
                    audit_path=False, policy=LoopPolicy())
    stream = loop.astream(PROMPT, RouteDecision("m1", (Candidate("a", "m1"),), "test"))
    assert (await stream.__anext__()).text == "one "
    gate = asyncio.ensure_future(_open_gate(backend))   # a task of the loop lets it through
    await stream.aclose()
    assert [k.in_flight for k in pool.status()] == [0]
    assert [a.status for a in stream.attempts] == ["aborted"]
    assert threading.main_thread().name not in backend.threads
    await gate


LOW = ("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
       "to upgrade or purchase credits.")


K1_BILLING, K2_BILLING = "sk-ant-testkey-SECRET-broke-001", "sk-ant-testkey-SECRET-funded-02"


@pytest.mark.parametrize(("status", "body"), [
    (400, anthropic_error(400, LOW)),
    (400, anthropic_error(400, "billing problem", type="billing_error")),
    (403, anthropic_error(403, "billing problem", type="billing_error")),
])
def test_billing_answers_are_quota_exhausted(status, body) -> None:
    assert isinstance(error_from_status(status, {}, body, provider="anthropic"), QuotaExhausted)


def test_an_ordinary_400_stays_a_bad_request() -> None:
    err = error_from_status(400, {}, anthropic_error(400, "messages: roles must alternate"))
    assert type(err) is BadRequest


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


SETTINGS = load_settings({"llm": {"routing": {"default_model": "gpt-4o", "providers": [
    {"name": "openai", "type": "openai", "models": ["gpt-4o"], "timeout_s": 5},
    {"name": "anthropic", "type": "anthropic", "models": ["claude"], "timeout_s": 5}]}}})


CASES = {
    "openai": (OPENAI_URL, openai_chat_completion("ok"), openai_chat_stream(("ok",))),
    "anthropic": (ANTHROPIC_URL, anthropic_message("ok"), anthropic_stream(("ok",))),
}


def _read_timeout(request: httpx.Request) -> float:
    return float(request.extensions["timeout"]["read"])


@pytest.mark.parametrize("kind", CASES)
async def test_provider_timeout_caps_each_attempt(kind: str, respx_mock) -> None:
    url, body, sse = CASES[kind]
    provider = build_providers(SETTINGS)[kind]
    cred = Credential(kind, "sk-testkey-SECRET-timeout-0001")
    seen: list[float] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(_read_timeout(request))
        if b'"stream": true' in request.content or b'"stream":true' in request.content:
            return httpx.Response(200, content=sse, headers=SSE_HEADERS)
        return httpx.Response(200, json=body)

    respx_mock.post(url).mock(side_effect=answer)
    slow = CallOptions(timeout_s=60)
    provider.complete(PROMPT, "m", cred, slow)
    await provider.acomplete(PROMPT, "m", cred, slow)
    list(provider.stream(PROMPT, "m", cred, slow))
    async for _ in provider.astream(PROMPT, "m", cred, slow):
        pass
    provider.complete(PROMPT, "m", cred, CallOptions(timeout_s=2))  # the deadline's cap wins
    assert seen == [5.0, 5.0, 5.0, 5.0, 2.0]


def attempt(status: str) -> Attempt:
    return Attempt("openai", "gpt-x", "fp1234", status, 12.5)


def test_lines_are_written_through_one_open_file(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    handle = log._file
    log.write("r2", attempt("rate_limited"), 2.0)
    assert log._file is handle and handle is not None        # not reopened per attempt
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(r["request_id"], r["status"]) for r in rows] == [("r1", "ok"), ("r2", "rate_limited")]
    log.close()
    assert log._file is None


def test_a_deleted_or_rotated_file_is_reopened(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    path.rename(tmp_path / "audit.jsonl.1")                   # rotation
    log.write("r2", attempt("ok"), 2.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r2"]
    path.unlink()                                             # deletion
    log.write("r3", attempt("ok"), 3.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r3"]
    log.close()


def test_no_path_writes_nothing(tmp_path: Path) -> None:
    log = AuditLog(None)
    log.write("r1", attempt("ok"), 1.0)
    assert log._file is None and list(tmp_path.iterdir()) == []


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


async def test_a_head_cancelled_while_asking_again_passes_its_turn_on() -> None:
    """The timed head woke and asks the pool again in a worker thread (an io-bound backend) when
    its task is cancelled: the thread still finishes, finds no key, and nobody is head any more.
    The abandoned request must wake a follower, or the followers sleep out their whole bound
    while the key frees."""
    backend = SlowBackend()
    backend.gate.set()
    pool = CredentialPool({"a": [Credential("a", "sk-a-one-secret", max_rpm=1)]},
                          backend=backend)
    pool.success(pool.acquire("a"))                    # the key's one request per window is spent
    head_asleep, wake_head = threading.Event(), asyncio.Event()

    async def asleep(seconds: float) -> None:
        head_asleep.set()
        await wake_head.wait()

    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, audit_path=False,  # type: ignore[dict-item]
                    asleep=asleep, policy=LoopPolicy())
    dec = RouteDecision("m1", (Candidate("a", "m1"),), "test")
    head = asyncio.ensure_future(loop.acomplete(PROMPT, dec))
    assert await asyncio.to_thread(head_asleep.wait, 5.0)
    follower = threading.Thread(target=pool.waiters.wait,
                                args=("a", 3600.0, 3600.0, lambda s: None))
    follower.start()
    while pool.waiters.waiting("a") < 2:               # the head and its follower
        await asyncio.sleep(0.001)
    backend.gate.clear()
    backend.entered.clear()
    backend.finished.clear()
    wake_head.set()                                    # the head's sleep ends: it asks again
    assert await asyncio.to_thread(backend.entered.wait, 5.0)
    head.cancel()
    await asyncio.sleep(0)
    backend.gate.set()
    assert await asyncio.to_thread(backend.finished.wait, 5.0)
    for _ in range(50):                                # let the done-callbacks run
        await asyncio.sleep(0.01)
    with pytest.raises(asyncio.CancelledError):
        await head
    still_waiting = pool.waiters.waiting("a")
    pool.waiters.wake("a")                             # never leave the thread behind
    await asyncio.to_thread(follower.join, 5.0)
    assert still_waiting == 0


def test_the_completion_returned_keeps_every_field_the_provider_gave_beside_the_prompt_sent() -> None:
    from hermes_core.agent.resilience import _as_sent
    from hermes_core.types import Completion, ToolCall, Usage

    got = Completion(text="hi", model="m", provider="p", usage=Usage(3, 4, 5),
                     tool_calls=(ToolCall("c1", "f", "{}"),), finish_reason="stop",
                     request_id="r-9")
    sent = Prompt(system="s", messages=(Message("user", "u"),))
    out = _as_sent(got, sent)
    assert out.prompt is sent
    assert (out.text, out.model, out.provider, out.usage, out.tool_calls, out.finish_reason,
            out.request_id) == ("hi", "m", "p", Usage(3, 4, 5), (ToolCall("c1", "f", "{}"),),
                                "stop", "r-9")


def test_request_ids_are_16_hex_digits_and_a_forked_worker_draws_its_own() -> None:
    import os

    from hermes_core.agent.resilience import _request_id

    ids = {_request_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                               # the child: its next id, to the parent
        os.write(write, _request_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    assert len(child) == 16 and child != _request_id()   # not the parent's next one


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


class FailingOnce(InMemoryPoolState):
    """An in-memory pool state whose next acquire raises once ``fail_next`` is set (a backend
    error, as a Redis reply that cannot be read)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.fail_next = threading.Event()

    def acquire(self, provider: str, keys: Sequence[KeySpec], policy: PoolPolicy, *,
                tokens: int = 0, rand: float = 0.0) -> AcquireResult:
        if self.fail_next.is_set():
            self.fail_next.clear()
            raise RuntimeError("the pool state could not be read")
        return super().acquire(provider, keys, policy, tokens=tokens, rand=rand)


def test_a_waiter_handed_the_turn_whose_acquire_raises_passes_the_turn_on() -> None:
    """Three requests wait for the only key; it frees and wakes the first follower, whose acquire
    raises (a backend error). That request fails, but the turn it was handed goes to the request
    behind it, which completes while the timed head still sleeps; the follower used to keep the
    turn to itself and the one behind waited out its whole bound."""
    clock = FakeClock()
    state = FailingOnce(clock)
    pool = CredentialPool({"a": [Credential("a", "sk-a-turn-secret-1")]},
                          policy=PoolPolicy(max_in_flight=1), backend=state, rng=random.Random(1))
    gate = threading.Event()
    loop = CallLoop({"a": ScriptedProvider("a", default="hello")}, pool, clock=clock,  # type: ignore[dict-item]
                    sleep=lambda s: gate.wait(30), rng=random.Random(2), audit_path=False,
                    policy=LoopPolicy(deadline_s=600.0, max_wait_s=600.0))
    dec = RouteDecision("m", (Candidate("a", "m"),), "test")
    held = pool.acquire("a")
    outcomes: dict[str, str] = {}
    lock = threading.Lock()

    def request(name: str) -> None:
        try:
            loop.complete(PROMPT, dec)
            result = "ok"
        except RuntimeError as e:
            result = str(e)
        with lock:
            outcomes[name] = result

    def until(cond: Callable[[], bool]) -> bool:
        for _ in range(5000):
            if cond():
                return True
            time.sleep(0.001)
        return False

    threads = [threading.Thread(target=request, args=(name,))
               for name in ("head", "first behind", "second behind")]
    try:
        for n, t in enumerate(threads, start=1):
            t.start()
            assert until(lambda n=n: pool.waiters.waiting("a") == n)   # type: ignore[misc]
        state.fail_next.set()
        pool.success(held)                         # the key frees: the first follower's turn
        assert until(lambda: len(outcomes) == 2), outcomes
        assert outcomes == {"first behind": "the pool state could not be read",
                            "second behind": "ok"}
    finally:
        gate.set()
        for t in threads:
            t.join(10)
    assert outcomes["head"] == "ok" and pool.waiters.waiting("a") == 0


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


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("strikes", [8, 1])    # the key quarantined, or removed for good
def test_a_request_that_goes_on_to_a_keyless_server_gives_up_the_wait_it_held(
        mode: str, strikes: int) -> None:
    """A request waits for provider a's only key; meanwhile another request has that key
    rejected, so the waiter goes on to a local server called without a key, which answers. It
    gives up the place it held in a's wait queue and its refusal: both stayed held for good (the
    process counted a waiter on a forever, so each later request for a's keys, once the key was
    back from its quarantine, queued behind nobody for its whole ``max_wait_s``)."""
    clock = FakeClock()
    key = Credential("a", "sk-a-keyless-secret-1", max_rpm=1)
    pool = CredentialPool({"a": [key]}, backend=InMemoryPoolState(clock), rng=random.Random(1),
                          policy=PoolPolicy(auth_recheck_s=600.0, auth_max_strikes=strikes))
    pool.success(pool.acquire("a"))                 # the key's one request this minute

    def rejected_meanwhile(seconds: float) -> None:
        pool.remove(key, "after HTTP 401")          # another request's 401
        clock.sleep(seconds)

    async def arejected_meanwhile(seconds: float) -> None:
        rejected_meanwhile(seconds)

    local = ScriptedProvider("local", kind="offline", default="local answer")
    loop = CallLoop({"a": ScriptedProvider("a"), "local": local}, pool,  # type: ignore[dict-item]
                    clock=clock, sleep=rejected_meanwhile, asleep=arejected_meanwhile,
                    rng=random.Random(2), audit_path=False, policy=LoopPolicy(max_wait_s=90.0))
    dec = decision(("a", "m1"), ("local", "m2"))
    if mode == "sync":
        done, attempts = loop.complete(PROMPT, dec)
    else:
        done, attempts = asyncio.run(loop.acomplete(PROMPT, dec))
    assert done.text == "local answer" and len(clock.sleeps) == 1
    assert [(x.provider, x.status) for x in attempts] == [("a", "no_key"), ("local", "ok")]
    assert pool.waiters.waiting("a") == 0 and pool._refused["a"] == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ctrl_c_while_a_wait_is_announced_gives_up_the_places_the_request_held(mode: str) -> None:
    """Ctrl-C reaches the caller's ``on_wait`` (the chat saying it waits for a key) as the
    request is about to wait a second time: the request gives up the wait-queue place it held
    and its refusal, as when Ctrl-C comes during the wait itself. Both stayed held for good (the
    announcement ran before the wait's clean-up was armed)."""
    clock = FakeClock()
    key = Credential("a", "sk-a-announce-secret-1", max_rpm=1)
    pool = CredentialPool({"a": [key]}, backend=InMemoryPoolState(clock), rng=random.Random(1))
    pool.success(pool.acquire("a"))                 # the key's one request this minute
    heard: list[float] = []

    def on_wait(provider: str, seconds: float) -> None:
        heard.append(seconds)
        if len(heard) == 2:
            raise KeyboardInterrupt

    async def asleep(seconds: float) -> None:       # the clock stays: refused again after it
        return None

    loop = CallLoop({"a": ScriptedProvider("a")}, pool, clock=clock,  # type: ignore[dict-item]
                    sleep=lambda s: None, asleep=asleep, rng=random.Random(2), audit_path=False,
                    policy=LoopPolicy(max_wait_s=90.0), on_wait=on_wait)
    with pytest.raises(KeyboardInterrupt):
        if mode == "sync":
            loop.complete(PROMPT, decision(("a", "m1")))
        else:
            asyncio.run(loop.acomplete(PROMPT, decision(("a", "m1"))))
    assert len(heard) == 2
    assert pool.waiters.waiting("a") == 0 and pool._refused["a"] == 0


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


def test_the_draft_step_passes_drafts_until_a_commit_and_voids_them_at_the_next_attempt() -> None:
    """The one step both stream shells drive: a table of what it passes and what it opens with."""
    from hermes_core.agent.resilience import _Uncommitted

    step = _Uncommitted()
    assert step.opening() == ()   # a first attempt: nothing to void
    assert [step.passed(d) for d in (Delta(draft="{"), Delta(draft='"a'), Delta(text="x"))] \
        == [True, True, False]
    assert step.opening() == (Delta(redraft=True),)   # the next attempt voids them, once
    assert step.opening() == ()
    assert not step.passed(Delta(text="y")) and step.opening() == ()   # no draft: nothing void
    # a provider voiding its own drafts (words before Anthropic's output tool) commits nothing:
    # a cut after it is still asked again
    assert step.passed(Delta(redraft=True)) and step.opening() == ()


def test_workers_forked_from_one_loop_draw_backoff_jitter_of_their_own(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A server that builds its CallLoop before forking its workers (gunicorn/uWSGI preload, a
    fork-started multiprocessing pool): the jitter exists so that workers failed by the same
    outage retry apart. Each child drew the parent's generator's next values, so every worker
    slept the same "random" backoffs and retried together, the herd jitter is there to break."""
    loop = CallLoop({"a": ScriptedProvider("a")}, CredentialPool({"a": [A1]}), audit_path=False)

    def backoffs() -> object:
        return [backoff_delay(n, None, base=1.0, cap=60.0, rng=loop.rng) for n in range(1, 9)]

    first, second = in_forked_child(backoffs), in_forked_child(backoffs)
    assert isinstance(first, list) and isinstance(second, list) and len(first) == 8
    assert first != second
