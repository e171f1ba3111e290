"""Tests of ``hermes_core/request_ids.py``: which header names a failed request, and how an
error that was built from no answer of its own is made to name its stream's request."""

from __future__ import annotations

import pytest

from hermes_core.errors import IncompleteResponse, ServerError
from hermes_core.redact import Redactor
from hermes_core.request_ids import MAX_ID_CHARS, naming, stated_request_id


@pytest.mark.parametrize("headers, stated", [
    ({"X-Request-Id": "req_1"}, ("x-request-id", "req_1")),            # any case
    ({"request-id": ["req_a", "req_b"]}, ("request-id", "req_a, req_b")),   # sent twice
    ({"x-request-id": "  ", "cf-ray": "8abc-SJC"}, ("cf-ray", "8abc-SJC")),  # blank: the next
    ({"x-request-id": "req_\r\nSet-Cookie: x"}, ("x-request-id", "req_Set-Cookie: x")),
    ({"content-type": "text/html"}, None),
    ({}, None),
    (None, None),
])
def test_the_first_header_stating_an_id_names_the_request(headers, stated):
    assert stated_request_id(headers) == stated


def test_an_id_longer_than_any_server_means_is_cut():
    stated = stated_request_id({"x-request-id": "r" * 1000})
    assert stated is not None and len(stated[1]) == MAX_ID_CHARS


def test_a_failed_stream_s_error_names_the_request_in_its_words():
    error = naming(IncompleteResponse("p: the stream ended early", provider="p"),
                   "request-id", "req_011Cut")
    assert error.request_id == "req_011Cut"
    assert str(error) == "p: the stream ended early (request-id req_011Cut)"


def test_an_error_naming_its_own_request_keeps_it():
    error = ServerError("p: HTTP 500: boom", headers={"x-request-id": "req_own"}, provider="p")
    assert naming(error, "x-request-id", "req_stream").request_id == "req_own"
    assert "req_stream" not in str(error)


@pytest.mark.parametrize("stated", [None, "", "   "])
def test_no_stated_id_names_nothing(stated):
    error = naming(ServerError("p: cut", provider="p"), "x-request-id", stated)
    assert error.request_id is None and str(error) == "p: cut"


def test_an_id_echoing_the_key_names_its_fingerprint_not_the_key():
    secret = "hunter2hunter2hunter2hunter2xyz"
    error = naming(ServerError("p: cut", provider="p"), "x-request-id", f"req-{secret}", [secret])
    assert secret not in str(error) and secret not in str(error.request_id)


#: A custom endpoint's key: no known key shape, found only because it is registered.
_CUSTOM_KEY = "Zq8xWv3Lp0Tn5Rk2Yh7Jm4Bc9Fd6Gs1Qe"


def test_a_registered_key_echoed_across_the_cut_leaves_no_head_of_itself():
    """A proxy echoing the key after a long id: cut at ``MAX_ID_CHARS`` first, the key was no
    longer whole, no scrubber knew its head, and its first 16 characters were named."""
    Redactor([_CUSTOM_KEY])
    stated = stated_request_id({"x-request-id": "req-" + "a" * 80 + _CUSTOM_KEY})
    assert stated is not None and len(stated[1]) <= MAX_ID_CHARS
    assert _CUSTOM_KEY[:6] not in stated[1], stated


def test_a_key_handed_to_the_reader_is_scrubbed_before_the_cut():
    stated = stated_request_id({"request-id": "req-" + "a" * 80 + _CUSTOM_KEY}, [_CUSTOM_KEY])
    assert stated is not None and _CUSTOM_KEY[:6] not in stated[1], stated
