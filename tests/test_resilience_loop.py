"""The call loop's decisions, with a scripted provider, a fake clock and no real waiting."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from routing_doubles import FakeClock, Scripted

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy
from hermes_core.agent.resilience import CallLoop, LoopPolicy, backoff_delay
from hermes_core.config import load_settings
from hermes_core.errors import (
    AllProvidersFailed,
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextWindowExceeded,
    Overloaded,
    QuotaExhausted,
    RateLimited,
    ServerError,
    Timeout,
)
from hermes_core.providers.base import CallOptions
from hermes_core.types import Candidate, Credential, Message, Prompt, RouteDecision

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))
A1, A2 = Credential("a", "sk-a-one-secret"), Credential("a", "sk-a-two-secret")
B1 = Credential("b", "sk-b-one-secret")


def decision(*cands: tuple[str, str]) -> RouteDecision:
    return RouteDecision(cands[0][1], tuple(Candidate(p, m) for p, m in cands), "test")


def make(providers: dict[str, Scripted], creds: dict[str, list[Credential]], *,
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
    a = Scripted("a", script=["hello"])
    loop, clock = make({"a": a}, {"a": [A1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "hello"
    assert [x.status for x in attempts] == ["ok"]
    assert attempts[0].key_fingerprint == A1.fingerprint
    assert clock.sleeps == []


def test_429_rotates_key_without_waiting_or_budget() -> None:
    a = Scripted("a", by_key={A1.fingerprint: [RateLimited(retry_after=30.0)]})
    loop, clock = make({"a": a}, {"a": [A1, A2]}, policy=LoopPolicy(retry_budget=0))
    _, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert [(x.key_fingerprint, x.status, x.decision) for x in attempts] == [
        (A1.fingerprint, "429", "rotate_key"), (A2.fingerprint, "ok", "done")]
    assert clock.sleeps == []
    # the blocked key is not tried again while blocked
    loop.complete(PROMPT, decision(("a", "m1")))
    assert [c.fingerprint for c in a.calls] == [A1.fingerprint, A2.fingerprint, A2.fingerprint]


def test_all_keys_blocked_fails_over_to_next_provider() -> None:
    a = Scripted("a", script=[RateLimited(retry_after=30.0), RateLimited(retry_after=30.0)])
    b = Scripted("b", script=["from b"])
    loop, clock = make({"a": a, "b": b}, {"a": [A1, A2], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b" and completion.model == "m2"
    assert [x.status for x in attempts] == ["429", "429", "all_keys_blocked", "ok"]
    assert clock.sleeps == []


def test_all_keys_blocked_waits_when_short_and_within_deadline() -> None:
    a = Scripted("a", script=[RateLimited(retry_after=2.0), "later"])
    b = Scripted("b")
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, _ = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "a" and completion.text == "later"
    assert len(clock.sleeps) == 1 and 2.0 <= clock.sleeps[0] <= 2.25  # the wait, plus jitter
    assert b.calls == []


def test_last_candidate_waits_up_to_the_deadline_else_fails() -> None:
    a = Scripted("a", script=[RateLimited(retry_after=50.0), "late"])
    loop, clock = make({"a": a}, {"a": [A1]}, policy=LoopPolicy(deadline_s=60.0))
    completion, _ = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "late" and len(clock.sleeps) == 1
    assert 50.0 <= clock.sleeps[0] <= 50.25  # the wait, plus jitter
    a.script = [RateLimited(retry_after=500.0)]
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1")))
    assert [x.status for x in ei.value.attempts] == ["429", "all_keys_blocked"]


def test_401_removes_key_for_good_and_alerts_with_fingerprint_only(
        caplog: pytest.LogCaptureFixture) -> None:
    a = Scripted("a", by_key={A1.fingerprint: [AuthenticationFailed("bad key", status_code=401)]})
    loop, _ = make({"a": a}, {"a": [A1, A2]})
    with caplog.at_level("WARNING"):
        for _ in range(3):
            loop.complete(PROMPT, decision(("a", "m1")))
    assert [c.fingerprint for c in a.calls].count(A1.fingerprint) == 1
    assert A1.fingerprint in caplog.text and A1.secret not in caplog.text
    assert [s.state for s in loop.pool.status()] == ["removed", "ok"]


def test_402_quota_removes_key() -> None:
    a = Scripted("a", script=[QuotaExhausted("quota", status_code=402)])
    loop, _ = make({"a": a}, {"a": [A1, A2]})
    _, attempts = loop.complete(PROMPT, decision(("a", "m1")))
    assert [(x.status, x.decision) for x in attempts] == [("402", "remove_key"), ("ok", "done")]


def test_500_twice_retried_within_budget_then_failover() -> None:
    a = Scripted("a", script=[ServerError("boom", status_code=500),
                              ServerError("boom", status_code=500)])
    b = Scripted("b", script=["from b"])
    loop, clock = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b"
    assert [(x.provider, x.status, x.decision) for x in attempts] == [
        ("a", "500", "retry"), ("a", "500", "failover"), ("b", "ok", "done")]
    assert len(clock.sleeps) == 1 and 0.0 <= clock.sleeps[0] <= 0.5   # full jitter, attempt 1


def test_budget_counts_retries_and_every_provider_is_still_tried() -> None:
    """retry_budget counts retries after server errors; failing over is not a retry, so a spent
    budget stops the retrying, not the failover: three failing providers are each tried."""
    a = Scripted("a", default=ServerError("boom", status_code=502))
    b = Scripted("b", default=Overloaded("busy", status_code=529))
    c = Scripted("c", default=ServerError("down", status_code=503))
    loop, _ = make({"a": a, "b": b, "c": c}, {"a": [A1], "b": [B1], "c": [Credential("c", "sk-c")]},
                   policy=LoopPolicy(retry_budget=1))
    with pytest.raises(AllProvidersFailed) as ei:
        loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2"), ("c", "m3")))
    assert [(x.provider, x.status, x.decision) for x in ei.value.attempts] == [
        ("a", "502", "retry"), ("a", "502", "failover"),
        ("b", "529", "budget_spent"), ("c", "503", "budget_spent")]
    assert isinstance(ei.value.last_error, ServerError)


def test_the_last_provider_succeeds_after_the_budget_is_spent() -> None:
    a = Scripted("a", default=ServerError("boom", status_code=500))
    b = Scripted("b", default=ServerError("boom", status_code=500))
    c = Scripted("c", script=["from c"])
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
    a = Scripted("a", default=error)
    b = Scripted("b", script=["ok b"])
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    completion, attempts = loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert completion.provider == "b"
    assert [x.decision for x in attempts] == ["retry", "failover", "done"]


def test_retry_after_takes_precedence_over_jitter() -> None:
    err = Overloaded("busy", status_code=529, headers={"retry-after": "3"})
    assert backoff_delay(1, err, base=0.5, cap=8.0, rng=random.Random(0)) == 3.0
    a = Scripted("a", script=[err, "ok"])
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
    a = Scripted("a", default=ServerError("down", status_code=503))
    b = Scripted("b")
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
    a = Scripted("a", script=[ContextWindowExceeded("too long", status_code=400), "long ok"])
    loop, _ = make({"a": a}, {"a": [A1]}, settings=settings)
    completion, attempts = loop.complete(PROMPT, decision(("a", "gpt-4o")))
    assert completion.model == "gpt-4.1"
    assert attempts[0].decision == "long_context:gpt-4.1"


def test_context_window_without_larger_model_raises() -> None:
    settings = load_settings({"llm": {"routing": {
        "default_model": "gpt-4.1", "long_context_model": "gpt-4o"}}})
    a = Scripted("a", script=[ContextWindowExceeded("too long", status_code=400)])
    loop, _ = make({"a": a}, {"a": [A1]}, settings=settings)
    with pytest.raises(ContextWindowExceeded):
        loop.complete(PROMPT, decision(("a", "gpt-4.1")))
    assert [s.in_flight for s in loop.pool.status()] == [0]


def test_bad_request_is_raised_and_not_retried() -> None:
    a = Scripted("a", script=[BadRequest("bad", status_code=422)])
    b = Scripted("b")
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    with pytest.raises(BadRequest):
        loop.complete(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert b.calls == []


def test_deadline_bounds_attempt_timeouts_and_ends_the_request() -> None:
    a = Scripted("a", default=ServerError("x", status_code=500))
    loop, clock = make({"a": a}, {"a": [A1]},
                       policy=LoopPolicy(deadline_s=5.0, retry_budget=100, retries_per_provider=100,
                                         backoff_base_s=1.0, backoff_max_s=4.0))
    with pytest.raises(AllProvidersFailed):
        loop.complete(PROMPT, decision(("a", "m1")), CallOptions(timeout_s=60.0))
    assert all(c.timeout_s <= 5.0 for c in a.calls)
    assert clock.t - 1_000_000.0 < 5.0 + 1e-9


def test_missing_provider_and_keys_fail_over() -> None:
    b = Scripted("b")
    offline = Scripted("off", kind="offline")
    loop, _ = make({"b": b, "off": offline}, {"b": []})
    completion, attempts = loop.complete(
        PROMPT, decision(("nope", "m"), ("b", "m2"), ("off", "m3")))
    assert completion.provider == "off"
    assert [x.status for x in attempts] == ["no_provider", "no_key", "ok"]
    assert offline.calls[0].fingerprint is None


def test_audit_log_jsonl_has_every_attempt_and_no_secret(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    a = Scripted("a", script=[RateLimited(retry_after=30.0),
                              AuthenticationFailed("x", status_code=401)])
    b = Scripted("b")
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
    a = Scripted("a", script=[ServerError("x", status_code=500), [ServerError("y", status_code=502)]])
    b = Scripted("b", script=[["he", "llo"]])
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    s = loop.stream(PROMPT, decision(("a", "m1"), ("b", "m2")))
    assert "".join(d.text for d in s) == "hello"
    assert [x.status for x in s.attempts] == ["500", "502", "ok"]


def test_stream_error_after_first_token_reaches_caller() -> None:
    a = Scripted("a", script=[["he", ServerError("mid", status_code=500)]])
    b = Scripted("b")
    loop, _ = make({"a": a, "b": b}, {"a": [A1], "b": [B1]})
    s = loop.stream(PROMPT, decision(("a", "m1"), ("b", "m2")))
    got = []
    with pytest.raises(ServerError):
        for d in s:
            got.append(d.text)
    assert got == ["he"] and b.calls == []
    assert s.attempts[-1].decision == "raise_mid_stream"
    assert [k.in_flight for k in loop.pool.status()] == [0, 0]


def test_stream_closed_early_releases_the_key() -> None:
    a = Scripted("a", script=[["a", "b", "c"]])
    loop, _ = make({"a": a}, {"a": [A1]})
    s = loop.stream(PROMPT, decision(("a", "m1")))
    assert next(s).text == "a"
    s.close()
    assert [k.in_flight for k in loop.pool.status()] == [0]
    assert s.attempts[-1].status == "aborted"


async def test_async_complete_and_stream_mirror_sync() -> None:
    a = Scripted("a", script=[RateLimited(retry_after=9.0), ServerError("x", status_code=500),
                              "async ok"])
    loop, clock = make({"a": a}, {"a": [A1, A2]})
    completion, attempts = await loop.acomplete(PROMPT, decision(("a", "m1")))
    assert completion.text == "async ok"
    assert [x.decision for x in attempts] == ["rotate_key", "retry", "done"]
    assert len(clock.sleeps) == 1
    a.script = [ServerError("x", status_code=500), ["x", "y"]]
    s = loop.astream(PROMPT, decision(("a", "m1")))
    assert [d.text async for d in s] == ["x", "y"]
    b = Scripted("b")
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
    on = CallLoop({"a": Scripted("a")}, pool, settings)
    on.complete(PROMPT, decision(("a", "m1")))
    assert json.loads((tmp_path / "audit.jsonl").read_text())["status"] == "ok"
    off = CallLoop({"a": Scripted("a")}, pool, settings, audit_path=False)
    assert off.audit.path is None
    assert CallLoop({"a": Scripted("a")}, pool).audit.path is None   # no settings: no file


def test_zero_retry_after_cannot_spin() -> None:
    a = Scripted("a", default=RateLimited(retry_after=0.0))
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
    a = Scripted("a", script=[RateLimited(retry_after=2.0), "later"])
    pool = CredentialPool({"a": [A1]}, policy=PoolPolicy(strategy="fill_first"),
                          backend=CountingState(clock), rng=random.Random(1))
    loop = CallLoop({"a": a}, pool, clock=clock, sleep=clock.sleep,  # type: ignore[dict-item]
                    asleep=clock.asleep, rng=random.Random(7), audit_path=False, policy=LoopPolicy())
    completion, _ = loop.complete(PROMPT, decision(("a", "m1")))
    assert completion.text == "later" and len(clock.sleeps) == 1
    assert 2.0 <= clock.sleeps[0] <= 2.25  # the wait, plus jitter
    assert CountingState.now_calls == 0
