"""Fixtures for prompt tests: a small-window agent whose history must be compacted within a few
dozen turns, answered by a provider that refuses requests over the window as a real API does;
and ``build``, a PromptBuilder that reads context files as settled (shared by the files tests)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt.compaction import HistoryCompactor
from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.config import Settings, load_settings
from hermes_core.errors import ContextWindowExceeded
from hermes_core.testing import FakeProvider
from hermes_core.tokens import count_tokens
from hermes_core.types import Completion, Prompt, Usage

SMALL_MODEL = "m-small"
SMALL_WINDOW = 3000
MAX_TOKENS = 256


def sent_tokens(prompt: Prompt) -> int:
    return count_tokens(prompt.system + prompt.context
                        + "".join(m.content for m in prompt.messages))


class WindowedFake(FakeProvider):
    """A FakeProvider that refuses a prompt longer than the window and bills its o200k_base count."""

    def __init__(self, *, window: int = SMALL_WINDOW, reply: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.window = window
        self.reply = reply

    def _reply(self, prompt: Prompt, model: str) -> Any:
        if prompt.purpose == "summary":
            return super()._reply(prompt, model)
        tokens = sent_tokens(prompt)
        if tokens + MAX_TOKENS > self.window:
            return ContextWindowExceeded(f"{tokens} tokens is over the window", status_code=400)
        user = prompt.messages[-1].content
        text = self.reply or (f"About '{user[:40]}': reproduce it, check what changed recently, "
                              "isolate one component at a time, then verify the fix and add a "
                              "regression test so it stays fixed. " * 2)
        return Completion(text, model, self.name, Usage(tokens, 60), finish_reason="stop")


@pytest.fixture
def small_agent(tmp_path: Path) -> Callable[..., Agent]:
    """``small_agent(provider, **compaction)``: an Agent on a 3000-token model."""

    def make(provider: Any, **compaction: Any) -> Agent:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        settings = load_settings({
            "home": str(home),
            "llm": {"max_tokens": MAX_TOKENS,
                    "routing": {"default_model": SMALL_MODEL,
                                "context_windows": {SMALL_MODEL: SMALL_WINDOW}}},
            "skill_utils": {"enabled": False, "embeddings": False},
            "context_engine": {"enabled": False},
            "prompt": {"compaction": compaction},
        }, env={})
        return Agent(settings, provider=provider, cwd=tmp_path,
                     loop_options={"sleep": lambda s: None, "audit_path": False})

    return make


@pytest.fixture
def small_compactor(tmp_path: Path) -> Callable[..., HistoryCompactor]:
    """``small_compactor(**compaction)``: a HistoryCompactor for the 3000-token model, offline."""

    def make(**compaction: Any) -> HistoryCompactor:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        settings = load_settings({
            "home": str(home),
            "llm": {"max_tokens": MAX_TOKENS,
                    "routing": {"default_model": SMALL_MODEL,
                                "context_windows": {SMALL_MODEL: SMALL_WINDOW}}},
            "prompt": {"compaction": {"use_model": False, **compaction}},
        }, env={})
        return HistoryCompactor(settings)

    return make


def build(home: Path, tmp_path: Path, settings: Settings | None = None) -> PromptBuilder:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    # read a minute after the files were written: their stat is trusted (none was just changed)
    return PromptBuilder(home, settings, cwd=cwd, clock=lambda: datetime(2030, 1, 1, tzinfo=UTC),
                         file_clock=lambda: time.time_ns() + 60_000_000_000)


# The chat the compaction tests share (test_compaction*.py).
FILLER = ("How should I approach a flaky integration test in the billing service?",
          "What are the usual causes of slow docker builds?",
          "Can you give me a checklist for nginx 502 errors?",
          "Is there a simpler way to handle cron jobs that run twice?")


def chat(agent: Agent, turns: int, facts: dict[int, str] | None = None) -> list[Any]:
    replies = []
    for t in range(1, turns + 1):
        text = (facts or {}).get(t) or FILLER[t % len(FILLER)]
        replies.append(agent.chat(text))
    return replies
