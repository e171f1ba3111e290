"""Tests of ``hermes_core/agent/episodic/follow_up.py``: which short message leans on the one
before it, in English and Chinese."""

from __future__ import annotations

import pytest

from hermes_core.agent.episodic import follow_up
from hermes_core.agent.episodic.follow_up import is_follow_up
from hermes_core.tokenize import has_cjk

ZH_PREVIOUS = "怎么配置 kubernetes ingress？"
EN_PREVIOUS = "How do I configure the kubernetes ingress?"


@pytest.mark.parametrize("message", [
    "用英文写", "举个例子", "那怎么办", "用表格展示", "再详细一点", "为什么", "还有别的方法吗",
    "那第二种方法呢", "它的默认值是多少", "然后呢", "换成中文", "简短一点", "ingress 呢",
])
def test_a_chinese_message_that_leans_on_the_question_before_is_a_follow_up(message: str) -> None:
    assert is_follow_up(message, ZH_PREVIOUS)


@pytest.mark.parametrize("message", [
    "周末去爬山", "明天下雨吗", "订张机票", "讲个笑话", "推荐一部电影", "附近的咖啡店", "北京天气",
    "猫为什么呕吐", "学吉他难吗",
])
def test_a_short_new_chinese_question_stands_on_its_own(message: str) -> None:
    """Length alone decided: "周末去爬山" (five characters) after the ingress question was read
    with it and recalled both topics. A new word and nothing pointing back: a new topic."""
    assert not is_follow_up(message, ZH_PREVIOUS)


@pytest.mark.parametrize("message", [
    "why?", "and in Chinese?", "make it shorter", "what about docker?", "give an example",
    "more details", "as a table", "rewrite that in French", "then what?",
    "how about the second one?", "ok", "the tls part?",
])
def test_an_english_message_that_leans_on_the_question_before_is_a_follow_up(message: str) -> None:
    assert is_follow_up(message, EN_PREVIOUS + " I need the tls part too.")


@pytest.mark.parametrize("message", [
    "book a flight", "tell me a joke", "weather tomorrow", "hiking this weekend",
    "recommend a movie", "best pizza nearby", "bread and butter pudding",
])
def test_a_short_new_english_question_stands_on_its_own(message: str) -> None:
    assert not is_follow_up(message, EN_PREVIOUS)


@pytest.mark.parametrize("message", [
    "It keeps failing after I restarted the ingress controller and the cert-manager pods",
    "那个报错在我重启了控制器和证书管理器之后还是一直出现，日志里说证书过期",
])
def test_a_long_message_with_a_pronoun_stands_on_its_own(message: str) -> None:
    assert not is_follow_up(message, ZH_PREVIOUS)


def test_the_first_message_is_no_follow_up() -> None:
    assert not is_follow_up("why?", "")


@pytest.mark.parametrize("message", [
    "fix this", "why does this fail?", "what does this mean?", "explain this error",
    "is this safe?", "can you simplify these steps",
])
def test_an_english_message_that_says_this_is_a_follow_up(message: str) -> None:
    """"this" points back as 这个 does, and the Chinese list had 这个 but English had no "this":
    "why does this fail?" brought a word of its own ("fail") and was searched alone, where the
    length rule had read it with the question before (review s55rC)."""
    assert is_follow_up(message, EN_PREVIOUS)


@pytest.mark.parametrize("message", ["hiking this weekend", "what should I cook this evening",
                                     "plans for this summer"])
def test_this_before_a_time_word_points_at_no_message(message: str) -> None:
    assert not is_follow_up(message, EN_PREVIOUS)


@pytest.mark.parametrize("message", ["👍", "🙏🙏", "👌!", "❤️"])
def test_an_emoji_only_reply_is_a_follow_up(message: str) -> None:
    """An emoji's symbol term counted as a word of its own: a 👍 after a question was searched
    alone and recalled whichever session held a 👍 (the length rule read it with the question
    before). A message with no word is a follow-up, as "why?" is (review s55rC)."""
    assert is_follow_up(message, EN_PREVIOUS)
    assert is_follow_up(message, ZH_PREVIOUS)


@pytest.mark.parametrize("message", ["好的", "好的，", "好的！", "好的，明白了", "ok，明白了"])
def test_an_acknowledgement_in_chinese_is_a_follow_up(message: str) -> None:
    """好的 was in the list of words that point back, but jieba cuts it 好 / 的 whatever follows:
    the entry never matched, and 好的 after a question was a new topic searched by 好
    (review s55rC)."""
    assert is_follow_up(message, ZH_PREVIOUS)


@pytest.mark.parametrize("word", sorted(w for w in (*follow_up._POINTING, *follow_up._NOT_NEW)
                                        if has_cjk(w)))
def test_every_chinese_word_of_the_lists_is_read_as_written(word: str) -> None:
    """A list entry jieba never yields whole is dead: each one alone after a question leans on it."""
    assert is_follow_up(word, ZH_PREVIOUS)
    assert is_follow_up(f"{word}，", ZH_PREVIOUS)
