"""Edge cases a demanding user hits in the skill catalog, the triggers and the embedding cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from retrieval_fixtures import HashingEmbedder, skill_md, write_skill

from hermes_core.retrieval.dense import EmbeddingCache
from hermes_core.retrieval.retriever import SkillRetriever


def _retriever(root: Path, cache: Path) -> tuple[SkillRetriever, HashingEmbedder]:
    emb = HashingEmbedder()
    return SkillRetriever(folders=[root], embedders=[emb], cache_dir=cache), emb


def test_zero_byte_embedding_cache_file_is_re_embedded_not_fatal(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "cache"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    write_skill(root, "b", skill_md("beta", "book a flight"))
    _retriever(root, cache)[0].refresh()
    for f in cache.rglob("*.npy"):
        f.write_bytes(b"")  # a crash or a full disk can leave an empty file behind
    r, _ = _retriever(root, cache)
    r.refresh()
    assert r.embedded_docs == 2
    res = r.retrieve("book a flight")
    assert "L4" in res.answered or "dense" in res.answered
    assert res.names and res.names[0] == "beta"


def test_cached_vector_of_another_dimension_is_re_embedded(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "cache"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    write_skill(root, "b", skill_md("beta", "book a flight"))
    r, _ = _retriever(root, cache)
    r.refresh()
    # one cached vector left by a different model saved under the same model id
    victim = sorted(cache.rglob("*.npy"))[0]
    np.save(victim, np.ones(8, dtype=np.float32))
    r2, _ = _retriever(root, cache)
    r2.refresh()
    assert 1 <= r2.embedded_docs <= 2  # the bad one (plus at most one probe of the true width)
    assert "dense" in r2.retrieve("book a flight").answered
    assert np.load(victim).shape == (64,)  # the cache is repaired, not just bypassed


def test_embedding_cache_get_rejects_empty_and_non_finite(tmp_path: Path) -> None:
    c = EmbeddingCache(tmp_path)
    c.put("m", "h", np.ones(4, dtype=np.float32))
    p = next(tmp_path.rglob("*.npy"))
    p.write_bytes(b"")
    assert c.get("m", "h") is None
    c.put("m", "h", np.array([1.0, np.nan, 0.0, 0.0], dtype=np.float32))
    assert c.get("m", "h") is None
