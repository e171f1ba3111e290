"""Tests of ``hermes_core/errors.py``.

The one status -> error mapping, the errors' messages and what they keep of a key, as tables.
How long a refusal says to wait is pinned in test_errors_retry_after.py, a spent balance in
test_errors_dead_keys.py.
"""

from __future__ import annotations

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
)
from hermes_core.redact import Redactor, redact
from hermes_core.types import Usage
from tests.conftest import NOW


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


# --------------------------------------------------------------------------- the request it names

@pytest.mark.parametrize("headers, named, shown", [
    ({"x-request-id": "req_8f3a2b"}, "req_8f3a2b", "(x-request-id req_8f3a2b)"),          # OpenAI
    ({"request-id": "req_011CXyz"}, "req_011CXyz", "(request-id req_011CXyz)"),          # Anthropic
    ({"apim-request-id": "6f1c-42"}, "6f1c-42", "(apim-request-id 6f1c-42)"),            # Azure
    # a CDN's page names no provider request; its ray id is what the proxy's operator asks for
    ({"cf-ray": "8abc123def-SJC"}, "8abc123def-SJC", "(cf-ray 8abc123def-SJC)"),
    # the provider's own id before a proxy's
    ({"cf-ray": "8abc123def-SJC", "X-Request-ID": "req_8f3a2b"}, "req_8f3a2b",
     "(x-request-id req_8f3a2b)"),
])
def test_an_error_names_the_provider_request_it_answered(headers, named, shown):
    """The id a provider's support asks for is in the error a person reads, and on the error."""
    err = error_from_status(502, headers, {"error": {"message": "upstream failed"}},
                            provider="openai")
    assert err.request_id == named
    assert str(err) == f"openai: HTTP 502: upstream failed {shown}"


def test_an_error_whose_answer_names_no_request_says_none():
    err = error_from_status(500, {"content-type": "application/json"},
                            {"error": {"message": "boom"}}, provider="p")
    assert err.request_id is None
    assert str(err) == "p: HTTP 500: boom"


def test_a_request_id_echoing_the_key_is_not_named():
    secret = "hunter2hunter2hunter2hunter2xyz"
    err = error_from_status(500, {"x-request-id": secret}, {"error": {"message": "boom"}},
                            provider="p", redact=lambda s: s.replace(secret, "[REDACTED]"))
    assert secret not in str(err) and secret not in str(err.request_id)
    assert secret not in repr(pickle.loads(pickle.dumps(err)).__dict__)


def test_a_request_id_of_a_page_s_length_is_named_by_its_head():
    err = error_from_status(500, {"x-request-id": "r" * 5000}, {}, provider="p")
    assert err.request_id is not None and len(err.request_id) <= 100
    assert len(str(err)) < 200


def test_a_registered_key_a_request_id_echoes_past_its_cut_is_not_named_in_part():
    """The id is cut to 100 characters: cut before it was scrubbed, a key straddling the cut
    was no key to ``redact`` any more and its head reached the message."""
    key = "Zq8xWv3Lp0Tn5Rk2Yh7Jm4Bc9Fd6Gs1Qe"
    Redactor([key])
    err = error_from_status(500, {"x-request-id": "req-" + "a" * 80 + key},
                            {"error": {"message": "boom"}}, provider="p")
    assert key[:6] not in str(err) and key[:6] not in str(err.request_id), str(err)
