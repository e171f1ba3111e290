"""Summaries that are summaries: requests marked as such, non-answers rejected for the fallback."""

from __future__ import annotations

import pytest

from hermes_core.agent.episodic.summarise import (
    MAX_WORDS,
    MIN_WORDS,
    ModelSummarizer,
    SessionSummary,
    count_words,
    extractive_summary,
    parse_summary_reply,
    summary_problem,
    summary_prompt,
)
from hermes_core.errors import SummaryFailed
from hermes_core.types import Completion, Message

CHAT = [Message("user", "The staging database listens on port 6543; the replica is pg-replica-2."),
        Message("assistant", "Noted: staging database on port 6543, replica pg-replica-2.")]


@pytest.mark.parametrize("reply", ["", "   ", "ok", "OK.", "Sure!", "Got it.", "好的", "收到。",
                                   "Done"])
def test_empty_and_acknowledgement_replies_are_not_summaries(reply: str):
    assert summary_problem(reply, CHAT) is not None


def test_a_summary_of_another_conversation_is_rejected():
    problem = summary_problem("The user baked sourdough bread and asked about proofing times "
                              "in a cold kitchen over the winter holidays.", CHAT)
    assert problem is not None and "unrelated" in problem


def test_a_real_summary_is_accepted():
    assert summary_problem("The user's staging database listens on port 6543 and the replica "
                           "is pg-replica-2.", CHAT) is None


def test_the_summary_request_is_marked():
    assert summary_prompt(CHAT).purpose == "summary"


def test_model_summariser_rejects_a_bare_acknowledgement():
    summarise = ModelSummarizer(lambda prompt: Completion("SUMMARY: ok\nTAGS: misc", "m", "p"))
    with pytest.raises(SummaryFailed, match="acknowledgement"):
        summarise(CHAT)


def test_model_summariser_keeps_a_real_summary():
    got = ModelSummarizer(lambda prompt: "SUMMARY: Staging database on port 6543, replica "
                                         "pg-replica-2.\nTAGS: staging, database")(CHAT)
    assert got.source == "model" and "6543" in got.summary and got.tags == ("staging", "database")


def test_extractive_summary_keeps_a_repeated_sentence_once():
    """A pasted log repeats one line hundreds of times: each copy scored as high as the first, so
    the session's memory (and every prompt recalling it) read that line twenty times over and
    nothing else the user said."""
    from hermes_core.agent.episodic.summarise import extractive_summary, split_sentences

    log = "ERROR 2026-12-03 连接超时 timeout at db.py line 42\n" * 300
    chat = [Message("user", "The nightly import fails against the staging database. Here is the log:\n"
                    + log),
            Message("assistant", "The timeout comes from the connection pool. Raise pool_size "
                    "to 20 and set the statement timeout to 30 seconds."),
            Message("user", "Done, and the retry budget is now 5 attempts. 好的，问题解决了。"),
            Message("assistant", "Great. Keep an eye on the replica lag as well.")]
    summary = extractive_summary(chat).summary
    assert summary.count("连接超时 timeout at db.py line 42") == 1
    said = [s for m in chat for s in split_sentences(m.content)]
    distinct = list(dict.fromkeys(said))
    assert all(summary.count(s) <= 1 for s in distinct)
    assert "pool_size" in summary and "retry budget" in summary


def test_an_extractive_summarys_tags_keep_the_sessions_chinese_script():
    # tags are shown and stored: traditional Chinese stays traditional (only match keys fold)
    from hermes_core.agent.episodic.summarise import extractive_summary

    chat = [Message("user", "排查數據庫連接錯誤，數據庫連接超時。"),
            Message("assistant", "數據庫連接錯誤是因為連接池已滿，請重啟數據庫。")]
    tags = extractive_summary(chat).tags
    assert tags and "數據庫" in tags
    assert not any(c in "".join(tags) for c in "数据库连错误")   # 接 is one character in both


def _long_chat() -> list[Message]:
    topics = ["caching", "sharding", "replication", "indexing", "backups", "monitoring"]
    msgs = [Message("user", "We need to scale our Postgres database for the analytics product.")]
    for i in range(60):
        t = topics[i % len(topics)]
        msgs.append(Message("assistant", f"For {t}, step {i} is to review the {t} plan and measure the "
                                         f"Postgres latency before changing anything. Then document it."))
        msgs.append(Message("user", f"Ok, what about {t} risks in round {i}? We worry about downtime."))
    return msgs


def test_extractive_summary_of_a_long_session_is_200_to_500_words() -> None:
    s = extractive_summary(_long_chat())
    assert MIN_WORDS <= count_words(s.summary) <= MAX_WORDS
    assert s.summary.startswith("User: We need to scale our Postgres database")
    assert "postgres" in s.tags and 1 <= len(s.tags) <= 8


def test_extractive_summary_of_chinese_session() -> None:
    msgs = [Message("user", "我的树莓派晚上总是断开无线网络。请帮我看看。"),
            Message("assistant", "通常是无线网卡的省电模式导致的。可以关闭省电模式。")]
    s = extractive_summary(msgs)
    assert s.summary.startswith("User: 我的树莓派晚上总是断开无线网络。")
    assert "无线网络" in s.tags and "模式" in s.tags
    assert "线网" not in s.tags  # a search-mode fragment, not a word


def test_count_words_mixed() -> None:
    assert count_words("hello world") == 2
    assert count_words("我喜欢吃苹果") == 3
    assert count_words("use WAL 模式") == 3


def test_parse_summary_reply_variants_and_clip() -> None:
    assert parse_summary_reply("**Summary:** Fixed it.\n**Tags:** a，b、c") == SessionSummary(
        "Fixed it.", ("a", "b", "c"), "model")
    assert parse_summary_reply("摘要：修好了网络。\n标签：网络, 树莓派").tags == ("网络", "树莓派")
    assert parse_summary_reply("No markers at all.").summary == "No markers at all."
    long = parse_summary_reply("SUMMARY: " + "word " * 900 + "\nTAGS: x")
    assert count_words(long.summary) <= MAX_WORDS
    with pytest.raises(SummaryFailed):
        parse_summary_reply("TAGS: only, tags")


def test_summary_prompt_elides_the_middle_of_long_sessions() -> None:
    prompt = summary_prompt(_long_chat(), max_chars=2_000)
    text = prompt.messages[0].content
    assert "middle of the conversation omitted" in text and len(text) < 2_200
    assert "We need to scale" in text
