"""The text keys' file reads back as written, or not at all: never as another text's keys."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import dense as dense_mod
from hermes_core.retrieval import text_key_store as store
from hermes_core.retrieval.dense import TEXT_KEY_MEMO, _TextKeyMemo, text_keys
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.text_key_store import (
    TextKeyCache,
    load_keys,
    save_keys,
    source_digest,
    text_keys_path,
)
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import damage, first_use_in_a_fresh_process, logged, saved_then_edited

CATALOG = [Skill("Calendar.Meeting.createMeeting", "Create a meeting. Invite people!"),
           Skill("invoice-pdf", "Extract the table of an invoice PDF"),
           Skill("会议纪要", "整理会议记录。列出待办事项"),
           Skill("emoji-\U0001F600", "Reply with a smile \ud83d"), Skill("weather", "")]


@pytest.fixture(autouse=True)
def new_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process: no key in memory."""
    monkeypatch.setattr(dense_mod, "_text_keys", _TextKeyMemo(TEXT_KEY_MEMO))


def test_the_keys_read_back_as_written_under_each_skills_name_and_description(tmp_path: Path) -> None:
    path = text_keys_path(tmp_path)
    keys = text_keys(CATALOG)
    assert save_keys(path, CATALOG, keys)
    assert load_keys(path) == {source_digest(s): k for s, k in zip(CATALOG, keys, strict=True)}


def test_a_restart_adopts_the_saved_keys_and_derives_only_an_edited_skill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = TextKeyCache(tmp_path, min_new=1)
    first.load(CATALOG)                       # no file yet
    want = text_keys(CATALOG)
    assert first.save(CATALOG)
    monkeypatch.setattr(dense_mod, "_text_keys", _TextKeyMemo(TEXT_KEY_MEMO))   # a new process
    edited = [*CATALOG[:-1], Skill("weather", "Get the forecast for a city")]
    TextKeyCache(tmp_path).load(edited)
    assert text_keys(edited[:-1]) == want[:-1] and dense_mod.text_keys_derived() == 0
    text_keys(edited)
    assert dense_mod.text_keys_derived() == 1


def test_the_file_is_written_again_only_when_enough_was_derived_or_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = TextKeyCache(tmp_path, min_new=3)
    cache.load(CATALOG)
    text_keys(CATALOG[:2])
    assert not cache.save(CATALOG[:2]) and not cache.path.exists()   # type: ignore[union-attr]
    text_keys(CATALOG)
    assert cache.save(CATALOG)
    monkeypatch.setattr(dense_mod, "_text_keys", _TextKeyMemo(TEXT_KEY_MEMO))   # a new process
    restarted = TextKeyCache(tmp_path, min_new=3)
    restarted.load(CATALOG)
    assert not restarted.save(CATALOG[:-2])          # two dropped
    assert restarted.save(CATALOG[:-3])              # three: the file holds the live skills only
    saved = load_keys(text_keys_path(tmp_path))
    assert saved is not None and set(saved) == {source_digest(s) for s in CATALOG[:-3]}


def test_without_a_cache_folder_nothing_is_read_or_written(tmp_path: Path) -> None:
    cache = TextKeyCache(None, min_new=0)
    cache.load(CATALOG)
    text_keys(CATALOG)
    assert not cache.save(CATALOG)
    assert list(tmp_path.iterdir()) == []


def test_a_file_of_other_builders_is_ignored_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    path = text_keys_path(tmp_path)
    save_keys(path, CATALOG, text_keys(CATALOG))
    monkeypatch.setattr(store, "builders_fingerprint", lambda: "another")
    with caplog.at_level(logging.WARNING):
        assert load_keys(path) is None
    assert not caplog.records


def test_a_changed_builder_has_another_fingerprint() -> None:
    def document_text(skill: Skill) -> str:
        return skill.name

    def renamed(skill: Skill) -> str:
        return skill.description

    renamed.__qualname__ = document_text.__qualname__
    assert store.builders_id([document_text]) == store.builders_id([document_text])
    assert store.builders_id([document_text]) != store.builders_id([renamed])


def test_a_changed_default_argument_has_another_fingerprint() -> None:
    # the same code with another default computes another result: a cache keyed by the code
    # alone would serve the old result
    def cut(text: str, limit: int = 64) -> str:
        return text[:limit]

    before = store.builders_id([cut])
    cut.__defaults__ = (32,)
    assert store.builders_id([cut]) != before

    def fold(text: str, *, lower: bool = True) -> str:
        return text.lower() if lower else text

    before = store.builders_id([fold])
    fold.__kwdefaults__ = {"lower": False}
    assert store.builders_id([fold]) != before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.one_of(st.none(), st.integers(0, 10_000)), flip=st.integers(0, 10_000))
def test_a_torn_or_flipped_file_reads_as_written_or_as_nothing_with_one_warning(
        tmp_path: Path, cut: int | None, flip: int) -> None:
    path = text_keys_path(tmp_path / f"c{cut}-{flip}")
    save_keys(path, CATALOG, text_keys(CATALOG))
    want = load_keys(path)
    damage(path, cut, flip)
    got, records = logged(lambda: load_keys(path))
    if got is None:
        assert [r.levelno for r in records] == [logging.WARNING] and str(path) in records[0].getMessage()
    else:
        assert got == want


def test_a_foreign_file_is_warned_about_and_replaced_by_the_next_save(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = text_keys_path(tmp_path)
    path.write_text("not a cache", encoding="utf-8")
    cache = TextKeyCache(tmp_path, min_new=1)
    with caplog.at_level(logging.WARNING):
        cache.load(CATALOG)
    assert len(caplog.records) == 1 and str(path) in caplog.text
    keys = text_keys(CATALOG)
    assert cache.save(CATALOG)
    assert load_keys(path) == {source_digest(s): k for s, k in zip(CATALOG, keys, strict=True)}


def test_a_file_whose_keys_are_of_another_shape_is_refused_with_one_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = text_keys_path(tmp_path)
    keys = [dense_mod.TextKeys(k.doc[:-1], k.parts) for k in text_keys(CATALOG)]
    save_keys(path, CATALOG, keys)            # sealed, so only the check can refuse it
    with caplog.at_level(logging.WARNING):
        assert load_keys(path) is None
    assert len(caplog.records) == 1 and "inconsistent" in caplog.text


def test_a_file_made_under_another_opencc_or_jieba_release_or_fold_config_is_built_again(
        tmp_path: Path, tokenizer_upgraded: Callable[[], None]) -> None:
    path = text_keys_path(tmp_path)
    save_keys(path, CATALOG, text_keys(CATALOG))
    assert load_keys(path) is not None
    tokenizer_upgraded()
    assert load_keys(path) is None


def test_a_changed_default_factory_of_a_dataclass_field_has_another_fingerprint() -> None:
    # a field's ``default_factory`` is no default of the generated ``__init__`` (that holds a
    # marker) but a value it closes over: ``IndexParts``' fields are made by lambdas
    def init(factory: Callable[[], object]) -> Callable[..., None]:
        @dataclasses.dataclass(frozen=True)
        class P:
            k1: object = dataclasses.field(default_factory=factory)
        return P.__init__

    assert store.builders_id([init(list)]) == store.builders_id([init(list)])
    assert store.builders_id([init(list)]) != store.builders_id([init(tuple)])
    assert store.builders_id([init(lambda: 1.5)]) != store.builders_id([init(lambda: 1.2)])


def test_the_builders_fingerprint_is_computed_on_first_use_not_at_import() -> None:
    """Hashing the code is not paid by an import that never reads the cache; the value computed
    on first use (by two threads at once, and in a child forked meanwhile) is the one
    ``builders_id(KEY_BUILDERS)`` gives."""
    got = first_use_in_a_fresh_process("text_key_store", "builders_fingerprint",
                                       "s.builders_id(s.KEY_BUILDERS)")
    assert got == "0 True 0\n"



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the text keys' cache's lock when a server forked its workers:
    the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.text_key_store import TextKeyCache

    cache = TextKeyCache(tmp_path)
    expected = cache.load([])
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: cache.load([])) == expected
def test_a_restarted_retriever_reads_its_text_keys_back_and_derives_only_the_skill_edited_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each skill's dense text keys (its document and part texts, derived and hashed) are saved
    in the cache folder: a new process's first refresh derives them for the edited skill alone,
    and answers exactly as a restart over the same cache without the keys, which derives every
    one, and ranks as a retriever built from scratch."""
    import shutil

    from hermes_core.retrieval import dense as dense_mod

    derived: list[str] = []
    real = dense_mod._doc_key

    def counted(text: str) -> str:
        derived.append(text)
        return real(text)

    monkeypatch.setattr(dense_mod, "_text_keys", dense_mod._TextKeyMemo(dense_mod.TEXT_KEY_MEMO))
    path, skills, edited = saved_then_edited(tmp_path, [HashingEmbedder()])   # derives all: saved
    shutil.copytree(tmp_path / "c", tmp_path / "no-keys")
    (tmp_path / "no-keys" / "text_keys.npz").unlink()
    monkeypatch.setattr(dense_mod, "_text_keys", dense_mod._TextKeyMemo(dense_mod.TEXT_KEY_MEMO))
    monkeypatch.setattr(dense_mod, "_doc_key", counted)    # a new process, counting derivations
    restarted = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "c")
    restarted.refresh()
    assert len(derived) == 1 and skills[edited] in derived[0], derived
    retrievers = []
    for cache in ("no-keys", "fresh"):
        monkeypatch.setattr(dense_mod, "_text_keys", dense_mod._TextKeyMemo(dense_mod.TEXT_KEY_MEMO))
        retrievers.append(SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()],
                                         cache_dir=tmp_path / cache))
        retrievers[-1].refresh()
    assert len(derived) == 1 + 2 * len(skills)
    without_keys, fresh = retrievers
    for q in ["archived invoices", "查询交通违章", "book a flight", "pdf tables"]:
        a, b, c = restarted.retrieve(q), without_keys.retrieve(q), fresh.retrieve(q)
        assert (a.names, a.scores, a.gated) == (b.names, b.scores, b.gated)
        assert (a.names, a.gated) == (c.names, c.gated)
