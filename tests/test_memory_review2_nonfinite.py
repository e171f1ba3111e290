"""Review 2: infinite or NaN numbers must be refused at the door: ``--relevance inf`` printed
``"score": Infinity`` (not JSON) and a NaN time failed in SQLite as a 'database error'."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.store import SessionDatabaseUnusable
from hermes_core.cli.main import main

NOW = 1_800_000_000.0


@pytest.mark.parametrize("value", ["inf", "Infinity", "1e400", "nan"])
def test_cli_add_refuses_a_non_finite_relevance(tmp_path: Path, value: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    with pytest.raises(SystemExit) as info:
        main(["memory", "add", "--db", str(db), "--session-id", "s1", "--summary", "hello world",
              f"--relevance={value}"])
    assert info.value.code == 2
    assert "--relevance" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize("field", ["relevance_score", "created_at"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_api_add_refuses_non_finite_numbers(tmp_path: Path, field: str, value: float) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        with pytest.raises(ValueError, match=field):
            engine.add("s1", "hello world", **{field: value})  # type: ignore[arg-type]
        assert engine.stats()["sessions"] == 0


def test_record_session_with_a_nan_time_is_refused_not_a_database_error(tmp_path: Path) -> None:
    from hermes_core.types import Message

    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        try:
            engine.record_session("s1", [Message("user", "Tune the postgres vacuum settings.")],
                                  created_at=math.nan)
        except SessionDatabaseUnusable as e:  # the file is fine: this message would be a lie
            pytest.fail(f"reported as an unusable database: {e}")
        except ValueError as e:
            assert "created_at" in str(e)
        else:
            pytest.fail("a NaN time was accepted")
