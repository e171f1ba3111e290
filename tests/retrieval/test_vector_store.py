"""Tests of ``hermes_core/retrieval/vector_store.py``: a restarted dense index reads its
catalog's vectors from one sealed file, and builds what a build from scratch builds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache, skill_parts
from hermes_core.retrieval.vector_store import load_snapshot, save_snapshot, snapshot_path
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill

WORDS = ["invoice", "flight", "meeting", "playlist", "recipe", "ticket", "route", "album"]


def _skills(n: int, edited: int | None = None) -> list[Skill]:
    out = []
    for i in range(n):
        text = f"Book a {WORDS[i % 8]} for the {WORDS[(i * 3) % 8]} team. Share it with owner {i}."
        if i == edited:
            text += " It now also handles archived items."
        out.append(Skill(f"skill-{i:03d}", text))
    return out


class CountingCache(EmbeddingCache):
    """The real cache, counting the vector files it is asked for."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.gets = 0

    def get(self, model_id: str, key: str) -> np.ndarray | None:
        self.gets += 1
        return super().get(model_id, key)


def _same(a: DenseIndex, b: DenseIndex) -> None:
    assert a.names == b.names
    assert a.matrix.dtype == b.matrix.dtype and np.array_equal(a.matrix, b.matrix)
    assert np.array_equal(a.parts, b.parts) and np.array_equal(a.part_starts, b.part_starts)
    assert np.array_equal(a.covered, b.covered)


def _fresh(skills: list[Skill]) -> DenseIndex:
    d = DenseIndex(HashingEmbedder(), EmbeddingCache(None))
    d.build(skills)
    return d


def test_a_restarted_index_reads_its_catalogs_vectors_from_one_file_not_one_file_per_vector(
        tmp_path: Path) -> None:
    skills = _skills(80)
    DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path)).build(skills)
    cache = CountingCache(tmp_path)
    emb = HashingEmbedder()
    again = DenseIndex(emb, cache)
    again.build(skills)
    assert cache.gets == 0 and emb.documents_embedded == 0
    _same(again, _fresh(skills))


def test_after_a_restart_an_edited_skill_alone_is_looked_up_and_the_index_equals_a_fresh_one(
        tmp_path: Path) -> None:
    DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path)).build(_skills(80))
    edited = _skills(80, edited=7)
    cache = CountingCache(tmp_path)
    emb = HashingEmbedder()
    again = DenseIndex(emb, cache)
    again.build(edited)
    # the edited skill's document and part texts are looked up (one of each is new); nothing else
    assert cache.gets == 1 + len(skill_parts(edited[7])) and emb.documents_embedded == 2
    _same(again, _fresh(edited))


def test_a_small_catalog_writes_no_snapshot(tmp_path: Path) -> None:
    DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path)).build(_skills(5))
    assert not snapshot_path(tmp_path, "test:hashing").exists()


def test_another_models_snapshot_is_not_read(tmp_path: Path) -> None:
    skills = _skills(80)
    DenseIndex(HashingEmbedder("test:a"), EmbeddingCache(tmp_path)).build(skills)
    emb = HashingEmbedder("test:b")
    d = DenseIndex(emb, EmbeddingCache(tmp_path))
    d.build(skills)
    assert emb.documents_embedded > 0
    assert snapshot_path(tmp_path, "test:b").exists()


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_damaged_snapshot_is_ignored_with_a_warning_and_the_vector_files_serve(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    skills = _skills(80)
    DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path)).build(skills)
    path = snapshot_path(tmp_path, "test:hashing")
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) // 3]
    else:
        data = bytearray(b"not a snapshot")
    path.write_bytes(bytes(data))
    cache = CountingCache(tmp_path)
    emb = HashingEmbedder()
    d = DenseIndex(emb, cache)
    with caplog.at_level(logging.WARNING):
        d.build(skills)
    assert str(path) in caplog.text
    assert cache.gets > 0 and emb.documents_embedded == 0   # every vector file still serves
    _same(d, _fresh(skills))


@pytest.mark.parametrize("case", ["keys of another count", "starts out of order", "not finite"])
def test_a_well_sealed_snapshot_that_does_not_add_up_is_not_read(
        tmp_path: Path, case: str, caplog: pytest.LogCaptureFixture) -> None:
    rows = np.ones((4, 3), dtype=np.float32)
    doc_keys, parts_keys, starts = ["doc-a", "doc-b"], ["pa", "pb"], np.array([0, 2])
    if case == "keys of another count":
        doc_keys = ["doc-a"]
    elif case == "starts out of order":
        starts = np.array([0, 5])
    else:
        rows[3, 1] = np.nan
    path = tmp_path / "snap.npz"
    assert save_snapshot(path, "m", doc_keys, parts_keys, rows, starts)
    with caplog.at_level(logging.WARNING):
        assert load_snapshot(path, "m") is None
    assert str(path) in caplog.text


def test_a_snapshot_reads_back_each_skills_document_vector_and_part_rows(tmp_path: Path) -> None:
    rows = np.arange(15, dtype=np.float32).reshape(5, 3)
    path = tmp_path / "snap.npz"
    assert save_snapshot(path, "m", ["doc-a", "doc-b"], ["pa", "pb"], rows, np.array([0, 3]))
    got = load_snapshot(path, "m")
    assert got is not None and load_snapshot(path, "other") is None
    assert np.array_equal(got.docs["doc-a"], rows[0]) and np.array_equal(got.docs["doc-b"], rows[3])
    assert np.array_equal(got.parts["pa"], rows[1:3]) and np.array_equal(got.parts["pb"], rows[4:])



def test_a_child_forked_while_a_thread_held_its_lock_reads_it(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A refresh on the warm-up thread inside the vectors' snapshot's lock when a server forked its workers:
    the worker's first refresh waited on it for ever."""
    from hermes_core.retrieval.vector_store import VectorSnapshot

    cache = VectorSnapshot(tmp_path, "test:hash")
    expected = len(cache.take().docs)
    with held_by_a_thread(cache._lock):
        assert in_forked_child(lambda: len(cache.take().docs)) == expected
