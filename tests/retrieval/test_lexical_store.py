"""The lexical gate's rows read back as written under their key, or not at all."""

from __future__ import annotations

import logging
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval.bm25 import BM25Index
from hermes_core.retrieval.gate_store import read_sealed, write_sealed
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexical_store import (
    LAYOUT,
    WHAT,
    LexicalRowCache,
    load_rows,
    rows_key,
    rows_path,
    save_rows,
    scorers_id,
)
from hermes_core.retrieval.lexical_update import RowState, score_row
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS
from hermes_core.types import Skill
from tests.retrieval.conftest import damage, first_use_in_a_fresh_process, logged, write_catalog

CATALOG = [Skill("invoice-pdf", "Extract the table of an invoice PDF"),
           Skill("会议纪要", "整理会议记录。列出待办事项"), Skill("weather", "Get the forecast for a city")]
REQUESTS = ["extract invoice tables", "会议记录", "what's up", "weather\x00 in Paris", ""]


def _rows() -> dict[str, RowState]:
    index = BM25Index(CATALOG)
    return {t: score_row(index, t, None) for t in REQUESTS}


def test_the_rows_read_back_as_scored_under_their_key(tmp_path: Path) -> None:
    rows = _rows()
    assert any(r.holders for r in rows.values()) and any(not r.tokens for r in rows.values())
    path = rows_path(tmp_path)
    assert save_rows(path, "k", len(CATALOG), rows)
    assert load_rows(path, "k", len(CATALOG)) == rows


def test_rows_of_another_key_or_catalog_size_are_ignored_quietly(tmp_path: Path) -> None:
    path = rows_path(tmp_path)
    save_rows(path, "k", len(CATALOG), _rows())
    for key, n in (("other", len(CATALOG)), ("k", len(CATALOG) + 1)):
        got, records = logged(lambda key=key, n=n: load_rows(path, key, n))  # type: ignore[misc]
        assert got is None and not [r for r in records if r.levelno >= logging.WARNING]


def test_a_holder_out_of_range_is_inconsistent_and_said_once(tmp_path: Path) -> None:
    path = rows_path(tmp_path)
    save_rows(path, "k", len(CATALOG), _rows())
    read = read_sealed(path, LAYOUT, WHAT)
    assert read is not None
    header, arrays = read
    arrays["holders"] = arrays["holders"] + len(CATALOG)
    write_sealed(path, LAYOUT, {k: v for k, v in header.items() if k != "version"}, arrays, WHAT)
    got, records = logged(lambda: load_rows(path, "k", len(CATALOG)))
    assert got is None
    assert [r.getMessage() for r in records if r.levelno >= logging.WARNING] == [
        f"{WHAT} {path} is inconsistent (a holder out of range); scoring the requests again"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.none() | st.integers(min_value=0), flip=st.integers(min_value=0))
def test_a_torn_or_flipped_file_reads_as_written_or_as_nothing_with_one_warning(
        tmp_path: Path, cut: int | None, flip: int) -> None:
    path = rows_path(tmp_path)
    rows = _rows()
    save_rows(path, "k", len(CATALOG), rows)
    damage(path, cut, flip)
    got, records = logged(lambda: load_rows(path, "k", len(CATALOG)))
    warned = [r for r in records if r.levelno >= logging.WARNING]
    assert (got == rows and not warned) or (got is None and len(warned) == 1)


def test_the_cache_writes_a_key_once_and_reads_what_it_wrote(tmp_path: Path) -> None:
    rows = _rows()
    cache = LexicalRowCache(tmp_path)
    assert cache.load("k", len(CATALOG)) is None
    assert cache.save("k", len(CATALOG), rows) and not cache.save("k", len(CATALOG), rows)
    assert LexicalRowCache(tmp_path).load("k", len(CATALOG)) == rows
    assert LexicalRowCache(None).load("k", 3) is None and not LexicalRowCache(None).save("k", 3, rows)


def test_the_key_names_the_glossary_and_the_scoring_code() -> None:
    one, two = Glossary.parse("PPT | 演示文稿"), Glossary.parse("PDF | 文档")
    assert rows_key("c", one) == rows_key("c", Glossary.parse("PPT | 演示文稿"))
    assert len({rows_key("c", one), rows_key("c", two), rows_key("d", one)}) == 3

    def module(body: str) -> types.ModuleType:
        m = types.ModuleType("scoring_under_test")
        exec(body, m.__dict__)   # a module made from fixed test text
        return m

    base = scorers_id([module("LIMIT = 1\ndef f(x):\n    return x + 1\n")])
    assert base == scorers_id([module("LIMIT = 1\ndef f(x):\n    return x + 1\n")])
    assert base != scorers_id([module("LIMIT = 2\ndef f(x):\n    return x + 1\n")])
    assert base != scorers_id([module("LIMIT = 1\ndef f(x):\n    return x + 2\n")])
    assert base != scorers_id([module("LIMIT = 1\nclass C:\n    def f(self):\n        return 1\n"
                                      "def f(x):\n    return x + 1\n")])


def test_a_changed_default_of_a_scorer_or_a_dataclass_field_misses_the_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def module(body: str) -> types.ModuleType:
        m = types.ModuleType("scoring_under_test")
        monkeypatch.setitem(sys.modules, m.__name__, m)   # a dataclass looks its module up
        exec(body, m.__dict__)   # a module made from fixed test text
        return m

    base = scorers_id([module("def tf(x, k1=1.5, b=0.0):\n    return x / (x + k1)\n")])
    assert base == scorers_id([module("def tf(x, k1=1.5, b=0.0):\n    return x / (x + k1)\n")])
    assert base != scorers_id([module("def tf(x, k1=1.2, b=0.0):\n    return x / (x + k1)\n")])
    field = "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass P:\n    k1: float = {}\n"
    assert scorers_id([module(field.format(1.5))]) != scorers_id([module(field.format(1.2))])


def test_an_edited_memoised_scorer_has_another_fingerprint() -> None:
    """A scoring function behind ``functools.cache``/``lru_cache`` (the stemmer, the CJK
    segmenter) is a wrapper, not a function: its code went unhashed, so an edited stemmer kept
    the fingerprint and the rows it had scored were served."""
    def module(body: str) -> types.ModuleType:
        m = types.ModuleType("scoring_under_test")
        exec(body, m.__dict__)   # a module made from fixed test text
        return m

    cached = "import functools\n@functools.{}\ndef stem(w):\n    return w[:{}]\n"
    base = scorers_id([module(cached.format("cache", 4))])
    assert base == scorers_id([module(cached.format("cache", 4))])
    assert base != scorers_id([module(cached.format("cache", 5))])
    assert scorers_id([module(cached.format("lru_cache(maxsize=64)", 4))]) != scorers_id(
        [module(cached.format("lru_cache(maxsize=64)", 5))])


def test_an_empty_catalog_has_rows_too(tmp_path: Path) -> None:
    rows = {"hello": RowState((), 0.0, 0.0, frozenset())}
    path = rows_path(tmp_path)
    assert save_rows(path, "k", 0, rows) and load_rows(path, "k", 0) == rows


def test_the_scoring_fingerprint_is_the_same_in_every_process() -> None:
    """A set constant's order follows the process's string hashing: the fingerprint must not, or
    no new process would find the rows the last one saved."""
    import subprocess
    import sys

    code = "from hermes_core.retrieval import lexical_store; print(lexical_store.scorers_fingerprint())"
    got = {subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(got) == 1


def test_the_key_changes_with_an_opencc_or_jieba_release_or_the_fold_config(
        tokenizer_upgraded: Callable[[], None]) -> None:
    words = Glossary.parse("PPT | 演示文稿")
    before = rows_key("c", words)
    tokenizer_upgraded()
    assert rows_key("c", words) != before


def test_the_scoring_fingerprint_is_computed_on_first_use_not_at_import() -> None:
    """Hashing the code is not paid by an import that never reads the cache; the value computed
    on first use (by two threads at once, and in a child forked meanwhile) is the one
    ``scorers_id()`` gives."""
    got = first_use_in_a_fresh_process("lexical_store", "scorers_fingerprint",
                                       "s.scorers_id()")
    assert got == "0 True 0\n"


def test_the_scorers_fingerprint_changes_with_a_release_of_a_library_the_scorers_import(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # BM25's stemming lemmatises through simplemma: another release, other terms, other rows
    import simplemma

    base = scorers_id()
    monkeypatch.setattr(simplemma, "__version__", "0.0-another-release", raising=False)
    assert scorers_id() != base



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the lexical rows' cache's lock when a server forked its workers:
    the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.lexical_store import LexicalRowCache

    cache = LexicalRowCache(tmp_path)
    expected = cache.load("key", 0)
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: cache.load("key", 0)) == expected
def test_a_restarted_retriever_reads_the_lexical_gates_scores_back_and_scores_no_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The lexical gate's scored requests are saved in the cache folder: a new process over the
    catalog they were scored on scores none of them, calibrates and answers as a retriever built
    from scratch, and updates from them through a later edit; a damaged file is scored again."""
    import shutil

    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval import lexical_update
    from hermes_core.retrieval.token_memo import TokenMemo
    from tests.retrieval.conftest import damage

    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    write_catalog(path, skills)
    SkillRetriever(catalogs=[path], embedders=[], cache_dir=tmp_path / "c").refresh()
    shutil.copytree(tmp_path / "c", tmp_path / "damaged")
    damage(tmp_path / "damaged" / "lexical_rows.npz", None, 300)
    scored: list[str] = []
    real = lexical_update.score_row

    def counted(bm25: BM25Index, text: str, expand: Any) -> Any:
        scored.append(text)
        return real(bm25, text, expand)

    monkeypatch.setattr(lexical_update, "score_row", counted)

    def new_process(cache: str) -> SkillRetriever:
        monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())     # nothing in memory
        r = SkillRetriever(catalogs=[path], embedders=[], cache_dir=tmp_path / cache)
        r.refresh()
        return r

    restarted = new_process("c")
    assert scored == []
    with caplog.at_level(logging.WARNING):
        damaged = new_process("damaged")
    assert len(scored) > 100 and "lexical gate cache" in caplog.text
    first = next(iter(skills))
    for step in ("restart", "edit"):
        fresh = new_process(f"fresh-{step}")
        for r in (restarted, damaged):
            assert r._lexical_cal is not None and fresh._lexical_cal is not None
            assert r._lexical_cal.threshold == fresh._lexical_cal.threshold
            assert r._lexical_cal.report == fresh._lexical_cal.report
            assert r._lexical_cal.generic == fresh._lexical_cal.generic
            for q in ["archived invoices", "查询交通违章", "book a flight", "what's the weather like"]:
                a, b = r.retrieve(q), fresh.retrieve(q)
                assert (a.names, a.scores, a.gated) == (b.names, b.scores, b.gated)
        if step == "restart":   # an edit after the restart: updated from the rows read back
            skills[first] += " It also reads archived invoices."
            write_catalog(path, skills)
            scored.clear()
            restarted.refresh()
            damaged.refresh()
            # the restart and the edit were served from the state; the damaged file's edit only
            assert (restarted._lexical_memo.updated, damaged._lexical_memo.updated) == (2, 1)
            assert len(scored) == restarted._lexical_memo.rescored + damaged._lexical_memo.rescored
            assert restarted._lexical_memo.rescored < len(restarted._lexical_memo.rows) / 4
