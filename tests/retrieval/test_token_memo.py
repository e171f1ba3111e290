"""The lexical memo derives a skill once per text and tokenizer settings, and stays bounded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import tokenize as tok
from hermes_core.retrieval.bm25 import skill_terms
from hermes_core.retrieval.token_memo import SkillTerms, TokenMemo, skill_key
from hermes_core.types import Skill


class Counting:
    """``skill_terms`` that records which skills it was asked to derive."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, skill: Skill) -> SkillTerms:
        self.seen.append(skill.name)
        return skill_terms(skill)


CATALOG = [Skill("git-rebase", "Resolve a rebase conflict in git"),
           Skill("invoice-pdf", "Extract the table of an invoice PDF"),
           Skill("traffic", "查询交通违章记录")]


def test_an_edit_derives_only_the_edited_skill_and_the_rest_come_back_equal() -> None:
    memo, derive = TokenMemo(), Counting()
    first = memo.terms(CATALOG, derive)
    edited = [CATALOG[0], Skill("invoice-pdf", "Extract the tables of an invoice PDF"), CATALOG[2]]
    second = memo.terms(edited, derive)
    assert derive.seen == ["git-rebase", "invoice-pdf", "traffic", "invoice-pdf"]
    assert second[0] is first[0] and second[2] is first[2]
    assert second == [skill_terms(s) for s in edited]


def test_the_same_text_under_another_name_is_derived_for_that_name() -> None:
    memo, derive = TokenMemo(), Counting()
    memo.terms([Skill("a", "send mail")], derive)
    (renamed,) = memo.terms([Skill("b", "send mail")], derive)
    assert derive.seen == ["a", "b"] and renamed == skill_terms(Skill("b", "send mail"))


def test_another_derive_function_drops_what_the_first_one_made() -> None:
    memo, one, other = TokenMemo(), Counting(), Counting()
    memo.terms(CATALOG, one)
    memo.terms(CATALOG, other)
    assert other.seen == [s.name for s in CATALOG]


def test_a_chinese_text_is_derived_again_when_jieba_goes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    memo, derive = TokenMemo(), Counting()
    memo.terms(CATALOG, derive)
    monkeypatch.setattr(tok, "_load_jieba", lambda: None)
    again = memo.terms(CATALOG, derive)
    assert derive.seen[3:] == ["traffic"]          # English texts never reach jieba
    assert again[2] == skill_terms(CATALOG[2])      # the pairs-of-characters tokens, not jieba's


def test_the_memo_keeps_at_most_its_bound_of_skills_least_recently_used_out_first() -> None:
    memo, derive = TokenMemo(max_skills=2), Counting()
    memo.terms(CATALOG, derive)
    assert len(memo) == 2
    memo.terms(CATALOG[1:], derive)
    assert derive.seen == ["git-rebase", "invoice-pdf", "traffic"]   # the two latest were kept


def test_the_memo_keeps_at_most_its_bound_of_tokens() -> None:
    memo = TokenMemo(max_tokens=10)
    out = memo.terms(CATALOG, skill_terms)
    assert memo.tokens_held <= 10 and out == [skill_terms(s) for s in CATALOG]
    assert memo.tokens_held == sum(len(t.tokens) for t in out[len(out) - len(memo):])


def test_adopted_entries_are_found_without_deriving_and_held_ones_win() -> None:
    source = TokenMemo()
    source.terms(CATALOG, skill_terms)
    memo, derive = TokenMemo(), Counting()
    memo.terms(CATALOG[:1], derive)
    memo.adopt(derive, source.entries(skill_terms))   # another derive: the memo starts over
    assert memo.terms(CATALOG, derive) == [skill_terms(s) for s in CATALOG]
    assert derive.seen == ["git-rebase"]
    memo2 = TokenMemo(max_skills=2)
    memo2.terms(CATALOG[2:], skill_terms)
    memo2.adopt(skill_terms, source.entries(skill_terms))
    newest = [k for k, _ in memo2.entries(skill_terms)][-1]       # held ones stay the newest
    assert len(memo2) == 2 and newest == source.entries(skill_terms)[-1][0]
    assert memo2.entries(Counting()) == []


class Source:
    """Terms made on first use (what ``stored_terms.StoredTerms`` is to the memo), counted."""

    def __init__(self, terms: list[SkillTerms]) -> None:
        self.terms = terms
        self.made: list[int] = []

    def __getitem__(self, i: int) -> SkillTerms:
        self.made.append(i)
        return self.terms[i]

    def n_tokens(self, i: int) -> int:
        return len(self.terms[i].tokens)


def _adopting(source: Source) -> TokenMemo:
    """A new memo that adopted ``source``'s terms as a file's, under :data:`CATALOG`'s keys."""
    memo = TokenMemo()
    memo.adopt_stored(skill_terms, [skill_key(s) for s in CATALOG], source)
    return memo


def test_stored_entries_are_made_only_when_asked_and_counted_toward_the_bound_before() -> None:
    want = [skill_terms(s) for s in CATALOG]
    source = Source(want)
    memo = _adopting(source)
    assert source.made == [] and len(memo) == 3 and memo.tokens_held == sum(len(t.tokens) for t in want)
    assert memo.terms(CATALOG[1:2], skill_terms) == want[1:2] and source.made == [1] and memo.derived == 0
    assert memo.terms(CATALOG[1:2], skill_terms) == want[1:2] and source.made == [1]   # kept once made
    assert [t for _, t in memo.entries(skill_terms)] == [want[0], want[2], want[1]]
    small, owned = TokenMemo(max_tokens=len(want[2].tokens)), Source(want)   # its owner keeps it
    small.adopt_stored(skill_terms, [skill_key(s) for s in CATALOG], owned)
    assert len(small) == 1 and small.tokens_held == len(want[2].tokens)


def test_an_opencc_or_jieba_upgrade_or_another_fold_config_derives_every_skill_again(
        tokenizer_upgraded: Callable[[], None]) -> None:
    memo, derive = TokenMemo(), Counting()
    memo.terms(CATALOG, derive)
    tokenizer_upgraded()
    memo.terms(CATALOG, derive)
    assert derive.seen == [s.name for s in CATALOG] * 2
    assert memo.entries(derive) != [] and len(memo) == len(CATALOG)


def test_stored_entries_do_not_keep_their_source_alive_once_its_owner_let_it_go() -> None:
    # a warm restart's memo held the index file's bytes (StoredTerms) through its pending entries
    # after the index let them go (every stored skill edited or removed), until each was evicted
    import gc
    import weakref

    want = [skill_terms(s) for s in CATALOG]
    source = Source(want)
    memo = _adopting(source)
    assert memo.terms(CATALOG[:1], skill_terms) == want[:1]             # made while it lives
    gone = weakref.ref(source)
    del source
    gc.collect()
    assert gone() is None
    # what was made is kept; what was pending is derived again when asked, and counted once
    assert memo.terms(CATALOG, skill_terms) == want and memo.derived == 2
    assert [t for _, t in memo.entries(skill_terms)] == want
    assert memo.tokens_held == sum(len(t.tokens) for t in want) and len(memo) == 3


def _memo_whose_source_with_one_asked_was_let_go() -> tuple[TokenMemo, list[SkillTerms]]:
    """A memo adopting a whole catalog's terms, one of them asked for, then the source collected."""
    import gc

    want = [skill_terms(s) for s in CATALOG]
    source = Source(want)
    memo = _adopting(source)
    memo.terms(CATALOG[1:2], skill_terms)
    del source
    gc.collect()
    return memo, want


def test_pending_entries_of_a_source_let_go_are_not_listed_and_leave_the_count() -> None:
    memo, want = _memo_whose_source_with_one_asked_was_let_go()
    assert memo.entries(skill_terms) == [(skill_key(CATALOG[1]), want[1])]
    assert len(memo) == 1 and memo.tokens_held == len(want[1].tokens)


def test_pending_entries_of_a_source_let_go_leave_the_size_and_the_count_before_any_listing() -> None:
    # the memo's size and token count (what its bounds weigh) kept a dead source's pending
    # entries until entries() listed them
    memo, want = _memo_whose_source_with_one_asked_was_let_go()
    assert len(memo) == 1 and memo.tokens_held == len(want[1].tokens)



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the token memo's lock when a server forked its workers:
    the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.token_memo import TokenMemo

    cache = TokenMemo()
    expected = cache.tokens_held
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: cache.tokens_held) == expected
