"""Review 2: an FTS index out of step with the sessions table (rows deleted by hand) must not break
search or every later recording; ``memory rebuild`` is the repair, not the only way to keep going."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.cli.main import main

NOW = 1_800_000_000.0


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
