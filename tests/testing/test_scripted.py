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


@pytest.mark.parametrize("by_key", [False, True])
def test_a_script_run_out_with_no_default_is_an_error_naming_the_call_not_the_reply_none(
        by_key: bool) -> None:
    from hermes_core.types import Credential
    cred = Credential("p", "sk-test-0123456789")
    provider = ScriptedProvider("p", script=[] if by_key else ["one"],
                                by_key={cred.fingerprint: ["one"]} if by_key else {}, default=None)
    provider.complete(PROMPT, "m1", cred, CallOptions())
    for ask in (provider.complete, lambda *a: list(provider.stream(*a))):
        with pytest.raises(AssertionError) as info:
            ask(PROMPT, "m1", cred, CallOptions())
        assert str(info.value).startswith("ScriptedProvider 'p': no scripted reply left for call ")
        assert f"model 'm1', key {cred.fingerprint}" in str(info.value)
        assert "sk-test-0123456789" not in str(info.value)


@pytest.mark.parametrize("credentials, fingerprint_given", [
    ({}, False),
    ({"p": {"keys": [{"key": "sk-test-0123456789abcdef"}]}}, True),
])
def test_an_agent_given_a_scripted_double_plays_its_script_with_or_without_a_key(
        tmp_path, credentials, fingerprint_given) -> None:
    """``Agent(settings, provider=ScriptedProvider(...))`` with no key fell back to the offline
    provider: the turn answered "[offline reply: ...]", the script never played and a test that
    asserted only that a turn ran passed. A double is keyless (as ``FakeProvider`` is): with no
    key configured it is called with none; a key configured for it is still used."""
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings

    double = ScriptedProvider("p", script=["scripted"])
    agent = Agent(load_settings({"home": str(tmp_path), "credentials": credentials,
                                 "context_engine": {"enabled": False}}, env={}),
                  provider=double, loop_options={"audit_path": False})
    assert agent.chat("hi").text == "scripted" and agent.offline_reason is None
    assert len(double.calls) == 1 and (double.calls[0].fingerprint is not None) == fingerprint_given
    agent.close(wait_warm=False)
