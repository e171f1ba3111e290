"""Tests of ``hermes_core/agent/episodic/counts.py``.

What ``memory stats`` shows is read from counters the writes keep and from FTS5's own row count,
so it costs the same at any archive size and stays exact through every kind of write.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from hermes_core.agent.episodic import counts
from hermes_core.agent.episodic.store import SessionRecord, SessionStore

NOW = 1_800_000_000.0


def plain(text: str) -> str:
    return text


def records(n: int, source: str = "model", start: int = 0) -> list[SessionRecord]:
    return [SessionRecord(f"{source}-{i}", f"{source} session {i} about topic{i % 50} and word{i}", (),
                          NOW - i, source=source) for i in range(start, start + n)]


def scanned(path: Path) -> tuple[int, dict[str, int], int]:
    """The counts the slow way, through a connection of the test's own."""
    conn = sqlite3.connect(path)
    try:
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        sources = dict(conn.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source"))
        indexed = conn.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0]
    finally:
        conn.close()
    return sessions, sources, indexed


def shown(store: SessionStore) -> tuple[int, dict[str, int], int]:
    s = store.stats()
    return s["sessions"], s["sources"], s["indexed"]


def stats_steps(store: SessionStore) -> int:
    """SQLite virtual-machine steps one ``stats()`` runs (counted, not timed)."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    store.connection.set_progress_handler(tick, 100)
    try:
        store.stats()
    finally:
        store.connection.set_progress_handler(None, 0)
    return steps[0]


def test_stats_costs_the_same_at_two_hundred_and_at_four_thousand_sessions(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "small.db", segment=plain) as small, \
            SessionStore(tmp_path / "large.db", segment=plain) as large:
        small.upsert_many(records(200))
        large.upsert_many(records(4_000))
        few, many = stats_steps(small), stats_steps(large)
        assert large.stats()["sessions"] == 4_000 and large.stats()["index_in_sync"]
    assert many <= few + 5, (few, many)


def test_counts_stay_exact_through_replace_duplicate_forget_rebuild_and_a_lost_index(
        tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as store:
        store.upsert_many(records(30, "model") + records(5, "manual", 100))
        store.upsert(SessionRecord("model-3", "a new summary for three", (), NOW, source="manual"))
        store.upsert(SessionRecord("manual-101", "model session 2 about topic2 and word2", (), NOW))  # dup
        store.upsert(SessionRecord("model-4", "model session 4 about topic4 and word4", (), NOW - 4,
                                   source="model"))  # unchanged
        assert store.delete("model-7") and not store.delete("model-7")
        for sid in ("manual-100", "manual-102", "manual-103", "manual-104", "model-3"):
            assert store.delete(sid)
        assert shown(store) == scanned(path) == (28, {"model": 28}, 28)
        assert store.rebuild() == 28 and shown(store) == scanned(path)
        store.connection.execute("DELETE FROM sessions_fts WHERE rowid IN "
                                 "(SELECT rowid FROM sessions LIMIT 3)")
        s = store.stats()
        assert (s["sessions"], s["indexed"], s["index_in_sync"]) == (28, 25, False)


def test_counts_stay_exact_with_writers_on_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SessionStore(path, segment=plain).close()

    def write(source: str) -> None:
        with SessionStore(path, segment=plain) as store:
            for at in range(0, 120, 4):
                store.upsert_many(records(4, source, at))
                if at % 20 == 0:
                    store.delete(f"{source}-{at}")

    threads = [threading.Thread(target=write, args=(s,)) for s in ("model", "manual", "import")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    with SessionStore(path, segment=plain) as store:
        assert shown(store) == scanned(path) == (3 * 114, {"model": 114, "manual": 114,
                                                             "import": 114}, 3 * 114)


def test_a_file_an_older_version_wrote_is_counted_once_when_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    with monkeypatch.context() as m:   # the version before the counters: no table, no triggers
        m.setattr(counts, "ensure", lambda conn: False)
        with SessionStore(path, segment=plain) as old:
            old.upsert_many(records(40, "model") + records(3, "manual", 100))
            old.delete("model-0")
    with SessionStore(path, segment=plain, read_only=True) as preview:   # cannot count: scans
        assert shown(preview) == scanned(path) == (42, {"model": 39, "manual": 3}, 42)
    assert counts.read_sources(sqlite3.connect(path)) is None
    with SessionStore(path, segment=plain) as store:
        assert shown(store) == scanned(path) == (42, {"model": 39, "manual": 3}, 42)
        store.upsert(SessionRecord("late", "written after the upgrade", (), NOW, source="import"))
    with SessionStore(path, segment=plain, read_only=True) as preview:
        assert shown(preview) == (43, {"model": 39, "manual": 3, "import": 1}, 43)


def test_a_writer_without_the_counting_code_still_keeps_the_counts(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, segment=plain) as store:
        store.upsert_many(records(10))
    conn = sqlite3.connect(path)   # an older hermes-core, or the sqlite3 shell
    with conn:
        conn.execute("DELETE FROM sessions WHERE session_id = 'model-1'")
        conn.execute("UPDATE sessions SET source = 'manual' WHERE session_id = 'model-2'")
    conn.close()
    with SessionStore(path, segment=plain, read_only=True) as store:
        assert store.stats()["sources"] == {"model": 8, "manual": 1}
        assert store.stats()["sessions"] == 9


def test_the_index_row_count_is_fts5s_own() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE sessions_fts USING fts5(summary, tags)")
    assert counts.indexed_rows(conn) == 0
    conn.executemany("INSERT INTO sessions_fts(summary, tags) VALUES (?, '')",
                     [(f"word {i}",) for i in range(300)])
    conn.commit()
    conn.execute("DELETE FROM sessions_fts WHERE rowid < 10")
    conn.commit()
    assert counts.indexed_rows(conn) == 291 == conn.execute(
        "SELECT COUNT(*) FROM sessions_fts").fetchone()[0]
