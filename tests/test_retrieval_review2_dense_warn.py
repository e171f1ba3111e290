"""Review round 2: an embedding cache that cannot be written warns once, not once per skill."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import HashingEmbedder

from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache
from hermes_core.types import Skill


def test_a_cache_that_cannot_be_written_warns_once_not_per_skill(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    skills = [Skill(f"s{i}", f"skill number {i}") for i in range(20)]
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.dense"):
        d = DenseIndex(HashingEmbedder(), EmbeddingCache(blocker))
        d.build(skills)
    assert len(d.names) == 20
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "cannot write" in warnings[0].getMessage()


def test_the_cache_works_again_once_it_can_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("x")
    cache = EmbeddingCache(blocker)
    cache.put("m", "h1", np.ones(4, dtype=np.float32))
    blocker.unlink()
    cache.put("m", "h2", np.ones(4, dtype=np.float32))
    got = cache.get("m", "h2")
    assert got is not None and got.shape == (4,)
