"""The token memo's file reads back as written, or not at all: never as other tokens."""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import tokenize as tok
from hermes_core.retrieval.bm25 import skill_terms
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.token_memo import SkillTerms, TokenMemo
from hermes_core.retrieval.token_store import RewriteTally, TermsCache, load_terms, save_terms, terms_path
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import counting_terms_made, damage, logged, saved_then_edited

CATALOG = [Skill("git-rebase", "Resolve a rebase conflict in git"),
           Skill("invoice-pdf", "Extract the table of an invoice PDF, invoice after invoice"),
           Skill("traffic", "查询交通违章记录"), Skill("cafe", "Trouver un café ou une crème"),
           Skill("empty", "")]


def filled() -> TokenMemo:
    memo = TokenMemo()
    memo.terms(CATALOG, skill_terms)
    return memo


def test_the_entries_read_back_as_written(tmp_path: Path) -> None:
    path = terms_path(tmp_path)
    entries = filled().entries(skill_terms)
    assert len(entries) == len(CATALOG)
    assert save_terms(path, skill_terms, entries)
    assert load_terms(path, skill_terms) == entries


def test_a_restarted_memo_adopts_the_file_and_derives_nothing(tmp_path: Path) -> None:
    first, memo = TermsCache(tmp_path, min_new=1), TokenMemo()
    first.load(memo, skill_terms)          # no file yet
    memo.terms(CATALOG, skill_terms)
    first.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    restarted, fresh = TermsCache(tmp_path, min_new=1), TokenMemo()
    restarted.load(fresh, skill_terms)
    assert fresh.terms(CATALOG, skill_terms) == [skill_terms(s) for s in CATALOG]
    assert fresh.derived == 0


def test_a_restart_decodes_no_terms_of_the_file_until_a_skill_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the file (read when there is no BM25 index file) had every skill's terms made and adopted
    # up front, though a restart asks only for its catalog's: a skill dropped meanwhile was made too
    from hermes_core.retrieval import token_store
    # counting SkillTerms' constructions edits the memo's code, whose fingerprint would refuse
    # the file: the fingerprint is held fixed here (its own tests are below)
    monkeypatch.setattr(token_store, "derive_id", lambda derive, *modules: "fixed")
    first, memo = TermsCache(tmp_path, min_new=1), TokenMemo()
    first.save(memo, skill_terms, memo.terms(CATALOG, skill_terms), force=True)
    made = counting_terms_made(monkeypatch)
    restarted, fresh = TermsCache(tmp_path), TokenMemo()
    restarted.load(fresh, skill_terms)
    assert made == [] and len(fresh) == len(CATALOG)                      # adopted, none made
    asked = fresh.terms(CATALOG[1:3], skill_terms)
    assert made == [t.tokens for t in asked] and fresh.derived == 0
    assert asked == [skill_terms(s) for s in CATALOG[1:3]]
    made.clear()
    restarted.save(fresh, skill_terms, asked, force=True)   # the rest dropped: not made to be left out
    assert made == [] and load_terms(terms_path(tmp_path), skill_terms) == fresh.entries(skill_terms)
    assert [t for _, t in fresh.entries(skill_terms)] == asked


def test_the_file_is_written_again_only_when_enough_was_derived(tmp_path: Path) -> None:
    cache, memo = TermsCache(tmp_path, min_new=3), TokenMemo()
    cache.load(memo, skill_terms)
    cache.save(memo, skill_terms, memo.terms(CATALOG[:2], skill_terms))
    assert not cache.path or not cache.path.exists()
    cache.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    assert load_terms(terms_path(tmp_path), skill_terms) == memo.entries(skill_terms)


def test_without_a_cache_folder_nothing_is_read_or_written(tmp_path: Path) -> None:
    cache, memo = TermsCache(None, min_new=0), filled()
    cache.load(memo, skill_terms)
    cache.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    assert list(tmp_path.iterdir()) == []


def test_a_file_of_another_tokenizer_is_ignored_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    path = terms_path(tmp_path)
    save_terms(path, skill_terms, filled().entries(skill_terms))
    monkeypatch.setattr(tok, "TOKENIZER_VERSION", tok.TOKENIZER_VERSION + 1)
    with caplog.at_level(logging.WARNING):
        assert load_terms(path, skill_terms) is None
    assert not caplog.records


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.one_of(st.none(), st.integers(0, 10_000)), flip=st.integers(0, 10_000))
def test_a_torn_or_flipped_file_reads_as_written_or_as_nothing_with_one_warning(
        tmp_path: Path, cut: int | None, flip: int) -> None:
    path = terms_path(tmp_path / f"c{cut}-{flip}")
    entries = filled().entries(skill_terms)
    save_terms(path, skill_terms, entries)
    damage(path, cut, flip)
    got, records = logged(lambda: load_terms(path, skill_terms))
    if got is None:
        assert [r.levelno for r in records] == [logging.WARNING] and str(path) in records[0].getMessage()
    else:
        assert got == entries


def test_a_foreign_file_is_warned_about_and_replaced_by_the_next_save(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = terms_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("not a cache", encoding="utf-8")
    cache, memo = TermsCache(tmp_path, min_new=1), TokenMemo()
    with caplog.at_level(logging.WARNING):
        cache.load(memo, skill_terms)
    assert len(caplog.records) == 1 and str(path) in caplog.text
    cache.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    assert load_terms(path, skill_terms) == memo.entries(skill_terms)


def test_only_the_catalogs_entries_are_saved_not_past_requests(tmp_path: Path) -> None:
    cache, memo = TermsCache(tmp_path, min_new=1), TokenMemo()
    cache.load(memo, skill_terms)
    memo.terms([Skill("event-0", "my password is hunter2, reset it")], skill_terms)   # a request
    catalog = memo.terms(CATALOG, skill_terms)
    cache.save(memo, skill_terms, catalog)
    saved = load_terms(terms_path(tmp_path), skill_terms)
    assert saved is not None and [t for _, t in saved] == catalog
    assert b"hunter2" not in terms_path(tmp_path).read_bytes()


def test_a_catalog_that_shrank_is_written_again_without_the_dropped_skills(tmp_path: Path) -> None:
    # a shrink derives nothing: were only derived skills counted, the dropped skills' terms would
    # stay in the file for good and be read back by every restart
    first, memo = TermsCache(tmp_path, min_new=2), TokenMemo()
    first.load(memo, skill_terms)
    first.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    restarted, fresh = TermsCache(tmp_path, min_new=2), TokenMemo()   # a new process
    restarted.load(fresh, skill_terms)
    live = fresh.terms(CATALOG[:2], skill_terms)
    restarted.save(fresh, skill_terms, live)
    saved = load_terms(terms_path(tmp_path), skill_terms)
    assert saved is not None and [t for _, t in saved] == live
    assert fresh.derived == 0


def test_one_skill_dropped_is_not_worth_writing_the_file_again(tmp_path: Path) -> None:
    first, memo = TermsCache(tmp_path, min_new=2), TokenMemo()
    first.load(memo, skill_terms)
    first.save(memo, skill_terms, memo.terms(CATALOG, skill_terms))
    written = terms_path(tmp_path).stat().st_mtime_ns
    restarted, fresh = TermsCache(tmp_path, min_new=2), TokenMemo()
    restarted.load(fresh, skill_terms)
    restarted.save(fresh, skill_terms, fresh.terms(CATALOG[:-1], skill_terms))
    assert terms_path(tmp_path).stat().st_mtime_ns == written


def test_a_rewrite_is_due_once_enough_entries_were_derived_or_dropped_since_the_file() -> None:
    tally = RewriteTally()
    tally.read(held=10, derived=100)
    assert not tally.due(derived=102, catalog=12, min_new=3)   # two new skills
    assert tally.due(derived=103, catalog=13, min_new=3)       # three
    assert tally.due(derived=100, catalog=7, min_new=3)        # three dropped, none derived
    assert tally.due(derived=101, catalog=9, min_new=3)        # one edited in place, two dropped
    tally.wrote(held=9, derived=101)
    assert not tally.due(derived=101, catalog=9, min_new=3)


def test_a_file_made_under_another_opencc_or_jieba_release_or_fold_config_is_derived_again(
        tmp_path: Path, tokenizer_upgraded: Callable[[], None]) -> None:
    path = terms_path(tmp_path)
    save_terms(path, skill_terms, filled().entries(skill_terms))
    assert load_terms(path, skill_terms) is not None
    tokenizer_upgraded()
    assert load_terms(path, skill_terms) is None


def _deriving_module(monkeypatch: pytest.MonkeyPatch, body: str) -> Callable[[Skill], SkillTerms]:
    """A ``derive`` of the same module and name each time, its code as ``body`` says (a module
    made from fixed test text): a release that edited the deriving code without a version bump."""
    m = types.ModuleType("deriving_under_test")
    monkeypatch.setitem(sys.modules, m.__name__, m)
    exec("from hermes_core.retrieval.token_memo import SkillTerms\n" + body, m.__dict__)
    derive: Callable[[Skill], SkillTerms] = m.derive
    return derive


def test_terms_derived_by_edited_code_of_the_same_name_are_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = terms_path(tmp_path)
    body = "def derive(s):\n    w = s.name.{}()\n    return SkillTerms((w,), (1,), w)\n"
    old = _deriving_module(monkeypatch, body.format("lower"))
    memo = TokenMemo()
    memo.terms(CATALOG, old)
    assert save_terms(path, old, memo.entries(old))
    assert load_terms(path, _deriving_module(monkeypatch, body.format("lower"))) is not None
    assert load_terms(path, _deriving_module(monkeypatch, body.format("upper"))) is None


def test_terms_derived_before_an_edit_of_the_tokenizer_code_are_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_process_ids: Callable[[], None]) -> None:
    # TOKENIZER_VERSION left as it was: only the code says the tokens would differ now
    path = terms_path(tmp_path)
    assert save_terms(path, skill_terms, filled().entries(skill_terms))
    assert load_terms(path, skill_terms) is not None

    def normalize(text: str) -> str:
        return text.casefold()

    normalize.__module__ = tok.__name__
    monkeypatch.setattr(tok, "normalize", normalize)
    new_process_ids()   # the edit, as the next process reads it
    assert load_terms(path, skill_terms) is None


def test_the_deriving_codes_fingerprint_is_the_same_in_every_process() -> None:
    # a set constant's order follows the process's string hashing; the id must not, or no new
    # process would find the terms the last one saved
    import os
    import subprocess

    code = ("from hermes_core.retrieval import bm25, bm25_postings, token_store; "
            "print(token_store.derive_id(bm25.skill_terms, bm25_postings))")
    got = {subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(got) == 1 and next(iter(got)).strip()


@pytest.mark.parametrize(("module", "name"), [("hermes_core.tokenize", "_segment_cjk"),
                                              ("hermes_core.retrieval.bm25", "light_stem")])
def test_terms_derived_before_an_edit_of_a_cached_function_are_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str,
        new_process_ids: Callable[[], None]) -> None:
    # Chinese segmentation and English stemming sit behind functools.lru_cache: the wrapper is no
    # plain function, yet its code decides the terms as much as any other function's
    from functools import lru_cache

    path = terms_path(tmp_path)
    assert save_terms(path, skill_terms, filled().entries(skill_terms))
    assert load_terms(path, skill_terms) is not None

    def edited(word: str, fold: bool = True) -> tuple[str, ...]:
        return (word[::-1],)

    edited.__module__, edited.__qualname__ = module, name
    monkeypatch.setattr(sys.modules[module], name, lru_cache(maxsize=8)(edited))
    new_process_ids()
    assert load_terms(path, skill_terms) is None


def test_terms_derived_under_another_release_of_a_library_the_deriving_code_imports_are_not_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # BM25's stemming lemmatises through simplemma: a release with other lemmas derives other
    # terms from the same code, as an OpenCC or jieba release does (those are in tokenizer_key)
    import simplemma

    path = terms_path(tmp_path)
    assert save_terms(path, skill_terms, filled().entries(skill_terms))
    assert load_terms(path, skill_terms) is not None
    monkeypatch.setattr(simplemma, "__version__", "0.0-another-release", raising=False)
    assert load_terms(path, skill_terms) is None


def test_the_deriving_codes_fingerprint_is_hashed_once_while_the_code_is_unchanged(
        monkeypatch: pytest.MonkeyPatch, new_process_ids: Callable[[], None]) -> None:
    # hashing the code is ~5 ms; the text-key and scorer stores take theirs once a process
    from hermes_core.retrieval import bm25_postings, token_store

    calls: list[int] = []
    real = token_store.modules_id

    def counted(*args: object) -> str:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(token_store, "modules_id", counted)
    new_process_ids()
    first = token_store.derive_id(skill_terms, bm25_postings)
    calls.clear()
    again = [token_store.derive_id(skill_terms, bm25_postings) for _ in range(5)]
    assert again == [first] * 5 and calls == []
    assert token_store.derive_id(skill_terms) != first and calls == [1]   # other modules: their own
    # a library imported since (jieba, once Chinese is segmented) is another salt: hashed again
    monkeypatch.setattr(token_store, "imported_releases", lambda mods: "another=1")
    assert token_store.derive_id(skill_terms, bm25_postings) != first and calls == [1, 1]


_DERIVE_FILE = ("from hermes_core.retrieval.token_memo import SkillTerms\n"
                "def derive(s):\n    w = s.name.{}()\n    return SkillTerms((w,), (1,), w)\n")


def _id_in_new_process(folder: Path) -> str:
    import os
    import subprocess

    code = ("import deriving_on_disk as m; from hermes_core.retrieval import token_store; "
            "print(token_store.derive_id(m.derive))")
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), root]), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def test_an_edit_of_the_deriving_code_is_seen_by_a_new_process_and_by_a_reload(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from hermes_core.retrieval.token_store import derive_id

    source = tmp_path / "deriving_on_disk.py"
    source.write_text(_DERIVE_FILE.format("lower"), encoding="utf-8")
    before = _id_in_new_process(tmp_path)
    assert before and _id_in_new_process(tmp_path) == before
    source.write_text(_DERIVE_FILE.format("upper"), encoding="utf-8")
    assert _id_in_new_process(tmp_path) not in ("", before)

    source.write_text(_DERIVE_FILE.format("lower"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    module = importlib.import_module("deriving_on_disk")
    monkeypatch.setitem(sys.modules, "deriving_on_disk", module)
    same_process = derive_id(module.derive)
    assert derive_id(module.derive) == same_process
    source.write_text(_DERIVE_FILE.format("casefold"), encoding="utf-8")
    importlib.invalidate_caches()
    reloaded = importlib.reload(module)
    assert derive_id(reloaded.derive) not in (before, same_process)


def test_a_child_forked_while_a_thread_was_fingerprinting_a_derivation_fingerprints(
        in_forked_child: Callable[[Callable[[], object]], object], held_by_a_thread: Any) -> None:
    from hermes_core.retrieval import token_store

    def child() -> object:
        token_store.forget_derive_ids()
        return token_store.derive_id(skill_terms) == token_store.derive_id(skill_terms)

    with held_by_a_thread(token_store._ids_lock):
        assert in_forked_child(child) is True
def test_a_restarted_retriever_tokenises_no_skill_its_last_process_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The token memo is saved in the cache folder: a new process's first refresh derives only
    the skill edited since, and ranks as a retriever that derived everything."""
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval.token_memo import TokenMemo

    class Calls:   # an object: the code fingerprint takes it by its type, not what it recorded
        def __init__(self) -> None:
            self.names: list[str] = []

    derived = Calls()
    real = bm25_mod.skill_terms

    def counted(s: Skill) -> SkillTerms:
        derived.names.append(s.name)
        return real(s)

    counted.__module__, counted.__qualname__ = real.__module__, real.__qualname__   # the file's name
    monkeypatch.setattr(bm25_mod, "skill_terms", counted)
    path, skills, edited = saved_then_edited(tmp_path, [HashingEmbedder()])
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())     # a new process: nothing in memory
    derived.names.clear()
    restarted = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "c")
    restarted.refresh()
    assert {n for n in derived.names if n in skills} == {edited}
    monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())
    fresh = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "fresh")
    fresh.refresh()
    for q in ["archived invoices", "查询交通违章", "book a flight"]:
        a, b = restarted.retrieve(q), fresh.retrieve(q)
        assert (a.names, a.scores, a.gated) == (b.names, b.scores, b.gated)
