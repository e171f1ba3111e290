"""Tests of ``hermes_core/agent/reply.py``: the values a turn hands back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core import Reply as PublicReply
from hermes_core.agent.agent import Agent
from hermes_core.agent.reply import Reply, ReplyStream, SessionStats
from hermes_core.config import load_settings
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    SSE_HEADERS,
    FakeProvider,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.types import Completion, ToolCall, Usage
from tests.agent.conftest import (
    KEYS,
    URLS,
    agent_for,
    make_agent,
    run_turn,
    wire_response,
)


def test_a_reply_prints_as_its_text_and_is_the_public_one() -> None:
    assert PublicReply is Reply
    assert str(Reply("hello", "gpt-4o", "openai")) == "hello"


def test_closing_a_reply_stream_closes_the_generator_behind_it() -> None:
    closed: list[bool] = []

    def pieces() -> Iterator[str]:
        try:
            yield "a"
            yield "b"
        finally:
            closed.append(True)

    stream = ReplyStream(pieces())
    assert next(iter(stream)) == "a"
    stream.close()
    assert closed == [True] and stream.reply is None


def test_session_stats_report_the_cache_hit_ratio_of_their_usage() -> None:
    stats = SessionStats(turns=1, usage=Usage(input_tokens=250, cache_read_tokens=750))
    assert stats.cache_hit_ratio == Usage(input_tokens=250, cache_read_tokens=750).cache_hit_ratio
    assert 0.0 < stats.cache_hit_ratio <= 1.0


def test_the_agent_fills_a_reply_and_its_stream(tmp_path) -> None:
    with Agent(load_settings({"home": str(tmp_path)}), provider=FakeProvider(["one two", "three"])) as agent:
        reply = agent.chat("hi")
        stream = agent.stream("again")
        text = "".join(stream)
    assert isinstance(reply, Reply) and reply.text == "one two" and reply.provider
    assert text == "three" and isinstance(stream.reply, Reply) and stream.reply.text == "three"
    assert agent.stats.turns == 2


def _ended(kind: str, streamed: bool, reason: str) -> Any:
    """A reply of a few words that ended for ``reason`` (the wire's own word), in ``kind``'s
    format, whole or streamed."""
    if streamed:
        body = (openai_chat_stream(("The answer is",)).replace(b'"stop"', f'"{reason}"'.encode())
                if kind == "openai" else
                anthropic_stream(("The answer is",)).replace(b'"end_turn"', f'"{reason}"'.encode()))
        return httpx.Response(200, content=body, headers=SSE_HEADERS)
    return httpx.Response(200, json=openai_chat_completion("The answer is", finish_reason=reason)
                          if kind == "openai" else
                          anthropic_message("The answer is", stop_reason=reason))


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
@pytest.mark.parametrize("kind, wire, said", [
    ("openai", "length", "max_tokens"), ("openai", "content_filter", "content_filter"),
    ("anthropic", "max_tokens", "max_tokens"),
    ("anthropic", "model_context_window_exceeded", "model_context_window_exceeded"),
    ("openai", "stop", None), ("anthropic", "end_turn", None), ("anthropic", "stop_sequence", None),
])
def test_a_reply_the_model_did_not_finish_says_why(kind: str, wire: str, said: str | None,
                                                   mode: str, empty_home: Path,
                                                   respx_mock: Any) -> None:
    """A reply cut at max_tokens, by the context window or a content filter read as a whole
    answer: ``stop_reason`` was None, the truncated text passed for the model's last word. (A
    paused one is sent back to go on: test_turn.py.)"""
    respx_mock.post(URLS[kind]).mock(return_value=_ended(kind, mode == "stream", wire))
    reply = run_turn(make_agent(empty_home, kind), mode, "answer")
    assert reply.text == "The answer is" and reply.stop_reason == said


def test_a_structured_reply_a_content_filter_withheld_gets_no_repair_round(
        empty_home: Path, respx_mock: Any) -> None:
    """``content: null`` with ``finish_reason: content_filter`` was sent a repair round (a second
    paid call the filter withholds again) and reported as invalid JSON."""
    from pydantic import BaseModel

    from hermes_core.errors import StructuredOutputError

    class Forecast(BaseModel):
        x: int

    route = respx_mock.post(URLS["openai"]).mock(return_value=httpx.Response(
        200, json=openai_chat_completion("", finish_reason="content_filter")))
    with pytest.raises(StructuredOutputError) as info:
        make_agent(empty_home, "openai").chat("forecast", output=Forecast)
    assert route.call_count == 1 and info.value.refused


def test_session_cache_hit_ratio(home: Path):
    replies = [Completion("a", "m", "fake", Usage(1000, 10, cache_write_tokens=1500)),
               Completion("b", "m", "fake", Usage(200, 10, cache_read_tokens=1500)),
               Completion("c", "m", "fake", Usage(200, 10, cache_read_tokens=1500))]
    agent = agent_for(home, FakeProvider(replies))
    for text in ("one", "two", "three"):
        agent.chat(text)
    assert agent.stats.cache_hit_ratio == pytest.approx(3000 / (1000 + 1500 + 200 + 1500 + 200 + 1500))


HEADER = {"openai": "x-request-id", "anthropic": "request-id"}
BODY_ID = {"openai": "chatcmpl-test", "anthropic": "msg_test"}


def _said(kind: str, streamed: bool, stated: str | None, text: str = "",
          calls: tuple[ToolCall, ...] = (), status: int = 200) -> httpx.Response:
    """One reply (or, ``status`` 500, a server error) whose header states ``stated``."""
    resp = (wire_response(kind, streamed, text, calls) if status == 200
            else httpx.Response(status, json={"type": "error", "error": {
                "type": "api_error", "message": "overloaded"}}))
    if stated is not None:
        resp.headers[HEADER[kind]] = stated
    return resp


def _answered(agent: Any, mode: str) -> Any:
    """The Reply to one question asked through ``mode``'s shell (astream's: ``last_reply``)."""
    if mode != "astream":
        return run_turn(agent, mode, "what is 1 + 2?")

    async def read() -> None:
        async for _ in agent.astream("what is 1 + 2?"):
            pass
    asyncio.run(read())
    return agent.last_reply


ADD = (ToolCall("call_1", "add", '{"a": 1, "b": 2}'),)
#: The replies a turn is answered with (kind, streamed -> responses) and the ids its Reply says.
TURNS: dict[str, tuple[Callable[[str, bool], list[httpx.Response]], Callable[[str], tuple[str, ...]]]] = {
    "one round": (lambda k, s: [_said(k, s, "req_answer", "It is 3.")],
                  lambda k: ("req_answer",)),
    "a tool loop": (lambda k, s: [_said(k, s, "req_round_1", "Adding.", ADD),
                                  _said(k, s, "req_round_2", "It is 3.")],
                    lambda k: ("req_round_1", "req_round_2")),
    "retried after a server error": (lambda k, s: [_said(k, s, "req_failed", status=500),
                                                   _said(k, s, "req_retry", "It is 3.")],
                                     lambda k: ("req_retry",)),
    "retried after a rate limit": (lambda k, s: [_said(k, s, "req_limited", status=429),
                                                 _said(k, s, "req_retry", "It is 3.")],
                                   lambda k: ("req_retry",)),
    # a gateway ignoring ``stream: true`` (the JSON body in every mode): the header's id
    "answered whole": (lambda k, s: [_said(k, False, "req_whole", "It is 3.")],
                       lambda k: ("req_whole",)),
    "no header": (lambda k, s: [_said(k, s, None, "It is 3.")], lambda k: (BODY_ID[k],)),
}


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("case", sorted(TURNS))
def test_a_reply_names_the_provider_request_of_each_round_that_made_it(
        case: str, kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """What a support ticket quotes: the request id each answering round's response header
    stated (its body's id without one), in order, the answer's last; a retried request's
    failure is no round of the reply. Failed before: ``Reply`` had no request id."""
    replies, ids = TURNS[case]
    respx_mock.post(URLS[kind]).mock(side_effect=replies(kind, mode in ("stream", "astream")))
    agent = make_agent(empty_home, kind)

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    reply = _answered(agent, mode)
    assert reply.text.endswith("It is 3.")
    assert reply.request_ids == ids(kind) and reply.request_id == ids(kind)[-1]


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_repaired_structured_reply_names_the_rejected_request_before_its_own(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The rejected reply's tokens are in the repaired one's ``wasted``; its request is too."""
    from pydantic import BaseModel

    class Sum(BaseModel):
        total: int

    streamed = mode == "stream"
    respx_mock.post(URLS[kind]).mock(side_effect=[_said(kind, streamed, "req_bad", "three"),
                                                  _said(kind, streamed, "req_good", '{"total": 3}')])
    agent = make_agent(empty_home, kind)
    assert run_turn(agent, mode, "1 + 2?", output=Sum) == Sum(total=3)
    assert agent.last_reply is not None
    assert agent.last_reply.request_ids == ("req_bad", "req_good")


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_request_id_echoing_the_agent_s_key_is_scrubbed_as_the_reply_s_text_is(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A proxy that echoes the Authorization value into the request-id header: the id is
    provider text like the reply's, which an author prints or files in a ticket, so the agent's
    key in it is replaced by its fingerprint; an id of the providers' shapes is kept whole (the
    other ids of this file). Failed before: the key in ``reply.request_ids``."""
    key = KEYS[kind]
    respx_mock.post(URLS[kind]).mock(side_effect=[
        _said(kind, mode in ("stream", "astream"), f"echo {key}", "It is 3.")])
    agent = make_agent(empty_home, kind)
    reply = _answered(agent, mode)
    assert reply.text == "It is 3." and len(reply.request_ids) == 1
    assert reply.request_id is not None and reply.request_id.startswith("echo ")
    assert key[:10] not in reply.request_id and key[:10] not in repr(reply)


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
def test_a_round_failed_over_to_the_backup_provider_names_the_backup_s_request(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The first round answered by OpenAI, the second failed over to Anthropic after OpenAI's
    500s: each round's id is the request that answered it, the failed ones none."""
    streamed = mode in ("stream", "astream")
    respx_mock.post(URLS["openai"]).mock(side_effect=[
        _said("openai", streamed, "req_round_1", "Adding.", ADD),
        *(_said("openai", streamed, f"req_failed_{i}", status=500) for i in range(8))])
    respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        _said("anthropic", streamed, "req_backup", "It is 3.")])
    cfg = {"home": str(empty_home), "context_engine": {"enabled": False},
           "credentials": {k: {"keys": [{"key": KEYS[k]}]} for k in URLS},
           "llm": {"routing": {"default_model": "gpt-4o-mini", "providers": [
               {"name": "openai", "priority": 1, "models": ["gpt-4o-mini"]},
               {"name": "anthropic", "priority": 2, "models": ["claude-sonnet-4-5"]}]}}}
    agent = Agent(load_settings(cfg, env={}),
                  providers={"openai": OpenAIProvider(), "anthropic": AnthropicProvider()},
                  loop_options={"sleep": lambda s: None, "audit_path": False})

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b
    try:
        reply = _answered(agent, mode)
    finally:
        agent.close(wait_warm=False, summarize=False)
    assert reply.provider == "anthropic" and reply.text.endswith("It is 3.")
    assert reply.request_ids == ("req_round_1", "req_backup")
