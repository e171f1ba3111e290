"""Review 2: a FIFO where a file is expected (MEMORY.md, USER.md, a --history file) is refused by
name at once; reading it blocked forever waiting for a writer (the prompt builder already skips it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})


def test_memory_store_refuses_a_fifo_memory_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "MEMORY.md")
    proc = _run("from pathlib import Path\n"
                "from hermes_core.agent.prompt.memory_files import MemoryStore, MemoryWriteError\n"
                f"store = MemoryStore(Path({str(tmp_path)!r}))\n"
                "for call in (lambda: store.entries('memory'), lambda: store.add('memory', 'x')):\n"
                "    try:\n"
                "        call()\n"
                "    except MemoryWriteError as e:\n"
                "        print(e)\n")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    assert all("MEMORY.md" in line and "not a regular file" in line for line in lines)


def test_prompt_cli_refuses_a_fifo_history(tmp_path: Path, hermes_home: Path) -> None:
    fifo = tmp_path / "history.json"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "hermes_core.cli", "prompt", "hi", "--home",
                           str(hermes_home), "--history", str(fifo)],
                          capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 1
    assert str(fifo) in proc.stderr and "not a regular file" in proc.stderr
