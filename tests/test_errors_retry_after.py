"""Tests of ``hermes_core/errors.py``: how long a refusal says to wait. Retry-After and the reset
headers in every form providers and proxies send, and dates read against the server's own clock."""

from __future__ import annotations

import email.utils

import pytest

from hermes_core.errors import (
    RateLimited,
    error_from_status,
    parse_retry_after,
)
from tests.conftest import NOW


@pytest.mark.parametrize("headers,expected", [
    ({}, None),
    ({"retry-after": "30"}, 30.0),
    ({"Retry-After": "2.5"}, 2.5),
    ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after-ms": "1500", "retry-after": "30"}, 1.5),     # ms form is the more precise
    ({"retry-after": email.utils.formatdate(NOW + 45, usegmt=True)}, 45.0),
    ({"retry-after": email.utils.formatdate(NOW - 45, usegmt=True)}, 0.0),   # past date -> now
    ({"retry-after": "garbage"}, None),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}, 360.0),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "120ms"}, 0.12),
    ({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1h2m3.5s"}, 3723.5),
    ({"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "6m0s"}, None),
    ({"anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2027-01-15T08:00:30Z"}, None),  # computed below
])
def test_parse_retry_after(headers, expected):
    got = parse_retry_after(headers, now=NOW)
    if "anthropic-ratelimit-requests-reset" in headers:
        from datetime import datetime

        when = datetime.fromisoformat("2027-01-15T08:00:30+00:00").timestamp()
        assert got == pytest.approx(max(0.0, when - NOW))
    elif expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


def test_largest_reset_wins_when_several_limits_exhausted():
    h = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s",
         "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20s"}
    assert parse_retry_after(h, now=NOW) == 20.0


@pytest.mark.parametrize("headers,expected", [
    # not a number a server means: unsaid, so a weaker header (or the pool's default) decides
    ({"retry-after": "nan"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after": "1e400"}, None),
    ({"retry-after-ms": "nan", "retry-after": "3"}, 3.0),
    ({"retry-after-ms": "inf", "retry-after": "3"}, 3.0),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "inf"}, None),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "nan"}, None),
    # the same header twice (a proxy adding its own): httpx joins them with ", "
    ({"retry-after": "5, 5"}, 5.0),
    ({"retry-after": "2, 7"}, 7.0),
    ({"retry-after-ms": "1500, 1500"}, 1.5),
])
def test_retry_after_that_is_not_a_finite_number_is_unsaid(headers, expected):
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("headers,expected", [
    # a negative wait is no wait a server means: unsaid, so the next signal (or the pool's
    # default cool-down) decides, instead of 0 (the key back at once, refused again)
    ({"retry-after": "-5"}, None),
    ({"retry-after-ms": "-100", "retry-after": "30"}, 30.0),
    ({"retry-after": "-1", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "20s"}, 20.0),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "-3"}, None),
    ({"retry-after": "-0"}, 0.0),
])
def test_a_negative_retry_after_is_unsaid(headers, expected):
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("skew", [-120.0, 0.0, 300.0])
def test_a_retry_after_date_is_read_against_the_servers_own_date(skew):
    """A server whose clock is behind ours states a time that is already past by ours (we
    retried at once and were refused again); ahead, a wait its clock's lead too long. Its Date
    header is on the same clock as its Retry-After: the difference is the wait."""
    server_now = NOW + skew
    h = {"date": email.utils.formatdate(server_now, usegmt=True),
         "retry-after": email.utils.formatdate(server_now + 30, usegmt=True)}
    assert parse_retry_after(h, now=NOW) == pytest.approx(30.0)
    past = {"date": h["date"], "retry-after": email.utils.formatdate(server_now - 5, usegmt=True)}
    assert parse_retry_after(past, now=NOW) == 0.0


def test_a_retry_after_date_with_an_unreadable_date_header_uses_our_clock():
    h = {"date": "yesterday", "retry-after": email.utils.formatdate(NOW + 45, usegmt=True)}
    assert parse_retry_after(h, now=NOW) == pytest.approx(45.0)


def test_an_anthropic_reset_is_read_against_the_servers_own_date():
    server_now = NOW - 600.0         # ten minutes behind
    from datetime import UTC, datetime

    reset = datetime.fromtimestamp(server_now + 20, UTC).isoformat().replace("+00:00", "Z")
    h = {"date": email.utils.formatdate(server_now, usegmt=True),
         "anthropic-ratelimit-requests-remaining": "0",
         "anthropic-ratelimit-requests-reset": reset}
    assert parse_retry_after(h, now=NOW) == pytest.approx(20.0)


@pytest.mark.parametrize("headers,expected", [
    # a proxy counting past the limit (negative) or a repeated header ("0, 0") is nothing
    # remaining: that limit's reset is why the key was refused
    ({"x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "20s"}, 20.0),
    ({"x-ratelimit-remaining-requests": "0, 0", "x-ratelimit-reset-requests": "20s, 25s"}, 25.0),
    ({"anthropic-ratelimit-requests-remaining": "-2",
      "anthropic-ratelimit-requests-reset": email.utils.formatdate(NOW + 40, usegmt=True)}, 40.0),
    # an OpenAI-shaped reset given as a Unix time or a date: the time left, not 1.8e9 s capped
    # at a day
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": str(int(NOW) + 30)},
     30.0),
    ({"x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": email.utils.formatdate(NOW + 90, usegmt=True)}, 90.0),
    ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}, 90.0),
    # requests left on that limit: not why we were refused
    ({"x-ratelimit-remaining-requests": "5, 3", "x-ratelimit-reset-requests": "20s"}, None),
])
def test_odd_rate_limit_remainders_and_resets_are_read_sanely(headers, expected):
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("headers,expected", [
    # a proxy's Retry-After as a Unix time: 30 s, not 1.8e9 s (a day's cool-down, the cap)
    ({"retry-after": str(int(NOW) + 30)}, 30.0),
    ({"retry-after": str(int(NOW) - 30)}, 0.0),
    # or as an OpenAI-style duration
    ({"retry-after": "1m30s"}, 90.0),
])
def test_a_retry_after_in_a_proxys_own_form_is_read(headers, expected):
    assert parse_retry_after(headers, now=NOW) == pytest.approx(expected)


_AT_45 = email.utils.formatdate(NOW + 45, usegmt=True)    # "Fri, 15 Jan 2027 08:00:45 GMT"
_AT_3 = email.utils.formatdate(NOW + 3, usegmt=True)


@pytest.mark.parametrize("headers,expected", [
    # a provider's Retry-After and a proxy's, joined by httpx: one a number, one an HTTP date
    # (whose own comma after the weekday is no separator). Each copy is a refusal until its
    # time, so the latest holds
    ({"retry-after": f"5, {_AT_45}"}, 45.0),
    ({"retry-after": f"{_AT_45}, 5"}, 45.0),
    ({"retry-after": f"60, {_AT_45}"}, 60.0),
    ({"retry-after": f"{_AT_3}, {_AT_45}"}, 45.0),
    # the same, handed over as a list of the header's values
    ({"retry-after": ["5", _AT_45]}, 45.0),
    ({"Retry-After": ("7",)}, 7.0),
    ({"retry-after-ms": ["1500", "2500"]}, 2.5),
    # a copy that states no wait (a proxy's garbage, a negative) leaves the other to decide
    ({"retry-after": f"soon, {_AT_45}"}, 45.0),
    ({"retry-after": "5, -1"}, 5.0),
    ({"retry-after": "nan, 8"}, 8.0),
    ({"retry-after-ms": "nan, 1500"}, 1.5),
    # a date among durations
    ({"x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": f"20s, {_AT_45}"}, 45.0),
])
def test_a_retry_after_repeated_in_different_forms_is_read_as_its_latest_wait(headers, expected):
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))


def test_repeated_rfc3339_resets_are_read_as_the_later_one():
    from datetime import UTC, datetime

    def at(s: float) -> str:
        return datetime.fromtimestamp(NOW + s, UTC).isoformat().replace("+00:00", "Z")

    h = {"anthropic-ratelimit-requests-remaining": "0",
         "anthropic-ratelimit-requests-reset": f"{at(10)}, {at(30)}"}
    assert parse_retry_after(h, now=NOW) == pytest.approx(30.0)


@pytest.mark.parametrize("stamp", [
    "{d}T{t}Z", "{d}t{t}z", "{d} {t}Z", "{d}T{t}.123456789Z", "{d}T{t}+00:00", "{d}T{t}z",
])
def test_an_anthropic_reset_is_read_in_every_rfc3339_spelling(stamp: str) -> None:
    """RFC 3339 allows a lower-case ``t`` and ``z`` (and a space between date and time); a reset
    so written was unsaid, and the pool's default cool-down replaced the stated wait."""
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(NOW + 40, UTC)
    text = stamp.format(d=when.strftime("%Y-%m-%d"), t=when.strftime("%H:%M:%S"))
    h = {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": text}
    assert parse_retry_after(h, now=NOW) == pytest.approx(40.0, abs=0.2)


@pytest.mark.parametrize("headers,expected", [
    # a reset or Retry-After stated as a Unix time in milliseconds (some gateways): 30 s, not
    # 1.8e12 s capped at a day
    ({"x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": str(int(NOW * 1000) + 30_000)}, 30.0),
    ({"retry-after": str(int(NOW * 1000) + 12_000)}, 12.0),
])
def test_a_reset_stated_as_a_unix_time_in_milliseconds_is_read(headers, expected):
    assert parse_retry_after(headers, now=NOW) == pytest.approx(expected)


def test_a_rate_limit_error_keeps_a_header_given_as_a_list_readable():
    """Headers handed over as lists (each value of a repeated header) are kept as the one text
    httpx would have joined, so what is read from the error later (the stated limit, the wait)
    is the same as from a joined header, not the list's repr."""
    err = error_from_status(429, {"retry-after": ["5", _AT_45],
                                  "x-ratelimit-limit-requests": ["60", "50"]}, now=NOW)
    assert isinstance(err, RateLimited)
    assert err.retry_after == pytest.approx(45.0)
    assert err.headers["x-ratelimit-limit-requests"] == "60, 50"
    assert parse_retry_after(err.headers, now=NOW) == pytest.approx(45.0)


def test_an_rfc850_date_repeated_beside_a_number_stays_whole():
    """RFC 850's weekday is spelt out ("Friday, 15-Jan-27 ..."): its comma is the date's own."""
    rfc850 = email.utils.format_datetime(
        email.utils.parsedate_to_datetime(_AT_45)).replace("Fri,", "Friday,")
    assert parse_retry_after({"retry-after": f"3, {rfc850}"}, now=NOW) == pytest.approx(45.0)


def _in_zone(when: float, zone: str, offset_h: float) -> str:
    """``when`` written as an HTTP date on a clock ``offset_h`` hours from GMT, named ``zone``."""
    gmt = email.utils.formatdate(when + offset_h * 3600, usegmt=True)
    return gmt.removesuffix("GMT") + zone


@pytest.mark.parametrize(("zone", "offset_h"), [
    ("EST", -5), ("EDT", -4), ("CST", -6), ("CDT", -5), ("MST", -7), ("MDT", -6),
    ("PST", -8), ("PDT", -7), ("UT", 0), ("UTC", 0), ("est", -5),
])
def test_a_retry_after_date_in_a_zone_email_utils_knows_is_read_at_its_offset(zone, offset_h):
    h = {"retry-after": _in_zone(NOW + 30, zone, offset_h)}
    assert parse_retry_after(h, now=NOW) == pytest.approx(30.0)
    reset = {"x-ratelimit-remaining-requests": "0",
             "x-ratelimit-reset-requests": _in_zone(NOW + 50, zone, offset_h)}
    assert parse_retry_after(reset, now=NOW) == pytest.approx(50.0)


@pytest.mark.parametrize(("zone", "offset_h"), [
    ("CET", 1), ("CEST", 2), ("BST", 1), ("JST", 9), ("IST", 5.5), ("AEST", 10), ("XYZ", 0),
])
def test_a_retry_after_date_in_an_unknown_zone_is_unreadable_not_gmt(zone, offset_h):
    """email.utils reads a zone it does not know as no zone at all, which was taken for GMT: a
    Berlin server's "retry in 30 s" was a wait of an hour and 30 s, a Tokyo one's 9 hours.
    Such a date is not trusted: unsaid, as any unreadable wait, so the next signal decides."""
    h = {"retry-after": _in_zone(NOW + 30, zone, offset_h)}
    assert parse_retry_after(h, now=NOW) is None
    fallback = {**h, "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20s"}
    assert parse_retry_after(fallback, now=NOW) == pytest.approx(20.0)
    reset = {"anthropic-ratelimit-requests-remaining": "0",
             "anthropic-ratelimit-requests-reset": _in_zone(NOW + 50, zone, offset_h)}
    assert parse_retry_after(reset, now=NOW) is None


@pytest.mark.parametrize("text", [
    "Fri, 15 Jan 2027 08:00:45 GMT", "Fri, 15 Jan 2027 08:00:45 -0000",
    "Fri Jan 15 08:00:45 2027", "Friday, 15-Jan-27 08:00:45 GMT",
])
def test_an_http_date_with_no_zone_or_gmt_is_read_as_gmt(text):
    """asctime carries no zone and is GMT by HTTP's rule; ``-0000`` is UTC: neither is a zone
    left unknown."""
    assert parse_retry_after({"retry-after": text}, now=NOW) == pytest.approx(45.0)


def test_a_date_header_in_an_unknown_zone_leaves_our_clock():
    h = {"date": _in_zone(NOW - 600, "CET", 1),
         "retry-after": email.utils.formatdate(NOW + 45, usegmt=True)}
    assert parse_retry_after(h, now=NOW) == pytest.approx(45.0)


# --------------------------------------------------------------------------- pickling

@pytest.mark.parametrize("reset,expected", [
    # OpenAI's resets are Go durations (time.Duration.String): under a millisecond they read
    # "500µs" (U+00B5), and "17ns"; "us" and the Greek mu (U+03BC) are what proxies retype
    ("500µs", 0.0005), ("500μs", 0.0005), ("500us", 0.0005), ("17ns", 17e-9),
    ("1.5µs", 1.5e-6), ("1m0.000250s", 60.00025), ("2s500µs", 2.0005),
])
def test_a_go_duration_under_a_millisecond_is_read_not_left_to_the_default(reset, expected):
    """Unread, an exhausted limit's reset a few microseconds away was "unsaid": the key cooled
    for the pool's default minute instead of not at all."""
    h = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": reset}
    assert parse_retry_after(h, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize("reset", ["500 µs", "µs", "5ms µs", "5xs", "5µ"])
def test_a_malformed_go_duration_stays_unsaid(reset):
    h = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": reset}
    assert parse_retry_after(h, now=NOW) is None


@pytest.mark.parametrize("headers,expected", [
    # a gateway's own limit (Envoy, Kong, an API manager): one reset, no limit name after it,
    # in delta seconds, a Unix time, or milliseconds since the epoch
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "23"}, 23.0),
    ({"x-ratelimit-reset": str(int(NOW) + 40)}, 40.0),
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) * 1000 + 7000)}, 7.0),
    # the IETF draft's spelling
    ({"ratelimit-remaining": "0", "ratelimit-reset": "12"}, 12.0),
    ({"RateLimit-Reset": "5"}, 5.0),
    # a limit with requests left is not why we were refused; Retry-After still comes first
    ({"x-ratelimit-remaining": "17", "x-ratelimit-reset": "23"}, None),
    ({"retry-after": "3", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "23"}, 3.0),
    # beside the named limits the longest exhausted one holds
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "23",
      "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "9s"}, 23.0),
])
def test_a_gateway_s_unnamed_reset_is_read_not_left_to_the_default(headers, expected):
    """Unread, a gateway's 429 saying its window resets in 23 s cooled the key for the pool's
    default minute (or, saying 2 s, kept a sole key out 30 times as long as asked)."""
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize("date", [
    "Thu, 01 Jan 1970 00:00:00 GMT",          # a proxy's zeroed clock
    email.utils.formatdate(NOW - 3 * 86400, usegmt=True),   # a cache's stale copy
    email.utils.formatdate(NOW + 40 * 365 * 86400, usegmt=True),
])
def test_a_date_header_days_away_from_our_clock_is_a_lie_not_a_skew(date):
    """A server clock minutes off is read against (:func:`server_now`); a ``Date`` days or
    years away is no clock the Retry-After was stated on: read against it, a wait of 30 s was
    56 years (capped: the key out for a quarter hour, fleet wide) or already past."""
    for h in ({"date": date, "retry-after": email.utils.formatdate(NOW + 30, usegmt=True)},
              {"date": date, "x-ratelimit-remaining-requests": "0",
               "x-ratelimit-reset-requests": str(int(NOW) + 30)}):
        assert parse_retry_after(h, now=NOW) == pytest.approx(30.0)


@pytest.mark.parametrize("value", ["1000000000", "1500000000000", "9999999999999999"])
def test_a_retry_after_that_is_no_unix_time_of_today_is_a_long_wait_not_none(value):
    """Read as Unix times, 1e9 (2001) and 1.5e12 ms (2017) are years past: "retry at once" to a
    key refused a moment ago. No server states a reset years gone; a proxy saying "very long"
    does (the pool caps the wait at a quarter hour)."""
    assert parse_retry_after({"retry-after": value}, now=NOW) >= 900.0
