"""Whether a message leans on the user's message before it (a follow-up) or asks something new.

Recall searches a follow-up ("why?", "用英文写", "那第二种方法呢") together with the question
before it, and a new question on its own. Length alone cannot tell them apart: "周末去爬山"
(hiking at the weekend) is as short as "用英文写" (write it in English). What does:

* a word that points back: a pronoun or demonstrative ("it", "that", "this" but not "this
  weekend", 它, 那个), a particle or
  connective of ellipsis (呢, 还有, 然后, 再; "and ..." or "then ..." to open, "what about");
* or nothing new: every word of a short message is the previous message's, a word about the
  reply's form (its language, a table, an example, more detail), or a light verb ("make",
  "give", 用, 写).

A short message that brings a word of its own and points at nothing is a new topic. A message of
up to ``POINTING_MAX_TERMS`` words that points back is a follow-up even past the length rule.
Lists cover English and Chinese; other languages keep the length rule alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from hermes_core.agent.episodic.ranking import query_terms
from hermes_core.tokenize import SYMBOL_MARK, has_cjk, tokenize
from hermes_core.types import FOLLOW_UP_CJK_CHARS, FOLLOW_UP_WORDS

#: A message of at most this many searchable words that points back is a follow-up whatever its
#: length ("那第二种方法呢": 第二 / 二种 / 第二种 / 方法).
POINTING_MAX_TERMS = 5

# words that point back at what was said, anywhere in the message
_POINTING = frozenset((
    "it", "its", "that", "those", "them", "they", "their", "instead", "else", "again", "same",
    "above", "previous", "former", "latter", "ok", "okay", "thanks", "thank",
    "它", "它们", "那个", "那些", "那样", "那种", "那么", "这个", "这些", "这样", "这种", "其",
    "呢", "还有", "然后", "再", "又", "另外", "别的", "其他", "其它", "刚才", "上面", "前面",
    "之前", "同样", "继续", "接着", "好的", "谢谢",
))
# "this" points back ("why does this fail?", as 这个 does) unless a time follows ("this weekend")
_THIS = frozenset(("this", "these"))
_TIME = frozenset((
    "morning", "afternoon", "evening", "night", "tonight", "day", "week", "weekend", "month",
    "year", "time", "spring", "summer", "autumn", "fall", "winter", "season", "quarter",
    "semester", "term", "holiday", "holidays", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday",
))
# connectives that point back only when they open the message ("and in Chinese?", 那怎么办)
_OPENING = frozenset(("and", "then", "also", "but", "so", "or", "那", "那么"))
_WHAT_ABOUT = re.compile(r"\b(?:what|how)\s+about\b", re.IGNORECASE)
# words about the reply's form, and light verbs: no topic of their own
_NOT_NEW = frozenset((
    "english", "chinese", "french", "spanish", "german", "japanese", "korean", "table", "list",
    "bullet", "bullets", "shorter", "longer", "short", "brief", "briefly", "detail", "details",
    "detailed", "example", "examples", "simpler", "simple", "summary", "summarize", "translate",
    "code", "steps", "formal", "casual", "more", "less", "part", "one", "why", "how", "what",
    "full", "complete", "whole",
    "make", "give", "show", "write", "rewrite", "say", "explain", "use", "put", "try", "tell",
    "英文", "中文", "英语", "汉语", "日文", "日语", "法语", "表格", "列表", "例子", "示例", "详细",
    "简短", "简单", "简洁", "具体", "总结", "翻译", "译成", "翻译成", "代码", "步骤", "解释", "原因",
    "一点", "一些", "多少", "正式", "语气", "格式", "为什么", "怎么办", "怎样", "哪个",
    "用", "写", "说", "讲", "给", "做", "改", "换", "换成", "改成", "变成", "展示", "显示", "列出",
    "举个", "举", "多", "少", "请", "帮", "帮我", "来", "一个", "吗", "换个", "给个", "完整", "写法",
))


def too_short(text: str, terms: Sequence[str] | None = None) -> bool:
    """Too little to stand alone by length: under ``FOLLOW_UP_WORDS`` searchable words, or a
    CJK message under ``FOLLOW_UP_CJK_CHARS`` characters (decision 10's rule). ``terms``:
    ``query_terms(text)`` when already made."""
    if len(query_terms(text) if terms is None else terms) < FOLLOW_UP_WORDS:
        return True
    head = text.strip()
    return len(head) < FOLLOW_UP_CJK_CHARS and has_cjk(head)


def points_back(text: str) -> bool:
    """A word of ``text`` points at what was said before (see the module docstring)."""
    head = text.strip()[:200]
    tokens = [t.casefold() for t in tokenize(head)]
    if not tokens:
        return False
    return (tokens[0] in _OPENING or _WHAT_ABOUT.search(head) is not None
            or any(t in _POINTING for t in tokens)
            or any(t in _THIS and after not in _TIME for t, after in pairwise([*tokens, ""]))
            # jieba cuts some entries in two (好的: 好 / 的), whatever follows them
            or any(has_cjk(a) and a + b in _POINTING for a, b in pairwise(tokens)))


def is_follow_up(text: str, previous: str, terms: Sequence[str] | None = None) -> bool:
    """``text`` leans on ``previous`` (the user's message before it; "" on the first turn).

    ``terms``: ``query_terms(text)`` when already made. A message with no searchable word
    ("why?", "为什么？", an emoji alone: its symbol term names no topic) is one; a short one is
    one unless it brings a word of its own and points at nothing; a longer one only when it
    points back within ``POINTING_MAX_TERMS`` words.
    """
    if not previous.strip():
        return False
    terms = query_terms(text) if terms is None else terms
    if all(t.startswith(SYMBOL_MARK) for t in terms):   # no word: "why?", "👍"
        return True
    if not too_short(text, terms):
        return len(terms) <= POINTING_MAX_TERMS and points_back(text)
    if points_back(text):
        return True
    before = {t.casefold() for t in query_terms(previous)}
    return all(t.casefold() in before or t.casefold() in _NOT_NEW for t in terms)
