"""The one-time re-index for a new tokenizer runs in batches: writers get in between them, and
no row is lost or doubled whoever writes, crashes or re-indexes at the same time."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.episodic import drift, passages, ranking, reindex
from hermes_core.agent.episodic.retention import RetentionPolicy
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.tokenize import (
    SEGMENT_VERSION,
    TOKENIZER_VERSION,
    segment_for_index,
    segment_key,
    symbol_terms,
    tokenize,
    tokenizer_key,
)
from tests.agent.episodic.conftest import open_and_die, open_and_die_at_statement, open_tracing

OLD, NEW = "test-old-1", "test-new-1"
NEEDLE = "zq9-Horse7-battery-Staple"
AT = 1_800_000_000.0


def _old(text: str) -> str:
    return text.lower()


def _new(text: str) -> str:
    """A tokenizer the old index does not match: every word also indexed with an ``x`` in front."""
    words = text.lower().split()
    return " ".join(words + [f"x{w}" for w in words])


def _summary(i: int) -> str:
    return f"session w{i} about deploys"


def _archive(path: Path, n: int) -> None:
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many([SessionRecord(f"s{i}", _summary(i), (), AT + i) for i in range(n)])


def _indexed_once(path: Path, ids: set[str], words: dict[str, str] | None = None) -> None:
    """Every stored session is in the new index exactly once, found by the new tokenizer's
    terms (its ``w<n>`` word, or ``words[id]``), and nothing else is."""
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 0     # done already
        conn = store.connection
        assert {r[0] for r in conn.execute("SELECT session_id FROM sessions")} == ids
        rows = conn.execute("SELECT session_id FROM sessions_fts").fetchall()
        assert sorted(r[0] for r in rows) == sorted(ids)
        joined = conn.execute("SELECT COUNT(*) FROM sessions s JOIN sessions_fts f "
                              "ON f.rowid = s.rowid AND f.session_id = s.session_id").fetchone()
        assert joined[0] == len(ids)
        for sid in ids:
            word = (words or {}).get(sid, f"w{sid[1:]}")
            hits = store.search(f'"x{word}"', 5)
            assert [h.session_id for h in hits] == [sid]
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (NEW,)
        leftovers = conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'reindex%' "
                                 "OR name LIKE 'sessions_fts_next%'").fetchall()
        assert leftovers == []


def test_a_writer_waits_for_one_batch_of_the_re_index_not_the_whole_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    n = 400
    _archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 50)
    # another agent's store, open before the re-index starts; it writes with a short busy wait,
    # so a re-index that holds the lock to the end makes it fail
    writer = SessionStore(path, segment=_old, busy_timeout_s=5.0)
    calls = {"n": 0, "at_write": -1}
    written = threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        try:
            writer.upsert(SessionRecord("s-new", "session w900 written meanwhile", (), AT))
            writer.upsert(SessionRecord("s3", "session w3 rewritten meanwhile", (), AT))
            writer.delete("s7")
            calls["at_write"] = calls["n"]
        except BaseException as e:  # reported by the test thread
            failed.append(e)
        finally:
            written.set()

    def segment(text: str) -> str:
        calls["n"] += 1
        if calls["n"] == 120:        # inside the third batch: the writer goes now
            threading.Thread(target=write).start()
            written.wait(timeout=20)
        return _new(text)

    try:
        with SessionStore(path, segment=segment, segment_id=NEW) as store:
            assert store.reindexed >= n - 1
    finally:
        writer.close()
    assert not failed, failed
    # the writer was done while the re-index had rows left to segment (two calls a row)
    assert 0 < calls["at_write"] < 2 * n
    ids = {f"s{i}" for i in range(n)} - {"s7"} | {"s-new"}
    _indexed_once(path, ids, {"s-new": "w900"})
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert [h.session_id for h in store.search('"xrewritten"', 5)] == ["s3"]
        assert store.search('"xw7"', 5) == []


def test_an_open_re_indexes_a_bounded_number_of_rows_and_searches_the_old_index_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large archive's re-index (a new tokenizer or index layout) is spread over opens: an
    open (a chat's start, an Agent's first turn) indexes at most ``OPEN_ROWS`` rows and returns,
    searches read the old index until the last batch swaps them, and writes made meanwhile are
    in the new index when it is done."""
    path = tmp_path / "sessions.db"
    n = 120
    _archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10)
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 30
        conn = store.connection
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (OLD,)
        assert [h.session_id for h in store.search('"w97"', 5)] == ["s97"]   # the old index
        store.upsert(SessionRecord("s-new", "session w900 written meanwhile", (), AT))
        assert store.reindexed == 40          # the write carried it on by one batch
        store.delete("s7")
    opens = 1
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
            assert store.reindexed <= 30
            opens += 1
    assert opens == 4        # 121 rows: 30 + 10 by the write, then 30 an open, the rest swapped
    _indexed_once(path, {f"s{i}" for i in range(n)} - {"s7"} | {"s-new"}, {"s-new": "w900"})


def test_a_session_forgotten_while_a_re_index_is_left_for_later_opens_leaves_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The half-built new index holds a copy of every row up to its cursor; a forget or a key
    rewrite between opens must take the words out of it too, not only out of the index searched."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord(f"s{i}", _summary(i), (), AT + i) for i in range(100)]
    records.insert(10, SessionRecord("holder", "the proxy notes xylophonicdiagnosis", (), AT))
    records.insert(12, SessionRecord("keyholder", f"keyholderword holds {NEEDLE}", (), AT))
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many(records)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)

    def raw() -> bytes:
        return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("sessions.db*")))

    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 30        # the holder (rowid 11) is in the new index too
        assert store.delete("holder")
        assert store.rewrite_holding(
            {"m1": NEEDLE}, lambda r: replace(r, summary=r.summary.replace(NEEDLE, "gone"))) == 1
    assert b"ophonicdiagnos" not in raw() and b"staple" not in raw().lower()
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    assert b"ophonicdiagnos" not in raw() and b"staple" not in raw().lower()
    _indexed_once(path, {f"s{i}" for i in range(100)} | {"keyholder"},
                  {"keyholder": "keyholderword"})


def _reindex_and_die(path: str, kill_after: int, batch: int) -> None:
    open_and_die(path, kill_after, batch, _new, NEW)


def _spawn(target: Callable[..., None], *args: object) -> multiprocessing.process.BaseProcess:
    proc = multiprocessing.get_context("spawn").Process(target=target, args=args)
    proc.start()
    return proc


@pytest.mark.parametrize("kill_after", [1, 81, 250, 299])
def test_a_re_index_killed_mid_way_is_resumed_by_the_next_opener_without_loss_or_doubles(
        tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "sessions.db"
    n = 150
    _archive(path, n)
    proc = _spawn(_reindex_and_die, str(path), kill_after, 40)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path, segment=_old, segment_id=None) as other:   # a write meanwhile
        other.upsert(SessionRecord("s-late", "session w901 after the crash", (), AT))
        other.delete("s0")
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert 0 < store.reindexed <= n
    _indexed_once(path, {f"s{i}" for i in range(1, n)} | {"s-late"}, {"s-late": "w901"})


def _open_and_write(path: str, name: str, barrier: object, batch: int) -> None:
    reindex.BATCH_ROWS = batch
    barrier.wait(timeout=60)  # type: ignore[attr-defined]
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        for i in range(20):
            store.upsert(SessionRecord(f"{name}-{i}", f"session w{name}{i} by an opener", (), AT))


def test_two_processes_starting_the_re_index_at_once_index_every_row_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    n = 600
    _archive(path, n)
    barrier = multiprocessing.get_context("spawn").Barrier(3)
    procs = [_spawn(_open_and_write, str(path), name, barrier, 25) for name in ("a", "b", "c")]
    for p in procs:
        p.join(timeout=180)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.stats()["index_in_sync"]
        for name in ("a", "b", "c"):
            assert len(store.search(f'"xw{name}0"', 5)) == 1


def test_an_explicit_rebuild_clears_a_re_index_left_half_done(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    _archive(path, 100)
    proc = _spawn(_reindex_and_die, str(path), 50, 20)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path, segment=_new, segment_id=None) as store:   # never compares
        assert store.rebuild() == 100
        names = store.connection.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'reindex%' "
            "OR name LIKE 'sessions_fts_next%'").fetchall()
        assert names == []
        assert store.stats()["index_in_sync"]


Op = tuple[str, int, int]   # kind, which session, at which segment call


def _reindex_between_batches(conn: sqlite3.Connection, batch: int, between: Callable[[int], None],
                             *closing: SessionStore | sqlite3.Connection) -> None:
    """Re-index on ``conn`` with ``_new`` in batches of ``batch`` rows, calling ``between`` with
    the segmenter's call count at each call made outside a write transaction (between batches);
    ``conn`` and ``closing`` closed after."""
    calls = [0]

    def segment(text: str) -> str:
        calls[0] += 1
        if not conn.in_transaction:
            between(calls[0])
        return _new(text)

    old_batch = reindex.BATCH_ROWS
    try:
        reindex.BATCH_ROWS = batch
        reindex.run(conn, segment, NEW)
    finally:
        reindex.BATCH_ROWS = old_batch
        for c in (conn, *closing):
            c.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 40), batch=st.integers(1, 7),
       ops=st.lists(st.tuples(st.sampled_from(["insert", "replace", "delete"]),
                              st.integers(0, 50), st.integers(1, 120)), max_size=25))
def test_writes_between_any_batches_leave_the_new_index_equal_to_the_sessions(
        tmp_path_factory: pytest.TempPathFactory, n: int, batch: int, ops: list[Op]) -> None:
    path = tmp_path_factory.mktemp("interleave") / "sessions.db"
    _archive(path, n)
    writer = SessionStore(path, segment=_old)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    due = sorted(ops, key=lambda op: op[2])

    def between(call: int) -> None:
        while due and due[0][2] <= call:
            kind, which, _ = due.pop(0)
            sid = f"s{which}"
            if kind == "delete":
                writer.delete(sid)
            else:
                words = "rewritten" if kind == "replace" else "added"
                writer.upsert(SessionRecord(sid, f"session w{which} {words} at {call}", (), AT))

    _reindex_between_batches(conn, batch, between, writer)
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 0
        stored = dict(store.connection.execute("SELECT rowid, summary FROM sessions").fetchall())
        indexed = store.connection.execute("SELECT rowid, summary FROM sessions_fts").fetchall()
        assert sorted(r[0] for r in indexed) == sorted(stored)        # each row once
        assert all(summary == _new(stored[rowid]) for rowid, summary in indexed)


def test_an_open_whose_re_index_another_tokenizer_keeps_replacing_still_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Two hermes-core versions on one file at once each drop the other's half-built index: an
    open gives up after a few restarts (the index as it was) instead of never returning."""
    path = tmp_path / "sessions.db"
    _archive(path, 30)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 5)
    other = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    replaced = [0]

    def segment(text: str) -> str:
        if not conn.in_transaction:                # between batches: the other version starts
            replaced[0] += int(reindex._start(other, "another-tokenizer-9"))
        return _new(text)

    try:
        with caplog.at_level("WARNING", logger="hermes_core.memory"):
            reindex.run(conn, segment, NEW)
    finally:
        conn.close()
        other.close()
    assert 0 < replaced[0] <= 2 * reindex.MAX_STARTS * 5 * 2
    assert "keeps being replaced" in caplog.text
    with SessionStore(path, segment=_new, segment_id=NEW) as store:   # a later open finishes
        assert store.reindexed == 30
    _indexed_once(path, {f"s{i}" for i in range(30)})


def test_a_store_opened_once_finishes_a_spread_out_re_index_through_its_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server opens its store once: the re-index an open left goes on a bounded batch after
    each write through that store, and ends with the swap, with no second open."""
    path = tmp_path / "sessions.db"
    n = 120
    _archive(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 30
        conn = store.connection
        for i in range(16):
            before = store.reindexed
            store.upsert(SessionRecord(f"w{i}", f"session w{900 + i} written by the server", (), AT))
            assert store.reindexed - before <= 10          # one bounded batch a write
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (NEW,)
        assert [h.session_id for h in store.search('"xw97"', 5)] == ["s97"]   # the new index
    _indexed_once(path, {f"s{i}" for i in range(n)} | {f"w{i}" for i in range(16)},
                  {f"w{i}": f"w{900 + i}" for i in range(16)})


def test_a_write_does_not_wait_for_the_lock_to_carry_a_re_index_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch after a write is upkeep: while another connection holds the write lock the
    write returns (its session stored) and a later write goes on."""
    path = tmp_path / "sessions.db"
    _archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    other = sqlite3.connect(str(path), isolation_level=None)
    locked = [False]

    def segment(text: str) -> str:
        if "about deploys" in text and not locked[0]:   # an archive row: upkeep's segmenting;
            other.execute("BEGIN IMMEDIATE")           # another process takes the lock then
            locked[0] = True
        return _new(text)

    with SessionStore(path, segment=_new, segment_id=NEW, busy_timeout_s=5.0) as store:
        reindexed = store.reindexed
        store._segment = segment      # type: ignore[method-assign]
        store.upsert(SessionRecord("w0", "session w900 written while locked", (), AT))
        assert store.reindexed == reindexed
        other.execute("COMMIT")
        store.upsert(SessionRecord("w1", "session w901 written after", (), AT))
        assert store.reindexed > reindexed
    other.close()
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.get("w0") is not None and store.get("w1") is not None


def _serve(path: str, kill_at: int | None, acked: str | None = None) -> list[bool]:
    """A server's store: opened once on an archive whose re-index an open leaves unfinished
    (batches of 10), then 30 sessions written through it. Every statement is traced; the
    ``kill_at``-th SIGKILLs the process (spawned) as it starts, and each write that returned is
    appended to ``acked``. Returns, a statement each, whether it ran in a write's upkeep."""
    reindex.BATCH_ROWS = reindex.OPEN_ROWS = reindex.WRITE_ROWS = 10
    store = SessionStore(path, segment=_new, segment_id=NEW)
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
    _archive(path, 60)
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
    proc = _spawn(_serve, str(path), in_upkeep[nth], str(acked))
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    returned = set(acked.read_text().split()) if acked.exists() else set()
    with SessionStore(path, segment=_old, segment_id=None) as plain:
        stored = {r[0] for r in plain.connection.execute(
            "SELECT session_id FROM sessions WHERE session_id LIKE 'w%'")}
    assert returned <= stored and len(stored - returned) <= 1
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    _indexed_once(path, {f"s{i}" for i in range(60)} | stored,
                  {sid: f"w{900 + int(sid[1:])}" for sid in stored})


def test_a_read_is_served_while_a_write_s_upkeep_batch_is_segmenting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's recall thread does not wait behind another thread's write upkeep: while the
    batch after a write is held inside its segmenter, a search and a get on the same store
    answer, and the upkeep then finishes."""
    path = tmp_path / "sessions.db"
    _archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    in_upkeep, release, served = threading.Event(), threading.Event(), threading.Event()

    def segment(text: str) -> str:
        if "about deploys" in text and not in_upkeep.is_set():   # an archive row: upkeep
            in_upkeep.set()
            release.wait(60)
        return _new(text)

    with SessionStore(path, segment=_new, segment_id=NEW) as store:
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
    _archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    secret = "sk-" + "Q" * 40
    failures = iter([MemoryError(), OSError(2, f"no such file: /gone/{secret}"),
                     ValueError(secret)] * 3)

    def segment(text: str) -> str:
        if "about deploys" in text:
            raise next(failures)
        return _new(text)

    caplog.set_level("DEBUG", logger="hermes_core.memory")
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
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
    _archive(path, 60)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
    monkeypatch.setattr(reindex, "WRITE_ROWS", 10, raising=False)
    SessionStore(path, segment=_new, segment_id=NEW).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'ten' WHERE key = 'reindex_cursor'")
    conn.commit()
    conn.close()
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        for i in range(12):
            assert store.upsert(SessionRecord(f"w{i}", f"session w{900 + i}", (), AT)).status \
                == "inserted"
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    _indexed_once(path, {f"s{i}" for i in range(60)} | {f"w{i}" for i in range(12)},
                  {f"w{i}": f"w{900 + i}" for i in range(12)})


def _fold_reindex_and_die(path: str, kill_after: int, batch: int) -> None:
    open_and_die(path, kill_after, batch, segment_for_index,
                 f"hermes-tokenize-{tokenizer_key()}.{segment_key()}{passages.LAYOUT}")


def _before_folding(text: str) -> str:
    """How tokenizer 3 indexed Chinese: jieba over the characters as written."""
    import jieba
    return " ".join(w for w in jieba.cut_for_search(text.lower()) if w.strip())


@pytest.mark.parametrize("kill_after", [1, 45, 119])
def test_the_re_index_that_folds_traditional_chinese_survives_a_kill_9_and_finds_every_row(
        tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "sessions.db"
    n = 60
    before = f"hermes-tokenize-3.{SEGMENT_VERSION}{passages.LAYOUT}"
    texts = {f"s{i}": f"第{i}號會議室的數據庫連接錯誤 case{i}" for i in range(n)}
    with SessionStore(path, segment=_before_folding, segment_id=before) as old:
        old.upsert_many([SessionRecord(sid, t, (), AT) for sid, t in texts.items()])
    proc = _spawn(_fold_reindex_and_die, str(path), kill_after, 25)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path) as store:
        assert 0 < store.reindexed <= n
        hits = store.search('"数据库"', n + 1)
        assert sorted(h.session_id for h in hits) == sorted(texts)
        assert {sid: (r.summary if (r := store.get(sid)) else None) for sid in texts} == texts
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == n
    with SessionStore(path) as again:
        assert again.reindexed == 0


@pytest.mark.parametrize("kill_after", [1, 37, 89])
def test_the_re_index_to_family_and_letter_emoji_terms_survives_a_kill_9_and_finds_every_row(
        tmp_path: Path, kill_after: int) -> None:
    """An archive of segment version 11 (no 👪 people, no ℹ term, 葛󠄀城 cut at its selector)
    re-indexed by the installed segmenter, killed mid-way: the next open finishes it, every row
    is found by the new terms, each once, and the open after re-indexes nothing."""
    path = tmp_path / "sessions.db"
    n = 45
    kinds = ("dinner 👪 on sunday {i}", "the \u2139\ufe0f panel moved {i}", "和葛\U000E0100城开会 {i}")
    texts = {f"s{i}": kinds[i % 3].format(i=i) for i in range(n)}
    before = f"hermes-tokenize-{tokenizer_key()}.11{passages.LAYOUT}"
    with SessionStore(path, segment=_segment_before_symbols, segment_id=before) as old:
        old.upsert_many([SessionRecord(sid, t, (), AT) for sid, t in texts.items()])
    proc = _spawn(_fold_reindex_and_die, str(path), kill_after, 10)
    proc.join(timeout=120)
    assert proc.exitcode == -signal.SIGKILL
    with SessionStore(path) as store:
        assert 0 < store.reindexed <= n
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == n
        for match, kind in ((ranking.match_term(symbol_terms("👨")[0]), 0),
                            (ranking.match_term(symbol_terms("\u2139")[0]), 1), ('"葛城"', 2)):
            found = sorted(h.session_id for h in store.search(match, n + 1))
            assert found == sorted(sid for i, sid in enumerate(texts) if i % 3 == kind), match
    with SessionStore(path) as again:
        assert again.reindexed == 0


def _segment_before_symbols(text: str) -> str:
    """What ``segment_for_index`` indexed before symbols were terms (segment version 2)."""
    return " ".join(tokenize(text, keep_whole=True))


def test_an_archive_indexed_before_symbols_and_the_index_row_trigger_is_re_indexed_once(
        tmp_path: Path) -> None:
    """An older archive: emoji and punctuation-only sessions have no index term, no trigger
    notes edited index rows, and one was edited before. The versioned re-index (the segmenter's
    id moved) makes both findable, drops the edit, and leaves the trigger watching."""
    path = tmp_path / "sessions.db"
    old_id = f"hermes-tokenize-{TOKENIZER_VERSION}.2{passages.LAYOUT}"
    with SessionStore(path, segment=_segment_before_symbols, segment_id=old_id) as store:
        store.upsert_many([SessionRecord("rocket", "🚀🚀", (), 1.0),
                           SessionRecord("ask", "？？？", (), 1.0),
                           SessionRecord("plain", "deploy notes for the cluster", (), 1.0)])
        store.connection.execute("DROP TRIGGER index_drift_on_index")
        rowid = store.connection.execute(
            "SELECT rowid FROM sessions WHERE session_id = 'plain'").fetchone()[0]
        store.connection.execute("UPDATE sessions_fts SET summary = 'planted okapi' WHERE rowid = ?",
                                 (rowid,))
        assert store.search(ranking.match_term(symbol_terms("🚀")[0]), 5) == []
    with SessionStore(path) as store:
        assert store.reindexed == 3

        def found(text: str) -> list[str]:
            terms = [ranking.match_term(t) for t in ranking.query_terms(text)]
            return [h.session_id for h in store.search(terms, 5)]

        assert found("🚀") == ["rocket"] and found("???") == ["ask"]
        assert found("okapi") == [] and found("cluster") == ["plain"]
        assert store.connection.execute("SELECT 1 FROM sqlite_master WHERE name ="
                                        " 'index_drift_on_index'").fetchone() is not None
    with SessionStore(path) as store:
        assert store.reindexed == 0


def _words(tag: str) -> str:
    """A long summary (passages past the first), its words numbered."""
    return " ".join(f"{tag}{k}" for k in range(200))


def test_sessions_another_tool_wrote_at_rowids_below_one_past_2_53_or_after_a_gap_are_re_indexed(
        tmp_path: Path) -> None:
    """A re-index read ``sessions`` from rowid 0 up, so a session another tool inserted at a
    negative rowid or at 0 was left out of the new index and, after the swap, found by no
    search; one past 2**53 (no exact double) or after a gap must be carried over too."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=_segment_before_symbols, segment_id="older-segmenter") as store:
        store.upsert_many([SessionRecord(f"s{i}", f"plain session {i} about kites", (), 1.0)
                           for i in range(5)])
        planted = {"neg": (-7, "negative okapi"), "zero": (0, "zero narwhal " + _words("z")),
                   "huge": (2**53 + 1, "huge axolotl"), "gap": (10_000, "gapped quokka")}
        for sid, (rowid, text) in planted.items():
            store.connection.execute(
                "INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                " relevance_score, content_hash, source, message_count) VALUES"
                " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)", (rowid, sid, sid, text, sid))
    with SessionStore(path) as store:
        assert store.reindexed == 9
        for sid, (_, text) in planted.items():
            word = text.split()[1]
            assert [h.session_id for h in store.search(f'"{word}"', 5)] == [sid], sid
        assert len(store.search('"kites"', 10)) == 5
        assert [h.session_id for h in store.search('"z199"', 5)] == ["zero"]   # a passage
        assert store.stats()["index_in_sync"]
    with SessionStore(path) as store:
        assert store.reindexed == 0


@pytest.mark.parametrize("how", ["forget", "rewrite", "move"])
def test_a_session_below_rowid_one_leaving_mid_re_index_keeps_the_passage_owning_its_rowid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """With the re-index past a long session, another tool plants a session at the rowid of that
    session's last passage in the half-built index. Forgetting the planted one, rewriting it to
    take a key out, or an open moving it (``drift.rehome``) took the index row at its rowid out
    of the new index: the long session's passage, whose words no search found after the swap."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", _summary(i), (), AT + i) for i in range(100)]
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many(records)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 30)
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        conn = store.connection
        owner = conn.execute("SELECT rowid FROM sessions WHERE session_id = 'long'").fetchone()[0]
        assert reindex.read_cursor(conn, "reindex_cursor") > owner
        low = conn.execute(f"SELECT MIN(rowid) FROM {reindex.NEXT}").fetchone()[0]
        assert low < 0 and (-(low + 1)) // passages.MAX_PASSAGES == owner
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'planted', 'planted kites', '', 1.0, 1.0, 'h', 'manual', 0)",
                     (low,))
        if how == "forget":
            assert store.delete("planted")
        elif how == "rewrite":
            assert store.rewrite_holding({"k": "kites"}, lambda r: replace(
                r, summary=r.summary.replace("kites", "[gone]"))) == 1
    if how == "move":
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            assert store.connection.execute("SELECT 1 FROM sessions WHERE rowid < 1").fetchone() is None
    with sqlite3.connect(str(path)) as conn:
        assert conn.execute(f"SELECT session_id FROM {reindex.NEXT} WHERE rowid = ?",
                            (low,)).fetchone() == ("long",)
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert [h.session_id for h in store.search('"xzebraword"', 3)] == ["long"]
        kept = ["planted"] if how == "move" else []
        assert [h.session_id for h in store.search('"xkites"', 3)] == kept
        assert store.stats()["index_in_sync"]


def _die_at_statement_leaving_low_rows(path: str, kill_at: int, batch: int) -> None:
    """:func:`open_and_die_at_statement` with the open moving no session below rowid 1 (as one
    past its ``REHOME_OPEN_ROWS`` leaves them): run in a spawned process."""
    drift.REHOME_OPEN_ROWS = 0
    open_and_die_at_statement(path, kill_at, batch, "new-x")


@pytest.mark.parametrize("planted", ["before", "after_owner"])
def test_a_re_index_killed_in_a_batch_that_meets_a_session_below_rowid_one_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str) -> None:
    """SIGKILL at each statement of the re-index that reads or writes the rowid of the long
    session's last passage, where another tool planted a session (before the re-index, so a
    batch indexes it there and the owner's batch overwrites it; or once the owner was indexed,
    so a batch's catch-up keeps the owner's passage), and at the commit after: the next opens
    finish the re-index with both sessions found and every session's rows as drift compares
    them (named, stamped, passages with no gap)."""
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    src = tmp_path / "src"
    src.mkdir()
    path = src / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", _summary(i), (), AT + 1 + i) for i in range(40)]
    with SessionStore(path, segment=str.lower, segment_id="old-x") as store:
        store.upsert_many(records)
        low = store.connection.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
    if planted == "after_owner":
        monkeypatch.setattr(reindex, "OPEN_ROWS", 10)
        with SessionStore(path, segment=str.lower, segment_id="new-x") as store:
            assert reindex.read_cursor(store.connection, "reindex_cursor") > 1   # past "long"
    with sqlite3.connect(str(path)) as conn:
        conn.execute("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                     " relevance_score, content_hash, source, message_count) VALUES"
                     " (?, 'm', 'planted', 'planted kites', '', 1.0, 1.0, 'h', 'manual', 0)", (low,))
    conn.close()

    def copy(to: Path) -> Path:
        to.mkdir()
        for f in src.glob("sessions.db*"):
            shutil.copy(f, to / f.name)
        return to / "sessions.db"

    monkeypatch.setattr(drift, "REHOME_OPEN_ROWS", 0)
    seen: list[str] = []
    open_tracing(copy(tmp_path / "traced"), 10, "new-x", seen.append)
    monkeypatch.undo()
    touching = [i + 1 for i, sql in enumerate(seen) if not sql.startswith("--") and str(low) in sql]
    assert touching
    commit = next(i + 1 for i, sql in enumerate(seen) if i + 1 > touching[-1] and sql == "COMMIT")
    for kill_at in [*touching, commit]:
        killed = copy(tmp_path / f"k{kill_at}")
        proc = _spawn(_die_at_statement_leaving_low_rows, str(killed), kill_at, 10)
        proc.join(timeout=120)
        assert proc.exitcode == -signal.SIGKILL, kill_at
        while True:
            with SessionStore(killed, segment=str.lower, segment_id="new-x") as store:
                if store.reindexed == 0:
                    break
        with SessionStore(killed, segment=str.lower, segment_id="new-x") as store:
            conn = store.connection
            assert [h.session_id for h in store.search("zebraword", 3)] == ["long"], kill_at
            assert [h.session_id for h in store.search("kites", 3)] == ["planted"], kill_at
            assert len(store.search("deploys", 50)) == 40
            assert drift._disagreeing(conn, 0)[0] == [], kill_at
            assert store.stats()["index_in_sync"], kill_at
            conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")


LowOp = tuple[str, int, int, int]   # kind, which long session, which passage, at which segment call


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 6),
       ops=st.lists(st.tuples(st.sampled_from(["plant", "edit", "unplant", "forget_owner"]),
                              st.integers(0, 2), st.integers(1, 3), st.integers(1, 34)),
                    max_size=12))
def test_sessions_planted_and_removed_below_rowid_one_during_a_re_index_leave_every_session_found(
        tmp_path_factory: pytest.TempPathFactory, batch: int, ops: list[LowOp]) -> None:
    """Another tool plants, edits and deletes sessions at the rowids of long sessions' passages
    (and a long session is forgotten) between any batches of a re-index: once it is done and an
    open has healed, every session is found by its own word and its index rows are as drift
    compares them (named, stamped, passages with no gap)."""
    path = tmp_path_factory.mktemp("low") / "sessions.db"
    records = [SessionRecord(f"s{i}", _summary(i), (), AT + i) for i in range(12)]
    records[3:3] = [SessionRecord(f"long{j}", _words(f"l{j}k"), (), AT) for j in range(3)]
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many(records)
        owner = dict(store.connection.execute(
            "SELECT session_id, rowid FROM sessions WHERE session_id LIKE 'long%'").fetchall())
    writer = SessionStore(path, segment=_old)
    tool = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10)
    due = sorted(ops, key=lambda op: op[3])

    def act(kind: str, j: int, p: int) -> None:
        rowid = passages.passage_rowid(owner[f"long{j}"], p)
        if kind == "forget_owner":
            writer.delete(f"long{j}")
        elif kind == "plant":
            tool.execute("INSERT OR IGNORE INTO sessions(rowid, memory_id, session_id, summary,"
                         " tags, created_at, relevance_score, content_hash, source, message_count)"
                         " VALUES (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)",
                         (rowid, f"m{rowid}", f"p{-rowid}", f"planted kite{-rowid}", f"h{rowid}"))
        elif kind == "edit":
            tool.execute("UPDATE sessions SET summary = ? WHERE rowid = ?",
                         (f"edited kite{-rowid}", rowid))
        else:
            tool.execute("DELETE FROM sessions WHERE rowid = ?", (rowid,))

    def between(call: int) -> None:
        while due and due[0][3] <= call:
            act(*due.pop(0)[:3])

    _reindex_between_batches(conn, batch, between, tool, writer)
    with sqlite3.connect(str(path)) as conn:   # the swap made, nothing healed yet
        for rowid, summary in conn.execute("SELECT rowid, summary FROM sessions WHERE rowid > 0"):
            want = {passages.passage_rowid(rowid, p): text
                    for p, text in enumerate(passages.split(_new(summary)))}
            got = dict(conn.execute("SELECT rowid, summary FROM sessions_fts WHERE rowid IN"
                                    f" ({', '.join('?' * len(want))})", list(want)).fetchall())
            assert got == want, rowid
    conn.close()
    for _ in range(5):
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if not drift.due(store.connection):
                break
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        conn = store.connection
        assert store.reindexed == 0 and not drift.due(conn)
        stored = conn.execute("SELECT session_id, summary FROM sessions").fetchall()
        for sid, summary in stored:
            word = summary.split()[1 if sid.startswith("s") else -1]   # w<n>, kite<n>, l<j>k199
            assert sid in [h.session_id for h in store.search(f'"x{word}"', 5)], (sid, summary)
        assert drift._disagreeing(conn, 0)[0] == []
        assert store.stats()["index_in_sync"]
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")


def _hits(store: SessionStore, word: str) -> list[str]:
    return [h.session_id for h in store.search(f'"{word}"', 100)]


@pytest.mark.parametrize("how", ["record", "prune"])
@pytest.mark.parametrize("re_index", [True, False])
def test_a_planted_session_recorded_again_or_pruned_mid_re_index_leaves_searches_right_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, re_index: bool) -> None:
    """A re-index spread over opens, and more sessions planted below rowid 1 than an open moves
    (``drift.REHOME_OPEN_ROWS``): one at the rowid of a long session's passage is recorded again
    under its id, or the planted ones are pruned. ``_upsert_one`` and ``retention.step`` take it
    out of the searched index only, leaving the half-built one to the next batch's catch-up:
    after every open until the re-index and the heal are done, each session is found once by
    its word, none twice, and nothing gone is found. Without a re-index, the same with the rows
    past an open's share left to later opens."""
    path = tmp_path / "sessions.db"
    records = [SessionRecord("long", _words("l") + " zebraword", (), AT)]
    records += [SessionRecord(f"s{i}", _summary(i), (), AT + i) for i in range(60)]
    with SessionStore(path, segment=_old, segment_id=OLD) as store:
        store.upsert_many(records)
        conn = store.connection
        owner = conn.execute("SELECT rowid FROM sessions WHERE session_id = 'long'").fetchone()[0]
        low = conn.execute("SELECT MIN(rowid) FROM sessions_fts").fetchone()[0]
        assert (-(low + 1)) // passages.MAX_PASSAGES == owner
        plant = ("INSERT INTO sessions(rowid, memory_id, session_id, summary, tags, created_at,"
                 " relevance_score, content_hash, source, message_count) VALUES"
                 " (?, ?, ?, ?, '', 1.0, 1.0, ?, 'manual', 0)")
        conn.execute(plant, (low, "m", "planted", "planted kites", "h"))
        conn.executemany(plant, [(-5000 - k, f"m{k}", f"f{k}", f"filler f{k}x", f"h{k}")
                                 for k in range(9)])
    monkeypatch.setattr(reindex, "BATCH_ROWS", 10)
    monkeypatch.setattr(reindex, "OPEN_ROWS", 20)
    monkeypatch.setattr(drift, "REHOME_OPEN_ROWS", 3)
    monkeypatch.setattr(drift, "REPAIR_ROWS", 3)
    monkeypatch.setattr(drift, "OPEN_STEPS", 1)
    segment, sid, x = (_new, NEW, "x") if re_index else (_old, OLD, "")
    gone: set[str] = set()
    with SessionStore(path, segment=segment, segment_id=sid) as store:
        assert reindex.pending(store.connection, sid) == re_index
        assert store.connection.execute("SELECT 1 FROM sessions WHERE rowid = ?", (low,)).fetchone()
        if how == "record":
            assert store.upsert(SessionRecord("planted", "planted ospreys", (), AT)).status == "replaced"
        else:
            below = store.connection.execute("SELECT COUNT(*) FROM sessions WHERE created_at = 1.0"
                                              ).fetchone()[0]
            assert store.prune(RetentionPolicy(max_sessions=61)) == below
            gone = {"planted", *(f"f{k}" for k in range(9))}
    for _ in range(30):
        with SessionStore(path, segment=segment, segment_id=sid) as store:
            assert _hits(store, "zebraword") == ["long"]
            assert _hits(store, "kites") == []
            assert _hits(store, "ospreys") == ([] if how == "prune" else ["planted"])
            found = _hits(store, "deploys")
            assert sorted(found) == sorted(f"s{i}" for i in range(60))
            for k in range(9):
                assert _hits(store, f"f{k}x") in ([], [f"f{k}"] if f"f{k}" not in gone else [])
            if not reindex.pending(store.connection, sid) and not drift.due(store.connection):
                break
    else:
        pytest.fail("the re-index and heal did not finish")
    with SessionStore(path, segment=segment, segment_id=sid) as store:
        for k in range(9):
            assert _hits(store, f"{x}f{k}x") == ([] if how == "prune" else [f"f{k}"])
        assert store.stats()["index_in_sync"]
        assert drift._disagreeing(store.connection, 0)[0] == []
