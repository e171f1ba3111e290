"""The SQLite store: migrations, WAL, refusing foreign/corrupted files, replace rules, concurrency."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.migrations import APPLICATION_ID, Migration
from hermes_core.agent.episodic.store import (
    SessionDatabaseMissing,
    SessionDatabaseUnusable,
    SessionRecord,
    SessionStore,
    memory_id_for,
    normalise_tags,
)
from hermes_core.errors import HermesError

NOW = 1_800_000_000.0


def rec(session_id: str, summary: str, tags: tuple[str, ...] = (), created_at: float = NOW) -> SessionRecord:
    return SessionRecord(session_id, summary, tags, created_at)


def test_fresh_database_schema_wal_and_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        conn = store.connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("SELECT version, applied_at FROM schema_version").fetchall() == [
            (v, NOW) for v in range(1, memory_migrations.LATEST_VERSION + 1)]
        cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions_fts)")]
        assert cols == ["summary", "tags", "session_id", "created_at", "relevance_score"]
    with SessionStore(path) as again:  # re-open applies nothing twice
        assert (again.connection.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0]
                == memory_migrations.LATEST_VERSION)


def test_failed_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration 2 exploded")

    old = memory_migrations.LATEST_VERSION
    monkeypatch.setattr(memory_migrations, "MIGRATIONS", (*memory_migrations.MIGRATIONS,
                                                          Migration(old + 1, "broken", broken)))
    monkeypatch.setattr(context_store, "LATEST_VERSION", old + 1)
    with pytest.raises(RuntimeError, match="exploded"):
        SessionStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == old
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None


def test_missing_database_with_create_false(tmp_path: Path) -> None:
    path = tmp_path / "none.db"
    with pytest.raises(SessionDatabaseMissing) as e:
        SessionStore(path, create=False)
    assert str(path) in str(e.value)
    assert not path.exists()


def test_empty_file_is_initialised(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch()
    with SessionStore(path) as store:
        assert store.count() == 0


def _assert_refused(path: Path, fragment: str) -> None:
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(SessionDatabaseUnusable) as e:
        SessionStore(path)
    assert isinstance(e.value, HermesError)
    assert str(path) in str(e.value)
    assert fragment in str(e.value)
    if before is not None:
        assert path.read_bytes() == before, "the file must never be overwritten"


def test_text_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_text("my important notes\n" * 50)
    _assert_refused(path, "is not an SQLite database")


def test_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.mkdir()
    _assert_refused(path, "is a directory")


def test_other_programs_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users(name) VALUES ('ada')")
    conn.commit()
    conn.close()
    _assert_refused(path, "another program's SQLite database (tables: users)")


def test_foreign_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    _assert_refused(path, "application_id 0x4d2")


def test_corrupted_pages_are_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("a", "some summary"))
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    raw[100:] = b"\xde\xad\xbe\xef" * ((len(raw) - 100) // 4)
    path.write_bytes(bytes(raw))
    _assert_refused(path, "corrupted")


def test_truncated_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"SQLite format 3\x00\x10\x00")
    _assert_refused(path, "truncated")


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (99, 'future', 0)")
    conn.commit()
    conn.close()
    _assert_refused(path, "newer than this hermes-core")


def test_insert_replace_unchanged_duplicate(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        first = store.upsert(rec("s1", "Deployed the API gateway", ("deploy",)))
        assert first.status == "inserted"
        assert first.memory_id == memory_id_for("s1") == SessionRecord("s1", "", (), 0).memory_id
        assert store.upsert(rec("s1", "Deployed  the API gateway", ("deploy",))).status == "unchanged"
        assert store.upsert(rec("s1", "Rolled back the API gateway", ("deploy",))).status == "replaced"
        assert store.count() == 1
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == 1
        assert store.search('"deployed"', 5) == []  # the old text left the index with its row
        assert [h.session_id for h in store.search('"rolled"', 5)] == ["s1"]
        dup = store.upsert(rec("s2", "Rolled back the API gateway"))
        assert (dup.status, dup.duplicate_of) == ("duplicate", "s1")
        assert store.count() == 1
        assert store.upsert(rec("s1", "Rolled back the API gateway", ("deploy", "rollback"))).status \
            == "replaced"  # same text, new tags: stored anew
        assert store.get("s1") is not None and store.get("s1").tags == ("deploy", "rollback")  # type: ignore[union-attr]


def test_re_record_into_another_sessions_summary_removes_own_stale_row(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(rec("a", "alpha text"))
        store.upsert(rec("b", "beta text"))
        res = store.upsert(rec("a", "beta text"))
        assert (res.status, res.duplicate_of) == ("duplicate", "b")
        assert store.get("a") is None and store.count() == 1


def test_delete_and_rebuild(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert_many([rec("a", "我喜欢吃苹果", ("水果",)), rec("b", "deploy kubernetes")])
        store.connection.execute("DELETE FROM sessions_fts")  # index lost
        assert store.stats()["index_in_sync"] is False
        assert store.search('"苹果"', 5) == []
        assert store.rebuild() == 2
        assert store.stats()["index_in_sync"] is True
        assert [h.session_id for h in store.search('"苹果"', 5)] == ["a"]
        assert [h.session_id for h in store.search('"水果"', 5)] == ["a"]
        assert store.delete("a") is True and store.delete("a") is False
        assert store.search('"苹果"', 5) == []


def test_stats(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert_many([rec("a", "x one", created_at=100.0), rec("b", "y two", created_at=300.0)])
        s = store.stats()
    assert (s["sessions"], s["indexed"], s["oldest"], s["newest"]) == (2, 2, 100.0, 300.0)
    assert s["schema_version"] == memory_migrations.LATEST_VERSION
    assert s["journal_mode"] == "wal" and s["sources"] == {"manual": 2}


def test_normalise_tags() -> None:
    assert normalise_tags(" a, b ,,A，c、d ") == ("a", "b", "c", "d")
    assert normalise_tags(["x,y", "z"]) == ("x", "y", "z")
    assert len(normalise_tags(",".join(f"t{i}" for i in range(40)))) == 16


# --------------------------------------------------------------------------- two processes at once

def _writer(path: str, prefix: str, n: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    from hermes_core.agent.context_engine import ContextEngine

    barrier.wait(timeout=60)
    with ContextEngine(path) as engine:  # both processes may race to create and migrate the file
        for i in range(n):
            engine.add(f"{prefix}-{i}", f"{prefix} worker wrote session number {i} about sqlite wal",
                       ["concurrency", prefix])


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "sessions.db"
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    n = 60
    procs = [ctx.Process(target=_writer, args=(str(path), p, n, barrier)) for p in ("left", "right")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    with SessionStore(path, create=False) as store:
        stats = store.stats()
        assert stats["sessions"] == 2 * n and stats["index_in_sync"]
        ids = {r[0] for r in store.connection.execute("SELECT session_id FROM sessions")}
        assert ids == {f"{p}-{i}" for p in ("left", "right") for i in range(n)}
        assert (store.connection.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0]
                == memory_migrations.LATEST_VERSION)
        assert len(store.search('"right"', 1000)) == n


def test_lock_held_past_the_busy_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process mid-write on a fresh file
    try:
        with pytest.raises(context_store.SessionStoreError) as e:
            SessionStore(path, busy_timeout_s=0.05)
        assert not isinstance(e.value, SessionDatabaseUnusable)  # busy, not corrupted
        assert str(path) in str(e.value) and "locked" in str(e.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with SessionStore(path) as store:  # and the file is fine afterwards
        assert store.count() == 0


def test_memory_ids_are_deterministic() -> None:
    # pinned: the same id on every machine and after every restart
    assert memory_id_for("s1") == "d2f709a4e6582b10"
    assert memory_id_for("会话-1") == "791d9abdcc0425a2"


def test_threads_sharing_one_engine(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hermes_core.agent.context_engine import ContextEngine

    with ContextEngine(tmp_path / "s.db") as engine:
        def work(t: int) -> int:
            found = 0
            for i in range(25):
                engine.add(f"t{t}-{i}", f"thread {t} stored espresso note {i}")
                found += len(engine.retrieve("espresso", 3))
            return found

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(work, range(4)))
        assert all(r > 0 for r in results)
        assert engine.stats()["sessions"] == 100 and engine.stats()["index_in_sync"]
