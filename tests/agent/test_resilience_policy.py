"""Tests of ``hermes_core/agent/resilience_policy.py``: reading a response's rate-limit headers."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.state import RateLimitInfo
from hermes_core.agent.resilience_policy import rate_limit_info

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
