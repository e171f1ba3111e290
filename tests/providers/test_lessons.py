"""Tests of ``hermes_core/providers/lessons.py``: what a model refused, kept in the home."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.lessons import FILE_NAME, MAX_LESSONS, TTL_S, VERSION, RefusalMemory
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    FakeClock,
    anthropic_message,
    openai_chat_completion,
)
from tests.providers.conftest import (
    ANTHROPIC_CRED,
    ANTHROPIC_PROMPT,
    CRED,
    ENABLED_REFUSED,
    OPENAI_PROMPT,
    UNSUPPORTED_TEMPERATURE,
    _sent,
)


def _memory(tmp_path: Path, clock: FakeClock | None = None) -> RefusalMemory:
    return RefusalMemory(tmp_path / FILE_NAME, clock=(clock or FakeClock(1_000_000.0)).time)


def test_a_lesson_outlives_the_process_that_learned_it(tmp_path: Path) -> None:
    _memory(tmp_path).remember("azure", "o3", "field:temperature")
    _memory(tmp_path).remember("azure", "o3", "stream")
    later = _memory(tmp_path)
    assert later.lessons("azure") == [("o3", "field:temperature"), ("o3", "stream")]
    assert later.lessons("openai") == []   # per provider: another endpoint may differ
    saved = json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))
    assert saved["version"] == VERSION and len(saved["lessons"]) == 2


def test_a_lesson_expires_so_a_lifted_restriction_is_tried_again(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    _memory(tmp_path, clock).remember("openai", "gpt-5", "field:temperature")
    clock.advance(TTL_S - 1)
    assert _memory(tmp_path, clock).lessons("openai") == [("gpt-5", "field:temperature")]
    clock.advance(2)
    assert _memory(tmp_path, clock).lessons("openai") == []
    _memory(tmp_path, clock).remember("openai", "o3", "stream")   # an expired one is dropped
    saved = json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))
    assert [x["model"] for x in saved["lessons"]] == ["o3"]


def test_learning_again_renews_a_lesson_instead_of_adding_one(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    _memory(tmp_path, clock).remember("p", "m", "stream")
    clock.advance(TTL_S - 10)
    _memory(tmp_path, clock).remember("p", "m", "stream")
    clock.advance(20)
    assert _memory(tmp_path, clock).lessons("p") == [("m", "stream")]
    saved = json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))
    assert len(saved["lessons"]) == 1


def test_the_file_keeps_only_the_newest_lessons(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    memory = _memory(tmp_path, clock)
    for n in range(MAX_LESSONS + 5):
        clock.advance(1)
        memory.remember("p", f"model-{n}", "stream")
    kept = _memory(tmp_path, clock).lessons("p")
    assert len(kept) == MAX_LESSONS and kept[0] == ("model-5", "stream")
    assert kept[-1] == (f"model-{MAX_LESSONS + 4}", "stream")


def test_two_processes_learning_at_once_keep_both_lessons(tmp_path: Path) -> None:
    first, second = _memory(tmp_path), _memory(tmp_path)
    first.lessons("p")
    second.lessons("p")   # both read the empty file before either learned
    first.remember("p", "a", "stream")
    second.remember("p", "b", "stream")
    assert sorted(_memory(tmp_path).lessons("p")) == [("a", "stream"), ("b", "stream")]


@pytest.mark.parametrize("content", [
    b"{not json", b"[1, 2]", b'{"version": 99, "lessons": []}', b'{"version": 1}',
    b'{"version": 1, "lessons": [{"provider": 1, "model": "m", "what": "stream", "at": 5}]}',
    b'{"version": 1, "lessons": [{"provider": "p", "model": "m", "what": "stream", "at": "x"}]}',
    b'{"version": 1, "lessons": [{"provider": "p", "model": "m", "what": "stream", "at": 1e999}]}',
    b"\xff\xfe garbage", b"",
])
def test_a_corrupt_file_is_ignored_with_a_warning_naming_it_and_replaced_on_the_next_lesson(
        tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="hermes_core.providers.lessons"):
        memory = _memory(tmp_path)
        assert memory.lessons("p") == []
        assert memory.lessons("q") == []   # read once: said once
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0] and "ignored" in warnings[0]
    memory.remember("p", "m", "stream")
    assert _memory(tmp_path).lessons("p") == [("m", "stream")]


def test_a_fifo_or_a_folder_at_the_path_is_ignored_never_waited_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    os.mkfifo(tmp_path / FILE_NAME)
    with caplog.at_level(logging.WARNING):
        assert _memory(tmp_path).lessons("p") == []
    assert FILE_NAME in caplog.text


def test_a_home_that_cannot_be_written_keeps_the_lesson_for_the_process(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "home").write_text("a file where the home should be", encoding="utf-8")
    memory = RefusalMemory(tmp_path / "home" / FILE_NAME, clock=FakeClock(5.0).time)
    with caplog.at_level(logging.WARNING):
        memory.remember("p", "m", "field:seed")
        memory.remember("p", "n", "field:seed")
    assert memory.lessons("p") == [("m", "field:seed"), ("n", "field:seed")]
    assert len([r for r in caplog.records if "cannot" in r.getMessage()]) == 1


def test_no_path_keeps_lessons_in_memory_only(tmp_path: Path) -> None:
    memory = RefusalMemory(None)
    memory.remember("p", "m", "stream")
    assert memory.lessons("p") == [("m", "stream")]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("use_async", [False, True])
def test_a_refusal_learned_by_one_process_is_not_paid_again_by_the_next(
        respx_mock: Any, use_async: bool, tmp_path: Path) -> None:
    """Learned refusals were per process: every new chat sent ``temperature`` to o3 once more
    and paid the 400. Kept in the home, the next provider on it sends without at once; the
    stream refusal too."""
    from hermes_core.providers.lessons import FILE_NAME, RefusalMemory

    route = respx_mock.post(OPENAI_URL).mock(side_effect=[
        httpx.Response(400, json=UNSUPPORTED_TEMPERATURE),
        httpx.Response(200, json=openai_chat_completion("ok", model="o3")),
        httpx.Response(200, json=openai_chat_completion("next", model="o3"))])
    opts = CallOptions(max_tokens=32, temperature=0.2)
    first, later = OpenAIProvider(), OpenAIProvider()
    first.keep_lessons(RefusalMemory(tmp_path / FILE_NAME))
    assert first.complete(OPENAI_PROMPT, "o3", CRED, opts).text == "ok"
    first.refused.learn_unstreamed("o3", first.name)
    later.keep_lessons(RefusalMemory(tmp_path / FILE_NAME))   # a new process, the same home
    call = ((lambda: asyncio.run(later.acomplete(OPENAI_PROMPT, "o3", CRED, opts))) if use_async
            else (lambda: later.complete(OPENAI_PROMPT, "o3", CRED, opts)))
    assert call().text == "next"
    sent = _sent(route)
    assert len(sent) == 3 and "temperature" not in sent[2]
    assert later.refused.unstreamed("o3") and not later.refused.unstreamed("gpt-4o")
    assert later.render(OPENAI_PROMPT, "gpt-4o", opts)["temperature"] == 0.2
    other = OpenAIProvider(name="azure")   # another provider's endpoint may differ
    other.keep_lessons(RefusalMemory(tmp_path / FILE_NAME))
    assert other.render(OPENAI_PROMPT, "o3", opts)["temperature"] == 0.2


def test_a_model_that_refused_budgeted_thinking_is_sent_adaptive_by_the_next_process(
        respx_mock: Any, tmp_path: Path) -> None:
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        httpx.Response(400, json=ENABLED_REFUSED), httpx.Response(200, json=anthropic_message("a")),
        httpx.Response(200, json=anthropic_message("b"))])
    opts = CallOptions(max_tokens=500, reasoning_effort="high", timeout_s=5)
    first, later = AnthropicProvider(), AnthropicProvider()
    first.keep_lessons(RefusalMemory(tmp_path / FILE_NAME))
    assert first.complete(ANTHROPIC_PROMPT, "claude-opus-4-8", ANTHROPIC_CRED, opts).text == "a"
    later.keep_lessons(RefusalMemory(tmp_path / FILE_NAME))
    assert later.complete(ANTHROPIC_PROMPT, "claude-opus-4-8", ANTHROPIC_CRED, opts).text == "b"
    sent = [json.loads(c.request.content) for c in route.calls]
    assert len(sent) == 3 and sent[2]["thinking"] == {"type": "adaptive"}


def test_a_child_forked_while_a_thread_was_keeping_a_lesson_keeps_its_own(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """The lock is held across the file's read and write: a lesson being kept when the server
    forked its workers."""
    memory = RefusalMemory(tmp_path / FILE_NAME)

    def child() -> object:
        memory.remember("openai", "o1", "stream")
        return memory.lessons("openai")

    with held_by_a_thread(memory._lock):
        assert in_forked_child(child) == [("o1", "stream")]
    assert RefusalMemory(tmp_path / FILE_NAME).lessons("openai") == [("o1", "stream")]
