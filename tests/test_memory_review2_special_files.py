"""Review 2: a db path that is not a regular file (a FIFO, a device, a socket) is refused by name;
opening a FIFO to sniff its header used to block forever waiting for a writer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.agent.episodic.store import SessionDatabaseUnusable, SessionStore


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
                          capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 1
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
