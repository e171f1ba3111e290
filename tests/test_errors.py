"""Tests of ``hermes_core/errors.py``.

The one status -> error mapping and the retry-after arithmetic, as tables.
"""

from __future__ import annotations

import email.utils
import pickle
from collections.abc import Callable

import pytest

from hermes_core import errors
from hermes_core.errors import (
    AllProvidersFailed,
    Attempt,
    AuthenticationFailed,
    BadRequest,
    ContextWindowExceeded,
    ModelNotFound,
    NoCredentialAvailable,
    Overloaded,
    QuotaExhausted,
    RateLimited,
    ServerError,
    Timeout,
    error_from_status,
    parse_retry_after,
)
from hermes_core.redact import redact
from hermes_core.types import Usage

NOW = 1_800_000_000.0


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


@pytest.mark.parametrize("status,body,cls", [
    (429, {"error": {"type": "rate_limit_error"}}, RateLimited),
    (429, {"error": {"code": "insufficient_quota", "type": "insufficient_quota"}}, QuotaExhausted),
    (402, {}, QuotaExhausted),
    (401, {}, AuthenticationFailed),
    (403, {}, AuthenticationFailed),
    (400, {"error": {"code": "context_length_exceeded"}}, ContextWindowExceeded),
    (400, {"error": {"message": "prompt is too long: 300000 tokens > 200000 maximum"}},
     ContextWindowExceeded),
    (413, {}, ContextWindowExceeded),
    (400, {"error": {"message": "bad field"}}, BadRequest),
    (404, {}, ModelNotFound),   # a BadRequest another candidate may not have
    (408, {}, Timeout),
    (500, {}, ServerError),
    (502, "upstream died", ServerError),
    (503, {"error": {"type": "overloaded_error"}}, Overloaded),
    (529, {}, Overloaded),
])
def test_error_from_status(status, body, cls):
    err = error_from_status(status, {"retry-after": "3"}, body, provider="p", now=NOW)
    assert type(err) is cls
    assert err.status_code == status and err.provider == "p"
    if cls is RateLimited:
        assert err.retry_after == 3.0


def test_retryable_flags():
    assert error_from_status(500, {}, None).retryable
    assert not error_from_status(400, {}, None).retryable


def test_no_credential_message_says_when():
    e = NoCredentialAvailable("openai", available_at=NOW + 12, now=NOW)
    assert "12.0s" in str(e)
    assert "none configured" in str(NoCredentialAvailable("openai"))


@pytest.mark.parametrize("body", [
    # OpenAI and compatible servers (vLLM, Groq) say "does not exist"
    {"error": {"message": "The model `m1` does not exist or you do not have access to it."}},
    # Anthropic's invalid_request_error for a name it does not know
    {"type": "error", "error": {"type": "invalid_request_error",
                                "message": "model: m1 is not a valid model"}},
    # OpenRouter
    {"error": {"message": "m1 is not a valid model ID", "code": 400}},
    # DeepSeek
    {"error": {"message": "Model Not Exist", "type": "invalid_request_error"}},
    # LiteLLM proxy
    {"error": {"message": "Invalid model name passed in model=m1"}},
])
def test_a_400_saying_the_model_is_unknown_is_model_not_found(body):
    assert type(error_from_status(400, {}, body, provider="p")) is ModelNotFound


@pytest.mark.parametrize("message", [
    "'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    "Invalid value for 'temperature': this model only supports 1.",
    "messages: text content blocks must be non-empty",
])
def test_a_400_about_something_else_stays_a_bad_request(message):
    err = error_from_status(400, {}, {"error": {"message": message}}, provider="p")
    assert type(err) is BadRequest


_ECHOED = "zq9Horse7battery.Staple-42"   # a configured key of no recognisable shape


def test_structured_output_error_keeps_no_key_the_model_echoed() -> None:
    """The last reply is kept for debugging and the errors name the fields: a model (or a proxy)
    echoing the key put it in ``text``, ``errors`` and the message, in clear."""
    from hermes_core.errors import StructuredOutputError
    from hermes_core.redact import Redactor

    Redactor([_ECHOED])
    reply = "x" * 1990 + " " + _ECHOED + " and sk-proj-abcdefghijklmnopqrstuv1234"
    e = StructuredOutputError("Invoice", f"{_ECHOED}: extra inputs are not permitted", reply)
    for text in (str(e), e.errors, e.text, repr(e)):
        assert "zq9Horse" not in text and "zq9" not in text and "sk-proj" not in text, text
    assert len(e.text) <= 2000


def test_an_unoffered_tool_call_keeps_no_key_the_model_echoed_in_a_name_or_its_words() -> None:
    """A compatible server calling tools the request did not offer is a server not to be
    trusted with the wire: a key it echoes as a call's name was redacted in the message but
    kept in clear in ``tools``, which a caller logs to say what the model tried to call."""
    from hermes_core.errors import UnofferedToolCall
    from hermes_core.redact import Redactor

    Redactor([_ECHOED])
    e = UnofferedToolCall(f"m1 answered with a call to {_ECHOED!r}",
                          tools=(_ECHOED, "get_weather"), text=f"calling {_ECHOED}")
    for text in (str(e), repr(e), e.text, *e.tools):
        assert "zq9" not in text, text
    assert e.tools[1] == "get_weather" and len(e.tools) == 2


def test_provider_error_scrubs_a_body_of_any_shape() -> None:
    """``body`` was redacted only when it was a string: a custom provider passing the parsed JSON
    (a mapping, a list) kept an echoed key in it."""
    from hermes_core.errors import ProviderError
    from hermes_core.redact import Redactor

    Redactor([_ECHOED])
    body = {"error": {"message": f"refused key {_ECHOED}", "details": [f"Bearer {_ECHOED}", 3]}}
    e = ServerError("upstream failed", status_code=502, body=body)
    assert _ECHOED not in repr(e.body) and "refused key" in repr(e.body)
    assert e.body["error"]["details"][1] == 3   # the shape is kept
    assert _ECHOED not in repr(ProviderError("x", body=[_ECHOED]).body)


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


CLOUDFLARE_PAGE = """<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>api.example.com | 502: Bad gateway</title>
<meta charset="UTF-8" />
<style>body{margin:0;padding:0} .cf-error-details{font-size:12px;color:#333;}</style>
<script>window._cf_chl_opt={cvId: '3'};</script>
</head><body><div id="cf-wrapper"><h1>Bad gateway</h1><p>Error code 502</p></div></body></html>"""


@pytest.mark.parametrize("page, shown", [
    (CLOUDFLARE_PAGE, "api.example.com | 502: Bad gateway"),
    ("<html><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>",
     "502 Bad Gateway nginx"),
    (b"<html><head><title>503 Service Unavailable</title></head></html>",
     "503 Service Unavailable"),
])
def test_a_proxy_html_page_is_shown_by_its_title_or_text_not_its_markup(page, shown):
    err = error_from_status(502, {"content-type": "text/html"}, page, provider="openai")
    assert str(err) == f"openai: HTTP 502: {shown} (an HTML page, not the API's error)"
    assert type(err) is ServerError


def test_a_plain_text_error_body_is_shown_as_it_is():
    err = error_from_status(502, {}, "upstream connect error or disconnect/reset before headers",
                            provider="p")
    assert str(err) == "p: HTTP 502: upstream connect error or disconnect/reset before headers"


def test_an_html_page_cut_for_the_message_keeps_no_piece_of_a_secret_it_echoes():
    # the page is cut to its head before the caller's redaction runs: a key straddling the cut
    # must not survive as its first characters (no longer the secret, nor key-shaped)
    secret = "hunter2hunter2hunter2hunter2xyz"
    words = "Bad gateway: the upstream refused the request " * 5
    page = f"<html><head><title>{words[:195]}{secret} and more</title></head></html>"
    err = error_from_status(502, {}, page, provider="p",
                            redact=lambda s: s.replace(secret, "[REDACTED]"))
    assert secret[:5] not in str(err)
    assert str(err).startswith("p: HTTP 502: Bad gateway: the upstream refused")
    assert str(err).endswith("(an HTML page, not the API's error)")



@pytest.mark.parametrize("wait, says", [(0.4, "1s"), (3600.0, "3600s"), (59.2, "60s")])
def test_all_keys_blocked_never_says_a_key_frees_sooner_than_it_does(wait: float, says: str
                                                                     ) -> None:
    """A request that gave up on a provider because its first key frees too late must not read
    "frees in 0s": the wait shown is rounded up."""
    blocked = Attempt("a", "m1", None, "all_keys_blocked", 0.0, retry_after=wait,
                      decision="failover")
    assert f"a/m1:all_keys_blocked (the first key frees in {says})" in str(
        AllProvidersFailed([blocked]))


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


@pytest.mark.parametrize("cut", [None, 6, 12])
def test_the_partial_text_of_a_cut_stream_never_holds_a_key_or_its_start(cut: int | None) -> None:
    """What arrived before a stream was cut is kept on the error for the caller: a configured
    key in it (whole, or its first half where the cut fell) is not."""
    from hermes_core.errors import IncompleteResponse
    from hermes_core.redact import Redactor

    key = "zq81 PLAIN-token-77xx"
    Redactor([key])
    text = "the key is " + (key if cut is None else key[:cut])
    err = IncompleteResponse("cut", partial_text=text)
    assert err.partial_text.startswith("the key is ")
    assert key[:6] not in err.partial_text and key[:6] not in repr(vars(err))


def test_the_final_error_says_how_long_each_timed_out_attempt_waited() -> None:
    """"custom/m1:timeout" twice did not say whether the provider was waited on for a second or a
    minute: each timed-out attempt shows its time; other failures, answered at once, do not."""
    tried = [Attempt("custom", "m1", None, "timeout", 30_012.0, decision="retry"),
             Attempt("custom", "m1", None, "timeout", 450.0, decision="failover"),
             Attempt("backup", "m2", None, "500", 80.0, decision="failover")]
    text = str(AllProvidersFailed(tried))
    assert ("custom/m1:timeout after 30.0s, custom/m1:timeout after 0.5s, backup/m2:500;"
            in text + ";"), text


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

_KEY = "sk-proj-Pk7Lm2Nq9Rs4Tv6Wx8Yz1Ab3Cd5"


def _provider_kwargs() -> dict[str, object]:
    return {"status_code": 502, "provider": "openai",
            "headers": {"x-api-key": _KEY, "x-request-id": "req-1", "echo": f"bearer {_KEY}"},
            "body": {"error": {"message": f"bad key {_KEY}", "code": 7}}}


def _example(cls: type[errors.HermesError]) -> errors.HermesError:
    """One instance of ``cls`` with every attribute set, a key planted where a caller could."""
    if issubclass(cls, errors.ProviderError):
        extra = ({"retry_after": 2.5} if cls is errors.RateLimited else
                 {"partial_text": f"half a reply {_KEY}"} if cls is errors.IncompleteResponse
                 else {})
        error = cls(f"upstream said {_KEY}", **_provider_kwargs(), **extra)  # type: ignore[arg-type]
        error.usage = Usage(input_tokens=10, output_tokens=3)
        return error
    if issubclass(cls, errors.SessionStoreError):
        return cls("/tmp/sessions.db", "file is not a database")
    made: dict[type, Callable[[], errors.HermesError]] = {
        errors.HermesError: lambda: errors.HermesError("plain"),
        errors.ConfigError: lambda: errors.ConfigError(
            "not a number", file="config.yaml", key_path="llm.routing.timeout", line=12),
        errors.DependencyMissing: lambda: errors.DependencyMissing("dense retrieval", "embeddings"),
        errors.NoCredentialAvailable: lambda: errors.NoCredentialAvailable(
            "openai", 105.0, now=100.0, recheck_at=160.0),
        errors.SummaryFailed: lambda: errors.SummaryFailed("empty summary"),
        errors.MemoryWriteError: lambda: errors.MemoryWriteError("MEMORY.md", "too long"),
        errors.PromptInputError: lambda: errors.PromptInputError("h.json", "line 3", "not JSON"),
        errors.StructuredOutputError: lambda: errors.StructuredOutputError(
            "Plan", f"steps: field required ({_KEY})", f"{{'stepz': '{_KEY}'}}", refused=False),
        errors.AllProvidersFailed: lambda: errors.AllProvidersFailed(
            [Attempt("openai", "gpt-4o", "key-0123456789", "server_error", 812.5,
                     decision="failover", error="ServerError: 502",
                     usage=Usage(input_tokens=5, output_tokens=0)),
             Attempt("anthropic", "claude", None, "timeout", 30000.0)],
            errors.ServerError(f"bad gateway {_KEY}", **_provider_kwargs()),  # type: ignore[arg-type]
            rejections=[errors.AuthenticationFailed("openai: key-0123456789 rejected",
                                                    status_code=401)],
            untried=["backup/model"], deadline_s=30.0),
    }
    return made[cls]()


_TREE = sorted((c for c in vars(errors).values()
                if isinstance(c, type) and issubclass(c, errors.HermesError)),
               key=lambda c: c.__name__)


def _state(value: object) -> object:
    """What an error is made of, exceptions inside it included, for comparison."""
    if isinstance(value, BaseException):
        return (type(value), value.args, {k: _state(v) for k, v in vars(value).items()})
    return value


@pytest.mark.parametrize("protocol", [0, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("cls", _TREE, ids=lambda c: c.__name__)
def test_every_error_survives_pickling_with_its_message_and_attributes_and_no_key(
        cls: type[errors.HermesError], protocol: int) -> None:
    """A worker process (multiprocessing, celery) sends its exception back pickled. Errors
    whose constructor takes other arguments than the message (AllProvidersFailed's attempts,
    a store's path and reason) failed to unpickle or came back with another message."""
    error = _example(cls)
    error.add_note(f"while serving a request with {_KEY}")
    data = pickle.dumps(error, protocol)
    assert _KEY.encode() not in data and _KEY[8:20].encode() not in data
    back = pickle.loads(data)
    assert type(back) is cls and str(back) == str(error)
    error.__notes__ = [redact(n) for n in error.__notes__]
    assert _state(back) == _state(error)
    with pytest.raises(cls):   # still raised and caught as what it is
        raise back


def test_the_pickling_examples_cover_the_whole_tree() -> None:
    assert {c.__name__ for c in _TREE} >= {"AllProvidersFailed", "NoCredentialAvailable",
                                          "RateLimited", "SessionQueryInvalid", "ConfigError"}
    for cls in _TREE:
        assert type(_example(cls)) is cls


class _Wrapped(errors.HermesError):
    """An error of a library user's that keeps the exception it wraps as an attribute."""

    def __init__(self, message: str, inner: BaseException, more: dict[str, object]) -> None:
        super().__init__(message)
        self.inner = inner
        self.more = more


def test_an_exception_held_by_an_error_or_chained_to_it_pickles_without_its_key() -> None:
    """The error's own text and attributes were redacted, but an exception it held as an
    attribute (AllProvidersFailed's last_error, a user's wrapped error, one in a list or dict) was
    pickled by its own class, the key in its message and attributes in clear."""
    inner = RuntimeError(f"upstream refused {_KEY}")
    inner.detail = {"echo": f"bearer {_KEY}"}   # type: ignore[attr-defined]
    cases: list[errors.HermesError] = [
        AllProvidersFailed([], inner),
        _Wrapped("wrapped", ValueError(_KEY), {"errors": [OSError(5, f"read {_KEY}")]}),
    ]
    try:   # a chain: __cause__ and __context__ are not pickled at all, so they cannot leak
        try:
            raise inner
        except RuntimeError as e:
            raise errors.HermesError("while loading") from e
    except errors.HermesError as e:
        cases.append(e)
    for error in cases:
        data = pickle.dumps(error)
        assert _KEY.encode() not in data and _KEY[8:20].encode() not in data, type(error).__name__
        back = pickle.loads(data)
        assert type(back) is type(error) and str(back) == str(error)
    back = pickle.loads(pickle.dumps(cases[0]))
    assert type(back.last_error) is RuntimeError and str(back.last_error) == "upstream refused [REDACTED]"
    assert back.last_error.detail == {"echo": "bearer [REDACTED]"}
    wrapped = pickle.loads(pickle.dumps(cases[1]))
    assert isinstance(wrapped.more["errors"][0], OSError) and wrapped.more["errors"][0].errno == 5


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


@pytest.mark.parametrize("body", [
    # LiteLLM re-raising OpenAI's quota error: its own code ("429"), OpenAI's whole error in words
    {"error": {"message": "litellm.RateLimitError: OpenAIException - Error code: 429 - "
                          "{'error': {'message': 'You exceeded your current quota, please check "
                          "your plan and billing details.', 'type': 'insufficient_quota', "
                          "'param': None, 'code': 'insufficient_quota'}}",
               "type": None, "param": None, "code": "429"}},
    # a gateway answering every refusal with a 429: Anthropic's empty prepaid balance
    {"error": {"type": "rate_limit_error",
               "message": "Your credit balance is too low to access the Anthropic API."}},
    "upstream said: billing_hard_limit_reached",
])
def test_a_429_whose_words_say_the_quota_is_spent_is_a_dead_key_not_a_wait(body):
    """A cool-down and back in a minute, a key with no money left was tried again every minute
    by every process; as a rejection it is quarantined and rechecked rarely."""
    assert type(error_from_status(429, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Zhipu (bigmodel.cn / z.ai) answers an unpaid account with a 429, business code 1113, in
    # Chinese or English as the account's site speaks; proxies pass the message on alone
    {"error": {"code": "1113", "message": "余额不足或无可用资源包,请充值。"}},
    "余额不足或无可用资源包,请充值。",
    {"error": {"code": "1113", "message": "Insufficient balance or no resource package. "
                                          "Please recharge."}},
    {"error": {"code": "1113", "message": "您的账户已欠费，请充值后重试"}},
    {"error": {"code": "1113", "message": "Your account is in arrears, please recharge and try "
                                          "again"}},
    # Moonshot (Kimi): a 429 typed exceeded_current_quota_error for an empty balance
    {"error": {"message": "Your account org-x <ak-y> is suspended due to insufficient balance, "
                          "please recharge your account or check your plan and billing details",
               "type": "exceeded_current_quota_error"}},
    # Baidu Qianfan (AppBuilder): BILLING_INSUFFICIENT_BALANCE
    {"error": {"code": "BILLING_INSUFFICIENT_BALANCE",
               "message": "Your account has insufficient balance"}},
    # SiliconFlow's wording (a 403 there; a gateway may send it as a 429)
    {"code": 30011, "message": "The selected model requires paid balance. Your paid balance is "
                               "insufficient. Please top up and try again.", "data": None},
])
def test_a_429_saying_the_balance_is_empty_in_any_provider_s_words_is_a_dead_key(body):
    """Zhipu's 余额不足 and Moonshot's suspended balance were read as a wait: every process
    tried the unpaid key again after each default minute, all day."""
    assert type(error_from_status(429, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Gemini says "current quota" of its per-minute limit too: a wait, not a dead key
    {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
               "message": "You exceeded your current quota, please check your plan and billing "
                          "details. Quota exceeded for metric: generate_content_free_tier_requests"
                          ", limit: 15"}},
    {"error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded "
                                                      "your per-minute rate limit"}},
    # each provider's per-minute 429 as it is sent, none a spent balance
    {"error": {"message": "Rate limit reached for gpt-4o in organization org-x on tokens per min "
                          "(TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. "
                          "Visit https://platform.openai.com/account/rate-limits to learn more.",
               "type": "tokens", "param": None, "code": "rate_limit_exceeded"}},
    {"type": "error", "error": {"type": "rate_limit_error", "message": "This request would exceed "
     "the rate limit for your organization (x) of 50,000 input tokens per minute. For details, "
     "refer to: https://docs.claude.com/en/api/rate-limits."}},
    {"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation under "
               "Azure OpenAI API version 2024-05-01-preview have exceeded token rate limit of your "
               "current OpenAI S0 pricing tier. Please retry after 2 seconds. Please go here: "
               "https://aka.ms/oai/quotaincrease if you would like to further increase the "
               "default rate limit."}},
    {"error": {"message": "litellm.RateLimitError: AzureException RateLimitError - Error code: 429 "
               "- {'error': {'code': '429', 'message': 'Requests to the ChatCompletions_Create "
               "Operation have exceeded token rate limit of your current AIServices S0 pricing "
               "tier.'}}", "type": "throttling_error", "param": None, "code": "429"}},
    {"error": {"message": "Rate limit exceeded: free-models-per-min. ", "code": 429,
               "metadata": {"headers": {"X-RateLimit-Remaining": "0"}}}},
    {"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}},
    {"error": {"message": "Requests rate limit exceeded, please try again later.",
               "type": "limit_requests", "param": None, "code": "limit_requests"}},
    {"code": "Throttling.AllocationQuota", "message": "Allocated quota exceeded, please increase "
                                                      "your quota limit."},
    # Zhipu's concurrency (1302), frequency (1303), traffic (1305) limits and a usage cap that
    # names its reset (1308): waits, however much they speak of 限额
    {"error": {"code": "1302", "message": "您当前使用该 API 的并发数过高，请降低并发，或联系客服"
                                          "增加限额"}},
    {"error": {"code": "1302", "message": "您的账户已达到速率限制，请您控制请求频率"}},
    {"error": {"code": "1303", "message": "您当前使用该 API 的频率过高，请降低频率，或联系客服增加"
                                          "限额"}},
    {"error": {"code": "1305", "message": "该模型当前访问量过大，请您稍后再试"}},
    {"error": {"code": "1308", "message": "已达到 5 小时 的使用上限。您的限额将在 2026-12-07 "
                                          "09:00:00 重置"}},
    {"error": {"code": "1302", "message": "High concurrency usage of this API, please reduce "
                                          "concurrency or contact customer service to increase "
                                          "limits"}},
    # Moonshot's and Qianfan's rate limits
    {"error": {"message": "Your account org-x <ak-y> request reached max request: 3, please try "
                          "again after 1 seconds", "type": "rate_limit_reached_error"}},
    {"error": {"code": "RATE_LIMIT_TOTAL_QPS", "message": "Total API QPS limit exceeded"}},
])
def test_a_429_about_a_rate_not_a_balance_stays_a_wait(body):
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


@pytest.mark.parametrize("body", [
    # Qwen (DashScope / Model Studio, OpenAI-compatible mode): its per-minute token limit
    # (Throttling.AllocationQuota) in OpenAI's quota words and code, pointing at its doc's
    # token-limit section; the throttle clears within the minute
    {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                          "details. For details, see: https://help.aliyun.com/zh/model-studio/"
                          "error-code#token-limit", "type": "insufficient_quota", "param": None,
               "code": "insufficient_quota"}},
    {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                          "details. For details, see: https://www.alibabacloud.com/help/en/"
                          "model-studio/error-code#token-limit", "type": "insufficient_quota"}},
    # the same re-raised by LiteLLM: the code only in the words
    {"error": {"message": "litellm.RateLimitError: OpenAIException - Error code: 429 - {'error': "
                          "{'message': 'You exceeded your current quota, please check your plan "
                          "and billing details. For details, see: https://help.aliyun.com/zh/"
                          "model-studio/error-code#token-limit', 'type': 'insufficient_quota'}}",
               "type": "throttling_error", "code": "429"}},
])
def test_qwen_s_per_minute_limit_in_quota_words_is_a_wait_not_a_dead_key(body):
    """Read as a spent quota, a live Qwen key was quarantined (rechecked a minute later, then
    twice as long after each throttled recheck) for a limit that frees within the minute."""
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


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


# Volcengine Ark (火山方舟) answers an account in arrears with 403 code AccountOverdueError (its
# public error codes; coze-studio #2195), DashScope (Qwen / Model Studio) with 400 code Arrearage,
# "Access denied, please make sure your account is in good standing." (supersonic #1572; in its
# OpenAI-compatible mode, TradingAgents-CN #170): each as sent, and as a gateway answering every
# refusal with 429 sends it
_OVERDUE = [
    {"code": "AccountOverdueError", "message": "The request failed because your account has an "
     "overdue balance. Request id: 0217580791812", "param": "", "type": "Forbidden"},
    {"error": {"code": "AccountOverdueError", "message": "The request failed because your account "
               "has an overdue balance. Request ID: 0217", "param": "", "type": "Forbidden"}},
    {"statusCode": 400, "message": "Access denied, please make sure your account is in good "
     "standing.", "code": "Arrearage", "isJson": True, "requestId": "8af536f9"},
    {"error": {"code": "Arrearage", "param": None, "message": "Access denied, please make sure "
               "your account is in good standing.", "type": "Arrearage"}},
    # LiteLLM's re-raise: the code only in the words
    {"error": {"message": "litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': "
               "{'code': 'Arrearage', 'param': None, 'message': 'Access denied, please make sure "
               "your account is in good standing.', 'type': 'Arrearage'}}", "code": "400"}},
]


@pytest.mark.parametrize("status", [400, 403, 429])
@pytest.mark.parametrize("body", _OVERDUE)
def test_an_account_in_arrears_in_volcengine_s_or_dashscope_s_words_is_a_dead_key(status, body):
    """Read as a 403 the Ark key was rejected for good ("replace the key") when the account
    needed paying; DashScope's 400 was a bad request, failing every call while the pool kept
    handing out the unpaid key; behind a gateway's 429 both were a wait, retried each minute."""
    assert type(error_from_status(status, {}, body, now=NOW)) is QuotaExhausted


@pytest.mark.parametrize("body", [
    # Moonshot's daily token cap (TPD; cc-switch #240, kimi-cli #2318): a limit that resets, not
    # an empty balance
    {"error": {"message": "Your account org-x / proj-y <ak-z> request reached organization TPD "
                          "rate limit, current: 1508351, limit: 1500000",
               "type": "rate_limit_reached_error"}},
])
def test_a_daily_token_cap_stays_a_wait(body):
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited


# Ordinary 400s as providers sent them (issue threads found by search: zhipuai-sdk #14,
# FastGPT #2673, crush #1237, chatgpt-plugin #696, agno #5317, MindSearch #307, PillOCR #21,
# ai.nvim #13, gemini-cli #4701, openai-openapi #11, kibitz #87, LibreChat #3111, OpenHands
# #4643, vllm #3906, copilot-api #176, qwen-code #656 and #2384, Langchain-Chatchat #2815)
_ORDINARY_400 = [
    {"error": {"code": "1210", "message": "API 调用参数有误，请检查文档。"}},
    {"error": {"code": "1214", "message": "messages 参数非法。请检查文档。"}},
    {"code": "1210", "message": "Invalid API parameter, please check the documentation."},
    {"code": "InvalidParameter", "message": "Role must be user or assistant and Content length "
     "must be greater than 0", "request_id": "a1a17b2c-ab3a-9b6f-8994-858509d1361b"},
    {"code": "InvalidParameter", "message": "Tool names are not allowed to be [search]"},
    {"error": {"code": "invalid_parameter_error", "param": None, "message": "<400> InternalError."
               "Algo.InvalidParameter: 'messages' must contain the word 'json' in some form, to "
               "use 'response_format' of type 'json_object'.", "type": "invalid_request_error"}},
    {"error": {"code": "missing_required_parameter", "param": "message",
               "message": "you must provide a messages parameter", "type": "invalid_request_error"}},
    {"error": {"code": "InvalidParameter", "message": "The parameter `max_tokens` specified in "
               "the request are not valid: expected an integer, but got `\"1000\"` instead. "
               "Request id: 0217", "param": "max_tokens", "type": "BadRequest"}},
    {"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name \"role\" at "
               "'contents[0].parts': Cannot find field.", "status": "INVALID_ARGUMENT"}},
    {"error": {"code": 400, "message": "Request contains an invalid argument.",
               "status": "INVALID_ARGUMENT"}},
    {"error": {"code": None, "message": "Your request was rejected as a result of our safety "
               "system. Your prompt may contain text that is not allowed by our safety system.",
               "param": None, "type": "invalid_request_error"}},
    {"type": "error", "error": {"type": "invalid_request_error",
                                "message": "messages: text content blocks must contain "
                                           "non-whitespace text"}},
    {"error": {"message": "Invalid type for 'messages[0].content': expected a string, but got an "
               "array instead.", "type": "invalid_request_error", "param": "messages[0].content",
               "code": "invalid_type"}},
    {"error": {"message": "litellm.BadRequestError: GroqException - Error code: 400 - {'error': "
               "{'message': \"'messages.0' : for 'role:system' the following must be satisfied"
               "[('messages.0.content' : value must be a string)]\", 'type': "
               "'invalid_request_error'}}"}},
    {"object": "error", "message": "[{'type': 'string_type', 'loc': ('body', 'messages', 2, "
     "'function_call'), 'msg': 'Input should be a valid string', 'input': {'name': "
     "'function call', 'arguments': '{}'}, 'url': 'https://errors.pydantic.dev/2.6/v/string_type'"
     "}]", "type": "BadRequestError", "param": None, "code": 400},
    {"error": {"message": "invalid request body, failed to validate schema: (1) Reason: got "
               "array, want string, Location: /properties/messages/items/properties/content/"
               "oneOf/0/type.", "code": "invalid_request_body"}},
    {"error": {"message": "<400> InternalError.Algo.InvalidParameter: An assistant message with "
               "\"tool_calls\" must be followed by tool messages responding to each "
               "\"tool_call_id\".", "type": "invalid_request_error"}},
    {"error": {"message": "[1214][prompt 参数非法。请检查文档。]", "type": "invalid_request_error",
               "param": None, "code": None}},
]

# The same servers' 400s quoting back a part of the request (a prompt, a tool's name): vLLM's
# and SGLang's validation errors carry the offending input (vllm #49239: "the request's entire
# input payload is echoed"; the DeepSeek deployment of MiaAI-Lab #138 echoed the whole
# conversation), OpenAI's schema errors name the function; the user's words here speak of a
# balance, arrears, a quota, as an accountant's, a telecom help desk's or a developer's do
_ECHOING_400 = [
    {"object": "error", "message": "[{'type': 'missing', 'loc': ('body', 'messages', 1, "
     "'content'), 'msg': 'Field required', 'input': {'role': 'user', 'contnt': 'Draft a polite "
     "reminder about the overdue balance on invoice 1042'}}]", "type": "BadRequestError",
     "param": None, "code": 400},
    {"error": {"message": "240 validation errors:\n  {'type': 'string_type', 'loc': ('body', "
               "'input', 'str'), 'msg': 'Input should be a valid string', 'input': [{'role': "
               "'system', 'content': '你是电信客服，回答用户关于账户欠费、余额不足的问题'}, "
               "{'role': 'user', 'content': [{'type': 'input_text', 'text': '我欠费了吗'}]}]}"}},
    {"error": {"message": "1 validation error for ChatCompletionRequest\nmessages.0.content.str\n"
               "  Input should be a valid string [type=string_type, input_value=[{'text': 'Why "
               "is my account in arrears?', 'type': 'input_text'}], input_type=list]"}},
    {"error": {"message": "Invalid schema for function 'list_arrearage_accounts': In context=(), "
               "'additionalProperties' is required to be supplied and to be false.",
               "type": "invalid_request_error", "param": "tools[0].function.parameters",
               "code": "invalid_function_parameters"}},
    {"error": {"message": "'why does my app get insufficient_quota errors?' is not of type "
               "'object' - 'messages.1'", "type": "invalid_request_error", "param": None,
               "code": None}},
    {"error": {"message": "litellm.BadRequestError: OpenAIException - Error code: 400 - "
               "{'object': 'error', 'message': \"[{'type': 'string_type', 'loc': ('body', "
               "'messages', 1, 'content', 'str'), 'msg': 'Input should be a valid string', "
               "'input': [{'type': 'txt', 'text': 'Customer 88 has had an overdue balance "
               "since May'}]}]\", 'type': 'BadRequestError', 'param': None, 'code': 400}",
               "code": "400"}},
    {"object": "error", "message": "[{'type': 'literal_error', 'loc': ('body', 'tools', 0, "
     "'type'), 'msg': \"Input should be 'function'\", 'input': {'type': 'fn', 'function': "
     "{'name': 'overdue', 'description': 'List the customers in arrears, each with the overdue "
     "balance and 欠费 days'}}}]", "type": "BadRequestError", "param": None, "code": 400},
]


@pytest.mark.parametrize("status", [400, 403])
@pytest.mark.parametrize("body", _ORDINARY_400 + _ECHOING_400)
def test_an_ordinary_refusal_quoting_the_user_s_words_of_money_is_no_dead_key(status, body):
    """A 400 or 403 read as an empty balance takes the key out of rotation for every process
    (rechecked hourly at most): the pool's every key, one malformed request each, when the
    words were the user's, quoted back by a validation error. Decision 234 read the quota
    codes anywhere in the words of a 400 or 403 ("arrearage" in a tool's name, a developer's
    "insufficient_quota"), and "overdue balance"; the balance markers before it read an echoed
    prompt ("欠费", "in arrears") as the provider's own."""
    got = error_from_status(status, {}, body, now=NOW)
    assert type(got) is (BadRequest if status == 400 else AuthenticationFailed)


@pytest.mark.parametrize("body", _ECHOING_400)
def test_a_429_quoting_the_user_s_words_of_money_stays_a_wait(body):
    """The 429 path reads a balance's words too (a gateway answering every refusal with a 429),
    and read them in the whole message: the same validation errors quoting back a prompt about an
    overdue balance, 欠费 or a developer's "insufficient_quota", sent as a 429, took the key out
    of rotation for every process instead of a wait."""
    assert type(error_from_status(429, {}, body, now=NOW)) is RateLimited

@pytest.mark.parametrize("body", [
    # LiteLLM re-raising Anthropic's empty prepaid balance: the provider's JSON in the words
    {"error": {"message": "litellm.BadRequestError: AnthropicException - {\"type\":\"error\","
               "\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance "
               "is too low to access the Anthropic API. Please go to Plans & Billing to upgrade "
               "or purchase credits.\"}}"}},
    # claude-code-router's "Error from provider" (its #429 shape): Zhipu's 1113, quotes escaped
    {"error": {"message": "Error from provider: {\\\"error\\\":{\\\"code\\\":\\\"1113\\\","
               "\\\"message\\\":\\\"余额不足或无可用资源包,请充值。\\\"}}", "type": "api_error",
               "code": "provider_response_error"}},
])
def test_a_gateway_quoting_the_provider_s_empty_balance_still_reads_it(body):
    """The request a validation error quotes back is not read (error_echo); the provider's own
    message a gateway quotes whole is."""
    assert type(error_from_status(400, {}, body, now=NOW)) is QuotaExhausted
