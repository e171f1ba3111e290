"""ScriptedProvider plays each script item as what it is: a reply, a Completion, a stream's
deltas, or an error."""

from __future__ import annotations

import asyncio

import pytest

from hermes_core.errors import IncompleteResponse
from hermes_core.providers.base import CallOptions
from hermes_core.testing import ScriptedProvider, tool_call
from hermes_core.types import Completion, Delta, Message, Prompt

PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


def test_a_scripted_completion_is_answered_as_it_is_not_as_its_repr() -> None:
    call = tool_call("lookup", name="oslo")
    provider = ScriptedProvider("p", script=[Completion("checking", "", "", tool_calls=(call,),
                                                        finish_reason="tool_calls")])
    done = provider.complete(PROMPT, "m", None, CallOptions())
    assert (done.text, done.tool_calls, done.finish_reason) == ("checking", (call,), "tool_calls")
    assert (done.model, done.provider) == ("m", "p")


def test_scripted_deltas_stream_as_they_are_and_a_completion_streams_its_calls() -> None:
    call = tool_call("lookup", name="oslo")
    provider = ScriptedProvider("p", script=[
        [Delta(text="He"), "llo", Delta(finish_reason="stop")],
        Completion("ok", "", "", tool_calls=(call,), finish_reason="tool_calls")])
    assert list(provider.stream(PROMPT, "m", None, CallOptions())) == [
        Delta(text="He"), Delta(text="llo"), Delta(finish_reason="stop")]
    deltas = list(provider.stream(PROMPT, "m", None, CallOptions()))
    assert [d.text for d in deltas if d.text] == ["ok"]
    assert [d.tool_call for d in deltas if d.tool_call] == [call]
    assert deltas[-1].finish_reason == "tool_calls"


def test_a_stream_script_asked_whole_is_its_text_or_its_error() -> None:
    provider = ScriptedProvider("p", script=[
        ["Hel", Delta(text="lo")], ["Hel", IncompleteResponse("dropped")]])
    assert provider.complete(PROMPT, "m", None, CallOptions()).text == "Hello"
    with pytest.raises(IncompleteResponse):
        asyncio.run(provider.acomplete(PROMPT, "m", None, CallOptions()))
