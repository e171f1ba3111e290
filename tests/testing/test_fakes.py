"""The test doubles script tool calls, so an author unit-tests a tool loop offline."""

from __future__ import annotations

import asyncio
from typing import Any

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
