"""The query a turn's retrieval reads: the message first, the conversation only where it must.

A message that clearly asks for something is ranked on its own words; the history breaks exact
ties, and only a short follow-up ("why?", "and in Chinese?") borrows the last message that stood on
its own. Kept apart from the retriever so the rule is one small, testable piece.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core.retrieval.bm25 import bm25_tokens
from hermes_core.tokenize import cjk_ratio, estimate_tokens
from hermes_core.types import FOLLOW_UP_CJK_CHARS, FOLLOW_UP_WORDS, Message, RetrievalQuery

MAX_QUERY_CHARS = 4000  # longer messages are cut before L2-L4: the head says what is asked


def head_tokens(text: str, tokens: int) -> str:
    """The longest prefix of ``text`` whose :func:`estimate_tokens` is at most ``tokens``."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # estimate_tokens grows with the prefix: bisect the cut
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def as_retrieval_query(query: str | RetrievalQuery, history: Sequence[Message] | None = None
                       ) -> RetrievalQuery:
    """``query`` itself, or a plain message and its history made into one."""
    if isinstance(query, RetrievalQuery):
        return query
    return RetrievalQuery.of(query if isinstance(query, str) else str(query), tuple(history or ()))


def is_follow_up(text: str) -> bool:
    """A message too short to stand alone: under three content words, or a CJK one under six
    characters ("and tomorrow?", "为什么?")."""
    if cjk_ratio(text) > 0:   # counted in characters: BM25 adds one token per CJK character
        return len(text.strip()) < FOLLOW_UP_CJK_CHARS
    return len(bm25_tokens(text)) < FOLLOW_UP_WORDS


def ranking_text(text: str, query: RetrievalQuery) -> str:
    """What L2-L4 read: the message, or for a short follow-up the last user message that stood
    on its own (and any follow-ups since) before it: "why?" then "and in Chinese?" both still
    mean the question asked before them."""
    if not query.previous_users or not is_follow_up(text):
        return text
    parts = [text]
    for prev in query.previous_users:
        parts.append(prev[:MAX_QUERY_CHARS // 2])
        if not is_follow_up(prev):
            break
    return "\n".join(reversed(parts))
