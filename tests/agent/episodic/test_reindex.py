"""The one-time re-index for a new tokenizer runs in batches: writers get in between them, and
no row is lost or doubled whoever writes, crashes or re-indexes at the same time."""

from __future__ import annotations

import multiprocessing
import signal
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.episodic import passages, ranking, reindex
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.tokenize import (
    SEGMENT_VERSION,
    TOKENIZER_VERSION,
    segment_for_index,
    segment_key,
    symbol_terms,
    tokenizer_key,
)
from tests.agent.episodic.conftest import (
    AT,
    NEW,
    OLD,
    deploy_archive,
    deploy_summary,
    indexed_once,
    open_and_die,
    reindex_between_batches,
    segment_before_symbols,
    segment_new,
    segment_old,
    spawn_process,
)

NEEDLE = "zq9-Horse7-battery-Staple"


def test_a_writer_waits_for_one_batch_of_the_re_index_not_the_whole_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    n = 400
    deploy_archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 50)
    # another agent's store, open before the re-index starts; it writes with a short busy wait,
    # so a re-index that holds the lock to the end makes it fail
    writer = SessionStore(path, segment=segment_old, busy_timeout_s=5.0)
    calls = {"n": 0, "at_write": -1}
    written = threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        try:
            writer.upsert(SessionRecord("s-new", "session w900 written meanwhile", (), AT))
            writer.upsert(SessionRecord("s3", "session w3 rewritten meanwhile", (), AT))
            writer.delete("s7")
            calls["at_write"] = calls["n"]
        except BaseException as e:  # reported by the test thread
            failed.append(e)
        finally:
            written.set()

    def segment(text: str) -> str:
        calls["n"] += 1
        if calls["n"] == 120:        # inside the third batch: the writer goes now
            threading.Thread(target=write).start()
            written.wait(timeout=20)
        return segment_new(text)

    try:
        with SessionStore(path, segment=segment, segment_id=NEW) as store:
            assert store.reindexed >= n - 1
    finally:
        writer.close()
    assert not failed, failed
    # the writer was done while the re-index had rows left to segment (two calls a row)
    assert 0 < calls["at_write"] < 2 * n
    ids = {f"s{i}" for i in range(n)} - {"s7"} | {"s-new"}
    indexed_once(path, ids, {"s-new": "w900"})
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert [h.session_id for h in store.search('"xrewritten"', 5)] == ["s3"]
        assert store.search('"xw7"', 5) == []


def test_an_open_re_indexes_a_bounded_number_of_rows_and_searches_the_old_index_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large archive's re-index (a new tokenizer or index layout) is spread over opens: an
    open (a chat's start, an Agent's first turn) indexes at most ``OPEN_ROWS`` rows and returns,
    searches read the old index until the last batch swaps them, and writes made meanwhile are
    in the new index when it is done."""
    path = tmp_path / "sessions.db"
    n = 120
    deploy_archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10)
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.reindexed == 30
        conn = store.connection
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (OLD,)
        assert [h.session_id for h in store.search('"w97"', 5)] == ["s97"]   # the old index
        store.upsert(SessionRecord("s-new", "session w900 written meanwhile", (), AT))
        assert store.reindexed == 40          # the write carried it on by one batch
        store.delete("s7")
    opens = 1
    while True:
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
            assert store.reindexed <= 30
            opens += 1
    assert opens == 4        # 121 rows: 30 + 10 by the write, then 30 an open, the rest swapped
    indexed_once(path, {f"s{i}" for i in range(n)} - {"s7"} | {"s-new"}, {"s-new": "w900"})


def test_a_session_forgotten_while_a_re_index_is_left_for_later_opens_leaves_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The half-built new index holds a copy of every row up to its cursor; a forget or a key
    rewrite between opens must take the words out of it too, not only out of the index searched."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord(f"s{i}", deploy_summary(i), (), AT + i) for i in range(100)]
    records.insert(10, SessionRecord("holder", "the proxy notes xylophonicdiagnosis", (), AT))
    records.insert(12, SessionRecord("keyholder", f"keyholderword holds {NEEDLE}", (), AT))
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
        store.upsert_many(records)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)

    def raw() -> bytes:
        return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("sessions.db*")))

    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.reindexed == 30        # the holder (rowid 11) is in the new index too
        assert store.delete("holder")
        assert store.rewrite_holding(
            {"m1": NEEDLE}, lambda r: replace(r, summary=r.summary.replace(NEEDLE, "gone"))) == 1
    assert b"ophonicdiagnos" not in raw() and b"staple" not in raw().lower()
    while True:
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    assert b"ophonicdiagnos" not in raw() and b"staple" not in raw().lower()
    indexed_once(path, {f"s{i}" for i in range(100)} | {"keyholder"},
                  {"keyholder": "keyholderword"})


def _reindex_and_die(path: str, kill_after: int, batch: int) -> None:
    open_and_die(path, kill_after, batch, segment_new, NEW)


@pytest.mark.parametrize("kill_after", [1, 81, 250, 299])
def test_a_re_index_killed_mid_way_is_resumed_by_the_next_opener_without_loss_or_doubles(
        tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "sessions.db"
    n = 150
    deploy_archive(path, n)
    proc = spawn_process(_reindex_and_die, str(path), kill_after, 40)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path, segment=segment_old, segment_id=None) as other:   # a write meanwhile
        other.upsert(SessionRecord("s-late", "session w901 after the crash", (), AT))
        other.delete("s0")
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert 0 < store.reindexed <= n
    indexed_once(path, {f"s{i}" for i in range(1, n)} | {"s-late"}, {"s-late": "w901"})


def _open_and_write(path: str, name: str, barrier: object, batch: int) -> None:
    reindex.BATCH_ROWS = batch
    barrier.wait(timeout=60)  # type: ignore[attr-defined]
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        for i in range(20):
            store.upsert(SessionRecord(f"{name}-{i}", f"session w{name}{i} by an opener", (), AT))


def test_two_processes_starting_the_re_index_at_once_index_every_row_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    n = 600
    deploy_archive(path, n)
    barrier = multiprocessing.get_context("spawn").Barrier(3)
    procs = [spawn_process(_open_and_write, str(path), name, barrier, 25) for name in ("a", "b", "c")]
    for p in procs:
        p.join(timeout=180)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.stats()["index_in_sync"]
        for name in ("a", "b", "c"):
            assert len(store.search(f'"xw{name}0"', 5)) == 1


def test_an_explicit_rebuild_clears_a_re_index_left_half_done(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    deploy_archive(path, 100)
    proc = spawn_process(_reindex_and_die, str(path), 50, 20)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path, segment=segment_new, segment_id=None) as store:   # never compares
        assert store.rebuild() == 100
        names = store.connection.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'reindex%' "
            "OR name LIKE 'sessions_fts_next%'").fetchall()
        assert names == []
        assert store.stats()["index_in_sync"]


Op = tuple[str, int, int]   # kind, which session, at which segment call


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 40), batch=st.integers(1, 7),
       ops=st.lists(st.tuples(st.sampled_from(["insert", "replace", "delete"]),
                              st.integers(0, 50), st.integers(1, 120)), max_size=25))
def test_writes_between_any_batches_leave_the_new_index_equal_to_the_sessions(
        tmp_path_factory: pytest.TempPathFactory, n: int, batch: int, ops: list[Op]) -> None:
    path = tmp_path_factory.mktemp("interleave") / "sessions.db"
    deploy_archive(path, n)
    writer = SessionStore(path, segment=segment_old)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    due = sorted(ops, key=lambda op: op[2])

    def between(call: int) -> None:
        while due and due[0][2] <= call:
            kind, which, _ = due.pop(0)
            sid = f"s{which}"
            if kind == "delete":
                writer.delete(sid)
            else:
                words = "rewritten" if kind == "replace" else "added"
                writer.upsert(SessionRecord(sid, f"session w{which} {words} at {call}", (), AT))

    reindex_between_batches(conn, batch, between, writer)
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.reindexed == 0
        stored = dict(store.connection.execute("SELECT rowid, summary FROM sessions").fetchall())
        indexed = store.connection.execute("SELECT rowid, summary FROM sessions_fts").fetchall()
        assert sorted(r[0] for r in indexed) == sorted(stored)        # each row once
        assert all(summary == segment_new(stored[rowid]) for rowid, summary in indexed)


def test_an_open_whose_re_index_another_tokenizer_keeps_replacing_still_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Two hermes-core versions on one file at once each drop the other's half-built index: an
    open gives up after a few restarts (the index as it was) instead of never returning."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 30)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 5)
    other = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    replaced = [0]

    def segment(text: str) -> str:
        if not conn.in_transaction:                # between batches: the other version starts
            replaced[0] += int(reindex._start(other, "another-tokenizer-9"))
        return segment_new(text)

    try:
        with caplog.at_level("WARNING", logger="hermes_core.memory"):
            reindex.run(conn, segment, NEW)
    finally:
        conn.close()
        other.close()
    assert 0 < replaced[0] <= 2 * reindex.MAX_STARTS * 5 * 2
    assert "keeps being replaced" in caplog.text
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:   # a later open finishes
        assert store.reindexed == 30
    indexed_once(path, {f"s{i}" for i in range(30)})


def _fold_reindex_and_die(path: str, kill_after: int, batch: int) -> None:
    open_and_die(path, kill_after, batch, segment_for_index,
                 f"hermes-tokenize-{tokenizer_key()}.{segment_key()}{passages.LAYOUT}")


def _before_folding(text: str) -> str:
    """How tokenizer 3 indexed Chinese: jieba over the characters as written."""
    import jieba
    return " ".join(w for w in jieba.cut_for_search(text.lower()) if w.strip())


@pytest.mark.parametrize("kill_after", [1, 45, 119])
def test_the_re_index_that_folds_traditional_chinese_survives_a_kill_9_and_finds_every_row(
        tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "sessions.db"
    n = 60
    before = f"hermes-tokenize-3.{SEGMENT_VERSION}{passages.LAYOUT}"
    texts = {f"s{i}": f"第{i}號會議室的數據庫連接錯誤 case{i}" for i in range(n)}
    with SessionStore(path, segment=_before_folding, segment_id=before) as old:
        old.upsert_many([SessionRecord(sid, t, (), AT) for sid, t in texts.items()])
    proc = spawn_process(_fold_reindex_and_die, str(path), kill_after, 25)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path) as store:
        assert 0 < store.reindexed <= n
        hits = store.search('"数据库"', n + 1)
        assert sorted(h.session_id for h in hits) == sorted(texts)
        assert {sid: (r.summary if (r := store.get(sid)) else None) for sid in texts} == texts
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == n
    with SessionStore(path) as again:
        assert again.reindexed == 0


@pytest.mark.parametrize("kill_after", [1, 37, 89])
def test_the_re_index_to_family_and_letter_emoji_terms_survives_a_kill_9_and_finds_every_row(
        tmp_path: Path, kill_after: int) -> None:
    """An archive of segment version 11 (no 👪 people, no ℹ term, 葛󠄀城 cut at its selector)
    re-indexed by the installed segmenter, killed mid-way: the next open finishes it, every row
    is found by the new terms, each once, and the open after re-indexes nothing."""
    path = tmp_path / "sessions.db"
    n = 45
    kinds = ("dinner 👪 on sunday {i}", "the \u2139\ufe0f panel moved {i}", "和葛\U000E0100城开会 {i}")
    texts = {f"s{i}": kinds[i % 3].format(i=i) for i in range(n)}
    before = f"hermes-tokenize-{tokenizer_key()}.11{passages.LAYOUT}"
    with SessionStore(path, segment=segment_before_symbols, segment_id=before) as old:
        old.upsert_many([SessionRecord(sid, t, (), AT) for sid, t in texts.items()])
    proc = spawn_process(_fold_reindex_and_die, str(path), kill_after, 10)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path) as store:
        assert 0 < store.reindexed <= n
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == n
        for match, kind in ((ranking.match_term(symbol_terms("👨")[0]), 0),
                            (ranking.match_term(symbol_terms("\u2139")[0]), 1), ('"葛城"', 2)):
            found = sorted(h.session_id for h in store.search(match, n + 1))
            assert found == sorted(sid for i, sid in enumerate(texts) if i % 3 == kind), match
    with SessionStore(path) as again:
        assert again.reindexed == 0


def test_an_archive_indexed_before_symbols_and_the_index_row_trigger_is_re_indexed_once(
        tmp_path: Path) -> None:
    """An older archive: emoji and punctuation-only sessions have no index term, no trigger
    notes edited index rows, and one was edited before. The versioned re-index (the segmenter's
    id moved) makes both findable, drops the edit, and leaves the trigger watching."""
    path = tmp_path / "sessions.db"
    old_id = f"hermes-tokenize-{TOKENIZER_VERSION}.2{passages.LAYOUT}"
    with SessionStore(path, segment=segment_before_symbols, segment_id=old_id) as store:
        store.upsert_many([SessionRecord("rocket", "🚀🚀", (), 1.0),
                           SessionRecord("ask", "？？？", (), 1.0),
                           SessionRecord("plain", "deploy notes for the cluster", (), 1.0)])
        store.connection.execute("DROP TRIGGER index_drift_on_index")
        rowid = store.connection.execute(
            "SELECT rowid FROM sessions WHERE session_id = 'plain'").fetchone()[0]
        store.connection.execute("UPDATE sessions_fts SET summary = 'planted okapi' WHERE rowid = ?",
                                 (rowid,))
        assert store.search(ranking.match_term(symbol_terms("🚀")[0]), 5) == []
    with SessionStore(path) as store:
        assert store.reindexed == 3

        def found(text: str) -> list[str]:
            terms = [ranking.match_term(t) for t in ranking.query_terms(text)]
            return [h.session_id for h in store.search(terms, 5)]

        assert found("🚀") == ["rocket"] and found("???") == ["ask"]
        assert found("okapi") == [] and found("cluster") == ["plain"]
        assert store.connection.execute("SELECT 1 FROM sqlite_master WHERE name ="
                                        " 'index_drift_on_index'").fetchone() is not None
    with SessionStore(path) as store:
        assert store.reindexed == 0
