"""Tests of ``hermes_core/agent/context_engine.py``.

ContextEngine: Chinese retrieval, recency at equal relevance, exclusion, recording, settings,
damaged and hand-edited archives, the recall block's budget. Keys kept out of the archive are in
``test_context_engine_secrets.py``; the guard of recalls in ``episodic/test_guard.py``.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.context_engine import ContextEngine, default_db_path, parse_timestamp
from hermes_core.agent.episodic.store import SessionDatabaseUnusable, SessionStoreError
from hermes_core.agent.episodic.summarise import ModelSummarizer, SessionSummary
from hermes_core.cli.main import main
from hermes_core.config import ContextEngineSettings, load_settings
from hermes_core.tokens import count_tokens
from hermes_core.types import Completion, Message, Prompt, RetrievalQuery
from tests.agent.conftest import DAY, NOW


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


@pytest.mark.parametrize("message", [
    "I spent the whole afternoon reading documentation, restarting services, checking logs, "
    "browsing forums, asking colleagues, testing configurations, rebuilding images, clearing "
    "caches, rotating credentials, updating packages, reinstalling drivers, comparing versions "
    "and rewriting scripts, and nothing helped. Remind me how we configured the kubernetes ingress?",
    "我今天一整天都在阅读文档、重启服务、检查日志、浏览论坛、请教同事、测试配置、重建镜像、清理缓存、"
    "轮换凭证、更新软件包、重装驱动、比较版本、重写脚本，还是没有用。提醒我一下我们是怎么配置 "
    "kubernetes ingress 的？",
    "here is the log:\n" + "INFO worker started pid=4242 queue=default\n" * 300
    + "why does the kubernetes ingress keep failing?",
    # the question repeats words told mid-story: they are the end's, not the middle's
    "So yesterday was a mess. I spent the morning fixing the flaky CI pipeline, then met "
    "with the platform team, we argued about the offsite budget and the new hiring plan, and "
    "after that the kubernetes ingress broke again right after the cluster upgrade, so Bob "
    "rolled back the helm chart, and Alice wrote a postmortem draft about dashboards, alerting, "
    "pagers and runbooks. Anyway, remind me how we configured the kubernetes ingress?",
])
def test_a_long_message_recalls_by_the_question_it_ends_with(engine: ContextEngine,
                                                             message: str) -> None:
    """Only a long message's first 24 distinct terms (and first 4,000 characters) were
    searched, so a chatty message or a pasted log ending in its question recalled nothing."""
    engine.add("k8s", "Set up the kubernetes ingress with cert-manager", created_at=NOW - DAY)
    engine.add("lunch", "Lunch options near the office", created_at=NOW - DAY)
    assert [f.session_id for f in engine.retrieve(message)] == ["k8s"]


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


def test_a_message_no_session_shares_a_term_with_costs_one_statement(engine: ContextEngine) -> None:
    engine.add("a", "Deployed the payment service to production", created_at=NOW - DAY)
    assert engine.retrieve("weather in lisbon tomorrow") == []   # counts the terms once
    statements: list[str] = []
    engine.store._conn.set_trace_callback(statements.append)
    assert engine.retrieve("weather in lisbon tomorrow") == []
    assert engine.retrieve("lisbon weather") == []
    assert statements == ["PRAGMA data_version"] * 2   # no read transaction, no search
    engine.store._conn.set_trace_callback(None)
    engine.add("b", "Flight to Lisbon booked for tomorrow", created_at=NOW - DAY)
    assert [f.session_id for f in engine.retrieve("weather in lisbon tomorrow")] == ["b"]


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
    ("context_engine:\n  block_tokens: 20\n", "context_engine.block_tokens"),
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
    tight = load_settings({"home": str(tmp_path), "context_engine": {"block_tokens": 100}}, env={})
    with ContextEngine.from_settings(tight, clock=lambda: NOW) as eng:
        assert count_tokens(eng.memories_block("espresso")) <= 100


def test_huge_max_results_returns_everything(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s1", "cafe latte notes")
        engine.add("s2", "latte art class")
        assert {f.session_id for f in engine.retrieve("latte", 10**20, exclude_session="s9")} == {"s1", "s2"}


def test_huge_configured_max_results_still_renders_the_block(tmp_path: Path) -> None:
    from hermes_core.config_numbers import MAX_SETTING

    settings = ContextEngineSettings(max_results=MAX_SETTING)   # the largest a config may set
    with ContextEngine(tmp_path / "sessions.db", settings=settings, clock=lambda: NOW) as engine:
        engine.add("s1", "cafe latte notes")
        assert "cafe latte notes" in engine.memories_block("latte")


def test_cli_huge_max_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    assert main(["memory", "add", "--db", str(db), "--session-id", "s1", "--summary", "cafe latte"]) == 0
    capsys.readouterr()
    assert main(["memory", "search", "latte", "--db", str(db), "--max-results", str(10**20)]) == 0
    assert "s1" in capsys.readouterr().out


def _engine_with_two(path: Path) -> None:
    with ContextEngine(path, clock=lambda: NOW) as engine:
        engine.add("s1", "postgres tuning notes for the orders database", "db")
        engine.add("s2", "postgres backup strategy with nightly dumps", "db")


def _delete_by_hand(path: Path, session_id: str) -> None:
    """What a user does with the sqlite3 shell to forget a session (there is no CLI for it)."""
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
    conn.commit()
    conn.close()


def test_search_skips_index_rows_whose_session_row_is_gone(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _engine_with_two(db)
    _delete_by_hand(db, "s1")
    with ContextEngine(db, clock=lambda: NOW) as engine:
        assert [f.session_id for f in engine.retrieve("postgres")] == ["s2"]
        assert "backup strategy" in engine.memories_block("postgres")


def test_cli_search_over_an_orphaned_index_row_prints_json(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    _engine_with_two(db)
    _delete_by_hand(db, "s1")
    assert main(["memory", "search", "postgres", "--db", str(db), "--json"]) == 0
    assert [f["session_id"] for f in json.loads(capsys.readouterr().out)] == ["s2"]


def test_recording_after_the_newest_row_was_deleted_by_hand(tmp_path: Path) -> None:
    """SQLite reuses the deleted rowid for the next session; its stale index row must not block it."""
    db = tmp_path / "sessions.db"
    _engine_with_two(db)
    _delete_by_hand(db, "s2")
    with ContextEngine(db, clock=lambda: NOW) as engine:
        assert engine.add("s3", "redis eviction policy and maxmemory", "cache").status == "inserted"
        assert [f.session_id for f in engine.retrieve("redis eviction")] == ["s3"]
        assert [f.session_id for f in engine.retrieve("backup dumps")] == []  # s2's text is gone
        assert engine.stats()["index_in_sync"] is True


def _damaged(tmp_path: Path) -> Path:
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        for i in range(50):
            engine.add(f"s{i}", f"postgres tuning notes number {i} with vacuum and index bloat")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions_fts_data SET block = zeroblob(length(block)) WHERE id > 10")
    conn.commit()
    conn.close()
    return db


def test_rebuild_repairs_a_damaged_index(tmp_path: Path) -> None:
    db = _damaged(tmp_path)
    with ContextEngine(db, clock=lambda: NOW) as engine:
        assert len(engine.retrieve("postgres vacuum", 100)) < 50   # the damage: rows are lost
        assert engine.rebuild() == 50
        assert len(engine.retrieve("postgres vacuum", 100)) == 50
        assert engine.stats()["index_in_sync"] is True
        assert engine.add("s-new", "redis eviction notes").status == "inserted"
        assert [f.session_id for f in engine.retrieve("redis eviction")] == ["s-new"]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
    conn.close()


def test_cli_rebuild_repairs_a_damaged_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _damaged(tmp_path)
    assert main(["memory", "rebuild", "--db", str(db)]) == 0
    assert "50" in capsys.readouterr().out
    assert main(["memory", "search", "vacuum", "--db", str(db), "--max-results", "100", "--json"]) == 0
    assert capsys.readouterr().out.count('"session_id"') == 50


def test_rebuild_keeps_the_index_shape(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("s1", "postgres notes")
        before = engine.store.connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'sessions_fts'").fetchone()[0]
        engine.rebuild()
        after = engine.store.connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'sessions_fts'").fetchone()[0]
    assert " ".join(after.split()) == " ".join(before.split())


@pytest.mark.parametrize("value", ["inf", "Infinity", "1e400", "nan"])
def test_cli_add_refuses_a_non_finite_relevance(tmp_path: Path, value: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    with pytest.raises(SystemExit) as info:
        main(["memory", "add", "--db", str(db), "--session-id", "s1", "--summary", "hello world",
              f"--relevance={value}"])
    assert info.value.code == 2
    assert "--relevance" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize("field", ["relevance_score", "created_at"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_api_add_refuses_non_finite_numbers(tmp_path: Path, field: str, value: float) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        with pytest.raises(ValueError, match=field):
            engine.add("s1", "hello world", **{field: value})  # type: ignore[arg-type]
        assert engine.stats()["sessions"] == 0


def test_record_session_with_a_nan_time_is_refused_not_a_database_error(tmp_path: Path) -> None:
    from hermes_core.types import Message

    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        try:
            engine.record_session("s1", [Message("user", "Tune the postgres vacuum settings.")],
                                  created_at=math.nan)
        except SessionDatabaseUnusable as e:  # the file is fine: this message would be a lie
            pytest.fail(f"reported as an unusable database: {e}")
        except ValueError as e:
            assert "created_at" in str(e)
        else:
            pytest.fail("a NaN time was accepted")


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_out_of_range_utc_instant_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_timestamp(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-31T08:00:00+05:30", 1769826600.0), ("2026-01-31T02:30:00Z", 1769826600.0),
    ("2026-01-31T02:30:00", 1769826600.0), ("9999-12-31T23:59:59Z", 253402300799.0)])
def test_offsets_land_on_the_same_instant(text: str, expected: float) -> None:
    assert parse_timestamp(text) == expected


def test_cli_add_refuses_and_does_not_create(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    with pytest.raises(SystemExit) as e:
        main(["memory", "add", "--db", str(db), "--session-id", "a", "--summary", "x",
              "--created-at", "9999-12-31T23:59:59-12:00"])
    assert e.value.code == 2 and "out of range" in capsys.readouterr().err
    assert not db.exists()


def test_stats_survive_extreme_stored_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    with ContextEngine(db) as engine:
        engine.add("future", "a session from far in the future", created_at=1e15)
        engine.add("past", "a session from before the calendar", created_at=-1e15)
    assert main(["memory", "stats", "--db", str(db), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["sessions"] == 2
    assert stats["oldest"] == -1e15 and stats["newest"] == 1e15   # raw epoch seconds, no crash


def test_the_same_fact_recorded_in_thirty_sessions_fills_one_recall_slot(engine: ContextEngine) -> None:
    for i in range(30):
        engine.add(f"dup{i}", f"The user's dog is named Biscuit and is a golden retriever. Session {i} "
                              "talked about walks.", created_at=NOW - i * DAY)
    engine.add("food", "Compared puppy food brands for the golden retriever; Biscuit prefers salmon.",
               created_at=NOW - 50 * DAY)
    engine.add("training", "Training schedule: the retriever Biscuit learns sit and stay.",
               created_at=NOW - 60 * DAY)
    query = "what breed is my dog Biscuit? golden retriever"
    got = [f.session_id for f in engine.recall(query)[1]]
    assert got[0] == "dup0"                      # the newest telling of the fact, once
    assert sum(1 for s in got if s.startswith("dup")) == 1
    assert {"food", "training"} <= set(got)
    # a search (``memory search``) still lists every copy, so each can be found and forgotten
    listed = [f.session_id for f in engine.retrieve(query, 40)]
    assert sum(1 for s in listed if s.startswith("dup")) == 30


ZH_TOPICS = ("数据库", "防火墙", "缓存", "证书", "队列")
EN_TOPICS = ("database", "firewall", "cache", "certificate", "queue")


@pytest.mark.parametrize(("unit", "topics"), [("我们讨论了如何部署服务并检查{}的日志。", ZH_TOPICS),
                                              ("We discussed deploying the {} service. ", EN_TOPICS)])
def test_the_recall_block_keeps_within_its_token_budget(tmp_path: Path, unit: str,
                                                         topics: tuple[str, ...]) -> None:
    settings = ContextEngineSettings(block_tokens=300)
    with ContextEngine(tmp_path / "s.db", settings=settings, clock=lambda: NOW) as engine:
        for i, topic in enumerate(topics):
            engine.add(f"s{i}", unit.format(topic) * 60, created_at=NOW - i * DAY)
        block, fragments = engine.recall("部署服务 deploying service")
    assert len(fragments) >= 2                    # shortened to fit, not dropped wholesale
    assert 250 <= count_tokens(block) <= 300


def test_a_short_recall_block_is_left_as_it_was(engine: ContextEngine) -> None:
    engine.add("a", "Chose PostgreSQL for the billing service", created_at=NOW - DAY)
    block, fragments = engine.recall("postgresql billing")
    assert fragments[0].summary == "Chose PostgreSQL for the billing service"
    assert "- (yesterday) Chose PostgreSQL for the billing service" in block


def test_a_possessive_in_the_message_does_not_recall_every_session_with_an_apostrophe(
        engine: ContextEngine) -> None:
    engine.add("tls", "Let's Encrypt certificates for the nginx proxy; it's renewed by certbot.",
               created_at=NOW - DAY)
    engine.add("rust", "Explained Rust ownership and the borrow checker's rules with examples.",
               created_at=NOW - 100 * DAY)
    assert [f.session_id for f in engine.retrieve("what's rust's ownership model?", 5)] == ["rust"]


@pytest.mark.parametrize(("told", "asked"), [
    ("We moved the orders table to PostgreSQL last spring", "what did we say about postgres?"),
    ("The staging deployments run from the release branch", "how do we deploy staging"),
    ("Our JavaScript bundle grew past two megabytes", "the javascr bundle size"),
])
def test_a_word_finds_a_session_that_wrote_a_longer_word_starting_with_it(
        engine: ContextEngine, told: str, asked: str) -> None:
    """"postgres" did not find "PostgreSQL": the index held the identifier's parts (postgre, sql)
    and each query term matched a whole index term only."""
    engine.add("told", told, created_at=NOW - DAY)
    engine.add("other", "Lunch at the noodle place on Friday", created_at=NOW - DAY)
    assert [f.session_id for f in engine.retrieve(asked)] == ["told"]


def test_a_word_the_archive_has_whole_is_not_also_looked_up_as_a_prefix(
        engine: ContextEngine) -> None:
    """Prefix lookups read every index term the word starts, so only a word no session has
    whole gets one: "deploy" then finds the session that said it, not "deployments" too."""
    engine.add("said", "We deploy on Fridays", created_at=NOW - DAY)
    engine.add("longer", "The deployments are frozen", created_at=NOW - DAY)
    statements: list[str] = []
    engine.store.connection.set_trace_callback(statements.append)
    try:
        assert [f.session_id for f in engine.retrieve("deploy")] == ["said"]
    finally:
        engine.store.connection.set_trace_callback(None)
    assert not [st for st in statements if '"deploy"*' in st]


def test_a_short_word_matches_whole_words_only(engine: ContextEngine) -> None:
    """``api`` must not recall every ``apiary``: a prefix needs four letters."""
    engine.add("bees", "The apiary has twelve hives", created_at=NOW - DAY)
    assert engine.retrieve("api keys") == []


def test_refit_shortens_recalled_sessions_to_the_block_budget_in_another_encoding(
        tmp_path: Path) -> None:
    thai = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์ "
    settings = ContextEngineSettings(block_tokens=200)
    with ContextEngine(tmp_path / "s.db", settings=settings, clock=lambda: NOW) as engine:
        for i in range(4):
            engine.add(f"s{i}", f"Biscuit {i}: " + thai * 8, created_at=NOW - DAY)
        block, fragments = engine.recall("Biscuit")
        assert count_tokens(block) <= 200 < count_tokens(block, "cl100k_base")
        narrow, kept = engine.refit(fragments, "cl100k_base")
        assert 0 < count_tokens(narrow, "cl100k_base") <= 200 and kept
        assert engine.refit(kept, "cl100k_base") == (narrow, kept)   # fits: left as it is


def test_a_recording_prunes_a_bounded_number_of_old_sessions_and_keeps_itself(
        tmp_path: Path) -> None:
    from hermes_core.agent.episodic.ranking import SECONDS_PER_DAY as DAY_S
    from hermes_core.agent.episodic.retention import BATCHES_PER_RECORD, PRUNE_BATCH
    from hermes_core.agent.episodic.store import SessionRecord

    settings = ContextEngineSettings(max_sessions=100, retention_days=3_000)
    with ContextEngine(tmp_path / "s.db", settings=settings, clock=lambda: NOW) as engine:
        engine.add_many([SessionRecord(f"old{i}", f"old session {i} about item{i}", (),
                                       NOW - (i + 1) * DAY_S) for i in range(1_500)])
        assert engine.stats()["sessions"] == 1_500          # a bulk import prunes nothing
        engine.add("today", "a session about kubernetes today")
        assert engine.stats()["sessions"] == 1_501 - BATCHES_PER_RECORD * PRUNE_BATCH
        assert engine.get("today") is not None and engine.get("old0") is not None
        engine.add("later", "another session about redis")
        s = engine.stats()
        assert (s["sessions"], s["index_in_sync"]) == (100, True)
        assert engine.get("old97") is not None and engine.get("old98") is None
        assert engine.prune() == 0


def test_no_retention_setting_prunes_nothing(engine: ContextEngine) -> None:
    from hermes_core.agent.episodic.store import SessionRecord

    engine.add_many([SessionRecord(f"s{i}", f"session {i} text", (), NOW - i * 86_400 * 400)
                     for i in range(20)])
    engine.add("now", "recorded today")
    assert engine.stats()["sessions"] == 21 and engine.prune() == 0


@pytest.mark.parametrize(("cell", "when"), [
    ("2027-01-15T08:00:00Z", parse_timestamp("2027-01-15T08:00:00Z")),   # as `memory` prints it
    ("2027-01-15", parse_timestamp("2027-01-15")),
    ("1800000000.5", 1_800_000_000.5),
])
def test_get_reads_a_date_another_tool_stored_as_text(engine: ContextEngine, cell: str,
                                                       when: float) -> None:
    """A session whose date, relevance or message count another tool wrote as text is read, as
    the stamps `memory search` hands out are written, not raised on."""
    engine.add("s-text", "deployed the payment service", created_at=NOW - DAY)
    engine.store.connection.execute(
        "UPDATE sessions SET created_at = ?, relevance_score = 'high', message_count = 'many'"
        " WHERE session_id = 's-text'", (cell,))
    stored = engine.get("s-text")
    assert stored is not None and stored.summary == "deployed the payment service"
    assert (stored.created_at, stored.relevance_score, stored.message_count) == (when, 1.0, 0)


def test_get_of_a_session_whose_date_is_no_date_names_the_session_and_the_way_out(
        engine: ContextEngine) -> None:
    engine.add("s-junk", "deployed the payment service", created_at=NOW - DAY)
    engine.store.connection.execute(
        "UPDATE sessions SET created_at = x'00ff' WHERE session_id = 's-junk'")
    with pytest.raises(SessionStoreError, match=r"'s-junk'.*created_at.*forget"):
        engine.get("s-junk")


def test_a_session_another_process_forgets_during_a_recall_is_skipped_without_a_rebuild_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A recall that reads further down its ranking (near duplicates took its places) after
    another process forgot a session there skips it quietly: nothing is out of step, so the
    warning to rebuild the index would send the user after a fault that is not there. A row
    deleted from the sessions alone (drift) is still warned about."""
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as other, \
            ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("dup1", "postgres billing", created_at=NOW)
        engine.add("dup2", "postgres billing.", created_at=NOW - 1)
        engine.add("gone", "postgres billing replica lag alarms tuned on the primary",
                   created_at=NOW - 2)
        engine.add("kept", "postgres billing backups verified on the primary and both standby"
                   " nodes after the upgrade", created_at=NOW - 3)
        ranked_once = engine._ranked

        def forget_between(*args: object, **kw: object) -> object:
            out = ranked_once(*args, **kw)       # the snapshot of hits and first texts is over
            other.forget("gone")                 # another process forgets one further down
            return out

        monkeypatch.setattr(engine, "_ranked", forget_between)
        with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
            got = [f.session_id for f in engine.retrieve("postgres billing", 2,
                                                         distinct_only=True)]
        assert got == ["dup1", "kept"]
        assert "rebuild" not in caplog.text
        monkeypatch.undo()
        engine.store.connection.execute("DELETE FROM sessions WHERE session_id = 'kept'")
        with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
            engine.retrieve("postgres backups verified", 2)
        assert "rebuild" in caplog.text


@pytest.mark.parametrize("follow_up", ["用英文写", "用表格展示", "再详细一点"])
def test_a_short_chinese_follow_up_is_read_with_the_question_before_it(
        engine: ContextEngine, follow_up: str) -> None:
    """Decision 10: a follow-up under six CJK characters borrows the last message that stood on
    its own, as skill retrieval reads it. Recall counted words only, so "用英文写" (three words,
    "write it in English") was searched alone and recalled the session about English, not the
    ingress the user had just asked about."""
    engine.add("k8s", "配置 kubernetes ingress 的步骤和证书", created_at=NOW - DAY)
    engine.add("other", "用英文写求职信，用表格展示预算，再详细一点解释税率", created_at=NOW - DAY)
    hist = [Message("user", "怎么配置 kubernetes ingress？"), Message("assistant", "先安装控制器。")]
    got = engine.retrieve(RetrievalQuery.of(follow_up, hist))
    assert got and got[0].session_id == "k8s"
