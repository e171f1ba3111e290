"""Review 2: an absurd result count (``--max-results 10**20``, a typo in the config) is still just
"all of them", not an OverflowError traceback from SQLite's 64-bit LIMIT."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.cli.main import main
from hermes_core.config import ContextEngineSettings

NOW = 1_800_000_000.0


def test_huge_max_results_returns_everything(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s1", "cafe latte notes")
        engine.add("s2", "latte art class")
        assert {f.session_id for f in engine.retrieve("latte", 10**20, exclude_session="s9")} == {"s1", "s2"}


def test_huge_configured_max_results_still_renders_the_block(tmp_path: Path) -> None:
    settings = ContextEngineSettings(max_results=10**20)
    with ContextEngine(tmp_path / "sessions.db", settings=settings, clock=lambda: NOW) as engine:
        engine.add("s1", "cafe latte notes")
        assert "cafe latte notes" in engine.memories_block("latte")


def test_cli_huge_max_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    assert main(["memory", "add", "--db", str(db), "--session-id", "s1", "--summary", "cafe latte"]) == 0
    capsys.readouterr()
    assert main(["memory", "search", "latte", "--db", str(db), "--max-results", str(10**20)]) == 0
    assert "s1" in capsys.readouterr().out
