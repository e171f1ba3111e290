"""Review round 2: the embedding cache never hands one model's vectors to another model."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache, SentenceTransformerEmbedder
from hermes_core.types import Skill

SKILLS = [Skill("weather", "Get the weather forecast"), Skill("email", "Send an email")]


class _FakeST:
    """Stands in for a loaded SentenceTransformer: vectors depend on the model spec and the text."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(f"{self.spec}|{t}".encode()).digest()[:4], "little")
            out.append(np.random.default_rng(seed).standard_normal(8))
        return np.asarray(out, dtype=np.float32)


class _Offline(SentenceTransformerEmbedder):
    """The real embedder class, with the model load replaced (no weights needed)."""

    def load(self) -> Any:
        return _FakeST(self._spec or "bundled")


def test_same_basename_models_do_not_share_cached_vectors(tmp_path: Path) -> None:
    a, b = _Offline("org-a/e5-small"), _Offline("org-b/e5-small")
    assert a.model_id == b.model_id == "st:e5-small"  # the gate's key: model family
    cache = EmbeddingCache(tmp_path)
    DenseIndex(a, cache).build(SKILLS)
    db = DenseIndex(b, cache)
    db.build(SKILLS)
    assert db.embedded_docs == len(SKILLS)  # b's vectors come from b, not from a's cache entries
    assert np.allclose(db.matrix, b.embed_documents(
        ["weather: Get the weather forecast", "email: Send an email"]))


def test_the_same_model_still_hits_its_cache_after_a_restart(tmp_path: Path) -> None:
    DenseIndex(_Offline("org-a/e5-small"), EmbeddingCache(tmp_path)).build(SKILLS)
    again = DenseIndex(_Offline("org-a/e5-small"), EmbeddingCache(tmp_path))
    again.build(SKILLS)
    assert again.embedded_docs == 0
    DenseIndex(_Offline(), EmbeddingCache(tmp_path)).build(SKILLS)  # the bundled MiniLM
    bundled = DenseIndex(_Offline(), EmbeddingCache(tmp_path))
    bundled.build(SKILLS)
    assert bundled.embedded_docs == 0
    assert bundled.cache_id == bundled.embedder.model_id == "st:all-MiniLM-L6-v2"  # caches kept



def test_a_model_path_with_a_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "models" / "mini").mkdir(parents=True)
    e = SentenceTransformerEmbedder("~/models/mini")  # skill_utils.embedding_model in YAML: no shell
    assert e._path() == str(tmp_path / "models" / "mini")
    assert e.model_id == "st:mini" and e.cache_id == f"st:{tmp_path / 'models' / 'mini'}"
