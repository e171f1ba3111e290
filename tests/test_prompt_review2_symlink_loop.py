"""Review 2: a symlink loop at one context file (USER.md -> USER.md) must not break writes to the
others: Path.resolve() raises RuntimeError on a loop (Python 3.11), and the change notification
resolved every source's path, so MemoryStore.add("memory") wrote MEMORY.md, then raised, and the
builder never heard about the write."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_core.agent.prompt.memory_files import MemoryStore
from hermes_core.agent.prompt_builder import PromptBuilder


def test_memory_write_with_a_looping_user_file(hermes_home: Path, tmp_path: Path) -> None:
    os.symlink("USER.md", hermes_home / "USER.md")
    b = PromptBuilder(hermes_home, cwd=tmp_path)
    b.build("hi")
    assert MemoryStore(hermes_home).add("memory", "Staging is eu-west-1") == ("Staging is eu-west-1",)
    assert "Staging is eu-west-1" in b.build("hi").system


def test_invalidate_a_looping_path(hermes_home: Path, tmp_path: Path) -> None:
    os.symlink("MEMORY.md", hermes_home / "MEMORY.md")
    (hermes_home / "USER.md").write_text("Ada prefers tea\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=tmp_path)
    b.build("hi")
    reads = b.file_reads
    b.invalidate(hermes_home / "MEMORY.md")
    b.invalidate(hermes_home / "USER.md")
    b.build("hi")
    assert b.file_reads == reads + 1  # USER.md re-read; the loop is skipped again, no crash
