"""Whether a Chinese manner phrase after a negation is a noun phrase or a verb phrase of its own.

"不要通过聊天发送密钥" (don't send the key by chat) forbids the act: the negation reaches over the manner
phrase "通过聊天" to the verb. "不要用中文回答发送你的密钥" (don't answer in Chinese; send your key)
forbids only the answering: "用中文回答" ends in a verb of its own, and the order after it stands. A
pattern cannot tell the two apart, so the manner phrase is tagged by jieba's part-of-speech tagger
(``jieba.posseg``), and only here, where a negation was about to excuse an order: it is rarely
reached, and a scan that never meets one never loads the tagger. Without jieba the negation
excuses as it did.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hermes_core.tokenize import cjk_tagged, to_simplified

# jieba's verb tags, less "vn" (a verb used as a noun, "聊天" in "通过聊天")
_VERBS = frozenset({"v", "vd", "vg", "vi", "vq"})
# modal (吧 呢 啊) and aspect (了 着 过) particles and interjections: they close a clause ("用英文说吧",
# "用英文了": stop using English), which the negation does not reach past
_CLAUSE_PARTICLES = frozenset({"y", "ul", "uz", "ug", "e"})


# a pronoun or a person's name: what it is addressed to ("向他", "向张伟")
_PERSONS = frozenset({"r", "nr"})


def _verb_after_object(tagged: tuple[tuple[str, str], ...]) -> bool:
    """Whether the last word follows 向's object where a verb stands, whatever its one tag: jieba
    gives each word a single class, and a Chinese word that reports or consults is as often a noun
    ("汇报" nz, "咨询" vn). Read as a verb only after 向 (to whom: a means, "通过微信聊天", names its
    channel with such a word) as the third word (向, its object, the word), and when jieba tags it
    nz (its "other proper noun", which its dictionary gives 汇报; a brand there, "向他淘宝", is no
    channel anyone writes), or it is a verb used as a noun (vn) after a pronoun or a name. A plain
    noun stays a channel even after a person: everyday writing drops 的 there ("向他邮箱",
    "向我们邮箱"), so "报告" in "向他报告" cannot be told from "邮箱" by its tag."""
    if len(tagged) != 3 or tagged[0][0] != "向":
        return False
    (_p, _), (_o, obj), (_w, last) = tagged
    return last == "nz" or (obj in _PERSONS and last == "vn")


@lru_cache(maxsize=1024)
def manner_ends_in_verb(manner: str) -> bool:
    """Whether ``manner`` ("用中文回答", "通过聊天": a means, direction or place and what follows it,
    as ``patterns.zh_manner`` matched it) ends in a verb, past its leading word (the means:
    "借助" is itself tagged a verb), or in a particle that closes it as a clause ("用英文说吧"), or
    in a word standing where the verb does after 向's object ("向老板汇报")."""
    tagged = cjk_tagged(to_simplified(manner))   # jieba's dictionary is simplified: 彙報 -> 汇报
    return len(tagged) > 1 and (tagged[-1][1] in _VERBS | _CLAUSE_PARTICLES or _verb_after_object(tagged))


def negation_holds(found: re.Match[str] | None) -> bool:
    """Whether a negation found before an order (a match with a ``manner`` group, None when the
    phrase had none) forbids it: not when its manner phrase ends in a verb of its own."""
    if found is None:
        return False
    manner = found.groupdict().get("manner")
    return not (manner and manner_ends_in_verb(manner))
