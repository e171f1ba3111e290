"""The restart caches not swept where they are written (vector snapshots, the per-vector cache,
reindex records, lexicons) lose a file only when it is the cache's own by name *and* contents,
unused past the limit, and not the sweeping process's; a reader marks what it reads."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from hermes_core.config import SkillSettings
from hermes_core.retrieval import lexicon
from hermes_core.retrieval.cache_sweep import DAY_SECONDS
from hermes_core.retrieval.cache_upkeep import sweep_due, sweep_if_due, sweep_restart_caches
from hermes_core.retrieval.dense import EmbeddingCache
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.skills import snapshot_path as record_path
from hermes_core.retrieval.skills import write_snapshot
from hermes_core.retrieval.vector_store import save_snapshot, snapshot_path
from hermes_core.types import Skill

NOW = 2_000_000_000.0
OLD = NOW - 31 * DAY_SECONDS
RECENT = NOW - 29 * DAY_SECONDS
VERSION = "cedict-1.0-jieba-0.42-v1"


def _aged(path: Path, used: float) -> Path:
    os.utime(path, (used, used))
    return path


def _snapshot(cache: Path, model: str, used: float) -> Path:
    path = snapshot_path(cache, model)
    assert save_snapshot(path, model, ["d"], ["p"], np.ones((2, 4), dtype=np.float32),
                         np.asarray([0], dtype=np.int64))
    return _aged(path, used)


def _vector(cache: Path, model: str, key: str, used: float) -> Path:
    store = EmbeddingCache(cache)
    store.put(model, key, np.ones(8, dtype=np.float32))
    path = store._path(model, key)
    assert path is not None and path.is_file()
    return _aged(path, used)


def _record(cache: Path, folder: Path, used: float) -> Path:
    path = record_path(cache, [folder], [])
    assert path is not None
    write_snapshot(path, {"a": "h"})
    return _aged(path, used)


def _lexicon(cache: Path, version: str, used: float) -> Path:
    path = lexicon.lexicon_path(cache, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    lexicon._write(path, lexicon.Lexicon(version, {"会议": ("meeting",)}, {"meeting": ("会议",)}))
    return _aged(path, used)


def test_each_kind_unused_past_the_limit_is_removed_and_a_recent_or_own_one_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old = [_snapshot(cache, "model-a", OLD), _vector(cache, "model-a", f"doc-{'1' * 64}", OLD),
           _record(cache, tmp_path / "gone", OLD), _lexicon(cache, "cedict-0.9-jieba-0.41-v1", OLD)]
    recent = [_snapshot(cache, "model-b", RECENT), _vector(cache, "model-a", f"part-{'2' * 64}", RECENT),
              _record(cache, tmp_path / "other", RECENT),
              _lexicon(cache, "cedict-0.8-jieba-0.41-v1", RECENT)]
    own = [_snapshot(cache, "model-c", OLD), _record(cache, tmp_path / "mine", OLD),
           _lexicon(cache, VERSION, OLD)]
    removed = sweep_restart_caches(cache, own, NOW, 30)
    assert sorted(removed) == sorted(old)
    assert not any(p.exists() for p in old) and all(p.exists() for p in recent + own)


def test_the_limit_is_the_callers(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = _vector(cache, "model-a", f"doc-{'1' * 64}", NOW - 8 * DAY_SECONDS)
    assert sweep_restart_caches(cache, (), NOW, 10) == [] and path.exists()
    assert sweep_restart_caches(cache, (), NOW, 7) == [path] and not path.exists()


def _users_files(cache: Path) -> list[Path]:
    """Files of the caches' naming a user could keep in a folder given as the cache: not theirs."""
    (cache / "snapshots").mkdir(parents=True)
    npz = cache / "snapshots" / f"{'a' * 16}.npz"
    np.savez(npz, rows=np.ones(3))                            # an npz, but not sealed
    folder = cache / ("b" * 16)
    folder.mkdir()
    f64 = folder / f"doc-{'3' * 64}.npy"
    np.save(f64, np.ones(4))                                  # float64
    grid = folder / f"doc-{'4' * 64}.npy"
    np.save(grid, np.ones((2, 2), dtype=np.float32))          # not one vector
    (cache / "index").mkdir()
    record = cache / "index" / f"catalog-{'c' * 32}.json"
    record.write_text('{"name": "my notes"}', encoding="utf-8")
    (cache / "lexicon").mkdir()
    lex = cache / "lexicon" / "cedict-mine.json"
    lex.write_text('{"words": []}', encoding="utf-8")
    return [_aged(p, OLD) for p in (npz, f64, grid, record, lex)]


def test_a_users_files_of_the_caches_naming_are_never_removed(tmp_path: Path) -> None:
    cache = tmp_path / "project"
    kept = _users_files(cache)
    assert sweep_restart_caches(cache, (), NOW, 30) == []
    assert all(p.exists() for p in kept)


def test_a_link_or_fifo_under_a_caches_name_is_never_removed_nor_followed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    target = _vector(tmp_path / "elsewhere", "model-a", f"doc-{'5' * 64}", OLD)
    folder = _vector(cache, "model-a", f"doc-{'6' * 64}", RECENT).parent
    link = folder / f"doc-{'7' * 64}.npy"
    link.symlink_to(target)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    fifo = folder / f"doc-{'8' * 64}.npy"
    os.mkfifo(fifo)
    os.utime(fifo, (OLD, OLD))
    linked = cache / ("c" * 16)
    linked.symlink_to(target.parent, target_is_directory=True)   # a model folder that is a link
    assert sweep_restart_caches(cache, (), NOW, 30) == []
    assert link.is_symlink() and target.exists() and fifo.exists()


def test_a_reader_marks_the_vector_it_reads_so_no_sweep_takes_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    month_ago = time.time() - 31 * DAY_SECONDS
    path = _vector(cache, "model-a", f"doc-{'1' * 64}", month_ago)
    assert EmbeddingCache(cache).get("model-a", f"doc-{'1' * 64}") is not None
    assert path.stat().st_mtime > month_ago + DAY_SECONDS
    assert sweep_restart_caches(cache, (), time.time(), 30) == [] and path.exists()


def test_a_retriever_sweeps_once_after_its_first_build_with_the_configured_limit(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    now = time.time()
    stale = _vector(cache, "model-x", f"doc-{'1' * 64}", now - 8 * DAY_SECONDS)
    young = _vector(cache, "model-x", f"doc-{'2' * 64}", now - 6 * DAY_SECONDS)
    r = SkillRetriever(SkillSettings(cache_idle_days=7, embeddings=False), cache_dir=cache,
                       skills=[Skill("weather", "Get the weather forecast for a city")])
    r.refresh()
    assert not stale.exists() and young.exists()
    _aged(young, now - 9 * DAY_SECONDS)
    r.refresh()                                            # once a retriever, not at every refresh
    assert young.exists()


@pytest.mark.parametrize(("last", "due"), [(None, True), (NOW - DAY_SECONDS / 2, False),
                                           (NOW - DAY_SECONDS, True), (NOW + 60, True)])
def test_a_folder_is_swept_at_most_once_a_day(last: float | None, due: bool) -> None:
    assert sweep_due(last, NOW) is due


def test_a_sweep_marks_the_folder_and_the_next_start_within_a_day_lists_nothing(tmp_path: Path) -> None:
    # listing 45,000 per-vector files cost each warm restart at 20,000 skills about a quarter
    cache = tmp_path / "cache"
    first = _vector(cache, "model-a", f"doc-{'1' * 64}", OLD)
    assert sweep_if_due(cache, (), NOW, 30) == [first]
    second = _vector(cache, "model-a", f"doc-{'2' * 64}", OLD)
    assert sweep_if_due(cache, (), NOW + DAY_SECONDS / 2, 30) is None and second.exists()
    assert sweep_if_due(cache, (), NOW + DAY_SECONDS, 30) == [second]


@pytest.mark.parametrize("model", ["test:counting", "intfloat/multilingual-e5-small", "模型"])
def test_a_models_snapshot_and_vector_folder_take_the_one_name_the_sweep_reads(
        tmp_path: Path, model: str) -> None:
    # the 16 hex digits of a model's id were written in the snapshot's path, the per-vector
    # folder's and the sweep's two patterns apart: one edited alone and that kind is never swept
    from hermes_core.retrieval import cache_sweep, cache_upkeep

    name = cache_sweep.model_name(model)
    vector = EmbeddingCache(tmp_path)._path(model, "doc-" + "0" * 64)
    assert snapshot_path(tmp_path, model).name == f"{name}.npz" and vector is not None
    assert vector.parent.name == name
    assert cache_upkeep.MODEL_FOLDER.fullmatch(name)
    assert cache_sweep.named(cache_upkeep.SNAPSHOT_NAME)(f"{name}.npz")
    assert cache_upkeep.SNAPSHOT_NAME == cache_sweep.MODEL_NAME + r"\.npz"
