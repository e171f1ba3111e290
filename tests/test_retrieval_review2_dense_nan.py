"""Review round 2: a dense model that returns NaN abstains instead of poisoning fusion."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from retrieval_fixtures import SKILLS, HashingEmbedder

from hermes_core.retrieval.retriever import SkillRetriever


class NaNQueries(HashingEmbedder):
    """Documents embed fine; queries come back NaN (an fp16 overflow, a broken checkpoint)."""

    def embed_query(self, text: str) -> np.ndarray:
        return np.full(self.dim, np.nan, dtype=np.float32)


def test_nan_similarities_make_the_dense_layer_abstain(caplog: pytest.LogCaptureFixture) -> None:
    lexical = SkillRetriever(skills=SKILLS).retrieve("extract the tables from this pdf document")
    r = SkillRetriever(skills=SKILLS, embedders=[NaNQueries()])
    with caplog.at_level(logging.WARNING):
        res = r.retrieve("extract the tables from this pdf document")
    assert "dense" not in res.answered
    assert res.names == lexical.names and res.names[0] == "pdf-extract"
    assert all(np.isfinite(res.scores))
    assert "not finite" in caplog.text
