"""The query a turn's retrieval reads: the message first, the conversation only where it must.

A message that clearly asks for something is ranked on its own words; the history breaks exact
ties, and only a short follow-up ("why?", "and in Chinese?") borrows the last message that stood on
its own. Kept apart from the retriever so the rule is one small, testable piece.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_core.retrieval.bm25 import bm25_tokens
from hermes_core.tokenize import cjk_ratio, cjk_words
from hermes_core.types import FOLLOW_UP_CJK_CHARS, FOLLOW_UP_WORDS, Message, RetrievalQuery

MAX_QUERY_CHARS = 4000  # longer messages are cut before L2-L4: the head says what is asked

# A clause that says where a detail of the request came from ("短信里提到的时间", "小李通过QQ发给我的
# 消息里提到的地点", "the address mentioned in Tom's email") names a source, not the task: the
# source's words (短信, 邮件, message) pulled messaging and mail skills above the skill asked for.
# Chinese marks such a clause by its shape, so no list of sources is needed: an optional sender
# ("Tom发给我的", "小李通过QQ发来的"), a short noun phrase without 的 or 是, then 里/中/上 + a verb of
# saying + 的. English has no such marker, so its rule names the usual carriers of a detail.
_ZH_BREAK = r"\s，。！？、；：,.!?;:"
_ZH_SOURCE = re.compile(
    rf"(?P<sender>[^{_ZH_BREAK}的是]{{1,8}}?(?:通过[^{_ZH_BREAK}的]{{1,4}}?)?发(?:给我|给我们|来|过来)?的)?"
    rf"(?P<source>[^{_ZH_BREAK}的是在]{{1,6}}?)(?:里|中|上)(?:所)?(?:提到|提及|说|写|记|讲|列|显示)(?:过|着)?的")
_EN_CARRIER = (r"(?:e-?mails?|messages?|texts?|sms|notes?|notebook|chats?|posts?|letters?|memos?"
               r"|threads?|conversations?|wechat|whatsapp|voicemails?)")
_EN_SOURCE = re.compile(
    r"\b(?:(?:that|which) (?:was |were |is |are )?)?"
    r"(?:mentioned|given|listed|noted|written|said|specified|named|sent) (?:in|on|from|by) "
    r"(?:(?:the|my|a|an|his|her|their|our|your|this|that|[a-z]+'s)\s+)?(?:[\w'-]+\s+){0,2}?"
    rf"{_EN_CARRIER}(?:\s+{_EN_CARRIER})?\b",
    re.IGNORECASE)


def _zh_cut(m: re.Match[str]) -> str:
    """Without a sender, the source is the last word before 里/中/上 ("打开邮件里提到的网址":
    邮件, not the verb 打开 before it); with one ("Tom发给我的短信"), the whole phrase goes."""
    if m.group("sender"):
        return ""
    words = cjk_words(m.group("source"))
    return m.group("source")[: len(m.group("source")) - len(words[-1])] if words else ""


def without_source_clauses(text: str) -> str:
    """``text`` without clauses that only say where a detail came from (see ``_ZH_SOURCE``):
    what is asked stays, so "打开邮件里提到的公司网址" ranks as "打开公司网址". A message that is
    nothing but such a clause is returned unchanged."""
    out = _EN_SOURCE.sub(" ", _ZH_SOURCE.sub(_zh_cut, text))
    out = re.sub(r"[ \t]{2,}", " ", out).strip()
    return out if out.strip(" ，。！？,.!?") else text


def as_retrieval_query(query: str | RetrievalQuery, history: Sequence[Message] | None = None
                       ) -> RetrievalQuery:
    """``query`` itself, or a plain message and its history made into one."""
    if isinstance(query, RetrievalQuery):
        return query
    return RetrievalQuery.of(query if isinstance(query, str) else str(query), tuple(history or ()))


def is_follow_up(text: str) -> bool:
    """A message too short to stand alone: under three content words, or a CJK one under six
    characters ("and tomorrow?", "为什么?"). Judged on the head: a pasted log of megabytes is no
    follow-up, and tokenising all of it took seconds on every retrieval."""
    text = text.lstrip()[:MAX_QUERY_CHARS]
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
