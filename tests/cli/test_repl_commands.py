"""``/route`` lists the turn's tool calls (names, status, time; never arguments); ``/stats`` the
session's cost with what the prompt cache saved."""

from __future__ import annotations

import io
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider, tool_call, tool_calls
from hermes_core.types import Completion, Usage


def _session(tmp_path: Path, replies: list[object], script: str) -> str:
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False},
                              "llm": {"routing": {"default_model": "gpt-4o"},
                                      "prices": {"house-model": {"input": 1.0, "output": 2.0}}}},
                             env={})

    def lookup(query: str) -> str:
        """Look something up."""
        return "found"

    def broken() -> str:
        """Always fails."""
        raise ValueError("nope")

    agent = Agent(settings, provider=FakeProvider(replies, default=None), tools=[lookup, broken],
                  loop_options={"audit_path": False})
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO(script), stdout=out, stream=False).run()
    return out.getvalue()


def test_route_lists_tool_calls_without_arguments(tmp_path: Path) -> None:
    text = _session(tmp_path, [
        tool_calls(tool_call("lookup", query="private thing", id="c1"),
                   tool_call("broken", id="c2")), "answer"], "go\n/route\n/exit\n")
    assert "  tool lookup: ok (" in text and "  tool broken: error (" in text
    assert "private thing" not in text


def test_stats_show_cost_and_cache_savings(tmp_path: Path) -> None:
    cached = Completion("hi", "gpt-4o", "fake", Usage(input_tokens=1000, output_tokens=100,
                                                      cache_read_tokens=4000))
    unknown = Completion("yo", "house-model-2", "fake", Usage(input_tokens=1_000_000))
    text = _session(tmp_path, [cached, unknown], "a\nb\n/stats\n/exit\n")
    # gpt-4o: 1000 x 2.50 + 100 x 10 + 4000 x 1.25 per million = $0.0085, saved 4000 x 1.25 = $0.005
    # house-model-2 is priced by the config's house-model (longest prefix): 1M x 1.0 = $1.00
    assert "cost $1.0085 (cache saved $0.0050); tool calls 0" in text
