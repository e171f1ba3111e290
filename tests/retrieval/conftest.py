"""The public skills collection kept as test data (see tests/data/skills/anthropics/SOURCE.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from hermes_core.tokenize import tokenize

ANTHROPIC_SKILLS = Path(__file__).resolve().parent.parent / "data" / "skills" / "anthropics"


@pytest.fixture
def anthropic_skills() -> Path:
    return ANTHROPIC_SKILLS


def write(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CountingEmbedder:
    """A bag-of-words embedder that records every call: a test can tell whether a model would
    have been loaded (any embed call is a load for a real model)."""

    model_id = "test:counting"
    cache_id = "test:counting"
    multilingual = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(32, dtype=np.float32)
        for tok in tokenize(text):
            seed = int.from_bytes(hashlib.sha256(tok.encode()).digest()[:4], "little")
            v += np.random.default_rng(seed).standard_normal(32).astype(np.float32)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(("documents", len(texts)))
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, 32))

    def embed_query(self, text: str) -> np.ndarray:
        self.calls.append(("query", len(text)))
        return self._vec(text)

    def covers(self, text: str) -> bool:
        return True


@pytest.fixture
def counting_embedder() -> CountingEmbedder:
    return CountingEmbedder()
