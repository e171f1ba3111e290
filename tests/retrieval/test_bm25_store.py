"""Tests of ``hermes_core/retrieval/bm25_store.py``: BM25's carried state read back as written (or
as nothing, with one warning, when torn, flipped or foreign), and an index updated from it equal
to a build from scratch to the bit."""

from __future__ import annotations

import dataclasses
import gc
import logging
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import tokenize as tok
from hermes_core.retrieval.bm25 import BM25Index, IndexParts, bm25_tokens, skill_terms
from hermes_core.retrieval.bm25_postings import Postings
from hermes_core.retrieval.bm25_store import IndexCache, index_path, load_parts, save_parts, updated_index
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.token_memo import TokenMemo, skill_key
from hermes_core.retrieval.token_store import TermsCache, terms_path
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import counting_terms_made, damage, logged, saved_then_edited, write_catalog
from tests.retrieval.test_bm25 import WORDS, assert_same_index, random_catalog

CATALOG = [Skill("Calendar.Meeting.createMeeting", "Create a meeting in the calendar"),
           Skill("invoice-pdf", "Extract invoice tables from a PDF file"),
           Skill("会议纪要", "整理会议记录，列出待办事项"),
           Skill("weather", "Get the weather forecast for a city")]


def _same_parts(got: IndexParts, want: IndexParts) -> None:
    assert [(s.name, s.description) for s in got.skills] == [(s.name, s.description) for s in want.skills]
    assert list(got.terms) == list(want.terms) and got.vocab == want.vocab
    assert list(got.vocab) == list(want.vocab)      # row order too
    for a, b in ((got.df, want.df), (got.tf.rows, want.tf.rows), (got.tf.docs, want.tf.docs),
                 (got.tf.values, want.tf.values), (got.bonus.rows, want.bonus.rows),
                 (got.bonus.docs, want.bonus.docs), (got.cjk, want.cjk)):
        assert a is not None and b is not None and a.dtype == b.dtype and np.array_equal(a, b)
    assert (got.version, got.jieba) == (want.version, want.jieba)


def _saved(path: Path, skills: list[Skill]) -> IndexParts:
    parts = BM25Index(skills, TokenMemo()).parts
    assert save_parts(path, parts, [skill_key(s) for s in skills], skill_terms)
    return parts


def test_the_parts_and_keys_read_back_as_written(tmp_path: Path) -> None:
    path = index_path(tmp_path)
    parts = _saved(path, CATALOG)
    got = load_parts(path, skill_terms)
    assert got is not None
    _same_parts(got[0], parts)
    assert got[1] == [skill_key(s) for s in CATALOG]


CHANGES = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete", "rename"]), st.integers(0, 40),
                             st.lists(st.sampled_from([*WORDS, "mailbox", "sky-blue", "报销单"]),
                                      min_size=0, max_size=8)),
                   min_size=0, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), changes=CHANGES)
def test_an_index_updated_from_the_state_read_back_equals_one_built_from_scratch(
        tmp_path: Path, seed: int, changes: list[tuple[str, int, list[str]]]) -> None:
    """What a restart does: the last process's index saved, the catalog changed meanwhile (or
    not), the new process updates from the file. bm25s's matrix column by column, the bonus,
    every idf and every score are a build from scratch's (``test_bm25.assert_same_index``)."""
    rng = random.Random(seed)
    skills = sorted(random_catalog(rng, rng.randint(0, 10)), key=lambda s: s.name)
    path = index_path(tmp_path / f"{seed}-{len(changes)}")
    _saved(path, skills)
    for n, (op, at, words) in enumerate(changes):
        text = " ".join(words)
        if op == "edit" and skills:
            skills[at % len(skills)] = Skill(skills[at % len(skills)].name, text)
        elif op == "rename" and skills:
            old = skills.pop(at % len(skills))
            skills.append(Skill(f"renamed-{n}", old.description))
        elif op == "delete" and skills:
            del skills[at % len(skills)]
        else:
            skills.append(Skill(f"new-{n}-{rng.choice(WORDS)}", text))
        skills.sort(key=lambda s: s.name)
    found = load_parts(path, skill_terms, skills)    # the kept skills are the catalog's own
    assert found is not None
    restored = BM25Index.carried_from(found[0]).updated(skills, TokenMemo())
    assert_same_index(restored, skills, [" ".join(w) for _, _, w in changes[:2]]
                      + [" ".join(rng.sample(WORDS, 3)), "Invoice PDF 查询违章 mail"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.one_of(st.none(), st.integers(0, 100_000)), flip=st.integers(0, 100_000))
def test_a_torn_or_flipped_file_reads_as_written_or_as_nothing_with_one_warning(
        tmp_path: Path, cut: int | None, flip: int) -> None:
    path = index_path(tmp_path / f"c{cut}-{flip}")
    parts = _saved(path, CATALOG)
    damage(path, cut, flip)
    got, records = logged(lambda: load_parts(path, skill_terms))
    if got is None:
        assert [r.levelno for r in records] == [logging.WARNING] and str(path) in records[0].getMessage()
    else:
        _same_parts(got[0], parts)


@pytest.mark.parametrize(("break_it", "said"), [
    (lambda p: dataclasses.replace(p, df=p.df + 1), "df does not count"),
    (lambda p: dataclasses.replace(p, bonus=Postings(p.bonus.rows, p.bonus.docs + len(p.skills))),
     "out of range"),
    (lambda p: dataclasses.replace(p, tf=Postings(p.tf.rows, p.tf.docs, p.tf.values * 0 + 1.5)),
     "tf factor"),
])
def test_a_sealed_file_whose_contents_do_not_add_up_is_warned_about_and_ignored(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, break_it: Callable[[IndexParts], IndexParts],
        said: str) -> None:
    # sealed by a writer with a bug (or another program): the digest holds, the contents do not
    path = index_path(tmp_path)
    broken = break_it(BM25Index(CATALOG, TokenMemo()).parts)
    assert save_parts(path, broken, [skill_key(s) for s in CATALOG], skill_terms)
    with caplog.at_level(logging.WARNING):
        assert load_parts(path, skill_terms) is None
    assert len(caplog.records) == 1 and said in caplog.text and str(path) in caplog.text


def test_a_sealed_file_whose_tokens_are_not_utf8_is_refused_when_read_not_at_first_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # terms are decoded on first use: a foreign token blob must still be refused at the read,
    # with the warning, and not fail an update or a query later
    from hermes_core.retrieval import bm25_store
    real = bm25_store.write_sealed

    def foreign(path: Path, layout: int, header: dict[str, object], arrays: dict[str, np.ndarray],
                what: str) -> bool:
        bad = np.concatenate([arrays["tokens"], np.frombuffer(b"\xff", dtype=np.uint8)])
        return real(path, layout, header, {**arrays, "tokens": bad}, what)

    monkeypatch.setattr(bm25_store, "write_sealed", foreign)
    path = index_path(tmp_path)
    parts = BM25Index(CATALOG, TokenMemo()).parts
    assert save_parts(path, parts, [skill_key(s) for s in CATALOG], skill_terms)
    with caplog.at_level(logging.WARNING):
        assert load_parts(path, skill_terms) is None
    assert len(caplog.records) == 1 and str(path) in caplog.text


def test_a_file_of_another_tokenizer_is_ignored_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    path = index_path(tmp_path)
    _saved(path, CATALOG)
    monkeypatch.setattr(tok, "TOKENIZER_VERSION", tok.TOKENIZER_VERSION + 1)
    with caplog.at_level(logging.WARNING):
        assert load_parts(path, skill_terms) is None
    assert not caplog.records


def test_a_restart_updates_from_the_file_adopts_its_terms_and_reads_no_token_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    first = updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1),
                          IndexCache(tmp_path, min_new=1))
    assert index_path(tmp_path).exists() and not terms_path(tmp_path).exists()
    terms_path(tmp_path).write_text("never read", encoding="utf-8")   # it would warn if read
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)                        # a new process
    edited = [*CATALOG[:3], Skill("weather", "Get the weather forecast and the air quality")]
    state = IndexCache(tmp_path)
    with caplog.at_level(logging.WARNING):
        again = updated_index(BM25Index(), edited, TermsCache(tmp_path), state)
    assert not caplog.records
    assert memo.derived == 1 and len(memo) == 5     # the edited skill; the four read back
    assert_same_index(again, edited, ["air quality", "会议", "meeting"])
    assert first.score_array(bm25_tokens("air quality"))[3] < again.score_array(bm25_tokens("air quality"))[3]
    assert state.base(BM25Index(), memo, skill_terms) is None         # read once, by a first refresh


def test_a_warm_restart_decodes_no_terms_until_a_skill_is_edited_or_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every skill's terms were decoded from the file and adopted by the memo at each restart
    # (about 0.2 s at 20,000 skills), though an update touches only the edited skills' terms
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval import bm25_store
    # counting SkillTerms' constructions edits the deriving code, whose fingerprint would refuse
    # the file: the fingerprint is held fixed here (its own tests are in test_token_store.py)
    monkeypatch.setattr(bm25_store, "derive_id", lambda derive, *modules: "fixed")
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(tmp_path, min_new=1))
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)                        # a new process
    made = counting_terms_made(monkeypatch)
    again = updated_index(BM25Index(), CATALOG, TermsCache(tmp_path), IndexCache(tmp_path))
    assert made == [] and memo.derived == 0 and len(memo) == 4         # adopted, none decoded
    asked = memo.terms([CATALOG[1]], skill_terms)                       # asked: that one decoded
    assert made == [asked[0].tokens] and memo.derived == 0 and asked == [skill_terms(CATALOG[1])]
    made.clear()
    edited = [*CATALOG[:3], Skill("weather", "Get the weather forecast and the air quality")]
    after = updated_index(again, edited, TermsCache(tmp_path), IndexCache(tmp_path))
    # the edited skill: its old terms decoded (to remove them), its new ones derived
    assert len(made) == 2 and memo.derived == 1
    assert_same_index(again, CATALOG, ["meeting", "会议", "weather forecast"])
    assert_same_index(after, edited, ["air quality", "会议", "meeting"])


def test_the_file_is_written_only_when_enough_was_derived_and_never_without_a_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    state = IndexCache(tmp_path, min_new=3)
    idx = updated_index(BM25Index(), CATALOG[:2], TermsCache(None), state)
    assert not index_path(tmp_path).exists()
    idx = updated_index(idx, CATALOG, TermsCache(None), state)         # 2 + 2 derived
    found = load_parts(index_path(tmp_path), skill_terms)
    assert found is not None and [s.name for s in found[0].skills] == [s.name for s in CATALOG]
    updated_index(BM25Index(), CATALOG, TermsCache(None), IndexCache(None, min_new=0))
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["index.npz"]


def test_skills_dropped_since_the_file_count_toward_writing_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a catalog that shrank derives nothing new: were only derived skills counted, the file would
    # keep the old catalog for good, and every restart read, adopt and update all of it again
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(None), IndexCache(tmp_path, min_new=3))
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())                # a new process
    kept = updated_index(BM25Index(), CATALOG[:1], TermsCache(None), IndexCache(tmp_path, min_new=3))
    found = load_parts(index_path(tmp_path), skill_terms)
    assert found is not None
    _same_parts(found[0], kept.parts)


def test_a_restart_after_the_catalog_shrank_leaves_no_dropped_skill_in_either_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the index file was written again after a shrink, the token file not: the dropped skills'
    # terms stayed on disk for good (and served the next restart whose index file was unusable)
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=3), IndexCache(tmp_path, min_new=3))
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())                # a new process
    kept = updated_index(BM25Index(), CATALOG[:1], TermsCache(tmp_path, min_new=3),
                         IndexCache(tmp_path, min_new=3))
    found = load_parts(index_path(tmp_path), skill_terms)
    assert found is not None and [s.name for s in found[0].skills] == [CATALOG[0].name]
    assert list(found[0].terms) == list(kept.parts.terms) and found[1] == [skill_key(CATALOG[0])]
    assert not terms_path(tmp_path).exists()


def test_the_terms_are_stored_once_and_an_older_token_file_beside_the_index_is_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the index file holds every skill's terms and keys: a token file beside it held them twice
    # (15 of 46 MB at 20,000 skills). One an older release left is adopted once, then removed
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(None))
    assert terms_path(tmp_path).exists()                               # no index file: the token file
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)                        # a new release, a new process
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(tmp_path, min_new=1))
    assert memo.derived == 0                                            # the older file was adopted
    assert index_path(tmp_path).exists() and not terms_path(tmp_path).exists()
    assert load_parts(index_path(tmp_path), skill_terms) is not None


def test_a_token_file_read_by_a_build_too_small_to_write_the_index_file_is_let_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # with an index-file cache not yet due (a new full build under its ``min_new``), neither file
    # was saved nor the token file dropped, so the token cache kept the file it read: its bytes,
    # and the memo's entries of skills the catalog no longer holds, stayed for the process's life
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(None))
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)                        # the next start
    cache, state = TermsCache(tmp_path), IndexCache(tmp_path, min_new=64)
    idx = updated_index(BM25Index(), CATALOG[:1], cache, state)
    gc.collect()
    assert memo.derived == 0 and len(memo) == 1                         # the dropped three let go
    assert [s.name for s in idx.parts.skills] == [CATALOG[0].name]
    assert terms_path(tmp_path).exists() and not index_path(tmp_path).exists()


def test_a_token_file_left_by_a_crash_after_the_index_was_written_is_removed_at_the_next_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the process that adopted an older token file wrote the index file, then died before removing
    # the token file: an unchanged catalog never writes the index again, so it stayed for good
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(None))
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), CATALOG, TermsCache(None), IndexCache(tmp_path, min_new=1))   # no drop
    assert index_path(tmp_path).exists() and terms_path(tmp_path).exists()
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)                        # the next start, unchanged
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(tmp_path, min_new=1))
    assert memo.derived == 0 and not terms_path(tmp_path).exists()
    assert load_parts(index_path(tmp_path), skill_terms) is not None


def test_a_users_file_where_the_token_file_would_be_is_not_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    terms_path(tmp_path).parent.mkdir(parents=True)
    terms_path(tmp_path).write_text("the user's notes", encoding="utf-8")
    updated_index(BM25Index(), CATALOG, TermsCache(tmp_path, min_new=1), IndexCache(tmp_path, min_new=1))
    assert terms_path(tmp_path).read_text(encoding="utf-8") == "the user's notes"


def test_a_foreign_file_is_warned_about_and_replaced_by_the_next_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    path = index_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("not a cache", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        idx = updated_index(BM25Index(), CATALOG, TermsCache(None), IndexCache(tmp_path, min_new=1))
    assert len(caplog.records) == 1 and str(path) in caplog.text
    assert_same_index(idx, CATALOG, ["meeting calendar"])
    found = load_parts(path, skill_terms)
    assert found is not None
    _same_parts(found[0], idx.parts)


def test_an_index_made_under_another_opencc_or_jieba_release_or_fold_config_is_derived_again(
        tmp_path: Path, tokenizer_upgraded: Callable[[], None]) -> None:
    path = index_path(tmp_path)
    _saved(path, CATALOG)
    assert load_parts(path, skill_terms) is not None
    tokenizer_upgraded()
    assert load_parts(path, skill_terms) is None


@pytest.mark.parametrize("module, name", [("bm25", "light_stem"), ("bm25_postings", "verbatim_pairs")])
def test_an_index_saved_before_an_edit_of_the_deriving_or_postings_code_is_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str,
        new_process_ids: Callable[[], None]) -> None:
    # no version bumped: only the code says the terms or postings would differ now
    import importlib
    path = index_path(tmp_path)
    _saved(path, CATALOG)
    assert load_parts(path, skill_terms) is not None
    edited = importlib.import_module(f"hermes_core.retrieval.{module}")

    def replacement(*args: object) -> object:
        raise AssertionError("never called")

    replacement.__module__ = edited.__name__
    monkeypatch.setattr(edited, name, replacement)
    new_process_ids()   # the edit, as the next process reads it
    assert load_parts(path, skill_terms) is None


def test_an_index_saved_after_chinese_was_segmented_is_read_by_a_process_that_segmented_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_process_ids: Callable[[], None]) -> None:
    # a catalog without Chinese never loads jieba, but a Chinese query does: tokenize's jieba
    # global entered the deriving code's fingerprint, so the file saved after such a query was
    # refused by the next process (no Chinese segmented yet) and the index built whole again
    import jieba

    catalog = [s for s in CATALOG if not tok.has_cjk(s.name + s.description)]
    path = index_path(tmp_path)
    monkeypatch.setattr(tok, "_jieba", jieba)          # a Chinese query was segmented
    new_process_ids()
    _saved(path, catalog)
    monkeypatch.setattr(tok, "_jieba", None)           # the next process: none yet
    monkeypatch.setattr(tok, "_jieba_failed", False)
    new_process_ids()
    assert load_parts(path, skill_terms, catalog) is not None
    assert tok._jieba is None   # reading it loaded nothing


def test_a_rewrite_after_a_warm_restart_decodes_only_the_changed_skills_and_writes_the_same_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a rewrite (MIN_NEW changes) made every kept skill's terms from the file's bytes, only to
    # encode them back to the same bytes: at 20,000 skills, 1.2 million strings
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval import bm25_store

    monkeypatch.setattr(bm25_store, "derive_id", lambda derive, *modules: "fixed")
    catalog = [*CATALOG, *(Skill(f"skill-{i}", f"Do task {i} with café and 数据 {i}") for i in range(12))]
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    updated_index(BM25Index(), catalog, TermsCache(tmp_path, min_new=1), IndexCache(tmp_path, min_new=1))
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())                 # a new process
    made = counting_terms_made(monkeypatch)
    edited = [*catalog[:5], Skill("skill-1", "Another text altogether"), *catalog[6:-1],
              Skill("added", "A new skill")]   # one edited, one removed, one added
    state = IndexCache(tmp_path, min_new=1)
    after = updated_index(BM25Index(), edited, TermsCache(tmp_path), state)
    # the edited and removed skills' old terms (to take them out), the edited and added derived
    assert len(made) == 4
    got = load_parts(index_path(tmp_path), skill_terms, edited)
    assert got is not None
    _same_parts(got[0], after.parts)   # the index written reads back, every kept skill's terms too
    assert got[1] == [skill_key(s) for s in edited]
    assert_same_index(after, edited, ["café", "数据", "new skill"])


def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the BM25 index cache's lock when a server forked
    its workers: the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.bm25 import BM25Index, skill_terms
    from hermes_core.retrieval.bm25_store import IndexCache
    from hermes_core.retrieval.token_memo import TokenMemo

    cache = IndexCache(tmp_path)
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: cache.base(BM25Index(), TokenMemo(), skill_terms)) is None
def test_a_one_skill_edit_carries_the_bm25_index_over_and_derives_only_that_skill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh after one edit updates BM25 from the index before: the other skills' terms are
    not even looked up again (at 20,000 skills each look-up hashes the skill's text)."""
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval.token_memo import Derive, SkillTerms, TokenMemo

    asked: list[str] = []

    class Asked(TokenMemo):
        def terms(self, skills: Sequence[Skill], derive: Derive) -> list[SkillTerms]:
            asked.extend(s.name for s in skills)
            return super().terms(skills, derive)

    monkeypatch.setattr(bm25_mod, "_MEMO", Asked())
    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    write_catalog(path, skills)
    r = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "c")
    r.refresh()
    first = next(iter(skills))
    skills[first] += " It also reads archived invoices."
    write_catalog(path, skills)
    asked.clear()
    r.refresh()
    assert {n for n in asked if n in skills} == {first}
    fresh = BM25Index([Skill(n, d) for n, d in sorted(skills.items())], TokenMemo())
    q = bm25_tokens("archived invoices")
    assert r.bm25.score_array(q).tolist() == fresh.score_array(q).tolist()


def test_a_restarted_retriever_reads_bm25_back_and_derives_only_the_skill_edited_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25's state is saved in the cache folder: a new process's first refresh updates the index
    the last one saved (the token memo is asked for the edited skill alone, not for every skill
    to build it whole), and ranks as a retriever built from scratch."""
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval.token_memo import TokenMemo

    asked: list[int] = []
    real_terms = TokenMemo.terms

    def counted(self: TokenMemo, skills: Sequence[Skill], derive: Any) -> Any:
        asked.append(len(skills))
        return real_terms(self, skills, derive)

    path, _, _ = saved_then_edited(tmp_path, [])
    memo = TokenMemo()
    monkeypatch.setattr(bm25_mod, "_MEMO", memo)     # a new process: nothing in memory
    # on the memo, not its class: an edited TokenMemo is other code, whose files are not served
    monkeypatch.setattr(memo, "terms", lambda skills, derive: counted(memo, skills, derive))
    restarted = SkillRetriever(catalogs=[path], embedders=[], cache_dir=tmp_path / "c")
    restarted.refresh()
    assert sum(asked) == 1, asked
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    fresh = SkillRetriever(catalogs=[path], embedders=[], cache_dir=tmp_path / "fresh")
    fresh.refresh()
    for q in ["archived invoices", "查询交通违章", "book a flight", "pdf tables"]:
        a, b = restarted.retrieve(q), fresh.retrieve(q)
        assert (a.names, a.scores, a.gated) == (b.names, b.scores, b.gated)
