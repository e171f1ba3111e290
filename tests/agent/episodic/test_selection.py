"""Tests of ``hermes_core/agent/episodic/selection.py``.

Which recalled sessions reach the prompt: near duplicates dropped, the block fitted to its budget.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.agent.episodic.ranking import render_memories
from hermes_core.agent.episodic.selection import (
    MIN_SUMMARY_TOKENS,
    clip_tokens,
    distinct,
    fit_to_budget,
    similarity,
)
from hermes_core.tokens import count_tokens
from hermes_core.types import MemoryFragment


def test_summaries_differing_by_a_word_are_near_duplicates_and_different_topics_are_not() -> None:
    a = "The user's dog Biscuit is a golden retriever. Session 1 talked about walks."
    assert similarity(a, a.replace("1", "2")) >= 0.8
    assert similarity(a, "Chose PostgreSQL for the billing service.") < 0.2
    assert similarity("用户的狗叫饼干，是金毛寻回犬。", "用户的狗叫饼干，是金毛寻回犬！") == 1.0
    zh = "用户的狗叫饼干，是一只金毛寻回犬，第{}次聊天讨论了遛狗的时间。"
    assert similarity(zh.format("一"), zh.format("二")) >= 0.8
    assert similarity(zh.format("一"), "我们比较了三家云服务商的数据库价格。") < 0.2


def test_distinct_keeps_the_best_ranked_copy_and_skips_missing_texts() -> None:
    texts = {1: "dog Biscuit golden retriever walks 1", 2: "dog Biscuit golden retriever walks 2",
             3: "billing service on PostgreSQL", 5: "tea preferences: oolong"}
    ranked = [1, 2, 4, 3, 5]
    assert distinct(ranked, texts.get, limit=5, shown_chars=600, threshold=0.7) == [1, 3, 5]
    assert distinct(ranked, texts.get, limit=2, shown_chars=600, threshold=0.7) == [1, 3]


def test_only_the_shown_part_of_a_summary_is_compared() -> None:
    head = "deploy script rollback notes "
    texts = {1: head + "alpha " * 500, 2: head + "beta " * 500}
    assert distinct([1, 2], texts.get, limit=2, shown_chars=len(head)) == [1]
    assert distinct([1, 2], texts.get, limit=2, shown_chars=600) == [1, 2]


@pytest.mark.parametrize("text", ["我们讨论了如何部署服务" * 30, "we discussed the deploy " * 30])
def test_clip_tokens_cuts_to_the_budget_with_an_ellipsis(text: str) -> None:
    out = clip_tokens(text, 40)
    assert count_tokens(out) <= 40 and out.endswith("…")
    assert clip_tokens("short", 40) == "short"


def _frag(i: int, summary: str) -> MemoryFragment:
    return MemoryFragment(f"s{i}", summary, ("tag",), 1.0, float(i))


def render(frags: object) -> str:
    return render_memories(frags, max_chars_each=600)  # type: ignore[arg-type]


def test_a_block_that_fits_is_returned_as_it_was() -> None:
    frags = [_frag(0, "Chose PostgreSQL"), _frag(1, "Prefers oolong tea")]
    assert fit_to_budget(frags, render, 1_000) == tuple(frags)


def test_short_summaries_keep_their_length_and_long_ones_share_the_rest() -> None:
    frags = [_frag(0, "部署" * 300), _frag(1, "Prefers oolong tea"), _frag(2, "日志" * 300)]
    out = fit_to_budget(frags, render, 400)
    assert count_tokens(render(out)) <= 400
    assert out[1].summary == "Prefers oolong tea"
    assert abs(count_tokens(out[0].summary) - count_tokens(out[2].summary)) <= 1


def test_the_lowest_ranked_go_when_each_could_not_keep_a_useful_line() -> None:
    frags = [_frag(i, "部署服务" * 100) for i in range(5)]
    out = fit_to_budget(frags, render, 150)
    assert 0 < len(out) < 5 and [f.session_id for f in out] == [f"s{i}" for i in range(len(out))]
    assert all(count_tokens(f.summary) >= MIN_SUMMARY_TOKENS for f in out)
    assert fit_to_budget(frags, render, 10) == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab 部署c。", min_size=1, max_size=400), min_size=1, max_size=6),
       st.integers(min_value=100, max_value=900))
def test_the_fitted_block_never_exceeds_its_budget(summaries: list[str], budget: int) -> None:
    out = fit_to_budget([_frag(i, s) for i, s in enumerate(summaries)], render, budget)
    assert count_tokens(render(out)) <= budget


def test_a_block_is_fitted_in_the_encoding_asked_for() -> None:
    thai = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์ " * 6
    frags = [_frag(i, thai) for i in range(3)]
    wide = fit_to_budget(frags, render, 300)
    assert count_tokens(render(wide), "cl100k_base") > 300          # o200k's fit overruns gpt-4's
    narrow = fit_to_budget(frags, render, 300, "cl100k_base")
    assert 0 < count_tokens(render(narrow), "cl100k_base") <= 300
