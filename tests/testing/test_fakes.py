"""The test kit: FakeProvider's summary handling, and a hermes_home that isolates the cwd."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_core import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


def _agent(home: Path, fake: FakeProvider) -> Agent:
    return Agent(load_settings({"home": str(home), "skill_utils": {"enabled": False}}, env={}),
                 provider=fake)


def test_hermes_home_runs_the_test_in_an_empty_working_directory(hermes_home: Path):
    assert Path.cwd() != hermes_home and os.listdir(Path.cwd()) == []
    assert os.environ["HERMES_HOME"] == str(hermes_home)


def test_readme_persona_test_passes_even_inside_a_repository_with_agents_md(hermes_home: Path):
    (hermes_home / "SOUL.md").write_text("You are Ada.")
    fake = FakeProvider(["Hello!"])
    with _agent(hermes_home, fake) as agent:
        assert agent.chat("hi").text == "Hello!"
    assert fake.last_request.prompt.system == "You are Ada."   # no project AGENTS.md mixed in


def test_a_summary_request_is_declined_without_scripted_summaries(hermes_home: Path):
    fake = FakeProvider(["Hello!"])
    with _agent(hermes_home, fake) as agent:
        agent.chat("The deploy key for staging rotates every 90 days, remember that")
    assert fake.last_request.purpose == "turn"                 # the user's turn, after close()
    assert fake.last_request.last_user_message.startswith("The deploy key")
    assert [r.purpose for r in fake.summary_requests] == ["summary"]
    # the session was recorded from the extractive fallback, not from a canned "ok"
    with _agent(hermes_home, FakeProvider(["?"])) as later:
        found = later.context_engine.retrieve("deploy key staging rotates")
    assert found and "90 days" in found[0].summary and found[0].summary != "ok"


def test_scripted_summaries_answer_summary_requests_only(hermes_home: Path):
    fake = FakeProvider(["Hello!"], summaries=[
        "SUMMARY: The user said the staging deploy key rotates every 90 days.\nTAGS: staging"])
    with _agent(hermes_home, fake) as agent:
        reply = agent.chat("The deploy key for staging rotates every 90 days")
    assert reply.text == "Hello!"
    with _agent(hermes_home, FakeProvider()) as later:
        found = later.context_engine.retrieve("deploy key staging")
    assert found and found[0].summary.startswith("The user said the staging deploy key")


def test_a_canned_reply_as_summary_is_rejected_for_the_fallback(hermes_home: Path):
    fake = FakeProvider(["Hello!"], summaries=["ok"])
    with _agent(hermes_home, fake) as agent:
        agent.chat("Our VPN gateway is vpn-gw-3 in Frankfurt")
    with _agent(hermes_home, FakeProvider()) as later:
        found = later.context_engine.retrieve("VPN gateway Frankfurt")
    assert found and "vpn-gw-3" in found[0].summary
