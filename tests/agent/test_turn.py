"""Tests of ``hermes_core/agent/turn.py``: one turn's rounds, as the Agent's shells run them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import turn as turn_module
from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import (
    FakeProvider,
    tool_call,
    tool_calls,
)
from hermes_core.types import Message, ToolCall
from tests.agent.conftest import (
    BUDGET,
    KEYS,
    LONG,
    MODELS,
    ODD_KEY,
    URLS,
    AnthropicWindows,
    OpenAIWindows,
    WindowsByModel,
    adder,
    astream,
    keyed_agent,
    memory_section,
    request_json,
    routed_agent,
    run,
    thai_memory_agent,
    tool_answers,
    wire_response,
)


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
        pieces = asyncio.run(astream(agent, "check my key"))
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
