"""The test doubles script tool calls, so an author unit-tests a tool loop offline."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider, FunctionProvider, tool_call, tool_calls
from hermes_core.types import Completion, Prompt


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_fake_provider_scripts_a_tool_round(make_agent: Any) -> None:
    fake = FakeProvider([tool_calls(tool_call("add", a=2, b=3, id="c1"), text="Adding."),
                         "2 + 3 = 5"])
    agent = make_agent(fake, tools=[add])
    reply = agent.chat("what is 2 + 3?")
    assert reply.text == "2 + 3 = 5"
    assert [(r.call_id, r.output, r.status) for r in reply.tool_results] == [("c1", "5", "ok")]
    second = fake.requests[1].prompt.messages
    assert (second[-1].role, second[-1].content, second[-1].tool_call_id) == ("tool", "5", "c1")
    assert [t.name for t in fake.requests[0].prompt.tools] == ["add"]


def test_scripted_calls_stream_and_run_async(make_agent: Any) -> None:
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=1)), "two",
                         tool_calls(tool_call("add", '{"a": "x"}')), "bad"])
    agent = make_agent(fake, tools=[add])
    stream = agent.stream("1+1")
    assert "".join(stream) == "two"
    assert stream.reply is not None and stream.reply.tool_results[0].output == "2"
    reply = asyncio.run(agent.achat("x+?"))
    assert reply.tool_results[0].status == "invalid"


def test_function_provider_decides_from_the_prompt(make_agent: Any) -> None:
    def model(prompt: Prompt, name: str) -> str | Completion:
        last = prompt.messages[-1]
        if last.role == "tool":
            return f"the sum is {last.content}"
        return tool_calls(tool_call("add", a=40, b=2))

    agent = make_agent(FunctionProvider(model), tools=[add])
    assert agent.chat("40+2").text == "the sum is 42"


def test_agent_tool_decorator_and_the_round_cap(make_agent: Any) -> None:
    always = [tool_calls(tool_call("ping", id=f"c{i}")) for i in range(5)]
    fake = FakeProvider(always, default=None)
    agent = make_agent(fake, max_tool_rounds=2)
    pings: list[int] = []

    @agent.tool
    def ping() -> str:
        """Ping."""
        pings.append(1)
        return "pong"

    reply = agent.chat("ping forever")
    assert len(fake.requests) == 3 and len(pings) == 2      # two rounds answered, then it ends
    assert [c.id for c in reply.tool_calls] == ["c0", "c1", "c2"]
    assert [r.call_id for r in reply.tool_results] == ["c0", "c1"]
    assert agent.stats.tool_calls == 2


def test_max_tool_rounds_comes_from_config(make_agent: Any) -> None:
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2)), "unused"], default=None)
    agent = make_agent(fake, tools=[add], llm={"max_tool_rounds": 0,
                                                            "routing": {"default_model": "m"}})
    reply = agent.chat("1+2")
    assert len(fake.requests) == 1 and reply.tool_results == ()


def test_per_turn_options_reach_the_provider(make_agent: Any) -> None:
    fake = FakeProvider(["ok", "ok"])
    agent = make_agent(fake, tools=[add], llm={"seed": 11, "routing": {"default_model": "m"}})
    agent.chat("hi", options={"tool_choice": "required", "stop": ["END"]})
    opts = fake.last_request.options
    assert (opts.tool_choice, opts.stop, opts.seed) == ("required", ("END",), 11)
    agent.chat("again")
    assert fake.last_request.options.tool_choice is None


def _agent(home: Path, fake: FakeProvider) -> Agent:
    return Agent(load_settings({"home": str(home), "skill_utils": {"enabled": False}}, env={}),
                 provider=fake)


def test_hermes_home_runs_the_test_in_an_empty_working_directory(hermes_home: Path):
    assert Path.cwd() != hermes_home and os.listdir(Path.cwd()) == []
    assert os.environ["HERMES_HOME"] == str(hermes_home)


def test_readme_persona_test_passes_even_inside_a_repository_with_agents_md(hermes_home: Path):
    (hermes_home / "SOUL.md").write_text("You are Ada.")
    fake = FakeProvider(["Hello!"])
    with _agent(hermes_home, fake) as agent:
        assert agent.chat("hi").text == "Hello!"
    assert fake.last_request.prompt.system == "You are Ada."   # no project AGENTS.md mixed in


def test_a_summary_request_is_declined_without_scripted_summaries(hermes_home: Path):
    fake = FakeProvider(["Hello!"])
    with _agent(hermes_home, fake) as agent:
        agent.chat("The deploy key for staging rotates every 90 days, remember that")
    assert fake.last_request.purpose == "turn"                 # the user's turn, after close()
    assert fake.last_request.last_user_message.startswith("The deploy key")
    assert [r.purpose for r in fake.summary_requests] == ["summary"]
    # the session was recorded from the extractive fallback, not from a canned "ok"
    with _agent(hermes_home, FakeProvider(["?"])) as later:
        found = later.context_engine.retrieve("deploy key staging rotates")
    assert found and "90 days" in found[0].summary and found[0].summary != "ok"


def test_scripted_summaries_answer_summary_requests_only(hermes_home: Path):
    fake = FakeProvider(["Hello!"], summaries=[
        "SUMMARY: The user said the staging deploy key rotates every 90 days.\nTAGS: staging"])
    with _agent(hermes_home, fake) as agent:
        reply = agent.chat("The deploy key for staging rotates every 90 days")
    assert reply.text == "Hello!"
    with _agent(hermes_home, FakeProvider()) as later:
        found = later.context_engine.retrieve("deploy key staging")
    assert found and found[0].summary.startswith("The user said the staging deploy key")


def test_a_canned_reply_as_summary_is_rejected_for_the_fallback(hermes_home: Path):
    fake = FakeProvider(["Hello!"], summaries=["ok"])
    with _agent(hermes_home, fake) as agent:
        agent.chat("Our VPN gateway is vpn-gw-3 in Frankfurt")
    with _agent(hermes_home, FakeProvider()) as later:
        found = later.context_engine.retrieve("VPN gateway Frankfurt")
    assert found and "vpn-gw-3" in found[0].summary


def test_a_stream_cut_mid_way_shows_what_arrived_then_fails(make_agent: Any) -> None:
    """An author tests what their UI does when the connection drops mid-reply: ``streamed``
    scripts the exact chunks and the error that ends them (a FakeProvider reply could only fail
    before its first word, which the agent retried)."""
    from hermes_core.errors import HermesError, IncompleteResponse
    from hermes_core.testing import streamed
    fake = FakeProvider([streamed("部署", "已经开始，", "请稍", then=IncompleteResponse("dropped"))])
    agent = make_agent(fake)
    shown: list[str] = []
    stream = agent.stream("部署到预发布环境")
    try:
        for piece in stream:
            shown.append(piece)
    except HermesError as e:
        failure: HermesError = e
    assert "".join(shown) == "部署已经开始，请稍" and "dropped" in str(failure)
    assert agent.history == [] and len(fake.turn_requests) == 1   # the cut turn left no trace


def test_streamed_chunks_arrive_exactly_as_scripted_and_complete_joins_them(make_agent: Any) -> None:
    from hermes_core.testing import streamed
    fake = FakeProvider([streamed("Run the dep", "loy script"), streamed("a", "b")])
    agent = make_agent(fake)
    # the agent holds a word that could still become a key until it ends, then shows it
    assert list(agent.stream("how?")) == ["Run the ", "deploy ", "script"]
    assert agent.chat("and?").text == "ab"
    assert [r.streamed for r in fake.turn_requests] == [True, False]


def test_a_429_with_retry_after_is_waited_on_the_test_s_clock(hermes_home: Path) -> None:
    """The README's recipe: a scripted RateLimited, then a reply; the wait is the server's
    Retry-After, taken on a FakeClock (no real sleeping)."""
    from hermes_core.errors import RateLimited
    from hermes_core.testing import FakeClock
    clock = FakeClock()
    fake = FakeProvider([RateLimited("slow down", retry_after=7), "ok now"])
    agent = Agent(load_settings({"home": str(hermes_home)}), provider=fake,
                  loop_options={"clock": clock, "sleep": clock.sleep})
    assert agent.chat("hi").text == "ok now"
    assert clock.sleeps == [7.0] and len(fake.turn_requests) == 2


def test_a_request_names_the_skills_hinted_and_the_memories_recalled(hermes_home: Path) -> None:
    """What an author asserts on: the system prompt, which skills the turn hinted and which past
    sessions it recalled, by name and summary, without reading the prompt's internals."""
    from hermes_core.testing.retrieval import skill_md, write_skill
    write_skill(hermes_home / "skills", "deploy", skill_md("deploy", "Deploy the service to staging"))
    cfg = {"home": str(hermes_home), "skill_utils": {"embeddings": False}}
    first = FakeProvider(["Noted."], summaries=[
        "SUMMARY: The staging database listens on port 6543.\nTAGS: staging"])
    with Agent(load_settings(cfg, env={}), provider=first) as agent:
        agent.chat("The staging database listens on port 6543")
    fake = FakeProvider(["Deploying."])
    with Agent(load_settings(cfg, env={}), provider=fake) as agent:
        agent.chat("deploy the service to staging, the database is on which port?")
    sent = fake.last_request
    assert sent.system == sent.prompt.system and sent.system.startswith("You are Hermes")
    assert sent.skills_hinted == ("deploy",)
    assert [m.summary for m in sent.memories_recalled] == [
        "The staging database listens on port 6543."]
    assert "- deploy: Deploy the service to staging" in sent.context


def test_a_streamed_script_may_end_in_tool_calls_and_the_async_stream_is_cut_the_same(
        make_agent: Any) -> None:
    import pytest

    from hermes_core.errors import IncompleteResponse
    from hermes_core.testing import streamed
    fake = FakeProvider([streamed("Let me add. ", calls=[tool_call("add", a=2, b=3, id="c1")]),
                         "2 + 3 = 5", streamed("部署", "已经开始，", then=IncompleteResponse("x"))])
    agent = make_agent(fake, tools=[add])
    stream = agent.stream("2 + 3?")
    assert "".join(stream) == "Let me add. \n\n2 + 3 = 5"
    assert stream.reply is not None and stream.reply.tool_results[0].output == "5"

    async def cut() -> str:
        shown = ""
        with pytest.raises(IncompleteResponse):
            async for piece in agent.astream("部署"):
                shown += piece
        return shown

    assert asyncio.run(cut()) == "部署已经开始，" and len(agent.history) == 4


def test_a_skill_loaded_whole_by_its_trigger_is_named_apart_from_the_hinted_ones(
        hermes_home: Path) -> None:
    """A trigger phrase loads its SKILL.md whole instead of hinting: ``skills_hinted`` named
    every skill the retriever returned although the model was offered none of them as a hint."""
    from hermes_core.testing.retrieval import skill_md, write_skill
    write_skill(hermes_home / "skills", "docker", skill_md(
        "docker-debugging", "Diagnose a Docker container that exits",
        body="Run docker logs first.", extra="triggers:\n  - container exits immediately\n"))
    write_skill(hermes_home / "skills", "k8s", skill_md("k8s-pods", "Debug Kubernetes pods"))
    fake = FakeProvider(["Check the logs."])
    with Agent(load_settings({"home": str(hermes_home), "skill_utils": {"embeddings": False}},
                             env={}), provider=fake) as agent:
        agent.chat("my container exits immediately, why?")
    sent = fake.last_request
    assert sent.skill_loaded == "docker-debugging" and sent.skills_hinted == ()
    assert "Run docker logs first." in sent.context


def test_a_streamed_script_reports_usage_as_a_reply_string_does(make_agent: Any) -> None:
    """Token counts (``Reply.usage``, ``/stats``, cost) came back zero for a ``streamed`` script
    while the same reply as a string was counted: a test of cost tracking could not use it."""
    from hermes_core.testing import streamed
    fake = FakeProvider(["Run the deploy script", streamed("Run the dep", "loy script")])
    agent = make_agent(fake)
    usage = []
    for _ in range(2):
        stream = agent.stream("how?")
        assert "".join(stream) == "Run the deploy script" and stream.reply is not None
        usage.append(stream.reply.usage)
    plain, scripted = usage
    assert scripted.output_tokens == plain.output_tokens > 0
    assert scripted.input_tokens > plain.input_tokens > 0   # the second turn sends the first


def test_a_configured_key_typed_in_a_turn_is_not_in_what_the_double_recorded(
        hermes_home: Path) -> None:
    key = "zq-custom-0123456789abcdef"
    fake = FakeProvider(["noted"])
    settings = load_settings({"home": str(hermes_home),
                              "credentials": {"custom": {"keys": [{"key": key}]}}}, env={})
    agent = Agent(settings, provider=fake, loop_options={"audit_path": False})
    reply = agent.chat(f"my key is {key}")
    # pytest prints these reprs when an assertion on one of their attributes fails
    assert key not in repr(fake.last_request)
    assert key not in repr(reply)
    assert fake.last_request.last_user_message.endswith("]")


def test_a_scripted_call_may_take_an_argument_called_name() -> None:
    """``name`` was the helper's own parameter: ``tool_call("lookup", name="Oslo")`` was a
    TypeError, for one of the commonest argument names."""
    assert tool_call("lookup", name="Oslo").arguments == '{"name": "Oslo"}'
    assert tool_call("get", {"id": 7}, id="c9").arguments == '{"id": 7}'
    assert tool_call("get", {"id": 7}, id="c9").id == "c9"


def test_a_script_run_out_names_the_double_the_request_and_the_turn(make_agent: Any) -> None:
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2)), "3"], name="calc", default=None)
    agent = make_agent(fake, tools=[add])
    assert agent.chat("what is 1 + 2?").text == "3"
    asks = [(3, agent.chat), (4, lambda m: "".join(agent.stream(m)))]
    for number, ask in asks:
        with pytest.raises(AssertionError) as info:
            ask("and 2 + 2?")
        assert str(info.value) == (
            f"FakeProvider 'calc': no scripted reply left for turn request {number} (the turn "
            "'and 2 + 2?'); 2 replies were scripted and all played (default=None: a request "
            "past the script is an error): script more, or pass default='...' to answer every "
            "further request")


def test_a_script_run_out_shows_a_long_turn_by_its_head_and_length_and_no_key(
        make_agent: Any) -> None:
    """The run-out message quoted the turn whole: a 10 KB prompt made a 10 KB AssertionError.
    (The key is already scrubbed from the prompt the double receives; the quote is redacted too,
    for a prompt handed to the double directly.)"""
    fake = FakeProvider([], name="calc", default=None)
    agent = make_agent(fake)
    turn = "总结这份文档：" + "x" * 10_000 + " sk-ant-api03-" + "Q" * 40
    with pytest.raises(AssertionError) as info:
        agent.chat(turn)
    said = str(info.value)
    assert len(said) < 400 and re.search(r"'\.\.\. \(10\d{3} characters\)\)", said)
    assert "总结这份文档：xxx" in said and "sk-ant-api03-" not in said


def test_a_run_out_error_says_it_is_one_because_the_double_was_given_default_none(
        make_agent: Any) -> None:
    """The message told how to answer more but not why running out failed: a reader of a test
    written by someone else saw an AssertionError from a double that "answers ok by default"."""
    fake = FakeProvider([], name="calc", default=None)
    with pytest.raises(AssertionError) as info:
        make_agent(fake).chat("hi")
    assert "(default=None: a request past the script is an error)" in str(info.value)
