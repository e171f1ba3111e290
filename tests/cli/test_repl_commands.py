"""``/route`` lists the turn's tool calls (names, status, time; never arguments); ``/stats`` the
session's cost with what the prompt cache saved."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from hermes_core.agent.agent import NO_KEY_HELP, Agent
from hermes_core.cli.repl import Repl
from hermes_core.cli.repl_commands import readable_tags, table
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


@pytest.fixture
def agent(tmp_path: Path, copy_example_home) -> Agent:
    home = copy_example_home(tmp_path / "home")
    settings = load_settings({"home": str(home), "skill_utils": {"embeddings": False}}, env={})
    return Agent(settings, cwd=tmp_path)


def run(agent: Agent, *lines: str) -> str:
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("\n".join(lines) + "\n/exit\n"), stdout=out, stream=False).run()
    return out.getvalue()


def after(text: str, command: str) -> str:
    """The output of ``command`` (up to the next prompt or the end)."""
    return text.split(command, 1)[-1]


def test_skills_are_explained_in_words_with_relative_scores(agent: Agent):
    out = run(agent, "How do I fix a rebase conflict?", "/skills")
    shown = after(out, "/skills") if "/skills" in out else out
    assert "TriggerHit(" not in out and "Skill(" not in out
    assert "decided by" in out and "git-rebase-conflicts" in out
    assert re.search(r"#\s+skill\s+match\s+evidence by layer", out)
    assert "100%" in shown                                  # the best skill is the 100% mark


def test_memory_shows_relative_matches_and_readable_topics(agent: Agent):
    agent.context_engine.add("old", "Looked up traffic violation records for the car on the "
                                    "city portal.", ["违章", "我查", "记录", "traffic"])
    out = run(agent, "/memory traffic violation records")
    assert "traffic violation" in out.lower()
    assert not re.search(r"\d\.\d+e-\d+", out)              # no scientific notation
    assert "100%" in out and "我查" not in out and "违章" in out


def test_readable_tags_drop_fragments():
    assert readable_tags(("违章记录", "违章", "我查", "git")) == ["违章记录", "git"]


def test_keys_offline_says_the_no_key_sentence_once(agent: Agent):
    out = run(agent, "/keys")
    assert out.count("no API key configured") == 2          # the banner, then /keys once
    assert after(out, "no API key configured").count(NO_KEY_HELP.split(":")[0]) == 1


def test_route_reason_does_not_repeat_the_no_key_sentence(agent: Agent):
    out = run(agent, "hello", "/route")
    reason = next(line for line in out.splitlines() if "reason:" in line)
    assert "no API key configured" not in reason
    assert "offline provider" in out


def test_stats_shows_the_history_budget(agent: Agent):
    out = run(agent, "hello", "/stats")
    assert "cache hit ratio" in out
    assert re.search(r"history \d+ of \d+ tokens \(\d+%; compacts at 75%\), counted by", out)
    assert re.search(r"the provider billed \d+ prompt tokens; the estimate was \d+", out)


def test_table_aligns_columns():
    lines = table([["1", "git-rebase-conflicts", "100%"], ["2", "sql", "7%"]],
                  ["#", "skill", "match"], right=(0, 2))
    assert len({line.index("match") + len("match") for line in lines[:1]}) == 1
    assert lines[1].endswith("100%") and lines[2].endswith("  7%")
    assert lines[1].index("git") == lines[2].index("sql")
