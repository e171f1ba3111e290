"""An index set apart from the sessions by writers outside hermes-core is found and repaired by
the next open (or a later write of a store kept open), bounded in cost, and no session is lost."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.episodic import drift, passages
from hermes_core.agent.episodic.retention import RetentionPolicy
from hermes_core.agent.episodic.store import SessionRecord, SessionStore, content_hash_of

AT = 1_800_000_000.0
SID = "lower-1"


def _long(j: int) -> str:
    """About 200 tokens, every one naming its session and place: any passage is findable."""
    return " ".join(f"l{j}w{k}" for k in range(200))


def _records() -> list[SessionRecord]:
    recs = [SessionRecord(f"s{i}", f"session w{i} about deploys", ("ops",), AT + i)
            for i in range(50)]
    recs += [SessionRecord(f"l{j}", _long(j), (), AT + 100 + j) for j in range(3)]
    return recs


def _open(path: Path, segment_id: str = SID) -> SessionStore:
    return SessionStore(path, segment=str.lower, segment_id=segment_id)


def _drift(path: Path) -> None:
    """Five kinds of disagreement, made by direct SQL as a script or the sqlite3 shell would."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        rowid = dict(conn.execute("SELECT session_id, rowid FROM sessions").fetchall())
        # a session with no index rows: never found
        conn.execute("DELETE FROM sessions_fts WHERE rowid = ?", (rowid["s3"],))
        # a session deleted with its passages left in the index (its words still in the file)
        conn.execute("DELETE FROM sessions WHERE session_id = 'l0'")
        # a session updated in place: its index rows hold the old words
        conn.execute("UPDATE sessions SET summary = 'session now about zebras' WHERE "
                     "session_id = 's5'")
        # a middle passage of a long session gone
        conn.execute("DELETE FROM sessions_fts WHERE rowid = ?",
                     (passages.passage_rowid(rowid["l1"], 2),))
        # a session inserted beside hermes-core, not indexed
        conn.execute("INSERT INTO sessions(memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " ('m', 's-outside', 'written outside about walrus', '', ?, 1.0, ?,"
                     " 'manual', 0)", (AT, content_hash_of("written outside about walrus")))
    finally:
        conn.close()


def _healed(path: Path) -> None:
    with _open(path) as store:
        conn = store.connection
        ids = {r[0] for r in conn.execute("SELECT session_id FROM sessions")}
        assert ids == {f"s{i}" for i in range(50)} | {"l1", "l2", "s-outside"}   # none lost

        def found(word: str) -> list[str]:
            return [h.session_id for h in store.search(f'"{word}"', 5)]

        assert found("w3") == ["s3"]
        assert found("zebras") == ["s5"] and found("w5") == []
        assert found("l0w150") == [] and found("l0w0") == []
        assert found("l1w75") == ["l1"] and found("l1w199") == ["l1"]
        assert found("walrus") == ["s-outside"]
        # each session's index rows are its passages, and no row names a session that is gone
        for rowid, summary in conn.execute("SELECT rowid, summary FROM sessions").fetchall():
            n = conn.execute("SELECT COUNT(*) FROM sessions_fts WHERE rowid = ? OR rowid BETWEEN"
                             " ? AND ?", (rowid, passages.passage_rowid(rowid, 63),
                                           passages.passage_rowid(rowid, 1))).fetchone()[0]
            assert n == len(passages.split(summary.lower()))
        orphans = conn.execute(f"SELECT COUNT(*) FROM sessions_fts WHERE "
                               f"{passages.session_rowid_sql()} NOT IN "
                               "(SELECT rowid FROM sessions)").fetchone()[0]
        assert orphans == 0
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
        stats = store.stats()
        assert stats["index_in_sync"] and stats["indexed"] == stats["sessions"] == len(ids)


def test_an_index_drifted_by_direct_sql_is_healed_at_the_next_open_with_no_session_lost(
        tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
    _drift(path)
    _healed(path)


def test_an_index_drifted_before_its_in_place_cut_is_cut_and_healed_by_one_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file indexed before passages (one row a session), drifted, then opened by a version
    that cuts it into passages in place: the same open cuts it and heals it."""
    path = tmp_path / "sessions.db"
    with monkeypatch.context() as m:
        m.setattr(passages, "SPLIT_ABOVE", 10**9)          # no passages: the earlier layout
        with _open(path) as store:
            store.upsert_many(_records())
        assert passages.extra(sqlite3.connect(str(path))) == 0
    _drift(path)
    with _open(path, SID + passages.LAYOUT) as store:
        assert store.connection.execute(
            "SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (SID + passages.LAYOUT,)
    path_sid = SID + passages.LAYOUT
    with SessionStore(path, segment=str.lower, segment_id=path_sid) as store:
        assert store.stats()["index_in_sync"]
    monkeypatch.setattr("tests.agent.episodic.test_drift.SID", path_sid)
    _healed(path)


def test_healing_a_large_drift_is_spread_over_opens_and_writes_in_bounded_steps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"session w{i} about deploys", (), AT + i)
                           for i in range(100)])
    with sqlite3.connect(str(path)) as conn:
        conn.execute("DELETE FROM sessions_fts")           # the whole index lost
    monkeypatch.setattr(drift, "CHUNK", 10)
    monkeypatch.setattr(drift, "OPEN_STEPS", 2)

    def findable(store: SessionStore) -> int:
        return sum(bool(store.search(f'"w{i}"', 1)) for i in range(100))

    with _open(path) as store:                              # a server: opened once
        assert findable(store) == 20                        # two chunks of ten
        store.upsert(SessionRecord("new", "session wnew written", (), AT))
        assert findable(store) == 30                        # a write carries it on by one
        for i in range(8):
            store.upsert(SessionRecord(f"new{i}", f"session wnew{i} written", (), AT))
        assert findable(store) == 100
        assert store.stats()["index_in_sync"]
        assert not drift.due(store.connection)


def test_a_store_kept_open_notices_drift_made_after_its_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
        _drift(path)
        for i in range(drift.CHECK_EVERY):
            store.upsert(SessionRecord(f"late{i}", f"late session {i} about kites", (), AT))
        assert store.stats()["index_in_sync"]
        assert [h.session_id for h in store.search('"walrus"', 5)] == ["s-outside"]


def test_a_repeat_of_a_session_another_tool_edited_keeps_the_note_that_heals_it(
        tmp_path: Path) -> None:
    """Dating the kept copy of a repeated summary cleared every drift note of that session as
    its own, so an edit another tool had made of the copy (a tag added by a script), noted
    and waiting for this store's next heal, was never indexed: its tag found nothing."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=str.lower, segment_id=SID, clock=lambda: AT + 600) as store:
        store.upsert_many(_records())
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            conn.execute("UPDATE sessions SET tags = 'ops,walrus' WHERE session_id = 's1'")
        finally:
            conn.close()
        repeat = store.upsert(SessionRecord("again", "session w1 about deploys", (), AT + 500))
        assert (repeat.status, repeat.duplicate_of) == ("duplicate", "s1")
        for i in range(drift.CHECK_EVERY):
            store.upsert(SessionRecord(f"late{i}", f"late session {i} about kites", (), AT))
        assert [h.session_id for h in store.search('"walrus"', 5)] == ["s1"]
        assert store.get("s1").created_at == AT + 500   # type: ignore[union-attr]


def test_an_open_of_an_index_in_step_compares_no_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
        store.upsert(SessionRecord("s1", "session w1 rewritten", (), AT))   # replaced: not drift

    def compared(*_: object) -> None:
        raise AssertionError("rows compared")

    monkeypatch.setattr(drift, "_disagreeing", compared)
    monkeypatch.setattr(drift, "_rederive", compared)
    with _open(path) as store:
        assert not drift.due(store.connection)


def _write_while_healing(path: str, name: str, barrier: object) -> None:
    """A server process: heals in steps of ten sessions, one an open and one a write."""
    drift.CHUNK, drift.OPEN_STEPS = 10, 1
    barrier.wait(timeout=60)  # type: ignore[attr-defined]
    with _open(Path(path)) as store:
        for i in range(40):
            store.upsert(SessionRecord(f"{name}{i}", f"session {name}w{i} by a server", (), AT))


def test_two_processes_healing_one_index_while_writing_leave_it_in_step(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"session w{i} about deploys", (), AT + i)
                           for i in range(150)] + _records()[50:])
    with sqlite3.connect(str(path)) as conn:
        conn.execute("DELETE FROM sessions_fts WHERE rowid % 3 = 0")   # a third of the index lost
        conn.execute("DELETE FROM sessions WHERE session_id = 'l1'")    # passages left behind
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_write_while_healing, args=(str(path), n, barrier))
             for n in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
    assert [p.exitcode for p in procs] == [0, 0]
    with sqlite3.connect(str(path)) as conn:     # healed by the two: nothing left for an open
        assert not drift.due(conn)
    with _open(path) as store:
        stats = store.stats()
        assert stats["index_in_sync"] and stats["sessions"] == 150 + 2 + 80
        for word in ("w0", "w3", "w147", "aw39", "bw0", "l2w150"):
            assert len(store.search(f'"{word}"', 5)) == 1, word
        assert store.search('"l1w10"', 5) == []
        store.connection.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
        assert not drift.due(store.connection)


def test_index_rows_of_sessions_deleted_outside_are_cleared_a_bounded_number_a_transaction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session deleted by direct SQL leaves only index rows: a sweep step reads and clears
    at most about ``CHUNK`` sessions' rows, not the whole index in one transaction."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"session w{i} about deploys", (), AT + i)
                           for i in range(60)] + _records()[50:])
    with sqlite3.connect(str(path)) as conn:
        conn.execute("DELETE FROM sessions")
        conn.execute("INSERT INTO sessions_fts(rowid, summary, tags, session_id, created_at,"
                     " relevance_score) VALUES (?, 'planted', '', 'x', 0, 1)", (2**62,))
    monkeypatch.setattr(drift, "CHUNK", 10)
    monkeypatch.setattr(drift, "OPEN_STEPS", 1)
    cleared: list[int] = []
    rederive = drift._rederive

    def counted(conn: sqlite3.Connection, segment: drift.Segment, rowids: list[int],
                ahead: drift.Ahead) -> None:
        cleared.append(len(rowids))
        rederive(conn, segment, rowids, ahead)

    monkeypatch.setattr(drift, "_rederive", counted)
    opens = 0
    while True:
        with _open(path) as store:
            opens += 1
            if not drift.due(store.connection):
                break
    assert max(cleared) <= 3 * 10 and opens > 3
    with _open(path) as store:
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone() == (0,)
        assert store.stats()["index_in_sync"]


def test_a_heal_step_segments_a_bounded_number_of_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segmenting is the slow part (jieba): a step re-derives at most ``REPAIR_ROWS`` sessions,
    whether noted by the triggers or found by a sweep, and the rest waits for later steps."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"session w{i} about deploys", (), AT + i)
                           for i in range(60)])
    with sqlite3.connect(str(path)) as conn:
        conn.execute("DELETE FROM sessions_fts")                          # swept
        conn.execute("UPDATE sessions SET summary = summary || ' again'")   # noted
    monkeypatch.setattr(drift, "REPAIR_ROWS", 7, raising=False)
    monkeypatch.setattr(drift, "OPEN_STEPS", 1)
    segmented: list[str] = []

    def segment(text: str) -> str:
        segmented.append(text)
        return text.lower()

    steps = 0
    while True:
        segmented.clear()
        with SessionStore(path, segment=segment, segment_id=SID) as store:
            steps += 1
            assert len(segmented) <= 2 * 7                 # summary and tags of seven sessions
            if not drift.due(store.connection):
                break
    assert steps >= 60 // 7
    with _open(path) as store:
        assert all(len(store.search(f'"w{i}"', 2)) == 1 for i in range(60))
        assert store.stats()["index_in_sync"]


def _damage(path: Path, column: str, value: object) -> None:
    """Another tool writes a summary or tags cell as a blob or a number (SQLite lets it)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute(f"UPDATE sessions SET {column} = ? WHERE session_id = 's1'", (value,))
    finally:
        conn.close()


@pytest.mark.parametrize("column, value", [("summary", b"session w1 about caches"),
                                           ("tags", b"ops,cache"), ("summary", 12345),
                                           ("tags", 3.5)])
def test_a_session_whose_text_another_tool_wrote_as_no_text_is_healed_and_the_store_opens(
        tmp_path: Path, column: str, value: object) -> None:
    """The trigger notes the updated session and the next open re-derives it: segmenting the
    raw cell raised TypeError/AttributeError, so the store (and ``memory rebuild``, which opens
    one) could not be opened at all while the note stayed."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
    _damage(path, column, value)
    with _open(path) as store:
        assert not drift.due(store.connection)
        assert store.count() == 53
        assert [h.session_id for h in store.search('"w2"', 5)] == ["s2"]
        if isinstance(value, bytes):
            word = '"caches"' if column == "summary" else '"cache"'
            assert [h.session_id for h in store.search(word, 5)] == ["s1"]


def test_a_kept_store_s_write_heals_a_session_another_tool_wrote_as_a_blob(tmp_path: Path) -> None:
    """The same through a write's upkeep: the TypeError escaped ``upsert`` after its commit, so
    a server was told a stored session had failed, on every write while the note stayed."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
        _damage(path, "summary", b"session w1 about caches")
        for i in range(drift.CHECK_EVERY):
            store.upsert(SessionRecord(f"late{i}", f"late session {i} about kites", (), AT))
        assert not drift.due(store.connection)
        assert [h.session_id for h in store.search('"caches"', 5)] == ["s1"]


def test_a_long_session_planted_past_the_passage_range_is_indexed_and_the_store_opens(
        tmp_path: Path) -> None:
    """A session another tool inserted at rowid 2**60 (SQLite then hands every later insert a
    rowid after it) has no room for passages at negative rowids: its note's heal raised
    OverflowError, so no open succeeded, and a long session written after it could not be
    stored. Such a session is indexed as one row, its last word findable."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
    long = _long(7)
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'l7', ?, '', ?, 1.0, ?, 'manual', 0)",
                     (2**60, long, AT, content_hash_of(long)))
    finally:
        conn.close()
    with _open(path) as store:
        assert not drift.due(store.connection)
        assert [h.session_id for h in store.search('"l7w199"', 5)] == ["l7"]
        store.upsert(SessionRecord("l8", _long(8), (), AT))
        assert [h.session_id for h in store.search('"l8w199"', 5)] == ["l8"]
        assert store.stats()["index_in_sync"]


def test_a_sweep_goes_past_sessions_after_a_rowid_planted_past_the_passage_range(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep's cursor at such a rowid asked SQLite for passages below -(cursor + 1) * 64, out
    of its range: OverflowError on every open while the counts disagreed."""
    monkeypatch.setattr(drift, "CHUNK", 10)
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        conn = store.connection
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'planted', 'planted here', '', ?, 1.0, ?, 'manual', 0)",
                     (2**60, AT, content_hash_of("planted here")))
        store.upsert_many([SessionRecord(f"h{i}", f"high session h{i}w", (), AT)
                           for i in range(30)])
        conn.execute("DELETE FROM sessions_fts WHERE session_id IN ('h5', 'h25')")
    with _open(path) as store:
        assert not drift.due(store.connection)
        assert [h.session_id for h in store.search('"h25w"', 5)] == ["h25"]
        assert [h.session_id for h in store.search('"planted"', 5)] == ["planted"]
        assert store.stats()["index_in_sync"]


def test_healing_a_session_planted_at_a_negative_rowid_removes_no_other_session_s_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The passage range of rowid -1 is rowids 1..63: the first rows of real sessions. Healing
    the planted session's note deleted them (and took them off the passage count), so until a
    later sweep put them back they were never found."""
    monkeypatch.setattr(drift, "OPEN_STEPS", 1)
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
        store.connection.execute(
            "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
            " relevance_score, content_hash, source, message_count) VALUES"
            " (-1, 'm', 'below', 'planted below zero', '', ?, 1.0, ?, 'manual', 0)",
            (AT, content_hash_of("planted below zero")))
        extra = passages.extra(store.connection)
    with _open(path) as store:
        assert [h.session_id for h in store.search('"w2"', 5)] == ["s2"]
        assert [h.session_id for h in store.search('"planted"', 5)] == ["below"]
        assert passages.extra(store.connection) == extra


def test_counts_a_full_sweep_cannot_meet_are_swept_and_logged_once_while_writes_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An index row no sweep reads (here one planted at rowid 0) keeps the counts
    apart by one. The note of a finished sweep held both counts, so every later write (which
    moves both) made them "new" and started another whole sweep and warning: at every open and
    every CHECK_EVERY writes, for good."""
    path = tmp_path / "sessions.db"
    with _open(path) as store:
        store.upsert_many(_records())
        store.connection.execute("INSERT INTO sessions_fts(rowid, summary, tags, session_id,"
                                 " created_at, relevance_score) VALUES (0, 'x', '', 'x', 1, 1)")
        # its note lost (a row planted before the index-row trigger existed): only counts see it
        store.connection.execute("DELETE FROM index_drift")
    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        with _open(path) as store:
            sweeps = []
            real = drift._disagreeing
            monkeypatch.setattr(drift, "_disagreeing",
                                lambda *a: sweeps.append(1) or real(*a))
            for i in range(3 * drift.CHECK_EVERY):
                store.upsert(SessionRecord(f"late{i}", f"late session {i} about kites", (), AT))
        with _open(path):
            pass
    assert sweeps == []
    assert sum("still disagrees" in r.getMessage() for r in caplog.records) == 1


def _edit_index_in_place(path: Path) -> None:
    """Index rows rewritten by direct SQL with every count left equal: a first row's words, a
    later passage's words, and a first row's stamp."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        rowid = dict(conn.execute("SELECT session_id, rowid FROM sessions").fetchall())
        conn.execute("UPDATE sessions_fts SET summary = 'planted okapi' WHERE rowid = ?",
                     (rowid["s7"],))
        conn.execute("UPDATE sessions_fts SET summary = 'planted narwhal' WHERE rowid = ?",
                     (passages.passage_rowid(rowid["l2"], 1),))
        conn.execute("UPDATE sessions_fts SET created_at = 1.0 WHERE rowid = ?", (rowid["s8"],))
    finally:
        conn.close()


def test_an_index_row_edited_in_place_with_equal_counts_is_healed_at_the_next_open(
        tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with _open(path) as store:
        store.upsert_many(_records())
    _edit_index_in_place(path)
    with _open(path) as store:
        assert store.stats()["index_in_sync"]                    # the counts never disagreed

        def found(word: str) -> list[str]:
            return [h.session_id for h in store.search(f'"{word}"', 5)]

        assert found("okapi") == [] and found("narwhal") == []
        assert found("w7") == ["s7"] and found("l2w70") == ["l2"]
        assert [h.created_at for h in store.search('"w8"', 5)] == [AT + 8]
        assert store.connection.execute("SELECT COUNT(*) FROM index_drift").fetchone()[0] == 0


def test_our_own_writes_leave_no_note_to_heal(tmp_path: Path) -> None:
    """Every index row hermes-core writes (upsert, replace, long summaries, a rebuild, a forget)
    clears its own note in the same transaction: an open after them has nothing to heal."""
    path = tmp_path / "m.db"
    with _open(path) as store:
        store.upsert_many(_records())
        store.upsert(SessionRecord("s1", "replaced with other words", (), AT))
        store.delete("s2")
        assert store.connection.execute("SELECT COUNT(*) FROM index_drift").fetchone()[0] == 0
        store.rebuild()
        store.upsert(SessionRecord("s9", _long(9), (), AT))
        assert store.connection.execute("SELECT COUNT(*) FROM index_drift").fetchone()[0] == 0
        assert not drift.due(store.connection)


def _low(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM sessions WHERE rowid < 1").fetchone()[0])


def _count_moves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sessions each write transaction moves from below rowid 1, appended as each ends."""
    moved: list[int] = []
    real = drift.reindex.immediate

    @contextlib.contextmanager
    def watched(conn: sqlite3.Connection) -> Iterator[None]:
        with real(conn):
            before = _low(conn)
            yield
            moved.append(before - _low(conn))

    monkeypatch.setattr(drift.reindex, "immediate", watched)
    return moved


def _plant_below_rowid_one(path: Path, n: int) -> None:
    """A store with one session, and ``n`` sessions ``low{k}`` ("planted word{k}x") another tool
    inserted at rowids 0, -1, ... (where :func:`drift.rehome` moves them from)."""
    with _open(path) as store:
        store.upsert(SessionRecord("s", "a plain session about kites", (), 1.0))
        store.connection.executemany(
            "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
            " relevance_score, content_hash, source, message_count) VALUES"
            " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)",
            [(-k, f"m{k}", f"low{k}", f"planted word{k}x", f"h{k}") for k in range(n)])


def test_more_sessions_below_rowid_one_than_an_open_moves_raise_no_rebuild_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``rehome`` moves ``REPAIR_ROWS`` sessions an open; until the next open moves the rest,
    their index rows disagree by design, which the full check took for damage only a rebuild
    mends, and said so."""
    path = tmp_path / "sessions.db"
    _plant_below_rowid_one(path, 2 * drift.REPAIR_ROWS + 50)
    with caplog.at_level(logging.WARNING, logger="hermes_core.memory"):
        for _ in range(3):
            _open(path).close()
    assert not [r.getMessage() for r in caplog.records if "rebuild" in r.getMessage()]
    with _open(path) as store:
        for k in (0, 2 * drift.REPAIR_ROWS + 49):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]


def _plant_kites(conn: sqlite3.Connection, rowid: int) -> None:
    """Session "planted" ("planted kites") inserted at ``rowid`` as another tool would."""
    conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                 " relevance_score, content_hash, source, message_count) VALUES"
                 " (?, 'm', 'planted', 'planted kites', '', 1.0, 1.0, 'h', 'manual', 0)", (rowid,))


def _rehome_and_die(path: str, kill_at: int) -> None:
    """Open ``path`` and SIGKILL this process as ``rehome``'s ``kill_at``-th move (an insert of a
    moved session) starts: run in a spawned process."""
    real, seen = drift.rehome, [0]

    def dying(sql: str) -> None:
        if sql.startswith("INSERT INTO sessions("):
            seen[0] += 1
            if seen[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def traced(conn: sqlite3.Connection, *args: Any, **kwargs: Any) -> int:
        conn.set_trace_callback(dying)
        try:
            return real(conn, *args, **kwargs)
        finally:
            conn.set_trace_callback(None)

    drift.rehome = traced      # this process only (spawned), which dies in it
    _open(Path(path))


@pytest.mark.parametrize("kill_at", [1, drift.REPAIR_ROWS + 1, 2 * drift.REPAIR_ROWS + 77])
def test_a_rehome_killed_mid_way_loses_nothing_and_the_next_open_finds_every_session(
        tmp_path: Path, kill_at: int) -> None:
    """Each batch of moves is one transaction with its notes: a SIGKILL inside one leaves the
    batches before it moved and the rest where they were, and the next open moves and finds all."""
    path = tmp_path / "sessions.db"
    n = 3 * drift.REPAIR_ROWS + 11
    _plant_below_rowid_one(path, n)
    proc = multiprocessing.get_context("spawn").Process(target=_rehome_and_die,
                                                        args=(str(path), kill_at))
    proc.start()
    proc.join(120)
    assert proc.exitcode == -signal.SIGKILL
    with _open(path) as store:
        ids = {r[0] for r in store.connection.execute("SELECT session_id FROM sessions")}
        assert ids == {"s"} | {f"low{k}" for k in range(n)}
        assert _low(store.connection) == 0
        for k in range(0, n, 37):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]


def test_a_session_planted_at_another_s_passage_rowid_is_moved_and_both_are_found(
        tmp_path: Path) -> None:
    """``rehome`` removed the index row at the planted session's rowid: there, the last passage
    of a long session. That session was no longer found by the words of that passage, and the
    check said in sync (its passages still numbered with no gap)."""
    path = tmp_path / "sessions.db"
    long_text = " ".join(f"alpha{i}" for i in range(300)) + " zebraword"
    with _open(path) as store:
        store.upsert(SessionRecord("long", long_text, (), 1.0))
        last = store.connection.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
        assert last < -passages.MAX_PASSAGES          # a passage of the session at rowid 1
        _plant_kites(store.connection, last)
    with _open(path) as store:
        assert [h.session_id for h in store.search("zebraword", 3)] == ["long"]
        assert [h.session_id for h in store.search("kites", 3)] == ["planted"]
        assert store.stats()["index_in_sync"]


@pytest.mark.parametrize("how", ["forget", "rewrite", "record", "prune"])
def test_forgetting_or_rewriting_a_session_an_open_left_below_rowid_one_keeps_the_passage_there(
        tmp_path: Path, how: str) -> None:
    """An open leaves sessions below rowid 1 past its share (``REHOME_OPEN_ROWS``, as many again
    moved by its heal). Forgetting
    one, or rewriting it to take a key out, removed the index row at its rowid: there, a passage
    of the long session owning that rowid, which was then found by no word of it. Recording it
    again under its id, or a prune of the oldest, did the same (``_upsert_one``, ``retention``)."""
    path = tmp_path / "sessions.db"
    long_text = " ".join(f"alpha{i}" for i in range(300)) + " zebraword"
    with _open(path) as store:
        store.upsert(SessionRecord("long", long_text, (), 1.0))
        last = store.connection.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
        _plant_kites(store.connection, last)        # moved last: the highest below 1
        store.connection.executemany(
            "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
            " relevance_score, content_hash, source, message_count) VALUES"
            " (?, ?, ?, 'planted filler', '', 1.0, 1.0, ?, 'manual', 0)",
            [(-1000 - k, f"m{k}", f"low{k}", f"h{k}") for k in range(2 * drift.REHOME_OPEN_ROWS + 1)])
    with _open(path) as store:
        assert store.connection.execute(
            "SELECT rowid FROM sessions WHERE session_id = 'planted'").fetchone()[0] == last
        if how == "forget":
            assert store.delete("planted")
        elif how == "record":    # recorded again under its id: the old row leaves
            assert store.upsert(SessionRecord("planted", "planted [gone]", (), 1.0)).status == "replaced"
        elif how == "prune":     # the oldest go: every one still below rowid 1 (stamps equal)
            low, total = store.connection.execute(
                "SELECT SUM(rowid < 1), COUNT(*) FROM sessions").fetchone()
            assert store.prune(RetentionPolicy(max_sessions=total - low)) == low
        else:
            assert store.rewrite_holding({"k": "kites"}, lambda r: SessionRecord(
                r.session_id, r.summary.replace("kites", "[gone]"), r.tags, r.created_at,
                r.relevance_score, r.source, r.message_count)) == 1
        assert [h.session_id for h in store.search("zebraword", 3)] == ["long"]
        assert store.search("kites", 3) == []


def test_an_open_moves_a_bounded_share_of_sessions_below_rowid_one_and_writes_move_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An open moved every session below rowid 1: its time grew with them without bound (32,000
    took 6.6 s; ``benchmarks/memory_rehome.py``). It moves ``REHOME_OPEN_ROWS`` now, and its
    heal's steps (``OPEN_STEPS`` batches, noted rows moved as they are indexed) at most as many
    again; the writes of a store kept open move and index the rest, a batch a write (a seek
    finds one, noted or not), and every session is found, none lost."""
    path = tmp_path / "sessions.db"
    n = 3 * drift.REHOME_OPEN_ROWS + 7
    _plant_below_rowid_one(path, n)
    real = drift.reindex.immediate
    moved = _count_moves(monkeypatch)
    with _open(path) as store:
        monkeypatch.setattr(drift.reindex, "immediate", real)
        assert sum(moved) <= 2 * drift.REHOME_OPEN_ROWS and max(moved) <= drift.REPAIR_ROWS
        assert _low(store.connection) >= n - 2 * drift.REHOME_OPEN_ROWS
        writes = 0
        while _low(store.connection) or store.connection.execute(
                "SELECT 1 FROM index_drift LIMIT 1").fetchone():
            assert writes < 40, "the writes do not carry the move on"
            store.upsert(SessionRecord(f"w{writes}", f"a later session {writes}", (), 1.0))
            writes += 1
        ids = {r[0] for r in store.connection.execute("SELECT session_id FROM sessions")}
        assert ids >= {f"low{k}" for k in range(n)}
        for k in range(0, n, 211):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]


def test_sessions_below_rowid_one_past_an_open_s_share_are_moved_and_found_by_later_opens(
        tmp_path: Path) -> None:
    """With no write in between, each open moves and indexes its share: none is left behind."""
    path = tmp_path / "sessions.db"
    n = drift.REHOME_OPEN_ROWS + drift.REPAIR_ROWS + 3
    _plant_below_rowid_one(path, n)
    _open(path).close()
    with _open(path) as store:
        assert _low(store.connection) == 0
        for k in (0, drift.REHOME_OPEN_ROWS + 1, n - 1):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]


def test_a_thousand_sessions_below_rowid_one_are_moved_and_found_after_one_open_in_short_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rehome`` moved ``REPAIR_ROWS`` sessions an open, so 1,000 took five opens to be found.
    Now one open moves them all, a batch a write transaction (committed between, so another
    writer waits at most one batch), and its heal indexes them."""
    path = tmp_path / "sessions.db"
    n = 1_000
    _plant_below_rowid_one(path, n)
    moved = _count_moves(monkeypatch)
    with _open(path) as store:
        assert _low(store.connection) == 0
        assert sum(moved) == n and max(moved) <= drift.REPAIR_ROWS
        for k in (0, 499, n - 1):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]
        assert store.connection.execute("SELECT COUNT(*) FROM index_drift").fetchone()[0] == 0


def test_a_session_planted_at_a_passage_rowid_while_a_store_is_open_is_moved_by_the_writes_heal(
        tmp_path: Path) -> None:
    """The heal of a store kept open re-derived a noted row below 1 where it sat: the planted
    session's text replaced the last passage of the session owning that rowid, so a search for
    its words found the wrong session ("long") and "zebraword" found none until the heal came
    round again, and the planted session was found by no search until the next open. The heal
    moves it as an open's ``rehome`` does."""
    path = tmp_path / "sessions.db"
    long_text = " ".join(f"alpha{i}" for i in range(300)) + " zebraword"
    with _open(path) as store:
        store.upsert(SessionRecord("long", long_text, (), 1.0))
        last = store.connection.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
        other = sqlite3.connect(str(path), isolation_level=None)
        try:
            _plant_kites(other, last)
        finally:
            other.close()
        for i in range(drift.CHECK_EVERY + 4):      # the check comes round, then a step a write
            store.upsert(SessionRecord(f"w{i}", f"a later session {i}", (), 1.0))
            assert "long" not in [h.session_id for h in store.search("kites", 3)], i
            assert [h.session_id for h in store.search("zebraword", 3)] == ["long"], i
        assert [h.session_id for h in store.search("zebraword", 3)] == ["long"]
        assert [h.session_id for h in store.search("kites", 3)] == ["planted"]
        assert _low(store.connection) == 0
        assert store.stats()["index_in_sync"]


def _open_and_close(path: str) -> None:
    _open(Path(path)).close()


def test_two_processes_opening_at_once_move_each_session_below_rowid_one_once(
        tmp_path: Path) -> None:
    """Both openers count the rows below 1 and move them a batch a write transaction; each batch
    is selected under the write lock, so none is moved twice, copied or lost."""
    path = tmp_path / "sessions.db"
    n = 4 * drift.REPAIR_ROWS + 33
    _plant_below_rowid_one(path, n)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_open_and_close, args=(str(path),)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    with _open(path) as store:
        ids = [r[0] for r in store.connection.execute("SELECT session_id FROM sessions")]
        assert sorted(ids) == sorted(["s", *(f"low{k}" for k in range(n))])
        assert _low(store.connection) == 0
        for k in range(0, n, 41):
            assert [h.session_id for h in store.search(f'"word{k}x"', 3)] == [f"low{k}"]
        assert store.stats()["index_in_sync"]
