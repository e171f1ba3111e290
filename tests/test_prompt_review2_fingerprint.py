"""Review 2: an edit that puts the old mtime back (``touch -r``, ``cp -p``, ``rsync -t``, tools that
preserve timestamps) and keeps the size must still reach the prompt: the kernel moves ctime on
every write, and nobody can set it back."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_core.agent.prompt_builder import PromptBuilder


def _same_size_edit_keeping_mtime(path: Path, old: str, new: str) -> None:
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    changed = text.replace(old, new)
    assert len(changed.encode()) == len(text.encode())
    with open(path, "r+", encoding="utf-8") as fh:  # in place: same inode
        fh.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (st.st_mtime_ns, st.st_size, st.st_ino)


def test_mtime_restoring_same_size_edit_of_memory_is_seen(hermes_home: Path, tmp_path: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging region is eu-west-1\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=tmp_path)
    assert "eu-west-1" in b.build("hi").system
    _same_size_edit_keeping_mtime(hermes_home / "MEMORY.md", "eu-west-1", "ap-south1")
    system = b.build("hi").system
    assert "ap-south1" in system and "eu-west-1" not in system
    assert b.rebuilds == 2


def test_mtime_restoring_edit_of_project_context_is_seen(hermes_home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "HERMES.md").write_text("Indent with tabs\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=repo)
    assert "Indent with tabs" in b.build("hi").system
    _same_size_edit_keeping_mtime(repo / "HERMES.md", "tabs", "4 sp")
    assert "Indent with 4 sp" in b.build("hi").system


def test_idle_turns_still_read_nothing(hermes_home: Path, tmp_path: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging region is eu-west-1\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=tmp_path)
    b.build("hi")
    reads, rebuilds = b.file_reads, b.rebuilds
    for i in range(20):
        b.build(f"turn {i}")
    assert (b.file_reads, b.rebuilds) == (reads, rebuilds)
