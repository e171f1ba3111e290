"""Unit-testing what your agent sends, offline: copy this file into your own test suite.

Needs ``addopts = "-p hermes_core.testing.pytest_plugin"`` (see the README) so respx intercepts the
SDKs and real network is blocked. Run:
    pytest -p hermes_core.testing.pytest_plugin examples/test_prompt_offline.py
"""

from __future__ import annotations

import httpx

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import OPENAI_URL, FakeProvider, openai_chat_completion


def make_home(tmp_path):
    (tmp_path / "SOUL.md").write_text("You are Ada, a terse assistant.", encoding="utf-8")
    (tmp_path / "MEMORY.md").write_text("- The user deploys on Fridays.\n", encoding="utf-8")
    return tmp_path


def test_persona_and_memory_are_in_the_cached_prefix(tmp_path):
    home = make_home(tmp_path)
    fake = FakeProvider(["Sure."])
    agent = Agent(load_settings({"home": str(home)}), provider=fake)
    agent.chat("When do I deploy?")
    sent = fake.last_request.prompt
    assert sent.system.index("You are Ada") < sent.system.index("deploys on Fridays")
    assert fake.last_request.last_user_message == "When do I deploy?"
    assert "Current date" in sent.context and "Current date" not in sent.system


def test_real_openai_sdk_against_a_mocked_endpoint(tmp_path, respx_mock, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000")
    route = respx_mock.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, json=openai_chat_completion("Hi from the mock")))
    agent = Agent(load_settings({"home": str(make_home(tmp_path)),
                                 "llm": {"routing": {"default_model": "gpt-4o-mini"}}}))
    assert agent.chat("hello").text == "Hi from the mock"
    body = route.calls.last.request.content.decode()
    assert "You are Ada" in body and "prompt_cache_key" in body
