"""Tests of ``hermes_core/redact_forms.py``: the spellings of a key a writer may print."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from hermes_core.redact_forms import encoded_forms


@pytest.mark.parametrize("user", ["", "u", "bo", "bot", "deploy-bot"])
def test_a_key_inside_any_base64_value_holds_one_of_its_forms(user: str) -> None:
    """``base64(user:key)``: the key's letters depend on where it starts in a group of three
    bytes; one of the three shifted cores is found whatever the user name's length."""
    key = "my secret key 42"
    forms = encoded_forms(key)
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        value = encode(f"{user}:{key}".encode()).decode()
        assert any(f in value for f in forms if f != key), (user, value)


def test_the_common_spellings_are_forms() -> None:
    key = 'a "b"/c é'
    forms = encoded_forms(key)
    assert {key, urllib.parse.quote(key, safe=""), urllib.parse.quote_plus(key),
            json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1],
            repr(key.encode())[2:-1]} <= forms


def test_a_short_key_has_no_shifted_base64_cores() -> None:
    """A three-letter core of a short key turns up inside ordinary base64 by chance."""
    forms = encoded_forms("Zq7x")
    assert min(len(f) for f in forms) >= 4
    assert base64.b64encode(b"Zq7x").decode() in forms


def test_a_key_escaped_twice_is_a_form() -> None:
    """A JSON text inside a JSON string (a structured reply sent as one string) escapes the key's
    quote, backslash and accent twice; decoding it gives the key back whole. Failed before."""
    key = 'a "b"\\c é'
    forms = encoded_forms(key)
    assert {json.dumps(json.dumps(key)[1:-1])[1:-1],
            json.dumps(json.dumps(key, ensure_ascii=False)[1:-1], ensure_ascii=False)[1:-1]} <= forms
