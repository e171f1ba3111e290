"""A pre_llm_call hook may return a whole new Prompt (README). One that adds messages (few-shot
examples before the conversation) must not leak them into the agent's history: the history used to
be rebuilt by slicing the sent messages at len(history) + 1, so it gained copies every turn."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.types import Completion, Message, Prompt, ToolCall

FEW_SHOT = (Message("user", "example question"), Message("assistant", "example answer"))


def few_shot(message: str, prompt: Prompt) -> Prompt:
    return replace(prompt, messages=(*FEW_SHOT, *prompt.messages))


def _agent(tmp_path: Path, fake: FakeProvider) -> Agent:
    settings = load_settings({"home": str(tmp_path), "context_engine": {"enabled": False},
                              "skill_utils": {"embeddings": False}})
    return Agent(settings, provider=fake, pre_llm_call=few_shot)


def test_messages_added_by_a_hook_stay_out_of_the_history(tmp_path: Path):
    fake = FakeProvider(["a1", "a2"])
    agent = _agent(tmp_path, fake)
    agent.chat("q1")
    agent.chat("q2")
    assert [(m.role, m.content) for m in agent.history] == [
        ("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2")]
    sent = [(m.role, m.content) for m in fake.requests[1].prompt.messages]
    assert sent == [("user", "example question"), ("assistant", "example answer"),
                    ("user", "q1"), ("assistant", "a1"), ("user", "q2")]


def test_tool_round_messages_still_kept_with_a_hook(tmp_path: Path):
    skills = tmp_path / "skills" / "greeting"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: greeting\ndescription: how to greet people\n---\n"
                                     "Say hello warmly.\n", encoding="utf-8")
    call = ToolCall("c1", "skill_view", '{"name": "greeting"}')
    fake = FakeProvider([Completion("", "m", "fake", tool_calls=(call,)), "hello!"])
    agent = _agent(tmp_path, fake)
    agent.chat("how do I greet people?")
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]
    assert agent.history[0].content == "how do I greet people?"
    assert agent.history[1].tool_calls == (call,)
    assert "Say hello warmly." in agent.history[2].content
