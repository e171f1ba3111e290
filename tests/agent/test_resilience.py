"""Tests of ``hermes_core/agent/resilience.py``.

The call loop's decisions, with a scripted provider, a fake clock and no real waiting.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy
from hermes_core.agent.resilience import CallLoop, backoff_delay
from hermes_core.agent.resilience_policy import LoopPolicy
from hermes_core.config import load_settings
from hermes_core.errors import (
    AllProvidersFailed,
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextWindowExceeded,
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
)
from hermes_core.types import Credential, Delta, Message, Prompt
from tests.agent.conftest import B1, LOW, PROMPT, decision, make

A1, A2 = Credential("a", "sk-a-one-secret"), Credential("a", "sk-a-two-secret")


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
