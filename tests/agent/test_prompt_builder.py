"""What the PromptBuilder hands its selectors (one RetrievalQuery) and what comes back on the prompt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core.agent.prompt_builder import PromptBuilder, retrieval_query
from hermes_core.config import load_settings
from hermes_core.types import MemoryFragment, Message, RetrievalQuery

HISTORY = [Message("user", "How do I fix a rebase conflict?"), Message("assistant", "Use git status."),
           Message("user", "帮我查一下最近的违章记录"), Message("assistant", "好的。")]


class NewSelector:
    def __init__(self) -> None:
        self.seen: list[RetrievalQuery] = []

    def select_turn(self, query: RetrievalQuery) -> tuple[str, Any]:
        self.seen.append(query)
        return "## hint", {"picked": "sql"}

    def select(self, query: str, history: Sequence[Message], message: str) -> str:
        raise AssertionError("the builder prefers select_turn")


class OldSelector:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, str]] = []

    def select(self, query: str, history: Sequence[Message], message: str) -> str:
        self.seen.append((query, len(history), message))
        return "## old hint"


class Memories:
    def recall(self, query: RetrievalQuery, exclude_session: str | None
               ) -> tuple[str, tuple[MemoryFragment, ...]]:
        return "## Relevant past sessions\n- x", (MemoryFragment("s1", "x", (), 1.0, 2.0),)

    def memories_block(self, query: str, exclude_session: str | None) -> str:
        raise AssertionError("the builder prefers recall")


def builder(tmp_path: Path, **kw: Any) -> PromptBuilder:
    return PromptBuilder(tmp_path, load_settings({"home": str(tmp_path)}, env={}), **kw)


def test_selectors_get_one_query_and_their_decisions_come_back_on_the_prompt(tmp_path: Path) -> None:
    sel = NewSelector()
    prompt = builder(tmp_path, skill_selector=sel, memory_source=Memories()).build(
        "my postgres query is slow", HISTORY, session_id="abc")
    q = sel.seen[0]
    assert q.message == "my postgres query is slow"
    assert q.previous_users == ("帮我查一下最近的违章记录", "How do I fix a rebase conflict?")
    assert q.history[0] == "好的。"                     # most recent first
    assert prompt.turn is not None
    assert prompt.turn.retrieval == {"picked": "sql"} and prompt.turn.query == q
    assert [f.session_id for f in prompt.turn.memories] == ["s1"]
    assert "## hint" in prompt.context and "## Relevant past sessions" in prompt.context


def test_an_old_style_selector_still_gets_the_weighted_text(tmp_path: Path) -> None:
    sel = OldSelector()
    prompt = builder(tmp_path, skill_selector=sel).build("and why?", HISTORY)
    query, n_history, message = sel.seen[0]
    assert message == "and why?" and n_history == len(HISTORY)
    assert query == retrieval_query("and why?", HISTORY, 5)
    assert query.startswith("and why?\nand why?\n")
    assert prompt.turn is not None and prompt.turn.retrieval is None
    assert "## old hint" in prompt.context


def test_a_failing_selector_costs_its_block_not_the_turn(tmp_path: Path) -> None:
    class Broken:
        def select_turn(self, query: RetrievalQuery) -> tuple[str, Any]:
            raise RuntimeError("boom")

        def select(self, query: str, history: Sequence[Message], message: str) -> str:
            return ""

    b = builder(tmp_path, skill_selector=Broken())
    prompt = b.build("hello")
    assert prompt.turn is not None and prompt.turn.retrieval is None
    assert any(e.file == "skill selector" and "boom" in e.reason for e in b.turn_events)
