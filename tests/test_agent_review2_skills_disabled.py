"""Retrieval off (``skill_utils.enabled: false`` or HERMES_DISABLE_SKILL_RETRIEVAL=1) lists every
skill in the prompt, as config.example.yaml and issue 4 say; it used to drop the skills entirely
(the Agent built no retriever at all, so neither the list nor the skill_view tool was sent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import copy_example_home

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return copy_example_home(tmp_path / "home")


def _chat(settings, text: str) -> FakeProvider:
    fake = FakeProvider(["ok"])
    agent = Agent(settings, provider=fake)
    try:
        agent.chat(text)
    finally:
        agent.close()
    return fake


def test_enabled_false_lists_every_skill_and_offers_skill_view(home: Path):
    settings = load_settings({"home": str(home), "skill_utils": {"enabled": False}})
    fake = _chat(settings, "how do I fix a git rebase conflict?")
    sent = fake.requests[0].prompt   # (the last one is the session summary at close)
    assert "## Available Skills" in sent.context
    assert "git-rebase-conflicts" in sent.context and "invoice-reimbursement" in sent.context
    assert [t.name for t in sent.tools] == ["skill_view"]


def test_env_switch_lists_every_skill_without_loading_a_model(home: Path, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_SKILL_RETRIEVAL", "1")
    settings = load_settings({"home": str(home)})
    agent = Agent(settings, provider=FakeProvider(["ok"]))
    try:
        assert agent.retriever is not None and not agent.retriever.dense  # no embedding model
        agent.chat("how do I fix a git rebase conflict?")
        assert "## Available Skills" in agent.last_reply.prompt.context
    finally:
        agent.close()
