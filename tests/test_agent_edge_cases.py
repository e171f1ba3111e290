"""Agent turns at the edges: async streams, tool rounds that never end, cancelled streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import copy_example_home, offline_agent

from hermes_core.agent.agent import MAX_TOOL_ROUNDS, Agent
from hermes_core.testing import FakeProvider
from hermes_core.types import Completion, ToolCall


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    copy_example_home(dst)
    return dst


def agent_for(home: Path, provider, **settings) -> Agent:
    return offline_agent(home, provider, **settings)


async def test_astream_reply_names_the_provider_and_model_like_achat(home: Path):
    fake = FakeProvider(["one", "two"], name="fake")
    agent = agent_for(home, fake)
    done = await agent.achat("hello")
    _ = [p async for p in agent.astream("again")]
    streamed = agent.last_reply
    assert streamed is not None and streamed.text == "two"
    assert (streamed.provider, streamed.model) == (done.provider, done.model) == ("fake", "m-default")


def _always_calls_a_tool(n: int) -> list[Completion]:
    return [Completion(f"round {i}", "m-default", "fake",
                       tool_calls=(ToolCall(f"call_{i}", "skill_view", '{"name": "docker"}'),))
            for i in range(n)]


@pytest.mark.parametrize("streamed", [False, True])
def test_tool_rounds_cap_keeps_prompt_as_sent_and_history_clean(home: Path, streamed: bool):
    fake = FakeProvider(_always_calls_a_tool(MAX_TOOL_ROUNDS + 1), name="fake")
    agent = agent_for(home, fake)
    if streamed:
        stream = agent.stream("keep calling tools")
        "".join(stream)
        reply = stream.reply
    else:
        reply = agent.chat("keep calling tools")
    assert reply is not None and len(fake.requests) == MAX_TOOL_ROUNDS + 1
    # /prompt shows the last request exactly as sent: no tool answers the model never saw
    assert reply.prompt == fake.requests[-1].prompt
    texts = [m.content for m in agent.history if m.role == "assistant"]
    assert texts.count(f"round {MAX_TOOL_ROUNDS}") == 1
    # every tool call in the history is answered, and every answer follows its call
    asked = [c.id for m in agent.history for c in m.tool_calls]
    answered = [m.tool_call_id for m in agent.history if m.role == "tool"]
    assert asked == answered


def test_undecodable_input_is_replaced_not_carried_into_requests_or_memory(home: Path):
    # "caf\udce9" is what Python makes of the Latin-1 bytes b"caf\xe9" read as UTF-8 with
    # surrogateescape (argv, a file opened that way): such a string cannot be encoded to JSON.
    fake = FakeProvider(["noted"], name="fake")
    agent = agent_for(home, fake)
    agent.chat("caf\udce9 au lait")
    assert fake.last_request.prompt.messages[-1].content == "caf\ufffd au lait"
    assert agent.history[0].content == "caf\ufffd au lait"
    agent.close()   # records the session: used to fail encoding the summary


def test_prompt_command_shows_undecodable_argv_as_replacement_characters(home: Path, capsys):
    from hermes_core.cli.main import main

    assert main(["prompt", "caf\udce9", "--home", str(home), "--json"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")                       # printable and valid JSON text
    assert "caf\ufffd" in json.loads(out)["messages"][-1]["content"]


async def test_astream_tool_rounds_and_cancellation_keep_the_history_consistent(home: Path):
    call = ToolCall("call_1", "skill_view", '{"name": "docker-debugging"}')
    fake = FakeProvider([Completion("", "m-default", "fake", tool_calls=(call,)),
                         "Check the exit code first.", "one two three four"], name="fake")
    agent = agent_for(home, fake)
    text = "".join([p async for p in agent.astream("container exits at once")])
    assert text == "Check the exit code first."
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]
    assert agent.history[2].tool_call_id == "call_1" and "# Skill: docker-debugging" in (
        agent.history[2].content)
    # a consumer that stops after the first piece and closes the stream leaves no trace
    gen = agent.astream("count to four")
    assert await gen.__anext__() == "one "
    await gen.aclose()
    assert len(agent.history) == 4 and agent.last_reply is not None
    assert agent.last_reply.text == "Check the exit code first."


def test_a_home_that_is_a_file_is_one_clear_error(tmp_path, capsys):  # type: ignore[no-untyped-def]
    from hermes_core.agent.agent import Agent
    from hermes_core.cli.main import main
    from hermes_core.errors import ConfigError

    home = tmp_path / "not-a-folder"
    home.write_text("oops", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        Agent.from_config(home=home, offline=True)
    assert str(home) in str(info.value) and "not a folder" in str(info.value)
    code = main(["chat", "--home", str(home), "--offline"])
    err = capsys.readouterr().err
    assert code != 0 and "not a folder" in err and "Traceback" not in err


async def test_streamed_tool_rounds_are_separated_not_run_together(home: Path):
    """A first round that says something before its skill_view call, then the answer: the stream
    shows them as two paragraphs, not 'skill.Check'."""
    call = ToolCall("call_1", "skill_view", '{"name": "docker-debugging"}')
    replies = [Completion("Let me load the docker skill.", "m-default", "fake", tool_calls=(call,)),
               "Check the exit code first."]
    agent = agent_for(home, FakeProvider(list(replies), name="fake"))
    text = "".join(agent.stream("container exits at once"))
    assert text == "Let me load the docker skill.\n\nCheck the exit code first."
    agent2 = agent_for(home, FakeProvider(list(replies), name="fake"))
    atext = "".join([p async for p in agent2.astream("container exits at once")])
    assert atext == text
    assert agent.last_reply is not None and agent.last_reply.text == "Check the exit code first."
    # a first round without text adds no break
    silent = [Completion("", "m-default", "fake", tool_calls=(call,)), "Check the exit code first."]
    agent3 = agent_for(home, FakeProvider(silent, name="fake"))
    assert "".join(agent3.stream("container exits at once")) == "Check the exit code first."
