"""Fixtures for prompt tests: a small-window agent whose history must be compacted within a few
dozen turns, answered by a provider that refuses requests over the window as a real API does."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt import token_count
from hermes_core.agent.prompt.compaction import HistoryCompactor
from hermes_core.config import load_settings
from hermes_core.errors import ContextWindowExceeded
from hermes_core.testing import FakeProvider
from hermes_core.tokenize import estimate_tokens
from hermes_core.types import Completion, Prompt, Usage

SMALL_MODEL = "m-small"
SMALL_WINDOW = 3000
MAX_TOKENS = 256


def sent_tokens(prompt: Prompt) -> int:
    return estimate_tokens(prompt.system + prompt.context
                           + "".join(m.content for m in prompt.messages))


class WindowedFake(FakeProvider):
    """A FakeProvider that refuses a prompt longer than the window and bills the estimate."""

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


@dataclass
class EncodingFiles:
    """tiktoken's encoding cache in a temporary folder, with every look for a file recorded."""

    folder: Path
    looked: list[str] = field(default_factory=list)

    def arrive(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The o200k_base file appears in the cache (as a download by another process would)."""
        data = b"dG9rZW4= 0\n"
        url, _ = token_count.TIKTOKEN_FILES["o200k_base"]
        monkeypatch.setitem(token_count.TIKTOKEN_FILES, "o200k_base",
                            (url, hashlib.sha256(data).hexdigest()))
        (self.folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)


@pytest.fixture
def encoding_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EncodingFiles:
    """An empty encoding cache, nothing remembered from earlier tests, lookups counted."""
    files = EncodingFiles(tmp_path)
    monkeypatch.setattr(token_count, "_encodings", {})
    monkeypatch.setattr(token_count, "_missing", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    verify = token_count.local_encoding_file

    def counted(name: str, cache_dir: str | None) -> str | None:
        files.looked.append(name)
        return verify(name, cache_dir)

    monkeypatch.setattr(token_count, "local_encoding_file", counted)
    return files


class CharEncoding:
    """Stands in for a tiktoken Encoding: one token per character."""

    def encode(self, text: str, disallowed_special: object = ()) -> list[int]:
        return [ord(c) for c in text]


@pytest.fixture
def char_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken installed, its encodings replaced by one token per character (the file check still
    decides whether tiktoken is used at all)."""
    tiktoken = pytest.importorskip("tiktoken",
                                   reason="tiktoken is an optional extra (hermes-core[tiktoken])")
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: CharEncoding())


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
