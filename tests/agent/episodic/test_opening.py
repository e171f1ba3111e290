"""Tests of ``hermes_core/agent/episodic/opening.py``.

The checks an open makes before SQLite touches a file; the store's own tests open such files
end to end (tests/agent/episodic/test_store.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.episodic.opening import check_file, open_read_only, read_only_refusal
from hermes_core.agent.episodic.store import SessionStore
from hermes_core.errors import SessionDatabaseUnusable


def test_a_text_file_at_the_path_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_text("notes, not a database\n" * 10)
    with pytest.raises(SessionDatabaseUnusable, match="not an SQLite database") as e:
        check_file(path)
    assert str(path) in str(e.value)


def test_an_empty_file_passes_the_check_and_is_no_database_to_read_yet(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch()
    check_file(path)
    assert "empty file" in read_only_refusal(path, (1, 2))


def test_a_read_only_way_in_accepts_only_the_schemas_it_is_told(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    version = sqlite3.connect(path).execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    conn = open_read_only(path, 1.0, (1, version))
    assert conn is not None
    conn.close()
    assert open_read_only(path, 1.0, (1, version - 1)) is None
    assert "newer than this hermes-core understands" in read_only_refusal(path, (1, version - 1))
