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


# verbs done to someone named after 向 (report, ask, apply, complain, apologise), a verb there
# whatever jieba tags them: it tags 汇报 nz, 报告 n, 咨询 vn, 请示 v, one verb family in four classes
_ADDRESSED = frozenset({"汇报", "报告", "通报", "禀报", "上报", "回报", "报备", "请示", "请教", "咨询",
                        "询问", "打听", "求助", "求救", "反映", "申请", "投诉", "举报", "检举", "告状",
                        "道歉", "致歉", "解释", "说明", "提问", "发问", "表白", "交代", "交待"})


# nouns naming where a message goes (an interface, a channel, a chat) that jieba tags a verb or an
# adjective (接口 v, 通道 v, 群聊 v, 私聊 a): a channel's name wherever they end the phrase, as the
# verbs of ``_ADDRESSED`` are verbs whatever their tag. A list, because no tag or emission score
# tells 接口 (an interface) from 签字 (to sign): both end in a character likelier to end a noun
_CHANNEL_NOUNS = frozenset({"接口", "端口", "通道", "信道", "群聊", "网聊", "私聊", "私信", "留言", "留言板"})


def _verb_after_object(tagged: tuple[tuple[str, str], ...]) -> bool:
    """Whether the last word follows 向's object where a verb stands, whatever its one tag: jieba
    gives each word a single class, and a Chinese word that reports or consults is as often a noun
    ("汇报" nz, "咨询" vn). Read as a verb only after 向 (to whom: a means, "通过微信聊天", names its
    channel with such a word) as the third word (向, its object, the word), and when it is one of
    the verbs done to someone (``_ADDRESSED``: 汇报 and 报告 alike, whichever class jieba gives
    each), or jieba tags it nz (its "other proper noun"; a brand there, "向他淘宝", is no channel
    anyone writes), or it is a verb used as a noun (vn) after a pronoun or a name. Any other noun
    stays a channel even after a person: everyday writing drops 的 there ("向他邮箱", "向我们邮箱")."""
    if len(tagged) != 3 or tagged[0][0] != "向":
        return False
    (_p, _), (_o, obj), (word, last) = tagged
    return word in _ADDRESSED or last == "nz" or (obj in _PERSONS and last == "vn")


# what can stand before a channel's head noun as its modifier ("团队群聊", "公司钉钉", "工作群聊"):
# a noun or a verb used as a noun; not a language ("用英文回答") or a person ("向他解释")
_MODIFIERS = frozenset({"n", "ng", "vn"})
# how much likelier (natural log) jieba's model must find a character to begin a noun than a verb:
# 群 3.6, 网 4.0, 钉 5.0 over it; 计 0.3, 沟 -1.2, 说 -2.5, 审 -3.7 under it
_NOUN_INITIAL_MARGIN = 2.0


def _begins_nouns(char: str) -> bool:
    """Whether jieba's own tagging model (the emission table of its part-of-speech HMM, trained on a
    tagged corpus) finds ``char`` far likelier to begin a noun than a verb. jieba tags each
    character alone with one class, so "计" (a plan) and "沟" (a ditch) are n although 计算 and 沟通
    are verbs throughout; the model counts every word each character begins. False when the
    installed jieba holds no such table (then a verb stays a verb, as before the channel rule)."""
    import jieba.posseg

    emit = getattr(jieba.posseg, "emit_P", None)
    if not isinstance(emit, dict) or ("B", "n") not in emit or ("B", "v") not in emit:
        return False
    noun = emit[("B", "n")].get(char)
    if noun is None:
        return False
    verb = emit[("B", "v")].get(char)
    return verb is None or noun - verb >= _NOUN_INITIAL_MARGIN


def _names_a_channel(tagged: tuple[tuple[str, str], ...]) -> bool:
    """Whether the verb that ends the phrase is a noun by its place: jieba tags each word with its
    one commonest class, and "群聊" (a group chat), "网聊" and "钉钉" (the app, cut 钉 / 钉) get a
    verb's. Right after the preposition (its object: "通过群聊") or after a noun that modifies it
    ("团队群聊"), a word of a noun and a verb character (群 + 聊: a compound naming an activity by
    its medium, read as its channel) or a one-character word written twice (a name: "钉钉") is the
    phrase's head noun, when its first character is one jieba's model finds far likelier to begin
    a noun than a verb (:func:`_begins_nouns`): "计算", "沟通" (计 and 沟 tagged n alone), "说说",
    "回答", "审核" stay the phrase's verb."""
    words = list(tagged[1:])
    if len(words) >= 2 and words[-1] == words[-2] and len(words[-1][0]) == 1:
        words = [*words[:-2], (words[-1][0] * 2, "vv")]
    if len(words) == 2 and words[0][1] in _MODIFIERS:
        words = words[1:]
    if len(words) != 1:
        return False
    word, tag = words[0]
    if tag == "vv":
        return _begins_nouns(word[0])
    return (len(word) == 2 and cjk_tagged(word[0])[0][1].startswith("n")
            and cjk_tagged(word[1])[0][1] in _VERBS and _begins_nouns(word[0]))


@lru_cache(maxsize=1024)
def manner_ends_in_verb(manner: str) -> bool:
    """Whether ``manner`` ("用中文回答", "通过聊天": a means, direction or place and what follows it,
    as ``patterns.zh_manner`` matched it) ends in a verb, past its leading word (the means:
    "借助" is itself tagged a verb), or in a particle that closes it as a clause ("用英文说吧"), or
    in a word standing where the verb does after 向's object ("向老板汇报")."""
    tagged = cjk_tagged(to_simplified(manner))   # jieba's dictionary is simplified: 彙報 -> 汇报
    if len(tagged) < 2:
        return False
    if tagged[-1][0] in _CHANNEL_NOUNS:
        return False
    last = tagged[-1][1]
    return ((last in _VERBS and not _names_a_channel(tagged)) or last in _CLAUSE_PARTICLES
            or _verb_after_object(tagged))


def negation_holds(found: re.Match[str] | None) -> bool:
    """Whether a negation found before an order (a match with a ``manner`` group, None when the
    phrase had none) forbids it: not when its manner phrase ends in a verb of its own."""
    if found is None:
        return False
    manner = found.groupdict().get("manner")
    return not (manner and manner_ends_in_verb(manner))
