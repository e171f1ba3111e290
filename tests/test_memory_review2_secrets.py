"""Review 2: an API key pasted into a chat must not be kept in sessions.db, re-sent in later
prompts as a "relevant past session", or printed by ``hermes-core memory search``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.cli.main import main
from hermes_core.types import Message

NOW = 1_800_000_000.0
KEY = "sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j"


def _all_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT summary, tags FROM sessions").fetchall()
    rows += conn.execute("SELECT summary, tags FROM sessions_fts").fetchall()
    conn.close()
    return "\n".join(" ".join(r) for r in rows)


def test_pasted_key_is_not_stored_by_record_session(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    msgs = [Message("user", f"My OpenAI key is {KEY} and the billing dashboard rejects it."),
            Message("assistant", "That key format is for projects; check the billing dashboard.")]
    with ContextEngine(db, clock=lambda: NOW) as engine:
        res = engine.record_session("s1", msgs)
        assert res.status == "inserted"
        block = engine.memories_block("billing dashboard key")
    assert "billing dashboard" in block
    assert KEY not in block and KEY not in _all_text(db)
    assert KEY[:12] not in _all_text(db)


def test_model_summary_echoing_a_key_is_redacted(tmp_path: Path) -> None:
    from hermes_core.agent.episodic.summarise import SessionSummary

    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.record_session("s1", [Message("user", "help with my key")],
                              lambda _m: SessionSummary(f"The user shared the key {KEY} for billing.",
                                                        ("billing", KEY)))
    assert KEY not in _all_text(db)


def test_memory_add_and_search_never_print_a_key(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    assert main(["memory", "add", "--db", str(db), "--session-id", "s1",
                 "--summary", f"rotated the staging key {KEY} today"]) == 0
    for extra in ([], ["--json"]):
        assert main(["memory", "search", "staging key", "--db", str(db), *extra]) == 0
        out = capsys.readouterr().out
        assert "staging" in out and KEY not in out and KEY[:12] not in out
    assert KEY not in _all_text(db)


def test_rows_stored_before_the_fix_are_redacted_on_output(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A database written by an older hermes-core may hold a key: the CLI still does not print it."""
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("s0", "placeholder summary about staging")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET summary = ?", (f"old row: staging key {KEY}",))
    conn.commit()
    conn.close()
    for extra in ([], ["--json"]):
        assert main(["memory", "search", "staging", "--db", str(db), *extra]) == 0
        out = capsys.readouterr().out
        assert "staging" in out and KEY not in out
