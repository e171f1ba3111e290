"""``hermes-core prompt`` shows the request a chat turn would send, byte for byte (bar the clock)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import copy_example_home

from hermes_core.agent.agent import Agent
from hermes_core.cli.main import main
from hermes_core.config import load_settings

MESSAGE = "how do I fix a git rebase conflict?"


def _no_clock(payload: dict) -> str:
    return re.sub(r"Current date and time: [^|]*\|", "", json.dumps(payload, sort_keys=True))


@pytest.mark.parametrize("kind, model", [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5")])
def test_prompt_command_matches_the_agent_request_with_auto_routing(tmp_path: Path, capsys,
                                                                     kind: str, model: str):
    home = tmp_path / "home"
    copy_example_home(home)
    cfg = {"home": str(home), "llm": {"routing": {"default_model": model,
                                                  "providers": [{"name": kind}]}},
           "credentials": {kind: {"keys": [{"key": "sk-test-0123456789abcdef"}]}}}
    cfg_file = tmp_path / "config.yaml"
    cfg_file.write_text(json.dumps(cfg), encoding="utf-8")   # JSON is YAML
    agent = Agent(load_settings(cfg, env={}), session_id="S1")
    try:
        prompt, decision = agent.prepare(MESSAGE)
        first = decision.candidates[0]
        planned = agent.loop.planned(prompt, first)   # the call loop plans the cache markers
        sent = agent.providers[first.provider].render(planned, first.model, agent.options())
    finally:
        agent.close()
    assert main(["prompt", MESSAGE, "--home", str(home), "--config", str(cfg_file),
                 "--session", "S1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["model"] == first.model
    assert _no_clock(shown["request"]) == _no_clock(sent)
