"""Review 2: a write that fails inside SQLite (disk full) must surface as a SessionStoreError saying
so, not as a raw sqlite3 "cannot rollback" error that escapes the HermesError tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.store import SessionDatabaseUnusable, SessionStoreError
from hermes_core.cli.main import main

NOW = 1_800_000_000.0


def _full(engine: ContextEngine) -> None:
    """Cap the database at its current size: the next growing write fails with SQLITE_FULL, and
    SQLite rolls the transaction back by itself (as on a real full disk)."""
    conn = engine.store.connection
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def test_disk_full_is_a_clear_memory_store_error(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s0", "seed row about sqlite")
        _full(engine)
        with pytest.raises(SessionStoreError) as info:
            engine.add("s1", "a long summary about many things " * 2000)
        assert "full" in str(info.value)
        assert str(tmp_path / "sessions.db") in str(info.value)
        assert not isinstance(info.value, SessionDatabaseUnusable)  # the file is fine, the disk is not
        # the store is still usable: nothing half-written, the transaction is closed
        assert not engine.store.connection.in_transaction
        assert [f.session_id for f in engine.retrieve("sqlite")] == ["s0"]
        assert engine.stats()["sessions"] == 1


def test_session_recording_on_a_full_disk_is_a_hermes_error(tmp_path: Path) -> None:
    from hermes_core.errors import HermesError
    from hermes_core.types import Message

    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s0", "seed row")
        _full(engine)
        text = ". ".join(" ".join(f"term{i}x{j}" for j in range(8)) for i in range(200))
        msgs = [Message("user", text), Message("assistant", text.upper())]
        with pytest.raises(HermesError):
            engine.record_session("s1", msgs)


def test_cli_add_on_a_full_disk_exits_1_without_a_traceback(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("s0", "seed row")
    real_init = ContextEngine.__init__

    def capped(self: ContextEngine, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        _full(self)

    monkeypatch.setattr(ContextEngine, "__init__", capped)
    code = main(["memory", "add", "--db", str(db), "--session-id", "s1",
                 "--summary", "words " * 20000])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and "full" in err


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
