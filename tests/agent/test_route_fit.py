"""Tests of ``hermes_core/agent/route_fit.py``: the model and wire format a routed request is
fitted for, the encoding a prompt is built in before routing, and the fit itself."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.agent.route_fit import expected_encoding, fit_route, target
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.tokens import count_tokens

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
