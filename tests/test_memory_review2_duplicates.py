"""Review 2: identical MEMORY.md entries (pasted twice by hand, or made by a replace) could never
be removed or replaced again: every quote matched "2 entries", and no longer quote can tell two
identical entries apart."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.prompt.memory_files import MemoryStore


def test_hand_written_duplicate_entries_can_be_removed(hermes_home: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging is eu-west-1\n§\nBackups at 02:00\n§\n"
                                           "Staging is eu-west-1\n", encoding="utf-8")
    store = MemoryStore(hermes_home)
    assert store.remove("memory", "Staging is eu-west-1") == ("Backups at 02:00", "Staging is eu-west-1")
    assert store.remove("memory", "Staging") == ("Backups at 02:00",)


def test_hand_written_duplicates_can_be_replaced(hermes_home: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging is eu-west-1\n§\nStaging is eu-west-1\n",
                                           encoding="utf-8")
    store = MemoryStore(hermes_home)
    assert store.replace("memory", "eu-west-1", "Staging is ap-south-1") == (
        "Staging is ap-south-1", "Staging is eu-west-1")


def test_replace_onto_an_existing_entry_does_not_make_a_duplicate(hermes_home: Path) -> None:
    store = MemoryStore(hermes_home)
    store.add("memory", "Staging is eu-west-1")
    store.add("memory", "Prod is us-east-1")
    assert store.replace("memory", "Staging", "Prod is us-east-1") == ("Prod is us-east-1",)
    assert store.entries("memory") == ("Prod is us-east-1",)


def test_two_different_entries_still_need_a_longer_quote(hermes_home: Path) -> None:
    import pytest

    from hermes_core.agent.prompt.memory_files import MemoryWriteError

    store = MemoryStore(hermes_home)
    store.add("memory", "Staging is eu-west-1")
    store.add("memory", "Staging DB is db-2")
    with pytest.raises(MemoryWriteError, match="2 entries contain"):
        store.remove("memory", "Staging")
