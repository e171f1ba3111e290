"""Tests of ``hermes_core/agent/turn.py``: one turn's rounds, as the Agent's shells run them."""

from __future__ import annotations

import _thread
import asyncio
import json
import re
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from hermes_core.agent import turn as turn_module
from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeProvider,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    code_execution_blocks,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    tool_call,
    tool_calls,
    web_search_blocks,
)
from hermes_core.tokens import count_tokens
from hermes_core.types import Delta, Message, ToolCall, Usage
from tests.agent.conftest import (
    BUDGET,
    KEYS,
    LONG,
    MODELS,
    URLS,
    AnthropicWindows,
    OpenAIWindows,
    WindowsByModel,
    make_agent,
    memory_section,
    request_json,
    routed_agent,
    run_turn,
    thai_memory_agent,
    tool_answers,
    wire_response,
)
from tests.conftest import CancelledOnce, Loopback


def adder(tmp_path: Path, fake: FakeProvider) -> Agent:
    settings = load_settings({"home": str(tmp_path), "llm": {"routing": {"default_model": "m"}},
                              "skill_utils": {"enabled": False, "embeddings": False},
                              "context_engine": {"enabled": False}}, env={})
    agent = Agent(settings, provider=fake, loop_options={"sleep": lambda s: None,
                                                         "audit_path": False})

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return agent


def assert_ids_pair_up(messages: tuple[Message, ...]) -> None:
    """What Anthropic checks: every tool_use id once in the conversation, each tool_result
    answering a tool_use of the message before it."""
    ids = [c.id for m in messages for c in m.tool_calls]
    assert len(ids) == len(set(ids)), ids
    asked: set[str] = set()
    for m in messages:
        if m.role == "assistant":
            asked = {c.id for c in m.tool_calls}
        elif m.role == "tool":
            assert m.tool_call_id in asked, (m.tool_call_id, asked)


def run(agent: Agent, mode: str, message: str):
    if mode == "sync":
        return agent.chat(message)
    if mode == "async":
        return asyncio.run(agent.achat(message))
    stream = agent.stream(message)
    "".join(stream)
    return stream.reply


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_an_id_the_script_gives_again_in_a_later_round_is_made_unique(tmp_path: Path, mode: str):
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2, id="c1")),
                         tool_calls(tool_call("add", a=3, b=4, id="c1")), "3 and 7"])
    reply = run(adder(tmp_path, fake), mode, "add twice")
    assert_ids_pair_up(fake.last_request.prompt.messages)
    assert reply.tool_calls[0].id == "c1"                    # the author's id, as written
    assert reply.tool_calls[1].id.startswith("c1")           # still recognisable
    assert [r.call_id for r in reply.tool_results] == [c.id for c in reply.tool_calls]
    assert [r.output for r in reply.tool_results] == ["3", "7"]


def test_one_id_twice_in_one_parallel_round_answers_each_call(tmp_path: Path):
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2, id="c1"),
                                    tool_call("add", a=5, b=5, id="c1")), "3 and 10"])
    reply = adder(tmp_path, fake).chat("add both")
    assert_ids_pair_up(fake.last_request.prompt.messages)
    assert sorted(r.output for r in reply.tool_results) == ["10", "3"]


def test_an_id_used_in_an_earlier_turn_is_not_reused(tmp_path: Path):
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2, id="c1")), "3",
                         tool_calls(tool_call("add", a=2, b=2, id="c1")), "4"])
    agent = adder(tmp_path, fake)
    agent.chat("one")
    agent.chat("two")
    assert_ids_pair_up(fake.last_request.prompt.messages)
    assert_ids_pair_up(tuple(agent.history))


def test_an_explicit_id_equal_to_a_generated_one_is_made_unique(tmp_path: Path):
    generated = tool_call("add", a=1, b=2)
    fake = FakeProvider([tool_calls(generated), tool_calls(tool_call("add", a=0, b=1, id=generated.id)),
                         "done"])
    adder(tmp_path, fake).chat("go")
    assert_ids_pair_up(fake.last_request.prompt.messages)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_an_id_anthropic_would_refuse_is_made_one_it_takes(tmp_path: Path, mode: str):
    """Kimi numbers its calls ``functions.add:0`` in every round; Anthropic refuses an id outside
    ``^[A-Za-z0-9_-]+$`` (a 400 for the whole request), so a conversation begun there could not
    fail over to Claude. The id is made of those characters when it arrives, still recognisable
    and still unique (``functions_add_0`` sent as such is not merged with it)."""
    fake = FakeProvider([tool_calls(tool_call("add", a=1, b=2, id="functions.add:0"),
                                    tool_call("add", a=2, b=2, id="functions_add_0")),
                         tool_calls(tool_call("add", a=3, b=4, id="functions.add:0")), "done"])
    reply = run(adder(tmp_path, fake), mode, "add")
    ids = [c.id for c in reply.tool_calls]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids), ids
    assert ids[0] == "functions_add_0" and all(i.startswith("functions_add_0") for i in ids)
    assert_ids_pair_up(fake.last_request.prompt.messages)
    assert [r.output for r in reply.tool_results] == ["3", "4", "7"]


#: A call id as OpenAI's Responses API and gateways replaying it number calls: 53 characters.
_LONG_ID = "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"


def test_ids_a_server_sent_are_ones_both_wires_take_across_a_failover_and_back(
        tmp_path: Path, respx_mock: Any) -> None:
    """A conversation begun on an OpenAI-compatible server fails over to Claude and comes back to
    OpenAI. Anthropic refuses an id outside ``^[A-Za-z0-9_-]+$`` and OpenAI one over 40
    characters, each with a 400 for the whole request (agno#5382, openclaw#31934: the 53-character
    ``fc_...`` ids): ids made safe only for Anthropic still ended the chat back on OpenAI. Each
    id is made one both take, still unique, and every answer still names its own call."""
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider

    cfg = {"home": str(tmp_path), "llm": {"routing": {"default_model": MODELS["openai"]}},
           "credentials": {kind: {"keys": [{"key": KEYS[kind]}]} for kind in KEYS},
           "context_engine": {"enabled": False}}
    agent = Agent(load_settings(cfg, env={}), provider=OpenAIProvider(),
                  loop_options={"sleep": lambda s: None, "audit_path": False})

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    sent = (ToolCall("functions.add:0", "add", '{"a": 1, "b": 2}'),
            ToolCall(_LONG_ID, "add", '{"a": 2, "b": 2}'),
            ToolCall(_LONG_ID, "add", '{"a": 5, "b": 5}'),
            ToolCall(_LONG_ID[:39], "add", '{"a": 6, "b": 5}'),
            ToolCall(_LONG_ID[:39], "add", '{"a": 7, "b": 5}'))
    openai = respx_mock.post(URLS["openai"]).mock(side_effect=[
        wire_response("openai", False, "", sent), wire_response("openai", False, "one"),
        wire_response("openai", False, "three")])
    claude = respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        wire_response("anthropic", False, "two")])
    try:
        first = agent.chat("add")
        with agent.override(provider=AnthropicProvider()):
            agent.chat("and now?")
        agent.chat("and back?")
    finally:
        agent.close(wait_warm=False, summarize=False)
    ids = [c.id for c in first.tool_calls]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,40}", i) for i in ids), ids
    assert len(set(ids)) == 5 and ids[0] == "functions_add_0" and ids[3] == _LONG_ID[:39]
    assert [r.output for r in first.tool_results] == ["3", "4", "10", "11", "12"]
    for body, answers in ((request_json(claude, 0), tool_answers("anthropic",
                                                                 request_json(claude, 0))),
                          (request_json(openai, 2), tool_answers("openai",
                                                                 request_json(openai, 2)))):
        assert [cid for cid, _ in answers] == ids, body
        assert [text for _, text in answers] == ["3", "4", "10", "11", "12"]


ODD_KEY = "Zq7 odd-key"   # a custom endpoint's key: short, a space, no shape to recognise


def keyed_agent(tmp_path: Path, fake: FakeProvider) -> Agent:
    settings = load_settings({"home": str(tmp_path), "llm": {"routing": {"default_model": "m"}},
                              "skill_utils": {"enabled": False, "embeddings": False},
                              "context_engine": {"enabled": False},
                              "credentials": {"custom": {"keys": [{"key": ODD_KEY}]}}}, env={})
    return Agent(settings, provider=fake, loop_options={"sleep": lambda s: None,
                                                        "audit_path": False})


async def _astream(agent: Agent, message: str) -> list[str]:
    return [piece async for piece in agent.astream(message)]


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_key_the_model_echoes_is_scrubbed_from_the_reply_pieces_history_and_tool_arguments(
        tmp_path: Path, mode: str) -> None:
    """What the model says comes back through the one redactor, as what is sent to it does: a
    key in its reply (split across stream pieces), or in a tool call's arguments, reached the
    caller, the history and the tool."""
    fake = FakeProvider([tool_calls(tool_call("lookup", {"token": ODD_KEY})),
                         f"your key is {ODD_KEY} and it works"])
    agent = keyed_agent(tmp_path, fake)
    seen: list[str] = []

    @agent.tool
    def lookup(token: str) -> str:
        """Look a token up."""
        seen.append(token)
        return "valid"

    pieces: list[str] = []
    if mode == "stream":
        stream = agent.stream("check my key")
        pieces = list(stream)
        reply = stream.reply
    elif mode == "astream":
        pieces = asyncio.run(_astream(agent, "check my key"))
        reply = agent.last_reply
    else:
        reply = run(agent, mode, "check my key")
    assert reply is not None
    shown = [reply.text, "".join(pieces), *pieces, *seen, repr(reply.tool_calls), repr(agent.history)]
    assert all(ODD_KEY not in s for s in shown), shown
    assert reply.text == "your key is [key-" + reply.text.split("[key-")[1].split("]")[0] + \
        "] and it works"
    if pieces:
        assert "".join(pieces).strip() == reply.text


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_cut_by_a_failure_shows_what_arrived_but_no_start_of_a_key(
        tmp_path: Path, mode: str) -> None:
    from hermes_core.errors import IncompleteResponse
    from hermes_core.types import Delta

    class CutMidKey(FakeProvider):
        def stream(self, prompt, model, credential, options):  # type: ignore[no-untyped-def]
            self._record(prompt, model, credential, options, True)
            yield Delta(text="the key is ")
            yield Delta(text=ODD_KEY[:5])
            raise IncompleteResponse("cut", provider="fake")

        async def astream(self, prompt, model, credential, options):  # type: ignore[no-untyped-def]
            for d in self.stream(prompt, model, credential, options):
                yield d

    agent = keyed_agent(tmp_path, CutMidKey())
    shown: list[str] = []
    with pytest.raises(IncompleteResponse):
        if mode == "stream":
            for piece in agent.stream("hi"):
                shown.append(piece)
        else:
            async def consume() -> None:
                async for piece in agent.astream("hi"):
                    shown.append(piece)
            asyncio.run(consume())
    assert "".join(shown) == "the key is "


PAUSED = web_search_blocks("Searching the forecast. ")


def _anthropic_reply(mode: str, blocks: list[dict[str, Any]], stop: str, tokens: tuple[int, int],
                     container: str | None = None):
    if mode == "stream":
        return httpx.Response(200, headers=SSE_HEADERS, content=anthropic_blocks_stream(
            blocks, stop_reason=stop, input_tokens=tokens[0], output_tokens=tokens[1],
            container=container))
    body = anthropic_message("", model="claude-sonnet-4-5", stop_reason=stop,
                             input_tokens=tokens[0], output_tokens=tokens[1], container=container)
    body["content"] = blocks
    return httpx.Response(200, json=body)


def _read_turn(agent: Agent, mode: str, message: str, **kwargs: Any):
    """The Reply of one turn through ``mode``: sync, async, stream or astream (with ``output``,
    what ``run_turn`` returns in the first three: the output, for a stream too)."""
    if mode != "astream":
        return run_turn(agent, mode, message, **kwargs)

    async def read() -> None:
        async for _ in agent.astream(message, **kwargs):
            pass
    asyncio.run(read())
    return agent.last_reply


def _shown_turn(agent: Agent, mode: str, message: str, **kwargs: Any) -> tuple[str, Any]:
    """What ``stream`` or ``astream`` (``mode``) showed of one turn, and the turn's Reply."""
    if mode == "stream":
        stream = agent.stream(message, **kwargs)
        return "".join(stream), stream.reply

    async def read() -> str:
        return "".join([p async for p in agent.astream(message, **kwargs)])
    return asyncio.run(read()), agent.last_reply


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_paused_turn_is_continued_with_its_content_sent_back_and_billed_whole(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """Anthropic pauses a long server-tool turn (``pause_turn``) and expects the paused content
    back, as it came, to go on; the turn ended there with half an answer."""
    wire = "stream" if mode == "astream" else mode
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply(wire, PAUSED, "pause_turn", (100, 40)),
        _anthropic_reply(wire, [{"type": "text", "text": "It is sunny."}], "end_turn", (130, 20))])
    agent = make_agent(empty_home, "anthropic")
    if mode in ("stream", "astream"):
        async def read() -> str:
            return "".join([p async for p in agent.astream("weather in Oslo?")])
        if mode == "astream":
            shown, reply = asyncio.run(read()), agent.last_reply
        else:
            stream = agent.stream("weather in Oslo?")
            shown, reply = "".join(stream), stream.reply
        assert shown == "Searching the forecast. It is sunny."   # one answer, no round break
    else:
        reply = run_turn(agent, mode, "weather in Oslo?")
    assert reply.text == "Searching the forecast. It is sunny." and reply.stop_reason is None
    first, second = request_json(route, 0), request_json(route, 1)
    assert second["messages"][:-1] == first["messages"]
    assert second["messages"][-1] == {"role": "assistant", "content": PAUSED}
    assert reply.usage.input_tokens == 230 and reply.usage.output_tokens == 60
    assert reply.cost == agent.prices.cost("claude-sonnet-4-5", reply.usage)
    assert [(m.role, m.content) for m in agent.history] == [
        ("user", "weather in Oslo?"), ("assistant", "Searching the forecast. It is sunny.")]
    assert agent.stats.usage == reply.usage


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_paused_code_execution_turn_goes_on_in_its_container(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """A paused turn that ran code (a gateway adds Anthropic's code execution tool) goes on only
    in the container it ran in: the continuation must name it (``container``), or the API refuses
    the replayed code-execution blocks or runs the rest in a fresh container without its files."""
    wire = "stream" if mode == "astream" else mode
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply(wire, code_execution_blocks("Computed. "), "pause_turn", (100, 40),
                         container="container_011CQ"),
        _anthropic_reply(wire, [{"type": "text", "text": "It is 42."}], "end_turn", (130, 20),
                         container="container_011CQ")])
    agent = make_agent(empty_home, "anthropic")
    reply = _read_turn(agent, mode, "what is 6 * 7?")
    first, second = request_json(route, 0), request_json(route, 1)
    assert "container" not in first
    assert second["container"] == "container_011CQ"
    assert second["messages"][-1] == {"role": "assistant",
                                      "content": code_execution_blocks("Computed. ")}
    assert reply.text == "Computed. It is 42." and reply.stop_reason is None
    # the container is the turn's own: the next turn starts without it
    route.side_effect = None
    route.return_value = _anthropic_reply(wire, [{"type": "text", "text": "ok"}], "end_turn", (5, 1))
    _read_turn(agent, mode, "thanks")
    assert "container" not in request_json(route, 2)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_turn_paused_again_and_again_stops_at_the_continuation_limit_and_says_so(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply(mode, PAUSED, "pause_turn", (100, 10)) for _ in range(5)])
    agent = make_agent(empty_home, "anthropic")
    agent.max_continuations = 2
    reply = run_turn(agent, mode, "weather in Oslo?")
    assert route.call_count == 3
    assert reply.stop_reason == "max_continuations"
    assert reply.text == "Searching the forecast. " * 3
    assert reply.usage.input_tokens == 300 and reply.usage.output_tokens == 30
    assert agent.history[-1].content == reply.text


class City(BaseModel):
    city: str


#: A paused reply's words holding a guess (a proxy's words; the API forces the output tool)
GUESS = web_search_blocks('My guess is {"city": "Paris"}; checking. ')
#: A structured reply through the output tool: its input is the answer
OSLO = [{"type": "tool_use", "id": "out1", "name": STRUCTURED_OUTPUT_TOOL,
         "input": {"city": "Oslo"}}]


def _structured_turn(agent: Agent, mode: str, message: str) -> Any:
    """The Reply of one turn asking for a ``City`` through ``mode``; a sync or async chat's
    returned object is the Reply's output."""
    returned = _read_turn(agent, mode, message, output=City)
    if mode in ("sync", "async"):
        assert returned == agent.last_reply.output
    return agent.last_reply


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_paused_reply_s_guess_is_no_part_of_the_answer_its_continuation_gives_through_the_output_tool(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """A paused reply's words led the continuation's text, and a structured continuation's text
    is the output tool's input: the answer read the words' guess (the first object), not the
    tool's. Failed before (Paris, and the history kept the guess before the JSON). The output
    tool's input is the answer alone, as within one message (decision 188)."""
    wire = "stream" if mode == "astream" else mode
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply(wire, GUESS, "pause_turn", (100, 40)),
        _anthropic_reply(wire, OSLO, "tool_use", (130, 20))])
    agent = make_agent(empty_home, "anthropic")
    reply = _structured_turn(agent, mode, "where am I going?")
    assert route.call_count == 2
    assert reply.output == City(city="Oslo")
    assert reply.text == '{"city": "Oslo"}'
    assert [(m.role, m.content) for m in agent.history] == [
        ("user", "where am I going?"), ("assistant", '{"city": "Oslo"}')]
    assert reply.usage.input_tokens == 230   # both requests billed, as any paused turn


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_paused_reply_s_words_lead_a_structured_continuation_answered_in_words(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """No output tool (a proxy answering in words): the paused words and the continuation's are
    one answer, as in any paused turn."""
    wire = "stream" if mode == "astream" else mode
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply(wire, PAUSED, "pause_turn", (100, 40)),
        _anthropic_reply(wire, [{"type": "text", "text": '{"city": "Oslo"}'}], "end_turn",
                         (130, 20))])
    agent = make_agent(empty_home, "anthropic")
    reply = _structured_turn(agent, mode, "where am I going?")
    assert reply.output == City(city="Oslo")
    assert reply.text == 'Searching the forecast. {"city": "Oslo"}'
    assert agent.history[-1].content == reply.text


@pytest.mark.parametrize("use_async", [False, True])
def test_tokens_billed_on_a_retried_attempt_are_counted_as_wasted_once(
        empty_home: Path, respx_mock: Any, use_async: bool) -> None:
    """A stream cut after ``message_start`` billed its 900 prompt tokens, and the call loop
    retried it: only the retry's tokens were in the turn's usage and cost."""
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS,
                       content=anthropic_stream(("lost",), input_tokens=900, fail_after=0)),
        httpx.Response(200, headers=SSE_HEADERS, content=anthropic_stream(("fine",)))])
    agent = make_agent(empty_home, "anthropic")
    if use_async:
        async def read() -> str:
            return "".join([p async for p in agent.astream("hi")])
        text = asyncio.run(read())
        reply = agent.last_reply
    else:
        stream = agent.stream("hi")
        text = "".join(stream)
        reply = stream.reply
    assert reply is not None and text == reply.text == "fine"
    assert reply.usage.input_tokens == 12   # the answer's own call
    assert (reply.wasted.input_tokens, reply.wasted.output_tokens) == (900, 1)
    prices = agent.prices
    billed = (prices.cost("claude-sonnet-4-5", reply.usage).total
              + prices.cost("claude-sonnet-4-5", reply.wasted).total)
    assert reply.cost.total == pytest.approx(billed)
    assert reply.wasted_cost.total == pytest.approx(prices.cost("claude-sonnet-4-5",
                                                                reply.wasted).total)
    assert agent.stats.wasted == reply.wasted and agent.stats.usage == reply.usage
    assert agent.stats.cost.total == pytest.approx(billed)
    assert [a.usage for a in reply.attempts if a.status != "ok"] == [reply.wasted]


def test_a_stream_cut_mid_answer_counts_what_it_billed_though_the_turn_failed(
        empty_home: Path, respx_mock: Any) -> None:
    """After the first words a cut reaches the caller (no failover); the tokens it billed were in
    no total at all."""
    from hermes_core.errors import ProviderError

    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS,
        content=anthropic_stream(("one ", "two"), input_tokens=700, fail_after=1)))
    agent = make_agent(empty_home, "anthropic")
    with pytest.raises(ProviderError):
        "".join(agent.stream("hi"))
    assert agent.history == [] and agent.stats.turns == 0
    assert agent.stats.wasted.input_tokens == 700 and agent.stats.cost.total > 0


def _billed_prompt(body: dict[str, Any]) -> int:
    """OpenAI's count of a plain chat request (its cookbook): each message's role and text in
    o200k_base, 3 tokens a message, 3 priming the reply."""
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(p["text"] for p in content)
    return sum(3 + count_tokens(m["role"]) + count_tokens(text(m["content"]))
               for m in body["messages"]) + 3


@pytest.mark.parametrize("use_async", [False, True])
def test_an_openai_stream_cut_before_its_usage_chunk_and_retried_counts_its_prompt_as_wasted(
        empty_home: Path, respx_mock: Any, use_async: bool) -> None:
    """OpenAI reports usage only in a stream's last chunk: a stream cut after its first chunk and
    retried billed its prompt, which was in no total (not the reply's cost, not ``/stats``, not
    the audit line)."""
    route = respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=openai_chat_stream(("x",), fail_after=0)),
        httpx.Response(200, headers=SSE_HEADERS, content=openai_chat_stream(("fine",)))])
    agent = make_agent(empty_home, "openai")
    reply = _read_turn(agent, "astream" if use_async else "stream", "hi")
    assert reply.text == "fine" and reply.usage.input_tokens == 12 and reply.usage.reported
    wasted = reply.wasted
    assert wasted.input_tokens == _billed_prompt(request_json(route, 0)) > 0
    assert wasted.output_tokens == 0 and wasted.counted and wasted.estimated_tokens == 0
    model = "gpt-4o-mini"
    assert reply.wasted_cost == agent.prices.cost(model, wasted)
    assert reply.cost.total == pytest.approx(agent.prices.cost(model, reply.usage).total
                                             + agent.prices.cost(model, wasted).total)
    assert reply.cost.counted == (model,) and reply.usage == agent.stats.usage
    assert agent.stats.wasted == wasted
    agent.loop.audit.flush()   # an async turn's lines are written by the audit's writer thread
    lines = [json.loads(line) for line in (empty_home / "audit.jsonl").read_text().splitlines()]
    assert lines[0]["billed_tokens"] == {"input": wasted.input_tokens, "output": 0,
                                         "cache_read": 0, "cache_write": 0, "estimated": 0}


def test_an_openai_stream_cut_mid_answer_counts_what_it_billed_though_the_turn_failed(
        empty_home: Path, respx_mock: Any) -> None:
    from hermes_core.errors import ProviderError

    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS, content=openai_chat_stream(("one ", "two"), fail_after=1)))
    agent = make_agent(empty_home, "openai")
    with pytest.raises(ProviderError):
        "".join(agent.stream("hi"))
    assert agent.history == [] and agent.stats.turns == 0
    wasted = agent.stats.wasted
    assert wasted.input_tokens == _billed_prompt(request_json(route, 0))
    assert wasted.output_tokens == wasted.estimated_tokens == count_tokens("one ")
    assert agent.stats.cost == agent.prices.cost("gpt-4o-mini", wasted)
    line = json.loads((empty_home / "audit.jsonl").read_text().splitlines()[-1])
    assert line["billed_tokens"]["estimated"] == wasted.estimated_tokens


def test_a_structured_reply_repaired_reports_the_rejected_replys_tokens_as_wasted(
        empty_home: Path, respx_mock: Any) -> None:
    from pydantic import BaseModel

    class Forecast(BaseModel):
        x: int

    respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        httpx.Response(200, json=anthropic_message("not json", input_tokens=50, output_tokens=7)),
        httpx.Response(200, json=anthropic_message('{"x": 3}', input_tokens=80, output_tokens=4))])
    agent = make_agent(empty_home, "anthropic")
    assert agent.chat("forecast", output=Forecast).x == 3
    reply = agent.last_reply
    assert reply is not None and (reply.usage.input_tokens, reply.wasted.input_tokens) == (80, 50)
    assert reply.cost.total == pytest.approx(agent.stats.cost.total)   # both calls, once
    assert agent.stats.usage.input_tokens == 130 and agent.stats.wasted.input_tokens == 0


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_turn_that_fails_after_a_tool_round_counts_the_round_it_was_billed_for(
        tmp_path: Path, mode: str) -> None:
    """The first round answered (billed), the second failed on every attempt: the turn is not
    recorded, and the first round's tokens were in no total."""
    from hermes_core.errors import AllProvidersFailed, BadRequest

    first = replace(tool_calls(tool_call("add", a=1, b=2)), usage=Usage(40, 5))
    fake = FakeProvider([first, BadRequest("refused")])
    agent = adder(tmp_path, fake)
    with pytest.raises((AllProvidersFailed, BadRequest)):
        run(agent, mode, "add")
    assert agent.history == [] and agent.stats.turns == 0
    assert agent.stats.usage == Usage() and agent.stats.wasted == Usage(40, 5)


def _cancel_after_first_piece(agent: Agent, mode: str, message: str) -> str:
    """What the chat does on Ctrl-C mid-reply: the stream is closed (sync) or the task reading it
    cancelled (async) once the first piece is shown; returns that piece."""
    if mode == "stream":
        stream = agent.stream(message)
        first = next(iter(stream))
        stream.close()
        return first

    async def read() -> str:
        shown: list[str] = []

        async def consume() -> None:
            async for piece in agent.astream(message):
                shown.append(piece)
                await asyncio.sleep(3600)   # the user presses Ctrl-C while reading
        task = asyncio.ensure_future(consume())
        while not shown:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return shown[0]
    return asyncio.run(read())


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_reply_cancelled_mid_stream_counts_what_its_attempt_was_billed(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """Ctrl-C mid-reply: the provider billed the prompt and what it generated, and the turn was
    counted nowhere (an abort is not a provider error, so nothing carried its usage)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS, content=anthropic_stream(("one ", "two ", "three"),
                                                           input_tokens=700)))
    agent = make_agent(empty_home, "anthropic")
    assert _cancel_after_first_piece(agent, mode, "hi") == "one "
    assert agent.history == [] and agent.stats.turns == 0 and agent.stats.usage == Usage()
    assert agent.stats.wasted.input_tokens == 700
    assert agent.stats.cost == agent.prices.cost("claude-sonnet-4-5", agent.stats.wasted)
    agent.loop.audit.flush()
    line = json.loads((empty_home / "audit.jsonl").read_text().splitlines()[-1])
    assert line["status"] == "aborted" and line["billed_tokens"]["input"] == 700


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_an_openai_reply_cancelled_mid_stream_counts_its_prompt_and_what_arrived(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS, content=openai_chat_stream(("one ", "two ", "three"))))
    agent = make_agent(empty_home, "openai")
    assert _cancel_after_first_piece(agent, mode, "hi") == "one "
    wasted = agent.stats.wasted
    assert wasted.input_tokens == _billed_prompt(request_json(route, 0))
    assert wasted.output_tokens == wasted.estimated_tokens == count_tokens("one ")
    assert agent.stats.cost == agent.prices.cost("gpt-4o-mini", wasted)


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_turn_cancelled_after_a_tool_round_counts_the_round(tmp_path: Path, mode: str) -> None:
    """The first round answered and was billed; Ctrl-C during the second reply dropped it."""
    first = replace(tool_calls(tool_call("add", a=1, b=2)), usage=Usage(40, 5))
    agent = adder(tmp_path, FakeProvider([first, "the sum is 3"]))
    _cancel_after_first_piece(agent, mode, "add")
    assert agent.history == [] and agent.stats.turns == 0
    assert agent.stats.usage == Usage() and agent.stats.wasted == Usage(40, 5)


def test_a_whole_reply_interrupted_counts_the_rounds_the_turn_finished(tmp_path: Path) -> None:
    """Ctrl-C while a non-streamed turn waits for its second round."""
    first = replace(tool_calls(tool_call("add", a=1, b=2)), usage=Usage(40, 5))
    agent = adder(tmp_path, FakeProvider([first, KeyboardInterrupt()]))
    with pytest.raises(KeyboardInterrupt):
        agent.chat("add")
    assert agent.history == [] and agent.stats.wasted == Usage(40, 5)


def test_ctrl_c_while_a_stream_is_read_counts_what_arrived(
        empty_home: Path, respx_mock: Any) -> None:
    """Ctrl-C landing inside the read of the response (the SDK's socket read), not between
    pieces: the KeyboardInterrupt comes up through the adapter's stream."""
    events = [e + b"\n\n" for e in openai_chat_stream(("one ", "two ")).split(b"\n\n") if e]

    def body() -> Any:
        yield b"".join(events[:2])   # the role chunk and "one "
        raise KeyboardInterrupt

    route = respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, headers=SSE_HEADERS, content=body()))
    agent = make_agent(empty_home, "openai")
    shown: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        for piece in agent.stream("hi"):
            shown.append(piece)
    assert shown == ["one "] and agent.history == []
    wasted = agent.stats.wasted
    assert wasted.input_tokens == _billed_prompt(request_json(route, 0))
    assert wasted.output_tokens == count_tokens("one ")


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_ctrl_c_while_a_tool_runs_counts_the_round_that_called_it(tmp_path: Path, mode: str,
                                                                   python_sigint: None) -> None:
    """The round that called the tool was billed; Ctrl-C during the tool dropped it."""
    fake = FakeProvider([replace(tool_calls(tool_call("stall", id="c1")), usage=Usage(40, 5)),
                         "never asked"])
    agent = adder(tmp_path, fake)

    given_up = threading.Event()

    @agent.tool
    def stall() -> str:
        """Wait for something slow."""
        _thread.interrupt_main()   # the user gives up waiting: Ctrl-C reaches the main thread
        given_up.wait(10)
        return "late"

    try:
        with pytest.raises(KeyboardInterrupt):
            _read_turn(agent, mode, "go")
    finally:
        given_up.set()
    assert agent.history == [] and agent.stats.usage == Usage()
    assert agent.stats.wasted == Usage(40, 5)
    assert agent.stats.cost == agent.prices.cost("m", Usage(40, 5))


def _cut_body(kind: str, mode: str) -> Any:
    """A whole answer's JSON cut after its first bytes: the connection dropped mid-body."""
    data = json.dumps(openai_chat_completion("fine") if kind == "openai"
                      else anthropic_message("fine")).encode()
    dropped = httpx.RemoteProtocolError("peer closed connection without sending complete body")

    def body() -> Any:
        yield data[:40]
        raise dropped

    async def abody() -> Any:
        yield data[:40]
        raise dropped
    return abody() if mode == "async" else body()


def _assert_first_prompt_counted_once(reply: Any, agent: Any, route: Any, kind: str) -> None:
    """The first attempt (cut, abandoned or timed out after it reached the server) is in the
    turn's waste as its prompt alone, on our own count, once; the turn's cost adds it to the
    answer's usage."""
    wasted = reply.wasted
    assert wasted.counted and not wasted.reported and wasted.output_tokens == 0
    if kind == "openai":
        assert wasted.input_tokens == _billed_prompt(request_json(route, 0))
    else:
        assert wasted.input_tokens > 0 and wasted.estimated_tokens == wasted.input_tokens
    assert agent.stats.wasted == wasted and agent.stats.usage == reply.usage
    model = MODELS[kind]
    assert reply.wasted_cost == agent.prices.cost(model, wasted)
    assert reply.cost.total == pytest.approx(agent.prices.cost(model, reply.usage).total
                                             + reply.wasted_cost.total)



@pytest.mark.parametrize("cut", ["mid-body", "no first byte"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_whole_call_cut_and_retried_counts_its_prompt_as_wasted_once(
        empty_home: Path, respx_mock: Any, kind: str, mode: str, cut: str) -> None:
    """A whole (not streamed) call sent and cut before its answer (the body dropped half way, a
    read timeout) was billed its prompt at least, and nothing arrived to say so: the prompt is
    counted as the failed attempt's, once, apart from the retry's own usage."""
    first: Any = (httpx.Response(200, headers={"content-type": "application/json"},
                                 content=_cut_body(kind, mode))
                  if cut == "mid-body" else httpx.ReadTimeout("no first byte"))
    route = respx_mock.post(OPENAI_URL if kind == "openai" else ANTHROPIC_URL).mock(side_effect=[
        first, httpx.Response(200, json=openai_chat_completion("fine") if kind == "openai"
                              else anthropic_message("fine", model="claude-sonnet-4-5"))])
    agent = make_agent(empty_home, kind)
    reply = run_turn(agent, mode, "hi")
    assert reply.text == "fine" and reply.usage.reported and route.call_count == 2
    assert reply.usage.input_tokens == 12 and reply.usage.output_tokens == 5
    _assert_first_prompt_counted_once(reply, agent, route, kind)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_whole_call_refused_or_never_connected_counts_nothing(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """An error status is not billed, and a request that never reached the server cannot be."""
    respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.ConnectError("refused"), httpx.Response(500, json=openai_error(500)),
        httpx.Response(200, json=openai_chat_completion("fine"))])
    agent = make_agent(empty_home, "openai")
    agent.loop.policy = replace(agent.loop.policy, retries_per_provider=2)
    reply = run_turn(agent, mode, "hi")
    assert reply.text == "fine" and reply.wasted == Usage() and agent.stats.wasted == Usage()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ctrl_c_during_a_whole_call_counts_its_prompt(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """Ctrl-C while a non-streamed reply is awaited: the request went out and was billed."""
    sent: list[dict[str, Any]] = []

    def interrupted(request: Any) -> Any:
        sent.append(json.loads(request.content))
        raise KeyboardInterrupt
    respx_mock.post(OPENAI_URL).mock(side_effect=interrupted)
    agent = make_agent(empty_home, "openai")
    with pytest.raises(KeyboardInterrupt):
        run_turn(agent, mode, "hi")
    assert agent.history == [] and agent.stats.usage == Usage()
    wasted = agent.stats.wasted
    assert wasted.counted and wasted.input_tokens == _billed_prompt(sent[0]) > 0
    assert agent.stats.cost == agent.prices.cost("gpt-4o-mini", wasted)
    agent.loop.audit.flush()
    line = json.loads((empty_home / "audit.jsonl").read_text().splitlines()[-1])
    assert line["status"] == "aborted" and line["billed_tokens"]["input"] == wasted.input_tokens


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_timed_out_before_its_first_byte_and_retried_counts_its_prompt_once(
        empty_home: Path, respx_mock: Any, kind: str, mode: str) -> None:
    """A streamed request the server took and then left without a byte until the read timeout:
    it may have been billed its prompt (the rule a whole call follows), counted as the failed
    attempt's, on our count, once, beside the retry's own usage."""
    answer = (openai_chat_stream(("fine",)) if kind == "openai"
              else anthropic_stream(("fine",), model=MODELS[kind]))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        httpx.ReadTimeout("no first byte"), httpx.Response(200, headers=SSE_HEADERS,
                                                           content=answer)])
    agent = make_agent(empty_home, kind)
    reply = _read_turn(agent, mode, "hi")
    assert reply.text == "fine" and reply.usage.reported and route.call_count == 2
    _assert_first_prompt_counted_once(reply, agent, route, kind)
    agent.loop.audit.flush()
    lines = [json.loads(line) for line in (empty_home / "audit.jsonl").read_text().splitlines()]
    assert [line["billed_tokens"]["input"] for line in lines if "billed_tokens" in line] == [
        reply.wasted.input_tokens]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_200_stream_that_ended_without_an_event_and_was_retried_counts_its_prompt_once(
        empty_home: Path, respx_mock: Any, kind: str, mode: str) -> None:
    """A proxy's empty 200 stream, then the answer: the empty attempt reached the server and was
    not refused, so it is counted as a stream timed out before its first byte is (its prompt,
    in the waste once), not left out of every total."""
    answer = (openai_chat_stream(("fine",)) if kind == "openai"
              else anthropic_stream(("fine",), model=MODELS[kind]))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=b""),
        httpx.Response(200, headers=SSE_HEADERS, content=answer)])
    agent = make_agent(empty_home, kind)
    reply = _read_turn(agent, mode, "hi")
    assert reply.text == "fine" and route.call_count == 2
    _assert_first_prompt_counted_once(reply, agent, route, kind)


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_refused_or_never_connected_counts_nothing(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """A streamed request refused with an error status, or never connected, was not billed."""
    respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.ConnectError("refused"), httpx.Response(500, json=openai_error(500)),
        wire_response("openai", True, "fine")])
    agent = make_agent(empty_home, "openai")
    agent.loop.policy = replace(agent.loop.policy, retries_per_provider=2)
    reply = _read_turn(agent, mode, "hi")
    assert reply.text == "fine" and reply.wasted == Usage() and agent.stats.wasted == Usage()


@pytest.mark.parametrize("reached", [False, True])
def test_a_turn_cancelled_while_connecting_counts_nothing_once_sent_its_prompt(
        empty_home: Path, still_connecting: Loopback, never_answering: Loopback,
        cancelled_once: CancelledOnce, reached: bool) -> None:
    """A real socket: a task cancelled while its request is still connecting (the listener's
    queue full, its SYN in flight) never reached the server and counts nothing; cancelled once
    the server read the whole request (and never answers), it counts its prompt. Each is
    cancelled when its socket says so (a fixed 0.5 s could come before the write on a loaded
    machine, and the [True] case then failed)."""
    from hermes_core.providers.openai import OpenAIProvider

    server = never_answering if reached else still_connecting
    url = server.url.removesuffix("/chat/completions")
    cfg = {"home": str(empty_home), "llm": {"routing": {"default_model": "gpt-4o-mini"}},
           "credentials": {"openai": {"keys": [{"key": "sk-proj-connectTESTkey0123456789"}]}},
           "context_engine": {"enabled": False}}
    agent = Agent(load_settings(cfg, env={}), provider=OpenAIProvider(endpoint=url),
                  loop_options={"sleep": lambda s: None, "audit_path": False})

    with agent:
        asyncio.run(cancelled_once(agent.achat("hi"), server.reached))
        wasted = agent.stats.wasted
    assert agent.history == []
    assert (wasted.counted and wasted.input_tokens > 0) if reached else wasted == Usage()


def test_a_turn_reaches_its_agent_through_public_names_only() -> None:
    """The Agent records a turn from what the turn answers (``Turn.answer``): the turn module
    calls none of the Agent's private methods (it called ``_finish``, which then had to keep a
    signature for a caller in another module)."""
    source = Path(turn_module.__file__).read_text(encoding="utf-8")
    assert re.findall(r"\bagent\._\w+", source) == []


def _failed_over_to_m_small(tmp_path: Path, big_window: int):
    """16 long turns on m-big (``big_window``), then one failed over to m-small (3000 tokens)
    through another provider: (agent, the big fake, the small fake, that turn's reply)."""
    from hermes_core.errors import ServerError
    windows = {"m-big": big_window, "m-small": 3000}
    big = WindowsByModel(windows, name="openai")
    small = WindowsByModel(windows, name="anthropic")
    agent = routed_agent(tmp_path, {"openai": big, "anthropic": small}, routing={
        "default_model": "m-big", "context_windows": windows,
        "providers": [{"name": "openai", "priority": 1, "models": ["m-big"]},
                      {"name": "anthropic", "priority": 2, "models": ["m-small"]}]})
    for i in range(16):
        agent.chat(f"turn {i}: {LONG * 3}")
    assert not small.requests
    big.add(*[ServerError("down", status_code=503)] * 10)
    return agent, big, small, agent.chat("and which port was the health check on?")


def test_a_failover_to_a_smaller_window_model_sends_a_history_that_fits_it(tmp_path: Path):
    agent, _, small, reply = _failed_over_to_m_small(tmp_path, 100_000)
    assert reply.provider == "anthropic" and small.last_request.model == "m-small"
    assert reply.compaction is not None and reply.compaction.budget.window == 3000
    assert len(agent.history) == 34   # the whole chat is kept; only what is sent was compacted


def test_a_failover_to_a_smaller_window_model_calibrates_it_on_the_request_it_was_sent(
        tmp_path: Path):
    """The bill of a failover to a smaller window is of the request compacted for it, but it was
    set against our count of the turn's own (larger) prompt: here the small model, counting as
    the big one does, was kept at about half the big one's ratio, in memory and in the home's
    calibration file, so its next turns (and a new process's) counted its history at half size."""
    agent, big, small, reply = _failed_over_to_m_small(tmp_path, 6000)
    assert reply.provider == "anthropic"
    assert len(small.last_request.prompt.messages) < len(big.last_request.prompt.messages)
    one_tokenizer = agent.compactor.ratio_for("m-big")   # both fakes bill the same count
    assert one_tokenizer is not None
    assert agent.compactor.ratio_for("m-small") == pytest.approx(one_tokenizer, rel=0.05)


def test_a_failover_to_a_model_of_another_encoding_counts_the_request_in_its_encoding(
        tmp_path: Path):
    """gpt-4o counts in o200k_base, gpt-4 in cl100k_base (~3x on Thai): the request a failover
    sent to gpt-4 kept the o200k counts made for gpt-4o."""
    from hermes_core.errors import ServerError
    from hermes_core.tokens import count_tokens
    (tmp_path / "SOUL.md").write_text("คุณเป็นผู้ช่วยที่ตอบคำถามอย่างสุภาพ " * 40, encoding="utf-8")
    windows = {"gpt-4o": 100_000, "gpt-4": 100_000}
    first, backup = OpenAIWindows(windows, name="openai"), OpenAIWindows(windows, name="azure")
    agent = routed_agent(tmp_path, {"openai": first, "azure": backup}, routing={
        "default_model": "gpt-4o", "context_windows": windows,
        "providers": [{"name": "openai", "priority": 1, "models": ["gpt-4o"]},
                      {"name": "azure", "type": "openai", "priority": 2,
                       "models": ["gpt-4"]}]})
    first.add(*[ServerError("down", status_code=503)] * 10)
    message = "บันทึกไม่มีอะไรใหม่ในวันนี้ " * 20
    reply = agent.chat(message)
    sent = backup.last_request.prompt
    assert reply.provider == "azure" and backup.last_request.model == "gpt-4"
    system = count_tokens(sent.system, "cl100k_base")
    assert system > 2 * count_tokens(sent.system)
    assert sent.tokens["system"] == sent.tokens["soul"] == system
    assert sent.tokens["message"] == count_tokens(message, "cl100k_base")
    assert reply.prompt.tokens["system"] == system


def test_a_failover_to_gpt4_recuts_the_files_for_gpt4(tmp_path: Path):
    from hermes_core.errors import ServerError
    from hermes_core.tokens import count_tokens
    windows = {"gpt-4o": 100_000, "gpt-4": 100_000}
    first, backup = OpenAIWindows(windows, name="openai"), OpenAIWindows(windows, name="azure")
    agent = thai_memory_agent(tmp_path, {"openai": first, "azure": backup}, {
        "default_model": "gpt-4o", "context_windows": windows,
        "providers": [{"name": "openai", "priority": 1, "models": ["gpt-4o"]},
                      {"name": "azure", "type": "openai", "priority": 2, "models": ["gpt-4"]}]})
    first.add(*[ServerError("down", status_code=503)] * 10)
    reply = agent.chat("สวัสดี")
    sent = backup.last_request.prompt
    assert reply.provider == "azure" and backup.last_request.model == "gpt-4"
    assert count_tokens(memory_section(sent.system), "cl100k_base") <= BUDGET + 40
    assert sent.tokens["system"] == count_tokens(sent.system, "cl100k_base")


def test_a_failover_to_the_same_model_name_on_another_provider_kind_counts_for_that_kind(
        tmp_path: Path):
    """``fit_for`` compared model names only: gpt-4 through a gateway speaking Anthropic's format
    counts in o200k_base (not OpenAI's wire, so not known exact), through OpenAI in cl100k_base;
    the failover from one to the other sent the gateway's o200k counts and cuts to gpt-4."""
    from hermes_core.errors import ServerError
    from hermes_core.tokens import count_tokens
    windows = {"gpt-4": 100_000}
    first, backup = AnthropicWindows(windows, name="gateway"), OpenAIWindows(windows, name="openai")
    agent = thai_memory_agent(tmp_path, {"gateway": first, "openai": backup}, {
        "default_model": "gpt-4", "context_windows": windows,
        "providers": [{"name": "gateway", "type": "anthropic", "priority": 1, "models": ["gpt-4"]},
                      {"name": "openai", "priority": 2, "models": ["gpt-4"]}]})
    first.add(*[ServerError("down", status_code=503)] * 10)
    message = "บันทึกไม่มีอะไรใหม่ในวันนี้ " * 20
    reply = agent.chat(message)
    sent = backup.last_request.prompt
    assert reply.provider == "openai" and backup.last_request.model == "gpt-4"
    assert sent.tokens["system"] == count_tokens(sent.system, "cl100k_base")
    assert sent.tokens["message"] == count_tokens(message, "cl100k_base")
    assert count_tokens(memory_section(sent.system), "cl100k_base") <= BUDGET + 40


#: A paused structured turn's second request, by what it answers with and how it comes: a
#: stream of events, or a whole JSON answer to the streamed request (``_whole_in_stream``).
CONTINUATIONS = {
    "output tool, streamed": ("stream", OSLO, '{"city": "Oslo"}', "Oslo"),
    "output tool, whole": ("sync", OSLO, '{"city": "Oslo"}', "Oslo"),
    # the words are the answer, its first object the guess (as in any reply in words)
    "words, streamed": ("stream", [{"type": "text", "text": '{"city": "Oslo"}'}],
                        'My guess is {"city": "Paris"}; checking. {"city": "Oslo"}', "Paris"),
    "words, whole": ("sync", [{"type": "text", "text": '{"city": "Oslo"}'}],
                     'My guess is {"city": "Paris"}; checking. {"city": "Oslo"}', "Paris"),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("case", sorted(CONTINUATIONS))
def test_a_structured_stream_shows_a_paused_reply_s_words_only_when_they_are_the_answer_s(
        empty_home: Path, respx_mock: Any, mode: str, case: str) -> None:
    """``stream(output=...)`` shows the text the reply keeps: a paused reply's words (a guess)
    are shown only once the continuation answers in words, which they lead; a continuation
    through the output tool drops them (decision 202), so they are never shown. Failed before
    for the output tool: the guess was shown before the JSON, though the reply dropped it."""
    wire, blocks, text, city = CONTINUATIONS[case]
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply("stream", GUESS, "pause_turn", (100, 40)),
        _anthropic_reply(wire, blocks, "tool_use" if blocks is OSLO else "end_turn", (130, 20))])
    agent = make_agent(empty_home, "anthropic")
    shown, reply = _shown_turn(agent, mode, "where am I going?", output=City)
    assert reply.output == City(city=city)
    assert reply.text == text
    assert shown == text


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_structured_stream_paused_at_the_continuation_limit_shows_its_words(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """A paused reply not sent back (the limit reached) is the turn's answer: its words are
    shown, as the reply keeps them."""
    respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        _anthropic_reply("stream", web_search_blocks('{"city": "Oslo"}'), "pause_turn",
                         (100, 40))])
    agent = make_agent(empty_home, "anthropic")
    agent.max_continuations = 0
    shown, reply = _shown_turn(agent, mode, "where am I going?", output=City)
    assert reply.stop_reason == "max_continuations"
    assert shown == reply.text == '{"city": "Oslo"}'


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_streamed_round_is_the_completion_its_deltas_amount_to(tmp_path: Path, mode: str) -> None:
    """The round's reply joins its pieces (``Accumulator``): the text, the calls; no usage piece
    (an author's provider that sends none) is no usage, counted as reported, and the reply is
    named after the model routed when no piece names one."""
    from hermes_core.testing import ScriptedProvider

    fake = ScriptedProvider("fake", kind="offline", script=[   # no key asked
        [Delta(text="Adding. "), Delta(tool_call=tool_call("add", a=1, b=2, id="c1")),
         Delta(finish_reason="tool_calls", model="m-2024")],
        [Delta(text="It is "), Delta(text="3.")]])
    agent = adder(tmp_path, fake)   # type: ignore[arg-type]
    if mode == "stream":
        stream = agent.stream("1 + 2?")
        shown, reply = "".join(stream), stream.reply
    else:
        shown, reply = "".join(asyncio.run(_astream(agent, "1 + 2?"))), agent.last_reply
    assert shown == "Adding. \n\nIt is 3."
    assert reply.text == "It is 3." and reply.model == "m"
    assert [r.output for r in reply.tool_results] == ["3"]
    assert reply.usage == Usage() and reply.usage.reported


#: A paused reply's content, sent back as it came (what a ScriptedProvider's pause carries)
PAUSED_TEXT = ({"type": "text", "text": "..."},)
ADDING = [Delta(text="Adding. "), Delta(tool_call=tool_call("add", a=1, b=2, id="c1")),
          Delta(finish_reason="tool_calls")]
JSON_ANSWER = '{"city": "Oslo"}'
#: Turns that pause, by the rounds their provider streams, the ``output`` asked for, and the
#: text shown, which is the reply's text after any tool round's words (and their break) in a
#: text stream, the reply's text alone in a structured one
ACROSS_A_PAUSE: dict[str, tuple[list[list[Delta]], type[BaseModel] | None, str, str]] = {
    # a configured key split across the pause: one reply's text, scrubbed whole
    "key split, structured": (
        [[Delta(text="my key is Zq7"), Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
         [Delta(text=f" odd-key {JSON_ANSWER}"), Delta(finish_reason="end_turn")]],
        City, "", f"my key is [key] {JSON_ANSWER}"),
    "key split, words": (
        [[Delta(text="my key is Zq7"), Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
         [Delta(text=" odd-key, kept safe."), Delta(finish_reason="end_turn")]],
        None, "", "my key is [key], kept safe."),
    # the paused words after a tool round dropped by the output tool, the tool round's too
    "tool round, output tool": (
        [ADDING, [Delta(text="A guess. "), Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
         [Delta(text=JSON_ANSWER, from_output_tool=True), Delta(finish_reason="tool_use")]],
        City, "", JSON_ANSWER),
    "tool round, words": (
        [ADDING, [Delta(text="A guess. "), Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
         [Delta(text=JSON_ANSWER), Delta(finish_reason="end_turn")]],
        City, "", f"A guess. {JSON_ANSWER}"),
    # a paused reply with no text after a tool round: its continuation still starts a paragraph
    "tool round, silent pause": (
        [ADDING, [Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
         [Delta(text="It is 3."), Delta(finish_reason="end_turn")]],
        None, "Adding. \n\n", "It is 3."),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("case", sorted(ACROSS_A_PAUSE))
def test_a_stream_shows_a_paused_turn_as_its_reply_keeps_it(
        tmp_path: Path, mode: str, case: str) -> None:
    """What a paused turn shows is its tool rounds' words, a paragraph break, then the reply's
    text (a structured stream: the reply's text alone, decision 217): a key split across the
    pause is scrubbed in both (the flush at the pause had released its head, and each round's
    text was scrubbed apart); the break stays when the paused reply had no text. Failed
    before (210): both key cases (shown and reply), the output tool's (no break), the silent
    pause (no break); 8 of 10."""
    from hermes_core.testing import ScriptedProvider

    rounds, output, before, kept = ACROSS_A_PAUSE[case]
    agent = keyed_agent(tmp_path, ScriptedProvider(   # type: ignore[arg-type]
        "fake", kind="offline", script=[list(r) for r in rounds]))

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    shown, reply = _shown_turn(agent, mode, "where am I going?", output=output)
    fingerprinted = re.sub(r"\[key-[0-9a-f]+\]", "[key]", reply.text)
    assert fingerprinted == kept, reply.text
    assert shown == before + reply.text
    assert ODD_KEY not in repr(agent.history)


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("cut", [ValueError("cut"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_a_structured_stream_cut_in_a_continuation_shows_the_held_words_once_or_not_at_all(
        tmp_path: Path, mode: str, cut: BaseException) -> None:
    """A continuation that fails shows what arrived, the paused words held for it first, once
    (as a text stream had shown them live), the start of a key never; one interrupted shows
    nothing more. The history stays untouched either way."""
    from hermes_core.testing import ScriptedProvider

    agent = keyed_agent(tmp_path, ScriptedProvider(   # type: ignore[arg-type]
        "fake", kind="offline", script=[
            [Delta(text="A guess. "), Delta(finish_reason="pause_turn", paused=PAUSED_TEXT)],
            [Delta(text="More, Zq7"), cut]]))
    shown: list[str] = []
    with pytest.raises(type(cut)):
        if mode == "stream":
            shown.extend(agent.stream("where am I going?", output=City))
        else:
            async def read() -> None:
                async for p in agent.astream("where am I going?", output=City):
                    shown.append(p)
            asyncio.run(read())
    assert shown == (["A guess. More, "] if isinstance(cut, Exception) else [])
    assert agent.history == []


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_text_stream_shows_each_piece_before_the_next_is_asked_for(
        tmp_path: Path, mode: str) -> None:
    """Holding is for structured turns alone: without ``output`` each piece is shown as it
    comes, before the provider is asked for the next."""
    from hermes_core.testing import ScriptedProvider

    asked: list[str] = []

    class Live(ScriptedProvider):
        def stream(self, prompt, model, credential, options):  # type: ignore[no-untyped-def]
            for text in ("It ", "is ", "three ", "now."):
                asked.append(text)
                yield Delta(text=text)
            yield Delta(finish_reason="stop")

        async def astream(self, prompt, model, credential, options):  # type: ignore[no-untyped-def]
            for d in self.stream(prompt, model, credential, options):
                yield d

    agent = adder(tmp_path, Live("fake", kind="offline"))   # type: ignore[arg-type]
    seen: list[tuple[str, int]] = []
    if mode == "stream":
        seen.extend((p, len(asked)) for p in agent.stream("count"))
    else:
        async def read() -> None:
            async for p in agent.astream("count"):
                seen.append((p, len(asked)))
        asyncio.run(read())
    assert seen == [("It ", 1), ("is ", 2), ("three ", 3), ("now.", 4)]


ADD_CALL = (ToolCall("call_1", "add", '{"a": 1, "b": 2}'),)


#: A structured turn whose first round calls a tool after some words: (the words, the second
#: round's calls, llm.max_tool_rounds). At the cap the second round, calling again, is the reply.
TOOL_ROUND_WORDS = {
    "a guessed object": ('{"city": "Paris"}', (), 5),
    "a preamble": ("Let me add first.", (), 5),
    "capped": ("Let me add first.", ADD_CALL, 1),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("case", sorted(TOOL_ROUND_WORDS))
def test_a_structured_stream_shows_a_tool_round_s_words_only_when_they_are_the_reply_s(
        case: str, kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool round's words, a preamble to its calls (a guessed object among them), are no part
    of a structured reply (``reply.text`` is the last round's JSON); a stream of it showed them,
    a paragraph break and the JSON, which an author reading the shown text as the object cannot
    parse. At the round cap the words are the reply and are shown. Failed before: the guessed
    object's, the preamble's and the capped's: 12 of 12."""
    words, calls, rounds = TOOL_ROUND_WORDS[case]
    kept = '{"city": "Oslo"}'
    respx_mock.post(URLS[kind]).mock(side_effect=[wire_response(kind, True, words, ADD_CALL),
                                                  wire_response(kind, True, kept, calls)])
    agent = make_agent(empty_home, kind)
    agent.tools.max_rounds = rounds

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    shown, reply = _shown_turn(agent, mode, "where?", output=City)
    assert reply.text == kept and shown == reply.text
    assert reply.stop_reason == ("max_tool_rounds" if calls else None)
