"""Tests of ``hermes_core/agent/episodic/migrations.py``.

A migration that fails (or meets a full disk) leaves the database as it was and says why; a
schema-1 database migrated keeps every row and every field.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.migrations import Migration
from hermes_core.agent.episodic.store import SessionStore, SessionStoreError
from tests.agent.episodic.conftest import NOW, NOW_TOKENIZER_UPGRADE, old_segment


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


def test_migration_on_a_full_disk_names_the_real_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Upgrading an old database when the disk fills up: the warning says 'full', the old version
    stays, and the old schema (still readable) opens read-only: past sessions stay searchable."""
    import sqlite3

    from hermes_core.agent.episodic import migrations as memory_migrations
    from hermes_core.agent.episodic import store as context_store
    from hermes_core.agent.episodic.migrations import Migration

    path = tmp_path / "sessions.db"
    with ContextEngine(path, clock=lambda: NOW) as engine:
        engine.add("s0", "kept across the failed upgrade")

    def grows_past_the_disk(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        conn.execute("ALTER TABLE sessions ADD COLUMN notes TEXT")
        conn.execute("UPDATE sessions SET notes = ?", ("x" * 100_000,))

    old = memory_migrations.LATEST_VERSION
    monkeypatch.setattr(memory_migrations, "MIGRATIONS",
                        (*memory_migrations.MIGRATIONS, Migration(old + 1, "grows", grows_past_the_disk)))
    monkeypatch.setattr(context_store, "LATEST_VERSION", old + 1)
    with caplog.at_level("WARNING"), ContextEngine(path, clock=lambda: NOW) as engine:
        assert engine.store.read_only
        assert [m.session_id for m in engine.retrieve("upgrade")] == ["s0"]
        with pytest.raises(SessionStoreError, match="read-only"):
            engine.add("s1", "not recorded while the disk is full")
    assert "full" in caplog.text and "rollback" not in caplog.text
    # a schema the read path does not understand is refused instead, naming the real error
    monkeypatch.setattr(context_store, "READ_COMPAT_VERSION", old + 1)
    with pytest.raises(SessionStoreError) as info:
        ContextEngine(path, clock=lambda: NOW)
    assert "full" in str(info.value) and "rollback" not in str(info.value)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == old
    assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    conn.close()


def test_migrating_a_v1_database_keeps_every_row_and_every_field(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    from hermes_core.agent.episodic.store import SessionRecord

    records = [SessionRecord(f"s{i}", f"会话 {i}: deployed service-{i} 和数据库{i}", (f"t{i}", "部署"),
                             NOW_TOKENIZER_UPGRADE - i * 3600.0, 0.5 + i / 100, "model", i)
               for i in range(250)]
    columns = "SELECT * FROM sessions ORDER BY rowid"
    with monkeypatch.context() as m:
        m.setattr(memory_migrations, "MIGRATIONS", memory_migrations.MIGRATIONS[:1])
        m.setattr(context_store, "LATEST_VERSION", 1)
        with SessionStore(path, segment=old_segment) as old:
            old.upsert_many(records)
            before = old.connection.execute(columns).fetchall()
    with SessionStore(path) as store:
        assert store.stats()["schema_version"] == memory_migrations.LATEST_VERSION
        assert store.connection.execute(columns).fetchall() == before
        assert store.stats()["index_in_sync"] and store.count() == 250
        assert len(store.search('"数据库"', 300)) == 250
        assert all(store.get(r.session_id) == r for r in records)
