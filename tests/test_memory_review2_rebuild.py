"""Review 2: ``memory rebuild`` exists to repair the full-text index, yet on a damaged index it failed
with 'database disk image is malformed' (it deleted row by row through the broken index) and the
index stayed broken: searches silently found nothing. It now drops and re-creates the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.cli.main import main

NOW = 1_800_000_000.0


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
