"""Tests of ``hermes_core/error_echo.py``: a provider's words without the request it quotes."""

from __future__ import annotations

import pytest

from hermes_core.error_echo import own_words


@pytest.mark.parametrize("text,kept,gone", [
    # the provider's own sentence, apostrophes inside words and all
    ("your account's balance is insufficient; don't retry", "balance is insufficient", ""),
    ("users' balance is insufficient", "balance is insufficient", ""),
    # a validation error's echoed input (vLLM, SGLang), a quoted value (OpenAI), a backtick span
    ("[{'msg': 'field required', 'input': {'content': 'an overdue balance'}}]",
     "field required", "overdue"),
    ("input_value=[{'text': 'am i in arrears?', 'type': 'input_text'}]", "input_text", "arrears"),
    ("'why insufficient_quota?' is not of type 'object'", "is not of type", "insufficient"),
    ("got `overdue balance` instead", "instead", "overdue"),
    # a gateway's re-raise: the message and the code are the provider's, kept; what that message
    # quotes in turn is not
    ("error code: 400 - {'error': {'code': 'arrearage', 'message': 'access denied'}}",
     "'arrearage'", ""),
    ("{'message': \"[{'input': {'content': '欠费'}}]\", 'code': 400}", "\"[{", "欠费"),
    # a tool's description, echoed with the tools, is the user's
    ("tools.0: {'description': 'customers in arrears'} is invalid", "is invalid", "arrears"),
    # a quotation never closed (a message cut short) takes the rest with it
    ("1 validation error: 'input': [{'content': 'an overdue balance", "1 validation error",
     "overdue"),
])
def test_own_words_blank_what_the_request_said_and_keep_the_provider_s(text, kept, gone):
    own = own_words(text)
    assert kept in own
    assert not gone or gone not in own


def test_a_long_echo_costs_a_bounded_read() -> None:
    """vLLM echoed a 100 MB body (vllm #49239): only the first 64 KB are read, each quotation
    once; openings never closed are found with one search each, not a scan to the end."""
    text = ("x 'a " * 200_000) + "balance is insufficient"
    assert "balance is insufficient" not in own_words(text)   # past the read, not the provider's
    assert own_words("'a " * 10_000 + "b") == ""
