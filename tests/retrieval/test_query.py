"""Tests of ``hermes_core/retrieval/query.py``: what the ranking layers read of a message."""

from __future__ import annotations

import pytest

from hermes_core.retrieval import retriever as rmod
from hermes_core.retrieval.query import without_source_clauses
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill


@pytest.mark.parametrize(("message", "ranked"), [
    # the source is the last word before 里: the verb before it stays
    ("打开邮件里提到的公司网址", "打开公司网址"),
    ("对记事本里提到的商品给个四星评价", "对商品给个四星评价"),
    # a sender phrase goes with the source it names
    ("帮我找一下米津玄师唱的小李发给我的微信消息里提到的那首歌。", "帮我找一下米津玄师唱的那首歌。"),
    ("小明发的QQ消息里提到的时间打车去机场的，能帮我分享这个打车行程吗？",
     "时间打车去机场的，能帮我分享这个打车行程吗？"),
    ("车牌号是Tom发给我的短信里提到的，能帮忙处理一下吗？", "车牌号是，能帮忙处理一下吗？"),
    ("Book a table at the restaurant mentioned in Tom's text message for 7pm",
     "Book a table at the restaurant for 7pm"),
    ("open the website given in the email", "open the website"),
    ("set an alarm for the time that was mentioned in my notes", "set an alarm for the time"),
])
def test_a_clause_naming_where_a_detail_came_from_is_not_ranked(message: str, ranked: str) -> None:
    assert without_source_clauses(message) == ranked


@pytest.mark.parametrize("message", [
    "邮件里说了什么",                 # asks about the mail itself: no "…的" detail follows a source
    "给邮件里的附件重命名",           # 里的 names a place, not a saying
    "send the report to my boss",
    "forward the email to Tom",
    "帮我查一下最近的违章记录",
])
def test_a_message_without_such_a_clause_is_unchanged(message: str) -> None:
    assert without_source_clauses(message) == message


def test_a_message_that_is_only_a_source_clause_stays_whole() -> None:
    assert without_source_clauses("Tom发给我的短信里提到的") == "Tom发给我的短信里提到的"


def test_a_pasted_megabyte_is_judged_a_follow_up_or_not_by_its_head(monkeypatch: pytest.MonkeyPatch) -> None:
    """The question "is this too short to stand alone?" was asked of the whole message: a 4.5 MB
    paste was tokenised whole on every retrieval (19 s of a 26 s eval). Its head answers it."""
    import hermes_core.retrieval.query as query
    seen: list[int] = []
    real = query.bm25_tokens

    def recording(text: str) -> list[str]:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(query, "bm25_tokens", recording)
    assert not query.is_follow_up("deploy the app " * 300_000)
    assert query.is_follow_up("   " * 300_000 + "why?")  # only blanks in the head: nothing asked there
    assert seen and max(seen) <= query.MAX_QUERY_CHARS
    assert query.is_follow_up("and in Chinese?")
    assert not query.is_follow_up("为什么要部署这个应用程序呢" * 100_000)


CLAUSE_SKILLS = [
    Skill("sms-inbox", "查看和搜索短信消息，发送短信"),
    Skill("weather-forecast", "天气预报：温度和降雨"),
    Skill("world-clock", "世界时钟：一个城市现在几点"),
    Skill("restaurant-booking", "Book a table at a restaurant"),
    Skill("email-inbox", "Read, search and send email messages"),
]


@pytest.mark.parametrize(("message", "gold"), [
    ("查一下小李发给我的短信里提到的那个地方的天气", "weather-forecast"),
    ("book the restaurant mentioned in the email message Tom sent", "restaurant-booking"),
])
def test_where_a_detail_came_from_does_not_outrank_what_is_asked(message: str, gold: str) -> None:
    r = SkillRetriever(skills=CLAUSE_SKILLS, gate_thresholds={"lexical": 0.0})
    assert r.retrieve(message).names[0] == gold


def test_the_gate_judges_the_request_as_written_not_the_shortened_ranking_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    message = "查一下小李发给我的短信里提到的那个地方的天气"
    r = SkillRetriever(skills=CLAUSE_SKILLS, embedders=[HashingEmbedder()], calibrate=False)
    ranked_as = r.retrieve("查一下那个地方的天气")     # the text the layers rank
    res = r.retrieve(message)
    monkeypatch.setattr(rmod, "without_source_clauses", lambda text: text)
    whole = r.retrieve(message)
    assert res.gate is not None and whole.gate is not None and ranked_as.gate is not None
    assert res.gate.score == pytest.approx(whole.gate.score)
    assert res.gate.score != pytest.approx(ranked_as.gate.score)
    assert res.names == ranked_as.names
