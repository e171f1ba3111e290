"""The tool-using example runs as a user runs it, against the loopback server, in both wire
formats; and in process, the server sees the tools offered and their results sent back in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "tools_agent.py"


@pytest.mark.parametrize("args", [["--wire", "openai"], ["--wire", "anthropic", "--stream"]])
def test_tools_agent_example_runs(tmp_path: Path, args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    res = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "In Oslo it is 21°C and clear; local time 14:05." in res.stdout
    assert "[tool get_weather: ok," in res.stdout and "[tool local_time: ok," in res.stdout
    assert "structured: Trip(city='Oslo', activity='walk the harbour', bring_umbrella=False)" \
        in res.stdout


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_server_sees_tools_and_results_in_call_order(tmp_path: Path, wire: str,
                                                         load_script: Callable[[Path], Any]) -> None:
    from hermes_core import Agent
    from hermes_core.testing.server import MockLLMServer

    ex = load_script(EXAMPLE)
    with MockLLMServer(ex.scripted_model) as server:
        config = {"home": str(tmp_path), "context_engine": {"enabled": False},
                  "skill_utils": {"enabled": False},
                  "llm": {"routing": {"default_model": "local-model", "providers": [
                      {"name": "local", "type": wire,
                       "endpoint": server.url + ("/v1" if wire == "openai" else "")}]}},
                  "credentials": {"local": {"keys": [{"key": "local-test-key"}]}}}
        with Agent.from_config(config, tools=[ex.get_weather, ex.local_time]) as agent:
            reply = agent.chat("weather and time in Oslo?")
        first, second = (r.body for r in server.requests)
    assert reply.text == "In Oslo it is 21°C and clear; local time 14:05."
    offered = [t["function"]["name"] if wire == "openai" else t["name"] for t in first["tools"]]
    assert offered == ["get_weather", "local_time"]
    results = ex._tool_results(second)
    assert json.loads(results[0])["city"] == "Oslo" and results[1] == "14:05"
