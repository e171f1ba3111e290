"""Tests of ``hermes_core/providers/refused.py``: which 400s name an optional field to send
otherwise, and the payload rewritten around what a model refused."""

from __future__ import annotations

import logging

import pytest

from hermes_core.providers.refused import RefusedFields, refused_field, refuses_streaming

PAYLOAD = {"model": "m", "messages": [], "max_tokens": 9, "temperature": 0.2,
           "reasoning_effort": "minimal"}


@pytest.mark.parametrize("error, field", [
    ({"message": "Unsupported parameter: 'max_tokens' ...", "param": "max_tokens",
      "code": "unsupported_parameter"}, "max_tokens"),
    # gpt-5.1 on 'minimal': the Responses API's spelling of the field
    ({"message": "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.",
      "param": "reasoning.effort", "code": "unsupported_value"}, "reasoning_effort"),
    # a gateway with no param and no code: the quoted name in its message
    ({"message": "Unsupported parameter: 'temperature' for this model"}, "temperature"),
    ({"message": "Function tools with reasoning_effort are not supported for this model.",
      "param": "reasoning_effort", "code": None}, "reasoning_effort"),
])
def test_an_unsupported_optional_field_is_named(error: dict[str, object], field: str) -> None:
    assert refused_field(400, error, PAYLOAD) == field
    assert refused_field(400, {"error": error}, PAYLOAD) == field   # wrapped or not


@pytest.mark.parametrize("status, error", [
    (400, {"message": "Invalid 'messages[0].role'", "param": "messages[0].role",
           "code": "unsupported_value"}),                        # content, not a knob
    (400, {"message": "Unsupported parameter: 'top_p'", "param": "top_p"}),   # not sent
    (400, {"message": "temperature must be at most 2", "param": "temperature",
           "code": "invalid_value"}),                            # a wrong value, not unsupported
    (429, {"message": "Unsupported parameter: 'seed'", "param": "seed"}),
    (400, ["not", "a", "mapping"]),
])
def test_other_errors_name_no_field(status: int, error: object) -> None:
    assert refused_field(status, error, PAYLOAD) is None


def test_a_refused_field_is_renamed_or_left_out_for_that_model_only(caplog) -> None:
    refused = RefusedFields()
    with caplog.at_level(logging.WARNING):
        assert refused.learn("o3", "max_tokens", "azure")
        assert refused.learn("o3", "temperature", "azure")
    assert not refused.learn("o3", "temperature", "azure")   # known: no third send
    assert "sent as 'max_completion_tokens'" in caplog.text and "left out" in caplog.text
    assert refused.apply("o3", dict(PAYLOAD)) == {
        "model": "m", "messages": [], "max_completion_tokens": 9, "reasoning_effort": "minimal"}
    assert refused.apply("gpt-4o", dict(PAYLOAD)) == PAYLOAD


def test_both_spellings_refused_send_neither() -> None:
    refused = RefusedFields()
    refused.learn("m", "max_tokens", "p")
    refused.learn("m", "max_completion_tokens", "p")
    out = refused.apply("m", {"max_tokens": 5, "max_completion_tokens": 5})
    assert out == {}


@pytest.mark.parametrize("status, body, refused", [
    (400, {"error": {"message": "Your organization must be verified to stream this model.",
                     "param": "stream", "code": "unsupported_value"}}, True),
    (400, {"param": "stream", "message": "not allowed"}, True),            # unwrapped
    (400, {"error": {"param": "stream_options", "message": "unsupported"}}, False),
    (400, {"error": {"message": "stream is not supported"}}, False),       # names no field
    (403, {"error": {"param": "stream"}}, False),
    (400, "stream", False),
])
def test_only_a_400_naming_stream_refuses_streaming(status: int, body: object,
                                                     refused: bool) -> None:
    assert refuses_streaming(status, body) is refused


def test_a_model_that_may_not_be_streamed_is_remembered_and_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    fields = RefusedFields()
    assert not fields.unstreamed("o3")
    with caplog.at_level(logging.WARNING, logger="hermes_core.providers.refused"):
        fields.learn_unstreamed("o3", "openai")
        fields.learn_unstreamed("o3", "openai")
    assert fields.unstreamed("o3") and not fields.unstreamed("gpt-4o")
    assert len([r for r in caplog.records if "may not be streamed" in r.getMessage()]) == 1
