"""Tests of ``hermes_core/error_echo.py``: a provider's words without the request it quotes."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_core.error_echo import own_words


@pytest.mark.parametrize("text,kept,gone", [
    # the provider's own sentence, apostrophes inside words and all
    ("your account's balance is insufficient; don't retry", "balance is insufficient", ""),
    ("users' balance is insufficient", "balance is insufficient", ""),
    # a validation error's echoed input (vLLM, SGLang), a quoted value (OpenAI), a backtick span
    ("[{'msg': 'field required', 'input': {'content': 'an overdue balance'}}]",
     "field required", "overdue"),
    ("input_value=[{'text': 'am i in arrears?', 'type': 'input_text'}]", "input_value=", "arrears"),
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


# the pieces a conversation echoed by a validation error is made of here: the words of money a
# user may write, and what a quotation's edges are made of (apostrophes in and around words,
# both quote marks, backticks, a backslash, a path ending in one, a dict pasted as text)
_PIECES = ["in arrears", "overdue balance", "欠费", "C:\\", "\\", "'", '"', "`", "don't",
           " 'x", "x' ", "users'", "{'message': 'q'}", "a ", "(", "\n"]
_MONEY = ("in arrears", "overdue balance", "欠费")


def _echoed(texts: list[str], form: str) -> str:
    """A validation error quoting back a conversation of ``texts`` as vLLM and SGLang write it
    (Python's repr of pydantic's errors), as a JSON server does, or re-raised by a gateway
    (LiteLLM: the server's error, its message that repr, written by repr again; a router: the
    server's JSON escaped as a string's content)."""
    error = [{"type": "string_type", "loc": ["body", "messages", 0, "content"],
              "msg": "Input should be a valid string",
              "input": [{"role": "user", "content": t} for t in texts]}]
    if form == "json":
        return json.dumps({"detail": error}, ensure_ascii=False)
    server = {"object": "error", "message": repr(error), "type": "BadRequestError",
              "param": None, "code": 400}
    if form == "gateway":
        return "litellm.BadRequestError: OpenAIException - Error code: 400 - " + repr(server)
    if form == "router":   # claude-code-router: the server's JSON, escaped, in its own message
        return "Error from provider: " + json.dumps(json.dumps(server, ensure_ascii=False),
                                                    ensure_ascii=False)[1:-1]
    return repr(error)


@settings(max_examples=400, deadline=None)
@example(texts=["it's C:\\", "(am i in arrears?) it's"], form="python")
@example(texts=["C:\\", "(am i in arrears?)"], form="json")
@example(texts=['she wrote "my account is in arrears"'], form="gateway")
@example(texts=["it's in arrears"], form="router")
@given(texts=st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8).map("".join),
                      min_size=1, max_size=3),
       form=st.sampled_from(["python", "json", "gateway", "router"]))
def test_no_word_of_an_echoed_conversation_is_read_as_the_provider_s(texts, form):
    """vLLM and SGLang echo the request as Python writes it (pydantic's ``input``), others as
    JSON, and a gateway re-raises that error inside its own. A message ending in a backslash
    ("C:\\") is written ``"...\\\\"``: its closing quote follows a backslash, was taken for an
    escaped one, and the quotation ran on to the next message's opening quote, leaving that
    message, a user's words of money, outside any. Re-raised, a conversation holding both quote
    marks (a user quoting anything: "don't", "pay now") has its quotes escaped in the gateway's
    message (``\\'content\\': \\'...\\'``): no quotation was found inside it; a router's message
    is an escaped JSON document (``{\\"object\\": ...}``), every quote of it escaped."""
    own = own_words(_echoed(texts, form).lower())
    assert "input should be a valid string" in own
    assert not any(m in own for m in _MONEY), own


@pytest.mark.parametrize("text", [
    # a malformed message: "message" where "content" belongs, pydantic's "missing" quoting it
    "[{'type': 'missing', 'loc': ('body', 'messages', 0, 'content'), 'msg': 'Field required', "
    "'input': {'role': 'user', 'message': 'Why is my account in arrears?'}}]",
    # a tool's result sent as a dict where a string belongs
    "[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'content', 'str'), 'msg': 'Input "
    "should be a valid string', 'input': {'error': 'customer 88: account in arrears'}}]",
    "[{'type': 'string_type', 'msg': 'Input should be a valid string', 'input': [{'status': "
    "'failed', 'code': 'arrearage', 'detail': {'type': 'overdue balance'}}]}]",
    # pydantic's str form
    "1 validation error for ChatCompletionRequest\nmessages.0\n  Input should be a valid "
    "dictionary [type=dict_type, input_value={'role': 'user', 'msg': '我欠费了吗'}, "
    "input_type=dict]",
    # JSON
    '{"detail": [{"type": "missing", "msg": "Field required", "input": {"role": "user", '
    '"message": "am i in arrears?"}}]}',
])
def test_fields_of_an_echoed_request_are_not_the_provider_s(text):
    """The value of a message, code, error or type field is kept as the provider's, also inside
    the request a validation error quotes back: a message sent with ``message`` where
    ``content`` belongs, a tool's result sent as a dict with an ``error``, were read as the
    provider saying the balance is spent. The echoed input (``'input': ...``, ``input_value=``)
    is the request's, whatever its fields."""
    own = own_words(text.lower())
    assert "field required" in own or "valid" in own
    assert not any(m in own for m in (*_MONEY, "arrearage")), own
