"""Tests of ``hermes_core/agent/turn.py``: the tokens a turn was billed for, counted once,
when its attempts are cut, retried, refused, cancelled or interrupted."""

from __future__ import annotations

import _thread
import asyncio
import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeProvider,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    tool_call,
    tool_calls,
)
from hermes_core.tokens import count_tokens
from hermes_core.types import Usage
from tests.agent.conftest import (
    MODELS,
    URLS,
    adder,
    make_agent,
    read_turn,
    request_json,
    run,
    run_turn,
    wire_response,
)
from tests.conftest import CancelledOnce, Loopback


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
    reply = read_turn(agent, "astream" if use_async else "stream", "hi")
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
            read_turn(agent, mode, "go")
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
    reply = read_turn(agent, mode, "hi")
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
    reply = read_turn(agent, mode, "hi")
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
    reply = read_turn(agent, mode, "hi")
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
