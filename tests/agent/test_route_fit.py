"""Tests of ``hermes_core/agent/route_fit.py``: the model and wire format a routed request is
fitted for, the encoding a prompt is built in before routing, and the fit itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.route_fit import expected_encoding, fit_route, target
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.tokens import count_tokens
from tests.agent.conftest import (
    BUDGET,
    LONG,
    THAI_NOTE,
    OpenAIWindows,
    WindowsByModel,
    memory_section,
    routed_agent,
    thai_memory_agent,
)

THAI_LINE = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์\n"


class OpenAIFake(FakeProvider):
    kind = "openai"


class AnthropicFake(FakeProvider):
    kind = "anthropic"


def agent_for(home: Path, routing: dict, providers: dict, requested: str | None = None) -> Agent:
    settings = load_settings({
        "home": str(home), "llm": {"routing": routing},
        "prompt": {"file_token_budget": 300, "injection_scan": False},
        "skill_utils": {"enabled": False, "embeddings": False},
        "context_engine": {"enabled": False}}, env={})
    return Agent(settings, providers=providers, model=requested,
                 loop_options={"sleep": lambda s: None, "audit_path": False})


def test_the_prompt_is_built_in_the_encoding_of_the_model_expected(tmp_path: Path) -> None:
    both = {"default_model": "gpt-4o", "providers": [
        {"name": "openai", "priority": 1, "models": ["gpt-4o", "gpt-4"]},
        {"name": "gateway", "type": "anthropic", "priority": 2, "models": ["gpt-4"]}]}
    providers = {"openai": OpenAIFake(name="openai"), "gateway": AnthropicFake(name="gateway")}
    assert expected_encoding(agent_for(tmp_path, both, providers)) == "o200k_base"
    assert expected_encoding(agent_for(tmp_path, both, providers, "gpt-4")) == "cl100k_base"
    gateway_first = {**both, "providers": [{**both["providers"][1], "priority": 0},
                                           both["providers"][0]]}
    # gpt-4 through a gateway in Anthropic's format is not known to count as OpenAI's
    assert expected_encoding(agent_for(tmp_path, gateway_first, providers, "gpt-4")) == "o200k_base"


def test_one_model_name_on_two_wire_formats_is_two_targets(tmp_path: Path) -> None:
    routing = {"default_model": "gpt-4", "providers": [
        {"name": "gateway", "type": "anthropic", "priority": 1, "models": ["gpt-4"]},
        {"name": "openai", "priority": 2, "models": ["gpt-4"]}]}
    agent = agent_for(tmp_path, routing, {"gateway": AnthropicFake(name="gateway"),
                                          "openai": OpenAIFake(name="openai")})
    prompt, decision = agent.prepare("hi")
    assert target(agent, decision) == ("gpt-4", "anthropic")
    assert agent.fitted is not None and agent.fitted[1:] == ("gpt-4", "anthropic")
    assert prompt.turn is not None and prompt.turn.encoding == "o200k_base"


def test_fitting_a_route_recuts_the_files_for_its_model(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(THAI_LINE * 200, encoding="utf-8")
    routing = {"default_model": "gpt-4o",
               "providers": [{"name": "openai", "priority": 1, "models": ["gpt-4o", "gpt-4"]}]}
    agent = agent_for(tmp_path, routing, {"openai": OpenAIFake(name="openai")})
    prompt, decision = agent.prepare("hi")
    assert decision.model == "gpt-4o" and count_tokens(prompt.system, "cl100k_base") > 600
    gpt4 = agent.router.select(prompt, requested_model="gpt-4")
    fitted = fit_route(agent, prompt, gpt4)
    assert fitted.tokens["system"] == count_tokens(fitted.system, "cl100k_base") <= 300 + 80
    assert fitted.turn is not None and fitted.turn.encoding == "cl100k_base"


def test_a_turn_routed_to_a_smaller_window_model_is_compacted_for_that_window(tmp_path: Path):
    windows = {"m-big": 100_000, "m-small": 3000}
    fake = WindowsByModel(windows)
    agent = routed_agent(tmp_path, fake, routing={
        "default_model": "m-big", "context_windows": windows,
        "rules": [{"condition": "'quick' in message", "model": "m-small"}]})
    for i in range(16):
        agent.chat(f"turn {i}: {LONG * 3}")
    reply = agent.chat("quick question: which port was the health check on?")
    assert fake.last_request.model == "m-small"
    assert reply.compaction is not None and reply.compaction.budget.window == 3000
    assert reply.compaction.compactions >= 1


def test_a_turn_routed_to_a_long_context_model_is_not_compacted_for_the_default(tmp_path: Path):
    windows = {"m-small": 3000, "m-long": 100_000}
    fake = WindowsByModel(windows)
    agent = routed_agent(tmp_path, fake, routing={
        "default_model": "m-small", "long_context_model": "m-long", "context_windows": windows,
        "rules": [{"condition": "prompt_tokens > 2000", "model": "long_context_model"}]})
    for i in range(13):   # the 13th turn's request passes 2000 o200k tokens
        reply = agent.chat(f"turn {i}: {LONG * 3}")
    assert fake.last_request.model == "m-long"
    assert reply.compaction is not None and reply.compaction.budget.window == 100_000
    assert reply.compaction.compactions == 0     # the long model reads the whole chat
    assert len(fake.last_request.prompt.messages) == len(agent.history) - 1


def test_a_gpt4_turn_cuts_a_thai_memory_file_to_its_budget_in_gpt4s_encoding(tmp_path: Path):
    """The file budgets were o200k tokens whatever the model: a Thai MEMORY.md cut to 300 o200k
    tokens is ~2.5x that in gpt-4's cl100k_base, the worst case of a budget decided before
    routing. The model is known (the default, served by OpenAI): the file is cut in its
    encoding, and the count reported is of what is sent."""
    from hermes_core.tokens import count_tokens
    fake = OpenAIWindows({"gpt-4": 100_000})
    agent = thai_memory_agent(tmp_path, fake, {"default_model": "gpt-4"})
    agent.chat("สวัสดี")
    sent = fake.last_request.prompt
    body = memory_section(sent.system)
    assert 0.8 * BUDGET < count_tokens(body, "cl100k_base") <= BUDGET + 40   # + the cut marker
    assert sent.tokens["memory"] == count_tokens("## Memory (MEMORY.md)\n\n" + body, "cl100k_base")
    assert count_tokens(body) < 0.6 * BUDGET          # what o200k_base would have let through


def test_a_turn_routed_to_gpt4_after_the_build_recuts_the_files_for_gpt4(tmp_path: Path):
    """The model is not known while the files are cut (a rule picks gpt-4 on the request): the
    budgets are cut again in the routed model's encoding, before the history is fitted."""
    from hermes_core.tokens import count_tokens
    fake = OpenAIWindows({"gpt-4o": 100_000, "gpt-4": 100_000})
    agent = thai_memory_agent(tmp_path, fake, {
        "default_model": "gpt-4o", "context_windows": {"gpt-4o": 100_000, "gpt-4": 100_000},
        "rules": [{"condition": "'sql' in message", "model": "gpt-4"}]})
    agent.chat("สวัสดี")
    wide = memory_section(fake.last_request.prompt.system)
    assert fake.last_request.model == "gpt-4o" and count_tokens(wide) > 0.8 * BUDGET
    agent.chat("SQL สำหรับรายงาน")
    sent = fake.last_request.prompt
    assert fake.last_request.model == "gpt-4"
    assert count_tokens(memory_section(sent.system), "cl100k_base") <= BUDGET + 40
    assert sent.tokens["system"] == count_tokens(sent.system, "cl100k_base")
    agent.chat("สวัสดี")                            # back on gpt-4o: its own cut, unchanged
    assert memory_section(fake.last_request.prompt.system) == wide


def test_a_gpt4_turn_fits_recalled_thai_sessions_to_the_block_budget_in_cl100k(tmp_path: Path):
    """Recall was fitted to ``block_tokens`` in o200k_base: Thai summaries filled 2-3x the block
    in gpt-4's encoding."""
    from hermes_core.tokens import count_tokens
    fake = OpenAIWindows({"gpt-4": 100_000})
    agent = routed_agent(tmp_path, fake, routing={"default_model": "gpt-4"},
                         context_engine={"enabled": True, "block_tokens": 150})
    for i in range(4):
        agent.context_engine.add(f"s{i}", f"Biscuit {i}: " + THAI_NOTE * 6)
    agent.chat("Biscuit?")
    turn = fake.last_request.prompt.turn
    assert turn is not None and len(turn.memories) >= 2
    block = turn.memories_block
    assert count_tokens(block, "cl100k_base") <= 150 and count_tokens(block) < 100
    assert block in fake.last_request.prompt.context


# ---------------------------------------------------------------------- Ctrl-C as a turn ends


@pytest.mark.parametrize("long_window, sent_to", [
    (4_000, None),            # too small as well: refused before sending, both windows named
    (40_000, "m-long"),       # large enough: routed there
    (None, "m-long"),         # unknown: taken to be larger, tried (the provider decides)
])
def test_a_message_no_configured_window_holds_is_refused_before_it_is_sent(
        tmp_path: Path, long_window: int | None, sent_to: str | None) -> None:
    """A 10,000-token message, the default model's window 2,000 and the long-context model's
    4,000: the request went to the default model (the refusal before sending stood down because
    a long-context model was configured, whatever its size), to be refused by the provider after
    the upload, and then by the long-context model too."""
    from hermes_core.errors import ContextWindowExceeded

    windows = {"m-default": 2_000, **({"m-long": long_window} if long_window else {})}
    fake = FakeProvider([], default="fine", name="openai")
    agent = agent_for(tmp_path, {"default_model": "m-default", "long_context_model": "m-long",
                                 "context_windows": windows}, {"openai": fake})
    message = "summarise this: " + "lorem ipsum dolor sit amet " * 2_000
    if sent_to is None:
        with pytest.raises(ContextWindowExceeded) as info:
            agent.chat(message)
        said = str(info.value)
        assert "m-default's context window of 2000 tokens" in said
        assert "long_context_model m-long (4,000 tokens) is too small as well" in said
        assert fake.requests == []
    else:
        agent.chat(message)
        assert [r.model for r in fake.requests] == [sent_to]
    agent.close(wait_warm=False)
