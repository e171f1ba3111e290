"""Tests of ``hermes_core/agent/context_engine.py``: what one turn's recall searches and keeps.

A configured ``min_score`` at any archive size, a short message read alone or with the question
before it, a long paste's question wherever it stands. (The engine's other tests are in
``test_context_engine.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.store import SessionRecord
from hermes_core.config import ContextEngineSettings
from hermes_core.types import Message, RetrievalQuery
from tests.agent.conftest import DAY, NOW

_TOPICS = ("espresso grinder burr", "garden tomatoes watering", "tax return deadline",
           "guitar chords practice", "bike chain lube", "sourdough starter feeding",
           "python asyncio timeouts", "hiking boots waterproof", "wifi router firmware",
           "piano scales practice")


def _archive(path: Path, sessions: int, min_score: float) -> ContextEngine:
    """An engine whose archive holds the ingress session and ``sessions - 1`` unrelated ones."""
    eng = ContextEngine(path, settings=ContextEngineSettings(min_score=min_score),
                        clock=lambda: NOW)
    eng.add("k8s", "Set up the kubernetes ingress with cert-manager", created_at=NOW - DAY)
    eng.add_many([SessionRecord(f"s{i}", f"Notes on {_TOPICS[i % len(_TOPICS)]} number {i}", (),
                                NOW - DAY) for i in range(sessions - 1)])
    return eng


@pytest.mark.parametrize("sessions", [1, 2, 3, 1_000])
def test_a_configured_min_score_keeps_the_relevant_session_at_any_archive_size(
        tmp_path: Path, sessions: int) -> None:
    """FTS5 clamps a term's idf to 1e-6 when the term is in half the index rows or more, which
    every term is in an archive of one or two sessions: scores read ~1e-6 there and a floor
    tuned on a real archive dropped every match. The floor scales with the largest idf the
    archive can give, so the same match passes it at every size."""
    with _archive(tmp_path / "s.db", sessions, min_score=5.0) as eng:
        got = eng.retrieve("how did we configure the kubernetes ingress?")
        assert [f.session_id for f in got] == ["k8s"]


@pytest.mark.parametrize("sessions", [3, 1_000])
def test_a_configured_min_score_still_drops_a_weak_match(tmp_path: Path, sessions: int) -> None:
    """What the floor is for: a match on one word that a tenth of the archive shares is dropped
    (it passes with no floor), at the small size as at the large one."""
    with _archive(tmp_path / "s.db", sessions, min_score=5.0) as eng:
        assert eng.retrieve("notes about practice") == []
    with _archive(tmp_path / "t.db", sessions, min_score=0.0) as eng:
        assert eng.retrieve("notes about practice") != []


_LOG = "INFO worker started pid=4242 queue=default\n"


@pytest.mark.parametrize("message", [
    "here is the log:\n" + _LOG * 150 + "why does the kubernetes ingress keep failing?\n" + _LOG * 150,
    "So yesterday was a mess. I spent the morning fixing the flaky CI pipeline, then met with the "
    "platform team, we argued about the offsite budget and the new hiring plan, and Alice wrote a "
    "postmortem draft about dashboards. Anyway, remind me how we configured the kubernetes "
    "ingress? https://kubernetes.io/docs/concepts/services-networking/ingress/#tls "
    "https://github.com/cert-manager/cert-manager/releases/tag/v1.14.0",
])
def test_a_long_message_recalls_by_its_question_wherever_it_stands(engine: ContextEngine,
                                                                   message: str) -> None:
    """A question between two pasted logs was never searched; one followed by links was
    searched by the links' pieces and recalled the session about a release page instead."""
    engine.add("k8s", "Set up the kubernetes ingress with cert-manager", created_at=NOW - DAY)
    engine.add("release", "Published the github releases page for version 14", created_at=NOW - DAY)
    got = [f.session_id for f in engine.retrieve(message)]
    assert got[:1] == ["k8s"]


def _two_topics(engine: ContextEngine) -> None:
    engine.add("k8s", "配置 kubernetes ingress：控制器和证书", created_at=NOW - DAY)
    engine.add("study", "第二种学习方法是番茄工作法，默认值二十五分钟", created_at=NOW - DAY)
    engine.add("hike", "周末去香山爬山的路线和装备", created_at=NOW - DAY)
    engine.add("movie", "推荐了几部科幻电影", created_at=NOW - DAY)


_INGRESS = [Message("user", "怎么配置 kubernetes ingress？"), Message("assistant", "有两种方法。")]


@pytest.mark.parametrize(("message", "topic"), [("周末去爬山", "hike"), ("推荐一部电影", "movie")])
def test_a_short_new_question_after_an_unrelated_one_recalls_its_own_topic_only(
        engine: ContextEngine, message: str, topic: str) -> None:
    """Length alone decided: "周末去爬山" (five characters) after the ingress question was
    searched with it and recalled the ingress session first."""
    _two_topics(engine)
    assert [f.session_id for f in engine.retrieve(RetrievalQuery.of(message, _INGRESS))] == [topic]


@pytest.mark.parametrize("message", ["那第二种方法呢", "它的默认值是多少"])
def test_a_follow_up_that_points_back_is_read_with_the_question_before_it(
        engine: ContextEngine, message: str) -> None:
    """Six or more characters that jieba cuts into three or more words ("那第二种方法呢": 第二 /
    二种 / 第二种 / 方法) were searched alone, though 那 and 呢 point back to the question."""
    _two_topics(engine)
    got = [f.session_id for f in engine.retrieve(RetrievalQuery.of(message, _INGRESS))]
    assert got[:1] == ["k8s"]


_CERT = [Message("user", "How do I renew the cert-manager certificate for the kubernetes ingress?"),
         Message("assistant", "Annotate the ingress and let cert-manager issue it.")]


@pytest.mark.parametrize("message", ["why does this fail?", "what does this error mean?", "👍"])
def test_a_reply_about_this_or_an_emoji_after_a_question_recalls_that_question_s_session(
        engine: ContextEngine, message: str) -> None:
    """"why does this fail?" brought "fail" and no listed word pointing back; "👍" brought a
    symbol term: each was searched alone, and recalled the session that said "fail" or held a
    👍, not the one the question was about (review s55rC)."""
    engine.add("cert", "Renewed the cert-manager certificate on the kubernetes ingress",
               created_at=NOW - DAY)
    engine.add("ci", "The CI build keeps failing; this error means the cache expired 👍",
               created_at=NOW - DAY)
    got = [f.session_id for f in engine.retrieve(RetrievalQuery.of(message, _CERT))]
    assert got[:1] == ["cert"]
