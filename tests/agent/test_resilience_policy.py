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
