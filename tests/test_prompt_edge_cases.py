"""Edge cases a demanding user hits in context files and memory writes."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from hermes_core.agent.memory_files import MemoryStore
from hermes_core.agent.prompt_builder import PromptBuilder


def test_memory_write_through_a_symlink_updates_the_target(hermes_home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "MEMORY.md"
    target.write_text("Deploys go through ops/deploy.sh\n", encoding="utf-8")
    (hermes_home / "MEMORY.md").symlink_to(target)
    builder = PromptBuilder(hermes_home, cwd=tmp_path)
    assert "ops/deploy.sh" in builder.system_prompt
    MemoryStore(hermes_home).add("memory", "Staging is eu-west-1")
    assert os.path.islink(hermes_home / "MEMORY.md")  # the link survives
    assert target.read_text(encoding="utf-8") == (
        "Deploys go through ops/deploy.sh\n§\nStaging is eu-west-1\n")
    assert "eu-west-1" in builder.system_prompt
    assert not [p for p in hermes_home.iterdir() if p.name.endswith(".tmp")]


def test_dangling_memory_symlink_is_created_at_its_target(hermes_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    (hermes_home / "USER.md").symlink_to(target)
    MemoryStore(hermes_home).add("user", "Ada prefers tea")
    assert os.path.islink(hermes_home / "USER.md")
    assert target.read_text(encoding="utf-8") == "Ada prefers tea\n"


def _add_many(home: str, tag: str, n: int) -> None:
    store = MemoryStore(Path(home))
    for i in range(n):
        store.add("memory", f"{tag} note {i}")


def test_two_processes_adding_at_once_lose_nothing(hermes_home: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_many, args=(str(hermes_home), tag, 15)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    entries = MemoryStore(hermes_home).entries("memory")
    assert sorted(entries) == sorted(f"{t} note {i}" for t in ("a", "b") for i in range(15))
