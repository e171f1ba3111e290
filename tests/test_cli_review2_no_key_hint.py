"""With only ANTHROPIC_API_KEY set (the README says either key works), the default model gpt-4o
routes to OpenAI, which has no key: every turn failed with "openai/gpt-4o:no_key" and nothing said
what to do. The REPL now names the missing key and how to pick a model of a provider that has one."""

from __future__ import annotations

import io
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings


def test_turn_without_a_key_for_the_routed_provider_says_what_to_do(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}},
                             env={"ANTHROPIC_API_KEY": "sk-ant-test-abcdefghijklmnop0123"})
    agent = Agent(settings)
    assert agent.offline_reason is None            # a key exists: not offline
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("hello\n/exit\n"), stdout=out, stream=False).run()
    text = out.getvalue()
    assert "openai/gpt-4o:no_key" in text
    assert "no API key for openai" in text and "/model" in text, text
    assert "sk-ant-test" not in text
