"""The test doubles script tool calls, so an author unit-tests a tool loop offline."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

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
