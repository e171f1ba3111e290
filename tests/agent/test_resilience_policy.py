"""Tests of ``hermes_core/agent/resilience_policy.py``: reading a response's rate-limit headers, the
full-jitter backoff window, and the table of what the call loop does after a failed attempt."""

from __future__ import annotations

import random

import pytest

from hermes_core.agent.pool.state import RateLimitInfo
from hermes_core.agent.resilience_policy import (
    FailureState,
    LoopPolicy,
    backoff_delay,
    decide_failure,
    rate_limit_info,
    wait_or_failover,
)
from hermes_core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionReset,
    ModelNotFound,
    RateLimited,
    ServerError,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize(("headers", "expected"), [
    ({"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "3",
      "x-ratelimit-reset-requests": "1s"}, RateLimitInfo(10, 3, 1.0)),
    ({"X-RateLimit-Limit-Requests": "500", "X-RateLimit-Remaining-Requests": "0",
      "X-RateLimit-Reset-Requests": "6m0s"}, RateLimitInfo(500, 0, 360.0)),
    ({"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2023-11-14T22:13:22.5Z"},
     RateLimitInfo(50, 0, 2.5)),
    # tokens limits are not the request limit the pool counts
    ({"x-ratelimit-limit-tokens": "90000", "x-ratelimit-remaining-tokens": "0"}, None),
    ({}, None),
    ({"x-ratelimit-limit-requests": "lots"}, None),
    ({"x-ratelimit-remaining-requests": "4"}, RateLimitInfo(None, 4, None)),
    ({"x-ratelimit-limit-requests": "0"}, None),
])
def test_rate_limit_info_reads_both_providers_request_headers(
        headers: dict[str, str], expected: RateLimitInfo | None) -> None:
    assert rate_limit_info(headers, now=NOW) == expected


def test_an_anthropic_reset_on_a_success_is_read_against_the_servers_own_date() -> None:
    """A server ten minutes behind states a reset already past by our clock: the key was not
    held at all after its last allowed request, and its next one was refused."""
    import email.utils
    from datetime import UTC, datetime

    server_now = NOW - 600.0
    reset = datetime.fromtimestamp(server_now + 20, UTC).isoformat().replace("+00:00", "Z")
    info = rate_limit_info({"date": email.utils.formatdate(server_now, usegmt=True),
                            "anthropic-ratelimit-requests-limit": "50",
                            "anthropic-ratelimit-requests-remaining": "0",
                            "anthropic-ratelimit-requests-reset": reset}, now=NOW)
    assert info is not None and info.reset_s == pytest.approx(20.0)


@pytest.mark.parametrize(("headers", "expected"), [
    # the same header twice (a proxy adding its own beside the provider's, joined by ", "): the
    # lowest limit and remainder hold, the longest reset; unsaid, a stated 60 became no limit
    ({"x-ratelimit-limit-requests": "100, 60", "x-ratelimit-remaining-requests": "5, 0",
      "x-ratelimit-reset-requests": "1s, 20s"}, RateLimitInfo(60, 0, 20.0)),
    ({"x-ratelimit-limit-requests": "60, lots", "x-ratelimit-remaining-requests": "3"},
     RateLimitInfo(None, 3, None)),
    # a reset stated as a Unix time (as GitHub and some proxies do), read on the server's
    # clock, not as 1.8e9 seconds to wait
    ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": str(int(NOW) + 30)}, RateLimitInfo(60, 0, 30.0)),
    # or as an HTTP date; one already past frees at once
    ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "Tue, 14 Nov 2023 22:13:50 GMT"},
     RateLimitInfo(60, 0, 30.0)),
    ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": str(int(NOW) - 30)}, RateLimitInfo(60, 0, 0.0)),
    # a remainder above the stated limit is held to the limit
    ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "900"},
     RateLimitInfo(60, 60, None)),
    # a limit of 0 is a gateway with none configured: its remainder of 0 counts no limit down
    # (it blocked the key for the reset after every answer); a remainder alone still speaks
    ({"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "60s"}, None),
    ({"anthropic-ratelimit-requests-limit": "0", "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2023-11-14T22:14:20Z"}, None),
    ({"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "7"}, None),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20s"},
     RateLimitInfo(None, 0, 20.0)),
])
def test_contradictory_or_repeated_request_headers_read_sanely(
        headers: dict[str, str], expected: RateLimitInfo | None) -> None:
    assert rate_limit_info(headers, now=NOW) == expected


def test_a_repeated_anthropic_reset_on_a_success_is_read_as_the_later_one() -> None:
    """A proxy stating its own RFC 3339 reset beside Anthropic's (joined by ", "): the key is
    held until the later, not read as no reset at all."""
    from datetime import UTC, datetime

    def at(s: float) -> str:
        return datetime.fromtimestamp(NOW + s, UTC).isoformat().replace("+00:00", "Z")

    info = rate_limit_info({"anthropic-ratelimit-requests-limit": "50",
                            "anthropic-ratelimit-requests-remaining": "0",
                            "anthropic-ratelimit-requests-reset": f"{at(10)}, {at(25)}"},
                           now=NOW)
    assert info == RateLimitInfo(50, 0, pytest.approx(25.0))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 10])
def test_full_jitter_window(n: int) -> None:
    draws = [backoff_delay(n, None, base=0.5, cap=8.0, rng=random.Random(s)) for s in range(200)]
    high = min(8.0, 0.5 * 2 ** (n - 1))
    assert all(0.0 <= d <= high for d in draws)
    assert max(draws) > high * 0.8 and min(draws) < high * 0.2   # spread over the whole window


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
