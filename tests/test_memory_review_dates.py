"""``--created-at`` at the edges of the calendar: an offset that moves the UTC instant out of
years 1-9999 must be refused up front, and a database already holding such a time (written through
the API) must not make ``memory stats`` crash with a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine, parse_timestamp
from hermes_core.cli.main import main


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_out_of_range_utc_instant_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_timestamp(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-31T08:00:00+05:30", 1769826600.0), ("2026-01-31T02:30:00Z", 1769826600.0),
    ("2026-01-31T02:30:00", 1769826600.0), ("9999-12-31T23:59:59Z", 253402300799.0)])
def test_offsets_land_on_the_same_instant(text: str, expected: float) -> None:
    assert parse_timestamp(text) == expected


def test_cli_add_refuses_and_does_not_create(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    with pytest.raises(SystemExit) as e:
        main(["memory", "add", "--db", str(db), "--session-id", "a", "--summary", "x",
              "--created-at", "9999-12-31T23:59:59-12:00"])
    assert e.value.code == 2 and "out of range" in capsys.readouterr().err
    assert not db.exists()


def test_stats_survive_extreme_stored_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    with ContextEngine(db) as engine:
        engine.add("future", "a session from far in the future", created_at=1e15)
        engine.add("past", "a session from before the calendar", created_at=-1e15)
    assert main(["memory", "stats", "--db", str(db), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["sessions"] == 2
    assert stats["oldest"] == -1e15 and stats["newest"] == 1e15   # raw epoch seconds, no crash
