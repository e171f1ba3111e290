"""ContextEngine: Chinese retrieval, recency at equal relevance, exclusion, recording and summaries."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.context_engine import ContextEngine, default_db_path, parse_timestamp
from hermes_core.agent.episodic.summarise import (
    MAX_WORDS,
    MIN_WORDS,
    ModelSummarizer,
    SessionSummary,
    SummaryFailed,
    count_words,
    extractive_summary,
    parse_summary_reply,
    summary_prompt,
)
from hermes_core.config import ContextEngineSettings, load_settings
from hermes_core.types import Completion, Message, Prompt

DAY = 86_400.0
NOW = 1_800_000_000.0


@pytest.fixture
def engine(tmp_path: Path) -> ContextEngine:
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW)
    yield eng
    eng.close()


def test_chinese_term_found_inside_unsegmented_chinese_text(engine: ContextEngine) -> None:
    engine.add("zh", "我喜欢吃苹果，也喜欢在北京的公园散步", created_at=NOW - DAY)
    engine.add("en", "Deployed the payment service to production", created_at=NOW - DAY)
    assert [f.session_id for f in engine.retrieve("苹果")] == ["zh"]
    assert [f.session_id for f in engine.retrieve("北京")] == ["zh"]
    assert [f.session_id for f in engine.retrieve("上次说的苹果是什么？")] == ["zh"]
    # why segmentation matters: plain unicode61 keeps the Chinese run as one token and misses it
    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    raw.execute("INSERT INTO t VALUES ('我喜欢吃苹果，也喜欢在北京的公园散步')")
    assert raw.execute("SELECT * FROM t WHERE t MATCH '\"苹果\"'").fetchall() == []


def test_mixed_language_summary_found_from_both_sides(engine: ContextEngine) -> None:
    engine.add("mix", "用 SQLite 的 WAL 模式解决了 database is locked 错误", ["数据库"])
    assert [f.session_id for f in engine.retrieve("sqlite locked")] == ["mix"]
    assert [f.session_id for f in engine.retrieve("数据库错误")] == ["mix"]


@pytest.mark.parametrize("old_first", [True, False])
def test_at_equal_relevance_recent_session_outranks_old(engine: ContextEngine, old_first: bool) -> None:
    sessions = [("old", "Upgraded the kubernetes cluster alpha", NOW - 200 * DAY),
                ("new", "Upgraded the kubernetes cluster omega", NOW - 2 * DAY)]
    for sid, text, ts in (sessions if old_first else sessions[::-1]):
        engine.add(sid, text, created_at=ts)
    hits = engine.store.search('"kubernetes"', 10)
    assert len({h.bm25 for h in hits}) == 1, "the two sessions must be equally relevant"
    got = engine.retrieve("kubernetes")
    assert [f.session_id for f in got] == ["new", "old"]
    assert got[0].score / got[1].score == pytest.approx(2.0 / 0.7, rel=1e-4)
    assert (got[0].age_days, got[1].age_days) == (2.0, 200.0)


def test_recency_bias_zero_turns_recency_off(tmp_path: Path) -> None:
    eng = ContextEngine(tmp_path / "s.db", settings=ContextEngineSettings(recency_bias=0.0),
                        clock=lambda: NOW)
    eng.add("old", "kubernetes kubernetes upgrade", created_at=NOW - 300 * DAY)
    eng.add("new", "kubernetes upgrade notes", created_at=NOW - 1 * DAY)
    got = eng.retrieve("kubernetes")
    assert got[0].session_id == "old"  # higher term frequency wins once recency is off
    assert got[0].score == pytest.approx(-eng.store.search('"kubernetes"', 1)[0].bm25, rel=1e-4)


def test_current_session_is_excluded(engine: ContextEngine) -> None:
    for i, sid in enumerate(("current", "past-1", "past-2")):
        engine.add(sid, f"Talked about espresso machines, part {i}", created_at=NOW - i * DAY)
    ids = [f.session_id for f in engine.retrieve("espresso", exclude_session="current")]
    assert ids and "current" not in ids
    assert set(ids) == {"past-1", "past-2"}
    assert "current" in [f.session_id for f in engine.retrieve("espresso")]


def test_exclusion_still_returns_max_results(engine: ContextEngine) -> None:
    for i in range(8):
        engine.add(f"s{i}", f"notes on espresso grinders number {i}", created_at=NOW - i * DAY)
    got = engine.retrieve("espresso", max_results=5, exclude_session="s0")
    assert len(got) == 5 and "s0" not in [f.session_id for f in got]


def test_over_fetch_is_three_times_max_results(engine: ContextEngine,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = engine.store.search

    def spy(match: str, limit: int):  # type: ignore[no-untyped-def]
        seen.append(limit)
        return real(match, limit)

    engine.add("en", "Deployed the payment service to production", created_at=NOW - DAY)
    monkeypatch.setattr(engine.store, "search", spy)
    engine.retrieve("payment", max_results=4)    # a term some session holds: a search runs
    engine.retrieve("payment", max_results=4, exclude_session="x")
    assert seen == [12, 13]


def test_min_score_filters(tmp_path: Path) -> None:
    eng = ContextEngine(tmp_path / "s.db", settings=ContextEngineSettings(min_score=1e9), clock=lambda: NOW)
    eng.add("a", "espresso")
    assert eng.retrieve("espresso") == []


@pytest.mark.parametrize("max_results", [0, -3])
def test_non_positive_max_results(engine: ContextEngine, max_results: int) -> None:
    engine.add("a", "espresso")
    assert engine.retrieve("espresso", max_results=max_results) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60) | st.lists(st.sampled_from(
    ['"', "AND", "OR", "NOT", "NEAR(", "*", "^", "summary:", "tags:", "(", ")", "苹果", "{a b}:", "-"]),
    max_size=12).map(" ".join))
def test_any_query_text_never_raises(engine: ContextEngine, query: str) -> None:
    if engine.store.count() == 0:
        engine.add("a", "我喜欢吃苹果 and NEAR the summary: AND OR NOT", ["tags"])
    result = engine.retrieve(query, 3)
    assert isinstance(result, list) and len(result) <= 3


def test_memories_block_renders_ages_and_excludes(engine: ContextEngine) -> None:
    engine.add("s-old", "Chose PostgreSQL for the billing service", ["postgres"], created_at=NOW - 40 * DAY)
    engine.add("s-now", "Still comparing PostgreSQL options", created_at=NOW)
    block = engine.memories_block("postgresql billing", exclude_session="s-now")
    assert block.startswith("## Relevant past sessions")
    assert "- (5 weeks ago) Chose PostgreSQL for the billing service [tags: postgres]" in block
    assert "Still comparing" not in block
    assert engine.memories_block("zzzz unrelated") == ""


def test_memories_block_disabled(tmp_path: Path) -> None:
    eng = ContextEngine(tmp_path / "s.db", settings=ContextEngineSettings(enabled=False))
    eng.add("a", "espresso")
    assert eng.memories_block("espresso") == ""
    assert eng.record_session("b", [Message("user", "espresso please")]).status == "disabled"
    assert eng.get("b") is None


def test_memories_block_survives_a_database_fault(engine: ContextEngine,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    engine.add("a", "espresso")
    engine.store.connection.close()
    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        assert engine.memories_block("espresso") == ""
    assert "episodic memory unavailable" in caplog.text and str(engine.db_path) in caplog.text


# --------------------------------------------------------------------------- recording

CHAT = [
    Message("system", "You are helpful."),
    Message("user", "My Raspberry Pi keeps dropping its WiFi connection overnight."),
    Message("assistant", "Power management on the wlan0 interface is the usual cause. "
                         "Disable it with iw dev wlan0 set power_save off."),
    Message("user", "That fixed it. Can you make it permanent?"),
    Message("assistant", "Add the command to /etc/rc.local or a systemd unit so it runs at boot."),
]


def test_record_session_offline_uses_extractive_summary(engine: ContextEngine) -> None:
    res = engine.record_session("pi", CHAT)
    assert res.status == "inserted" and res.summary is not None
    assert res.summary.source == "extractive"
    assert res.summary.summary.startswith("User: My Raspberry Pi keeps dropping its WiFi connection")
    assert "wlan0" in res.summary.tags
    stored = engine.get("pi")
    assert stored is not None and stored.created_at == NOW and stored.message_count == 4
    assert stored.source == "extractive"
    assert [f.session_id for f in engine.retrieve("wifi keeps dropping")] == ["pi"]


def test_record_session_with_model_summarizer(engine: ContextEngine) -> None:
    seen: list[Prompt] = []

    def fast_model(prompt: Prompt) -> Completion:
        seen.append(prompt)
        return Completion(text="SUMMARY:\nThe user fixed WiFi drops on a Raspberry Pi by turning off "
                               "wlan0 power saving and made it permanent with a systemd unit.\n"
                               "TAGS: raspberry pi, wifi, systemd",
                          model="fast", provider="fake")

    res = engine.record_session("pi", CHAT, summarizer=ModelSummarizer(fast_model))
    assert res.summary == SessionSummary(
        "The user fixed WiFi drops on a Raspberry Pi by turning off wlan0 power saving and made it "
        "permanent with a systemd unit.", ("raspberry pi", "wifi", "systemd"), "model")
    transcript = seen[0].messages[0].content
    assert "USER: My Raspberry Pi keeps dropping" in transcript and "You are helpful" not in transcript
    assert "200 to 500 words" in seen[0].system
    assert engine.retrieve("systemd")[0].tags == ("raspberry pi", "wifi", "systemd")


def test_summarizer_failure_falls_back_and_is_logged(engine: ContextEngine,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    def broken(messages: Sequence[Message]) -> SessionSummary:
        raise TimeoutError("fast model timed out")

    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        res = engine.record_session("pi", CHAT, summarizer=broken)
    assert res.status == "inserted" and res.summary is not None and res.summary.source == "extractive"
    assert "session pi: summariser failed (TimeoutError: fast model timed out)" in caplog.text


@pytest.mark.parametrize("reply", ["", "   ", "TAGS: a, b", "SUMMARY:\n\nTAGS: x"])
def test_unusable_model_reply_falls_back(engine: ContextEngine, reply: str,
                                         caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        res = engine.record_session("pi", CHAT, summarizer=ModelSummarizer(lambda p: reply))
    assert res.summary is not None and res.summary.source == "extractive"
    assert "SummaryFailed" in caplog.text


def test_summarizer_returning_wrong_type_falls_back(engine: ContextEngine,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        res = engine.record_session("pi", CHAT, summarizer=lambda m: "just a string")  # type: ignore[arg-type,return-value]
    assert res.summary is not None and res.summary.source == "extractive"
    assert "not SessionSummary" in caplog.text


def test_engine_default_summarizer_is_used(tmp_path: Path) -> None:
    calls: list[int] = []

    def summarizer(messages: Sequence[Message]) -> SessionSummary:
        calls.append(len(messages))
        return SessionSummary("A conversation about a Raspberry Pi.", ("pi",))

    eng = ContextEngine(tmp_path / "s.db", summarizer=summarizer)
    assert eng.record_session("pi", CHAT).summary == SessionSummary(
        "A conversation about a Raspberry Pi.", ("pi",), "model")
    assert calls == [5]


def test_re_recording_a_session_replaces_it(engine: ContextEngine) -> None:
    first = engine.record_session("s", [Message("user", "Plan a trip to Kyoto in April.")])
    assert first.status == "inserted"
    again = engine.record_session("s", [Message("user", "Plan a trip to Kyoto in April."),
                                        Message("assistant", "Book the ryokan in Arashiyama early.")])
    assert again.status == "replaced"
    assert engine.stats()["sessions"] == 1 and engine.stats()["index_in_sync"]
    assert [f.session_id for f in engine.retrieve("ryokan arashiyama")] == ["s"]
    same = engine.record_session("s", [Message("user", "Plan a trip to Kyoto in April."),
                                       Message("assistant", "Book the ryokan in Arashiyama early.")])
    assert same.status == "unchanged"


def test_identical_summary_of_another_session_is_not_stored_twice(engine: ContextEngine) -> None:
    msgs = [Message("user", "Plan a trip to Kyoto in April.")]
    engine.record_session("a", msgs)
    dup = engine.record_session("b", msgs)
    assert (dup.status, dup.duplicate_of) == ("duplicate", "a")
    assert engine.stats()["sessions"] == 1


def test_empty_session_is_not_stored(engine: ContextEngine) -> None:
    assert engine.record_session("e", []).status == "empty"
    assert engine.record_session("e", [Message("system", "sys"), Message("user", "   ")]).status == "empty"
    assert engine.stats()["sessions"] == 0


@pytest.mark.parametrize("bad", ["", "   "])
def test_blank_session_id_is_rejected(engine: ContextEngine, bad: str) -> None:
    with pytest.raises(ValueError, match="session_id"):
        engine.record_session(bad, CHAT)
    with pytest.raises(ValueError, match="session_id"):
        engine.add(bad, "text")


def test_add_validates(engine: ContextEngine) -> None:
    with pytest.raises(ValueError, match="summary"):
        engine.add("a", "  \n ")
    with pytest.raises(ValueError, match="relevance_score"):
        engine.add("a", "x", relevance_score=float("nan"))


# --------------------------------------------------------------------------- summaries

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


# --------------------------------------------------------------------------- paths and config

def test_default_db_path(tmp_path: Path) -> None:
    s = load_settings({"home": str(tmp_path)}, env={})
    assert default_db_path(s) == tmp_path / "sessions.db"
    s = load_settings({"home": str(tmp_path), "context_engine": {"db_path": "mem/x.db"}}, env={})
    assert default_db_path(s) == tmp_path / "mem" / "x.db"
    s = load_settings({"home": str(tmp_path), "context_engine": {"db_path": "/abs/y.db"}}, env={})
    assert default_db_path(s) == Path("/abs/y.db")


def test_from_settings_uses_section(tmp_path: Path) -> None:
    s = load_settings({"home": str(tmp_path), "context_engine": {"max_results": 1}}, env={})
    with ContextEngine.from_settings(s, clock=lambda: NOW) as eng:
        eng.add("a", "espresso one")
        eng.add("b", "espresso two")
        assert eng.db_path == tmp_path / "sessions.db"
        assert eng.memories_block("espresso").count("\n- ") == 1


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-31", 1_769_817_600.0),
    ("2026-01-31T08:00:00Z", 1_769_846_400.0),
    ("2026-01-31T10:00:00+02:00", 1_769_846_400.0),
])
def test_parse_timestamp(text: str, expected: float) -> None:
    assert parse_timestamp(text) == expected


def test_parse_timestamp_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_timestamp("last tuesday")


@pytest.mark.parametrize(("yaml_text", "key"), [
    ("context_engine:\n  recency_weights:\n    week: 0\n", "context_engine.recency_weights.week"),
    ("context_engine:\n  recency_weights:\n    older: -1\n", "context_engine.recency_weights.older"),
    ("context_engine:\n  recency_bias: -0.5\n", "context_engine.recency_bias"),
    ("context_engine:\n  busy_timeout_s: 0\n", "context_engine.busy_timeout_s"),
    ("context_engine:\n  render_chars: 10\n", "context_engine.render_chars"),
    ("context_engine:\n  recency_weight: 2\n", "context_engine.recency_weight"),
])
def test_bad_context_engine_config_names_key_and_line(tmp_path: Path, yaml_text: str, key: str) -> None:
    from hermes_core.errors import ConfigError

    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml_text)
    with pytest.raises(ConfigError) as e:
        load_settings(cfg, env={})
    assert e.value.key_path == key and e.value.file == str(cfg) and e.value.line is not None


def test_config_knobs_reach_the_engine(tmp_path: Path) -> None:
    s = load_settings({"home": str(tmp_path), "context_engine": {
        "busy_timeout_s": 2.5, "render_chars": 80,
        "recency_weights": {"week": 3.0, "month": 1.0, "quarter": 1.0, "older": 1.0}}}, env={})
    with ContextEngine.from_settings(s, clock=lambda: NOW) as eng:
        assert eng.store.connection.execute("PRAGMA busy_timeout").fetchone()[0] == 2500
        eng.add("old", "espresso machine " + "details " * 60, created_at=NOW - 100 * DAY)
        eng.add("new", "espresso machine " + "notes " * 60, created_at=NOW - DAY)
        got = eng.retrieve("espresso")
        assert got[0].score / got[1].score == pytest.approx(3.0, rel=1e-4)
        lines = eng.memories_block("espresso").splitlines()[2:]
        assert all(len(line) < 130 for line in lines) and lines[0].endswith("…")
