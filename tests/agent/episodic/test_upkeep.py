"""A store's after-write upkeep (``episodic/upkeep.py``) works on the store's own file through a
connection of its own, and that connection lives no longer than the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.episodic import reindex
from hermes_core.agent.episodic.store import SessionRecord, SessionStore

OLD, NEW = "test-old-upkeep", "test-new-upkeep"
AT = 1_800_000_000.0


def _old(text: str) -> str:
    return text.lower()


def _new(text: str) -> str:
    """A tokenizer the old index does not match, so an open leaves a re-index for the writes."""
    return " ".join(f"x{w}" for w in text.lower().split())


def _archive(path: Path, n: int) -> None:
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"session {i} about deploys", (), AT + i)
                           for i in range(n)])


def _meta(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                 "('tokenizer', 'reindex', 'reindex_cursor')").fetchall())
    finally:
        conn.close()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)


def test_a_store_opened_by_a_relative_path_keeps_its_upkeep_on_its_file_after_a_chdir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_batches: None) -> None:
    """A server that opened ``sessions.db`` relative to its folder and then changed folder: the
    writes' upkeep goes on re-indexing that file, never the same name in the new folder (another
    home's archive, re-indexed with this store's segmenter)."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    _archive(here / "sessions.db", 60)
    _archive(there / "sessions.db", 60)
    untouched = _meta(there / "sessions.db")
    monkeypatch.chdir(here)
    with SessionStore("sessions.db", segment=_new, segment_id=NEW) as store:
        opened = _meta(here / "sessions.db")
        monkeypatch.chdir(there)
        for i in range(3):
            store.upsert(SessionRecord(f"w{i}", f"session w{i} written", (), AT))
    assert _meta(there / "sessions.db") == untouched
    assert int(_meta(here / "sessions.db")["reindex_cursor"]) > int(opened["reindex_cursor"])


def test_upkeep_after_the_store_closed_opens_no_connection(
        tmp_path: Path, small_batches: None) -> None:
    """Another thread closing the store between a write's commit and its upkeep: the upkeep does
    not open a connection of its own again, which nothing would close."""
    path = tmp_path / "sessions.db"
    _archive(path, 60)
    store = SessionStore(path, segment=_new, segment_id=NEW)
    carry_on = store._carry_on

    def closed_meanwhile() -> None:
        store.close()
        carry_on()

    store._carry_on = closed_meanwhile  # type: ignore[method-assign]
    assert store.upsert(SessionRecord("w0", "session w0 written", (), AT)).status == "inserted"
    assert store._upkeep._conn is None
    with SessionStore(path, segment=_new, segment_id=NEW) as again:
        assert again.get("w0") is not None


def test_a_forget_after_an_upkeep_interrupted_by_ctrl_c_leaves_no_word_in_the_wal(
        tmp_path: Path, small_batches: None) -> None:
    """Ctrl-C lands in the segmenting of a write's upkeep (a notebook's interrupt; the write has
    committed) and the caller keeps the exception, as a REPL keeps its last traceback: the
    upkeep's half-read statement must not pin a snapshot, or the WAL cannot be emptied and a
    session forgotten next lives on in ``-wal``."""
    path = tmp_path / "sessions.db"
    _archive(path, 60)
    needle = "zq9-Horse7-battery-Staple"
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        store.upsert(SessionRecord("secret", f"the key was {needle}", (), AT))

        def interrupted(text: str) -> str:
            if "about deploys" in text:
                raise KeyboardInterrupt
            return _new(text)

        store._segment = interrupted  # type: ignore[method-assign]
        with pytest.raises(KeyboardInterrupt) as kept:
            for i in range(3):
                store.upsert(SessionRecord(f"w{i}", f"session w{i} written", (), AT))
        store._segment = _new  # type: ignore[method-assign]
        assert store.get("w0") is not None    # stored before its upkeep was interrupted
        assert store.delete("secret")
        files = b"".join(p.read_bytes() for p in tmp_path.glob("sessions.db*"))
        assert needle.encode() not in files
        assert kept.value is not None        # still held while the files were read
