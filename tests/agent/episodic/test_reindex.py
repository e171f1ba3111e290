"""The one-time re-index for a new tokenizer runs in batches: writers get in between them, and
no row is lost or doubled whoever writes, crashes or re-indexes at the same time."""

from __future__ import annotations

import multiprocessing
import signal
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.episodic import reindex
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from tests.agent.episodic.conftest import open_and_die

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
    with SessionStore(path, segment=_new, segment_id=NEW) as store:
        assert store.reindexed == 30
        conn = store.connection
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (OLD,)
        assert [h.session_id for h in store.search('"w97"', 5)] == ["s97"]   # the old index
        store.upsert(SessionRecord("s-new", "session w900 written meanwhile", (), AT))
        store.delete("s7")
    opens = 1
    while True:
        with SessionStore(path, segment=_new, segment_id=NEW) as store:
            if store.reindexed == 0:
                break
            assert store.reindexed <= 30
            opens += 1
    assert opens == 5        # 121 rows, 30 an open, the last open finding none left and swapping
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
    calls = [0]
    due = sorted(ops, key=lambda op: op[2])

    def segment(text: str) -> str:
        calls[0] += 1
        while due and due[0][2] <= calls[0] and not conn.in_transaction:   # between batches
            kind, which, _ = due.pop(0)
            sid = f"s{which}"
            if kind == "delete":
                writer.delete(sid)
            else:
                words = "rewritten" if kind == "replace" else "added"
                writer.upsert(SessionRecord(sid, f"session w{which} {words} at {calls[0]}", (),
                                            AT))
        return _new(text)

    try:
        old_batch = reindex.BATCH_ROWS
        reindex.BATCH_ROWS = batch
        reindex.run(conn, segment, NEW)
    finally:
        reindex.BATCH_ROWS = old_batch
        conn.close()
        writer.close()
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
