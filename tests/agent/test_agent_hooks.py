"""The Agent's ``pre_llm_call`` hook (``hermes_core/agent/agent.py``): the messages it adds stay out
of the history, a hook that is async or returns a list gets a clear error, and its text is counted
once, in the size the turn is routed on and in the history fitted to the window (or refused before
any call when it alone overflows). The rest of the Agent's tests are in ``test_agent.py``."""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.types import Completion, Message, Prompt, ToolCall
from tests.agent.conftest import LONG, WindowsByModel, routed_agent

FEW_SHOT = (Message("user", "example question"), Message("assistant", "example answer"))


def few_shot(message: str, prompt: Prompt) -> Prompt:
    return replace(prompt, messages=(*FEW_SHOT, *prompt.messages))


def _agent(tmp_path: Path, fake: FakeProvider, hook: Any = few_shot, **skill_utils: Any) -> Agent:
    """An agent with the ``pre_llm_call`` hook (few-shot examples unless said), no memory."""
    settings = load_settings({"home": str(tmp_path), "context_engine": {"enabled": False},
                              "skill_utils": skill_utils or {"embeddings": False}})
    return Agent(settings, provider=fake, pre_llm_call=hook)


def test_messages_added_by_a_hook_stay_out_of_the_history(tmp_path: Path):
    fake = FakeProvider(["a1", "a2"])
    agent = _agent(tmp_path, fake)
    try:
        agent.chat("q1")
        agent.chat("q2")
    finally:
        agent.close()
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
    try:
        agent.chat("how do I greet people?")
    finally:
        agent.close()
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]
    assert agent.history[0].content == "how do I greet people?"
    assert agent.history[1].tool_calls == (call,)
    assert "Say hello warmly." in agent.history[2].content


def test_async_hook_gets_a_clear_error(tmp_path: Path):
    async def hook(message, prompt):
        return "extra"

    agent = _agent(tmp_path, FakeProvider(["ok"]), hook, enabled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "never awaited" RuntimeWarning either
        with pytest.raises(TypeError, match=r"pre_llm_call.*coroutine"):
            asyncio.run(agent.achat("hi"))
    assert agent.history == []


def test_list_returning_hook_gets_a_clear_error(tmp_path: Path):
    agent = _agent(tmp_path, FakeProvider(["ok"]), lambda m, p: ["line one", "line two"],
                   enabled=False)
    with pytest.raises(TypeError, match="pre_llm_call must return str, Prompt or None, not list"):
        agent.chat("hi")


# ---------------------------------------------------------------------- the history budget follows the route


def _chatted(tmp_path: Path, fake: FakeProvider, window: int) -> Agent:
    """An agent on one model of ``window`` tokens with ~60k tokens of past turns."""
    agent = routed_agent(tmp_path, fake, routing={"default_model": "m-big",
                                                  "context_windows": {"m-big": window}})
    for i in range(60):
        agent.history.extend([Message("user", f"turn {i}: {LONG * 28}"),
                              Message("assistant", f"noted {i}")])
    return agent


@pytest.mark.parametrize("place", ["context", "system"])
def test_a_hook_adding_100k_tokens_has_the_history_compacted_so_the_call_fits_the_window(
        tmp_path: Path, place: str):
    """The history was fitted before the hook's text was added: 60k tokens of history and the
    hook's 100k (returned as text, or as a Prompt with its own system prompt) were sent to a
    150k window (the provider refused it). The request is fitted again with them counted."""
    fake = WindowsByModel({"m-big": 150_000})
    agent = _chatted(tmp_path, fake, 150_000)
    big = "## Retrieved\n" + " word" * 100_000
    agent.pre_llm_call = ((lambda message, prompt: big) if place == "context" else
                          (lambda message, prompt: replace(prompt, system=prompt.system + big)))
    reply = agent.chat("what was the health check port?")
    assert reply.compaction is not None and reply.compaction.compactions >= 1
    sent = fake.last_request.prompt
    assert getattr(sent, place).endswith(" word" * 10)
    assert reply.compaction.budget.fixed > 100_000   # the hook's text is counted


def test_a_hook_s_text_is_counted_once_and_the_history_fitted_once(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    """Each turn a hook changed the prompt, the history was fitted a second time (every part of
    the request counted again) though it fitted beside the hook's text: fitted once, the hook's
    text counted once, in the budget and in the counts the reply reports."""
    from hermes_core.tokens import count_tokens
    fake = WindowsByModel({"m-big": 150_000})
    agent = _chatted(tmp_path, fake, 150_000)
    fits: list[int] = []
    fit = agent.compactor.fit
    monkeypatch.setattr(agent.compactor, "fit", lambda *a, **k: fits.append(1) or fit(*a, **k))
    extra = "## Ticket\n" + "OPS-7 is open since Monday. " * 300
    agent.pre_llm_call = lambda message, prompt: extra
    reply = agent.chat("what was the health check port?")
    assert len(fits) == 1
    sent = fake.last_request.prompt
    assert sent.context.endswith(extra)
    assert reply.prompt is not None
    assert reply.prompt.tokens["context"] == count_tokens(sent.context)
    assert reply.compaction is not None and reply.compaction.budget.fixed > count_tokens(extra)
    assert reply.compaction.compactions == 0


def test_a_hook_s_text_counts_in_the_size_the_turn_is_routed_on(tmp_path: Path):
    """The route after the hook was chosen on the counts made before it: a hook's 2,500 tokens
    went to the 3,000-token default though a rule sends a request over 2,000 tokens to the
    long-context model."""
    windows = {"m-small": 3000, "m-long": 100_000}
    fake = WindowsByModel(windows)
    agent = routed_agent(tmp_path, fake, routing={
        "default_model": "m-small", "long_context_model": "m-long", "context_windows": windows,
        "rules": [{"condition": "prompt_tokens > 2000", "model": "long_context_model"}]})
    agent.pre_llm_call = lambda message, prompt: "## Retrieved\n" + " word" * 2500
    agent.chat("hello")
    assert [r.model for r in fake.requests] == ["m-long"]


def test_a_hook_whose_text_alone_overflows_the_window_is_refused_before_any_call(
        tmp_path: Path):
    from hermes_core.errors import ContextWindowExceeded
    fake = WindowsByModel({"m-big": 150_000})
    agent = _chatted(tmp_path, fake, 150_000)
    agent.pre_llm_call = lambda message, prompt: " word" * 160_000
    with pytest.raises(ContextWindowExceeded, match="m-big"):
        agent.chat("what was the health check port?")
    assert fake.requests == [] and len(agent.history) == 120
