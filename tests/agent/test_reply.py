"""Tests of ``hermes_core/agent/reply.py``: the values a turn hands back."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_core import Reply as PublicReply
from hermes_core.agent.agent import Agent
from hermes_core.agent.reply import Reply, ReplyStream, SessionStats
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.types import Usage


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
