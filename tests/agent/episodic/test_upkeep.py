"""A store's after-write upkeep (``episodic/upkeep.py``) works on the store's own file through a
connection of its own, and that connection lives no longer than the store."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from hermes_core.agent.episodic import reindex
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from tests.agent.episodic.conftest import (
    AT,
    NEW,
    OLD,
    deploy_archive,
    indexed_once,
    segment_new,
    segment_old,
    spawn_process,
)


def _new(text: str) -> str:
    """A tokenizer the old index does not match, so an open leaves a re-index for the writes."""
    return " ".join(f"x{w}" for w in text.lower().split())


def _archive(path: Path, n: int) -> None:
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
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


def test_a_store_opened_once_finishes_a_spread_out_re_index_through_its_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server opens its store once: the re-index an open left goes on a bounded batch after
    each write through that store, and ends with the swap, with no second open."""
    path = tmp_path / "sessions.db"
    n = 120
    deploy_archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.reindexed == 30
        conn = store.connection
        for i in range(16):
            before = store.reindexed
            store.upsert(SessionRecord(f"w{i}", f"session w{900 + i} written by the server", (), AT))
            assert store.reindexed - before <= 10          # one bounded batch a write
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (NEW,)
        assert [h.session_id for h in store.search('"xw97"', 5)] == ["s97"]   # the new index
    indexed_once(path, {f"s{i}" for i in range(n)} | {f"w{i}" for i in range(16)},
                  {f"w{i}": f"w{900 + i}" for i in range(16)})


def test_a_write_does_not_wait_for_the_lock_to_carry_a_re_index_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch after a write is upkeep: while another connection holds the write lock the
    write returns (its session stored) and a later write goes on."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    other = sqlite3.connect(str(path), isolation_level=None)
    locked = [False]

    def segment(text: str) -> str:
        if "about deploys" in text and not locked[0]:   # an archive row: upkeep's segmenting;
            other.execute("BEGIN IMMEDIATE")           # another process takes the lock then
            locked[0] = True
        return segment_new(text)

    with SessionStore(path, segment=segment_new, segment_id=NEW, busy_timeout_s=5.0) as store:
        reindexed = store.reindexed
        store._segment = segment      # type: ignore[method-assign]
        store.upsert(SessionRecord("w0", "session w900 written while locked", (), AT))
        assert store.reindexed == reindexed
        other.execute("COMMIT")
        store.upsert(SessionRecord("w1", "session w901 written after", (), AT))
        assert store.reindexed > reindexed
    other.close()
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        assert store.get("w0") is not None and store.get("w1") is not None


def _serve(path: str, kill_at: int | None, acked: str | None = None) -> list[bool]:
    """A server's store: opened once on an archive whose re-index an open leaves unfinished
    (batches of 10), then 30 sessions written through it. Every statement is traced; the
    ``kill_at``-th SIGKILLs the process (spawned) as it starts, and each write that returned is
    appended to ``acked``. Returns, a statement each, whether it ran in a write's upkeep."""
    reindex.BATCH_ROWS = reindex.OPEN_ROWS = reindex.WRITE_ROWS = 10
    store = SessionStore(path, segment=segment_new, segment_id=NEW)
    upkeep = [False]
    seen: list[bool] = []

    def on_statement(_sql: str) -> None:
        seen.append(upkeep[0])
        if len(seen) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    carry_on = store._carry_on

    def traced_carry_on() -> None:
        upkeep[0] = True
        try:
            carry_on()
        finally:
            upkeep[0] = False

    store._carry_on = traced_carry_on  # type: ignore[method-assign]
    store.connection.set_trace_callback(on_statement)
    upkeep_connection = store._upkeep._connection

    def traced_connection() -> sqlite3.Connection:   # upkeep writes on a connection of its own
        conn = upkeep_connection()
        conn.set_trace_callback(on_statement)
        return conn

    store._upkeep._connection = traced_connection  # type: ignore[method-assign]
    for i in range(30):
        store.upsert(SessionRecord(f"w{i}", f"session w{900 + i} by the server", (), AT))
        if acked is not None:
            with open(acked, "a", encoding="utf-8") as out:
                out.write(f"w{i}\n")
    store.close()
    return seen


@pytest.mark.parametrize("nth", [0, 7, 40, 111, 300])
def test_a_server_killed_in_the_batch_after_a_write_loses_no_session_and_the_re_index_resumes(
        tmp_path: Path, nth: int) -> None:
    """SIGKILL as the ``nth`` statement of the writes' upkeep starts: every write that returned
    is stored, and the next open goes on with the re-index to an index equal to the sessions."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 60)
    dry = tmp_path / "dry"
    dry.mkdir()
    shutil.copy(path, dry / "sessions.db")
    saved = reindex.BATCH_ROWS, reindex.OPEN_ROWS, getattr(reindex, "WRITE_ROWS", None)
    try:
        labels = _serve(str(dry / "sessions.db"), None)
    finally:
        reindex.BATCH_ROWS, reindex.OPEN_ROWS = saved[:2]
        if saved[2] is not None:
            reindex.WRITE_ROWS = saved[2]
    in_upkeep = [i + 1 for i, inside in enumerate(labels) if inside]
    assert len(in_upkeep) > 300            # the writes carried the re-index on
    acked = tmp_path / "acked"
    proc = spawn_process(_serve, str(path), in_upkeep[nth], str(acked))
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    returned = set(acked.read_text().split()) if acked.exists() else set()
    with SessionStore(path, segment=segment_old, segment_id=None) as plain:
        stored = {r[0] for r in plain.connection.execute(
            "SELECT session_id FROM sessions WHERE session_id LIKE 'w%'")}
    assert returned <= stored and len(stored - returned) <= 1
    while True:
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    indexed_once(path, {f"s{i}" for i in range(60)} | stored,
                  {sid: f"w{900 + int(sid[1:])}" for sid in stored})


def test_a_read_is_served_while_a_write_s_upkeep_batch_is_segmenting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's recall thread does not wait behind another thread's write upkeep: while the
    batch after a write is held inside its segmenter, a search and a get on the same store
    answer, and the upkeep then finishes."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    in_upkeep, release, served = threading.Event(), threading.Event(), threading.Event()

    def segment(text: str) -> str:
        if "about deploys" in text and not in_upkeep.is_set():   # an archive row: upkeep
            in_upkeep.set()
            release.wait(60)
        return segment_new(text)

    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        before = store.reindexed
        store._segment = segment      # type: ignore[method-assign]
        writer = threading.Thread(target=store.upsert,
                                  args=(SessionRecord("w0", "session w900 by a writer", (), AT),))
        writer.start()
        assert in_upkeep.wait(60)
        found: list[object] = []

        def recall() -> None:
            found.append([h.session_id for h in store.search('"w5"', 5)])
            found.append(store.get("w0"))
            served.set()

        reader = threading.Thread(target=recall)
        reader.start()
        answered = served.wait(20)     # generous: fails only when the read waits for upkeep
        release.set()
        writer.join(60)
        reader.join(60)
        assert answered, "a read waited for a write's upkeep batch"
        assert found[0] == ["s5"] and found[1] is not None
        assert store.reindexed > before


def test_a_write_whose_upkeep_fails_with_no_sqlite_error_returns_its_result_and_says_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Upkeep is not the write: a segmenter that fails in the batch after a write (out of
    memory, an OSError from a vanished dictionary folder) leaves the write's result returned and
    the session stored, and the failure is logged once for the store, without the text."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    secret = "sk-" + "Q" * 40
    failures = iter([MemoryError(), OSError(2, f"no such file: /gone/{secret}"),
                     ValueError(secret)] * 3)

    def segment(text: str) -> str:
        if "about deploys" in text:
            raise next(failures)
        return segment_new(text)

    caplog.set_level("DEBUG", logger="hermes_core.memory")
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        store._segment = segment      # type: ignore[method-assign]
        results = [store.upsert(SessionRecord(f"w{i}", f"session w{900 + i} kept", (), AT))
                   for i in range(3)]
        assert [r.status for r in results] == ["inserted"] * 3
        assert all(store.get(f"w{i}") is not None for i in range(3))
    said = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 1 and "upkeep after a write failed" in said[0].getMessage()
    assert "FileNotFoundError" in caplog.text and "ValueError" in caplog.text   # then: debug
    assert secret not in caplog.text


def test_a_damaged_cursor_another_tool_wrote_neither_fails_a_write_nor_an_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-index cursor that is no number (edited by hand) is upkeep's problem: the write's
    result is returned, an open still opens, and the re-index starts its batches over."""
    path = tmp_path / "sessions.db"
    deploy_archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    SessionStore(path, segment=segment_new, segment_id=NEW).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'ten' WHERE key = 'reindex_cursor'")
    conn.commit()
    conn.close()
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
        for i in range(12):
            assert store.upsert(SessionRecord(f"w{i}", f"session w{900 + i}", (), AT)).status \
                == "inserted"
    while True:
        with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    indexed_once(path, {f"s{i}" for i in range(60)} | {f"w{i}" for i in range(12)},
                  {f"w{i}": f"w{900 + i}" for i in range(12)})
