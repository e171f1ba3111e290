"""Tests of ``hermes_core/agent/episodic/opening.py``.

The checks an open makes before SQLite touches a file, called directly and through a
``SessionStore`` (and the CLI) opening such a file end to end.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.agent.episodic.opening import check_file, open_read_only, read_only_refusal
from hermes_core.agent.episodic.store import SessionStore
from hermes_core.errors import SessionDatabaseUnusable
from tests.agent.episodic.conftest import assert_refused


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


def test_text_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_text("my important notes\n" * 50)
    assert_refused(path, "is not an SQLite database")


def test_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.mkdir()
    assert_refused(path, "is a directory")


def test_other_programs_sqlite_database_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
                     "INSERT INTO users(name) VALUES ('ada')")
    assert_refused(path, "another program's SQLite database (tables: users)")


def test_foreign_application_id_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("PRAGMA application_id = 1234", "CREATE TABLE t (x)")
    assert_refused(path, "application_id 0x4d2")


def test_truncated_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"SQLite format 3\x00\x10\x00")
    assert_refused(path, "truncated")


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "sessions.db"
    os.mkfifo(fifo)
    code = (f"from hermes_core.agent.episodic.store import SessionStore\n"
            f"SessionStore({str(fifo)!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode != 0
    assert "not a regular file" in proc.stderr and str(fifo) in proc.stderr


def test_socket_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.db"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    try:
        with pytest.raises(SessionDatabaseUnusable, match="not a regular file"):
            SessionStore(path)
    finally:
        sock.close()


def test_cli_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "sessions.db"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "hermes_core.cli", "memory", "stats", "--db", str(fifo)],
                          capture_output=True, text=True, timeout=120,   # a hang's bound: the CLI's
                          env={**os.environ, "PYTHONPATH": os.getcwd()})  # import took 20 s under load
    assert proc.returncode == 1
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
