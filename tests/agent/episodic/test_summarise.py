"""Summaries that are summaries: requests marked as such, non-answers rejected for the fallback."""

from __future__ import annotations

import pytest

from hermes_core.agent.episodic.summarise import (
    ModelSummarizer,
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
