"""Tests of ``hermes_core/agent/episodic/store.py``.

The SQLite store: WAL, corrupted and newer files refused, replace rules, concurrency, full disks,
read-only files, rewrites and forgetting. Searches are in ``test_store_search.py``, the segmenter
an archive was indexed with in ``test_store_segmenter.py``.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.migrations import APPLICATION_ID
from hermes_core.agent.episodic.store import (
    SessionDatabaseMissing,
    SessionDatabaseUnusable,
    SessionRecord,
    SessionStore,
    SessionStoreError,
    memory_id_for,
)
from hermes_core.cli.main import main
from hermes_core.types import Message
from tests.agent.episodic.conftest import NOW, assert_refused, rec, v1_database


def test_fresh_database_schema_wal_and_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        conn = store.connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("SELECT version, applied_at FROM schema_version").fetchall() == [
            (v, NOW) for v in range(1, memory_migrations.LATEST_VERSION + 1)]
        cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions_fts)")]
        assert cols == ["summary", "tags", "session_id", "created_at", "relevance_score"]
    with SessionStore(path) as again:  # re-open applies nothing twice
        assert (again.connection.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0]
                == memory_migrations.LATEST_VERSION)


def test_missing_database_with_create_false(tmp_path: Path) -> None:
    path = tmp_path / "none.db"
    with pytest.raises(SessionDatabaseMissing) as e:
        SessionStore(path, create=False)
    assert str(path) in str(e.value)
    assert not path.exists()


def test_empty_file_is_initialised(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch()
    with SessionStore(path) as store:
        assert store.count() == 0


def test_corrupted_pages_are_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("a", "some summary"))
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    raw[100:] = b"\xde\xad\xbe\xef" * ((len(raw) - 100) // 4)
    path.write_bytes(bytes(raw))
    assert_refused(path, "corrupted")


@pytest.mark.parametrize("column, value", [("relevance_score", "abc"), ("created_at", None),
                                           ("created_at", b"\xff"), ("relevance_score", 1e999)])
def test_an_index_row_with_an_unreadable_number_is_skipped_with_a_warning_not_a_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str],
        column: str, value: object) -> None:
    """The index keeps a copy of each session's stamp and prior; a copy that is not a finite
    number (a file edited by hand or by another tool) costs that session its place in a search,
    said once with the way out, never every search of the archive."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("good", "deployed the gateway"))
        store.upsert(rec("bad", "deployed the gateway again"))
        store.connection.execute(f"UPDATE sessions_fts SET {column} = ? WHERE session_id = 'bad'",
                                 (value,))
        store.connection.commit()
        with caplog.at_level("WARNING"):
            assert [h.session_id for h in store.search('"deployed"', 5)] == ["good"]
            assert [h.session_id for h in store.search_recent('"deployed"', 5)] == ["good"]
    assert "memory rebuild" in caplog.text and str(path) in caplog.text
    assert main(["memory", "search", "deployed", "--db", str(path)]) == 0
    shown = capsys.readouterr()
    assert "good" in shown.out and "Traceback" not in shown.err


@pytest.mark.parametrize("value", ["garbage", b"\xff", 1e999, -1e999])
def test_stats_give_the_range_of_the_readable_stamps(tmp_path: Path, value: object,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A stamp written by another tool (text, a blob, an infinity) sorts after every number in
    SQLite's MAX; ``memory stats`` printed it through datetime and ended in a TypeError."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("old", "first summary", created_at=NOW - 86_400))
        store.upsert(rec("new", "second summary", created_at=NOW))
        store.upsert(rec("odd", "third summary", created_at=NOW - 3600))
        store.connection.execute("UPDATE sessions SET created_at = ? WHERE session_id = 'odd'",
                                 (value,))
        store.connection.commit()
        stats = store.stats()
    assert (stats["oldest"], stats["newest"], stats["sessions"]) == (NOW - 86_400, NOW, 3)
    assert main(["memory", "stats", "--db", str(path), "--json"]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("column, value", [("summary", b"\x00\xff\x00"), ("tags", b"\xff"),
                                           ("summary", 12345), ("tags", 3.5)])
def test_a_rebuild_indexes_a_session_whose_text_is_not_text(
        tmp_path: Path, column: str, value: object, capsys: pytest.CaptureFixture[str]) -> None:
    """A summary or tags cell written by another tool as a blob or a number: ``memory rebuild``,
    the way out of a damaged index, ended in a TypeError from the tokenizer."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("good", "deployed the gateway", ("ops",)))
        store.upsert(rec("odd", "deployed the cache", ("ops",)))
        store.connection.execute(f"UPDATE sessions SET {column} = ? WHERE session_id = 'odd'",
                                 (value,))
        store.connection.commit()
        assert store.rebuild() == 2
        assert "good" in [h.session_id for h in store.search('"deployed"', 5)]
    assert main(["memory", "rebuild", "--db", str(path)]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("column", ["summary", "tags"])
def test_a_session_whose_text_is_a_blob_is_read_as_text(tmp_path: Path, column: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Summary and tags are read back for every recalled session: a cell written as a blob by
    another tool ended every search that found it in a TypeError."""
    path = tmp_path / "sessions.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("odd", "deployed the cache", ("ops",)))
        store.connection.execute(f"UPDATE sessions SET {column} = CAST({column} AS BLOB)")
        store.connection.commit()
        [hit] = store.search('"deployed"', 5)
        assert store.texts([hit.rowid])[hit.rowid] == ("deployed the cache", ("ops",))
        assert store.get("odd") is not None
    assert main(["memory", "search", "deployed", "--db", str(path)]) == 0
    shown = capsys.readouterr()
    assert "deployed the cache" in shown.out and "Traceback" not in shown.err


def test_newer_schema_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("INSERT INTO schema_version VALUES (99, 'future', 0)", ours=True)
    assert_refused(path, "newer than this hermes-core")


def test_insert_replace_unchanged_duplicate(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        first = store.upsert(rec("s1", "Deployed the API gateway", ("deploy",)))
        assert first.status == "inserted"
        assert first.memory_id == memory_id_for("s1") == SessionRecord("s1", "", (), 0).memory_id
        assert store.upsert(rec("s1", "Deployed  the API gateway", ("deploy",))).status == "unchanged"
        assert store.upsert(rec("s1", "Rolled back the API gateway", ("deploy",))).status == "replaced"
        assert store.count() == 1
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0] == 1
        assert store.search('"deployed"', 5) == []  # the old text left the index with its row
        assert [h.session_id for h in store.search('"rolled"', 5)] == ["s1"]
        dup = store.upsert(rec("s2", "Rolled back the API gateway"))
        assert (dup.status, dup.duplicate_of) == ("duplicate", "s1")
        assert store.count() == 1
        assert store.upsert(rec("s1", "Rolled back the API gateway", ("deploy", "rollback"))).status \
            == "replaced"  # same text, new tags: stored anew
        assert store.get("s1") is not None and store.get("s1").tags == ("deploy", "rollback")  # type: ignore[union-attr]


@pytest.mark.parametrize("words", [1, 400])   # one index row, and a summary cut into passages
def test_a_summary_told_again_in_a_later_session_is_dated_by_the_later_one(
        tmp_path: Path, words: int) -> None:
    """An exact repeat is not stored twice, but the copy kept its first date: a fact the user
    told again yesterday weighed as four months old in recall, while a repeat differing by one
    word would have weighed as new. The kept copy takes the later date, in the index too."""
    summary = "The user prefers dark mode in every editor " + " ".join(
        f"detail{i}" for i in range(words))
    with SessionStore(tmp_path / "s.db", clock=lambda: NOW) as store:
        store.upsert(rec("s1", summary, ("ui",), created_at=NOW - 120 * 86_400))
        dup = store.upsert(rec("s2", summary, created_at=NOW - 86_400))
        assert (dup.status, dup.duplicate_of) == ("duplicate", "s1")
        assert store.get("s1").created_at == NOW - 86_400   # type: ignore[union-attr]
        assert {h.created_at for h in store.search('"dark"', 5)} == {NOW - 86_400}
        older = store.upsert(rec("s0", summary, created_at=NOW - 200 * 86_400))
        assert older.status == "duplicate"   # an older repeat moves nothing back
        assert store.get("s1").created_at == NOW - 86_400   # type: ignore[union-attr]
        assert store.get("s1").tags == ("ui",)   # type: ignore[union-attr]
        stats = store.stats()
        assert stats["index_in_sync"] is True and stats["newest"] == NOW - 86_400
        assert store.connection.execute("SELECT COUNT(*) FROM index_drift").fetchone()[0] == 0


def test_a_repeat_stamped_past_the_clock_leaves_the_kept_copy_and_a_true_later_one_dates_it(
        tmp_path: Path) -> None:
    """A repeat stamped a year ahead (another machine's clock) moved the kept copy a year
    ahead, where recency weighs a stamp as the oldest; and a copy a fast clock had moved there
    was never brought back, since every true repeat after the clock was put right is
    "older". A stamp past the clock's slack moves nothing; a kept stamp past it is no date."""
    summary = "The user prefers dark mode in every editor"
    clock = [NOW]
    year = 365 * 86_400
    with SessionStore(tmp_path / "s.db", clock=lambda: clock[0]) as store:
        store.upsert(rec("s1", summary, created_at=NOW - 2 * 86_400))
        assert store.upsert(rec("s2", summary, created_at=NOW + year)).status == "duplicate"
        assert store.get("s1").created_at == NOW - 2 * 86_400   # type: ignore[union-attr]
        clock[0] = NOW + year            # this machine's clock runs a year fast ...
        store.upsert(rec("s3", summary, created_at=clock[0]))
        clock[0] = NOW + 86_400          # ... and is put right: the next repeat dates it
        store.upsert(rec("s4", summary, created_at=clock[0]))
        assert store.get("s1").created_at == NOW + 86_400   # type: ignore[union-attr]
        assert {h.created_at for h in store.search('"dark"', 5)} == {NOW + 86_400}


def test_re_record_into_another_sessions_summary_removes_own_stale_row(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(rec("a", "alpha text"))
        store.upsert(rec("b", "beta text"))
        res = store.upsert(rec("a", "beta text"))
        assert (res.status, res.duplicate_of) == ("duplicate", "b")
        assert store.get("a") is None and store.count() == 1


def test_delete_and_rebuild(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert_many([rec("a", "我喜欢吃苹果", ("水果",)), rec("b", "deploy kubernetes")])
        store.connection.execute("DELETE FROM sessions_fts")  # index lost
        assert store.stats()["index_in_sync"] is False
        assert store.search('"苹果"', 5) == []
        assert store.rebuild() == 2
        assert store.stats()["index_in_sync"] is True
        assert [h.session_id for h in store.search('"苹果"', 5)] == ["a"]
        assert [h.session_id for h in store.search('"水果"', 5)] == ["a"]
        assert store.delete("a") is True and store.delete("a") is False
        assert store.search('"苹果"', 5) == []


def test_stats(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert_many([rec("a", "x one", created_at=100.0), rec("b", "y two", created_at=300.0)])
        s = store.stats()
    assert (s["sessions"], s["indexed"], s["oldest"], s["newest"]) == (2, 2, 100.0, 300.0)
    assert s["schema_version"] == memory_migrations.LATEST_VERSION
    assert s["journal_mode"] == "wal" and s["sources"] == {"manual": 2}


def _writer(path: str, prefix: str, n: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    from hermes_core.agent.context_engine import ContextEngine

    barrier.wait(timeout=60)
    with ContextEngine(path) as engine:  # both processes may race to create and migrate the file
        for i in range(n):
            engine.add(f"{prefix}-{i}", f"{prefix} worker wrote session number {i} about sqlite wal",
                       ["concurrency", prefix])


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "sessions.db"
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    n = 60
    procs = [ctx.Process(target=_writer, args=(str(path), p, n, barrier)) for p in ("left", "right")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    with SessionStore(path, create=False) as store:
        stats = store.stats()
        assert stats["sessions"] == 2 * n and stats["index_in_sync"]
        ids = {r[0] for r in store.connection.execute("SELECT session_id FROM sessions")}
        assert ids == {f"{p}-{i}" for p in ("left", "right") for i in range(n)}
        assert (store.connection.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0]
                == memory_migrations.LATEST_VERSION)
        assert len(store.search('"right"', 1000)) == n


def test_lock_held_past_the_busy_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process mid-write on a fresh file
    try:
        with pytest.raises(context_store.SessionStoreError) as e:
            SessionStore(path, busy_timeout_s=0.05)
        assert not isinstance(e.value, SessionDatabaseUnusable)  # busy, not corrupted
        assert str(path) in str(e.value) and "locked" in str(e.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with SessionStore(path) as store:  # and the file is fine afterwards
        assert store.count() == 0


def test_threads_sharing_one_engine(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hermes_core.agent.context_engine import ContextEngine

    with ContextEngine(tmp_path / "s.db") as engine:
        def work(t: int) -> int:
            found = 0
            for i in range(25):
                engine.add(f"t{t}-{i}", f"thread {t} stored espresso note {i}")
                found += len(engine.retrieve("espresso", 3))
            return found

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(work, range(4)))
        assert all(r > 0 for r in results)
        assert engine.stats()["sessions"] == 100 and engine.stats()["index_in_sync"]


def _full(engine: ContextEngine) -> None:
    """Cap the database at its current size: the next growing write fails with SQLITE_FULL, and
    SQLite rolls the transaction back by itself (as on a real full disk)."""
    conn = engine.store.connection
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def test_disk_full_is_a_clear_memory_store_error(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s0", "seed row about sqlite")
        _full(engine)
        with pytest.raises(SessionStoreError) as info:
            engine.add("s1", "a long summary about many things " * 2000)
        assert "full" in str(info.value)
        assert str(tmp_path / "sessions.db") in str(info.value)
        assert not isinstance(info.value, SessionDatabaseUnusable)  # the file is fine, the disk is not
        # the store is still usable: nothing half-written, the transaction is closed
        assert not engine.store.connection.in_transaction
        assert [f.session_id for f in engine.retrieve("sqlite")] == ["s0"]
        assert engine.stats()["sessions"] == 1


def test_session_recording_on_a_full_disk_is_a_hermes_error(tmp_path: Path) -> None:
    from hermes_core.errors import HermesError
    from hermes_core.types import Message

    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        engine.add("s0", "seed row")
        _full(engine)
        text = ". ".join(" ".join(f"term{i}x{j}" for j in range(8)) for i in range(200))
        msgs = [Message("user", text), Message("assistant", text.upper())]
        with pytest.raises(HermesError):
            engine.record_session("s1", msgs)


def test_cli_add_on_a_full_disk_exits_1_without_a_traceback(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("s0", "seed row")
    real_init = ContextEngine.__init__

    def capped(self: ContextEngine, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        _full(self)

    monkeypatch.setattr(ContextEngine, "__init__", capped)
    code = main(["memory", "add", "--db", str(db), "--session-id", "s1",
                 "--summary", "words " * 20000])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and "full" in err


@pytest.fixture
def readonly_dir(tmp_path: Path) -> Iterator[tuple[Path, object]]:
    """A directory made read-only for real: a read-only remount of a tmpfs when running as root
    (root ignores permission bits), else permission bits. Yields (dir, make_readonly)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mnt)], capture_output=True).returncode:
            pytest.skip("running as root without permission to mount a read-only filesystem")

        def make_ro() -> None:
            subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        try:
            yield mnt, make_ro
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    else:
        def make_ro() -> None:
            for p in mnt.iterdir():
                p.chmod(0o444)
            mnt.chmod(0o555)
        try:
            yield mnt, make_ro
        finally:
            mnt.chmod(0o755)


def test_read_only_database_can_still_be_searched(readonly_dir: tuple[Path, object],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    mnt, make_ro = readonly_dir
    db = mnt / "sessions.db"
    with ContextEngine(db) as engine:
        engine.add("s1", "deployed the kubernetes cluster with helm charts", "k8s")
    make_ro()  # type: ignore[operator]
    with ContextEngine(db, create=False) as engine:
        assert [f.session_id for f in engine.retrieve("helm")] == ["s1"]
        assert engine.stats()["sessions"] == 1
        with pytest.raises(SessionStoreError, match="read-only"):
            engine.add("s2", "another session about redis")
    with ContextEngine(db) as engine:    # the Agent opens with create=True: still readable
        assert engine.memories_block("helm charts").count("kubernetes") == 1
    assert main(["memory", "search", "helm", "--db", str(db), "--json"]) == 0
    assert '"s1"' in capsys.readouterr().out


def test_an_old_schema_on_a_read_only_filesystem_opens_read_only(
        readonly_dir: tuple[Path, object], monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade that brings a migration (and a re-index) must not lock a user out of a database
    it cannot write: an older schema the read path understands opens read-only, as before."""
    from hermes_core.agent.episodic.store import SessionStore

    mnt, make_ro = readonly_dir
    db = mnt / "sessions.db"
    v1_database(db, monkeypatch)
    make_ro()  # type: ignore[operator]
    with SessionStore(db, create=False) as store:
        assert store.read_only and store.count() == 1
        assert [h.session_id for h in store.search('"预算"', 5)] == ["s-old"]


NOW_UNICODE = 1_760_000_000.0


def test_record_session_with_lone_surrogates_is_stored(tmp_path: Path) -> None:
    engine = ContextEngine(tmp_path / "s.db", clock=lambda: NOW_UNICODE)
    msgs = [Message(role="user", content="please deploy \udcff the kubernetes cluster with helm"),
            Message(role="assistant", content="Deployed the kubernetes cluster \ud800 with helm.")]
    res = engine.record_session("sess-\udc80", msgs)
    assert res.status == "inserted"
    hits = engine.retrieve("kubernetes helm")
    assert [h.session_id for h in hits] == ["sess-\ufffd"]
    assert "\ufffd" in hits[0].summary and "\udcff" not in hits[0].summary
    assert engine.get("sess-\udc80") is not None      # looked up by the same (scrubbed) id
    assert engine.retrieve("kubernetes", exclude_session="sess-\udc80") == []
    assert engine.forget("sess-\udc80") is True
    engine.close()


def test_add_and_add_many_with_surrogates(tmp_path: Path) -> None:
    engine = ContextEngine(tmp_path / "s.db", clock=lambda: NOW_UNICODE)
    assert engine.add("a", "broken \udcfe paste of a stack trace", "tag\udcff,ok").status == "inserted"
    got = engine.get("a")
    assert got is not None and got.tags == ("tag\ufffd", "ok")
    n = engine.add_many([SessionRecord("b\ud801", "raw \udc00 record about redis", ("x\udc01",),
                                       NOW_UNICODE)])
    assert n == 1
    assert [f.session_id for f in engine.retrieve("redis")] == ["b\ufffd"]
    engine.close()


def test_a_read_only_store_searches_and_writes_nothing(tmp_path: Path) -> None:
    """A preview (``hermes-core prompt``) opens the memory read-only: no rewrite, no marker, no
    migration; the file is left byte for byte; a missing file is not created."""
    path = tmp_path / "m.db"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("s1", "token abc-SECRET-123 for staging", ("deploy",)))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    ro = SessionStore(path, read_only=True)
    assert ro.read_only and ro.get("s1") is not None
    assert ro.rewrite_holding({"m1": "abc-SECRET-123"}, lambda r: replace(r, summary="clean")) == 0
    ro.close()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    with pytest.raises(SessionDatabaseMissing):
        SessionStore(tmp_path / "none.db", read_only=True)
    assert not (tmp_path / "none.db").exists()


def _newer(path: Path) -> None:
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("s1", "deployed the app", ("deploy",)))
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'from the future', 0)")
    conn.close()


def _another_program(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    conn.close()


@pytest.mark.parametrize("make, says", [
    (_newer, "schema version 99 is newer than this hermes-core understands"),
    (_another_program, "another program's SQLite database (tables: orders)"),
    (lambda p: p.write_bytes(b""), "empty file"),
])
def test_a_preview_that_cannot_read_the_file_says_why_and_leaves_it(tmp_path: Path, make,
                                                                   says: str) -> None:
    """``memory search`` / ``memory stats`` / ``prompt`` open read-only; they answered "not a
    current memory database, or unreadable" for every cause, where a writing command names it."""
    path = tmp_path / "m.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(SessionStoreError) as info:
        SessionStore(path, read_only=True)
    assert says in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == before


def test_rows_holding_a_needle_are_rewritten_once_per_marker(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "m.db", clock=lambda: NOW)
    store.upsert(rec("s1", "token abc-SECRET-123 for staging", ("deploy",)))
    store.upsert(rec("s2", "nothing to hide here", ("misc",)))
    store.upsert(rec("s3", "token [gone] for staging", ("deploy",)))   # what s1 becomes

    def clean(r: SessionRecord) -> SessionRecord:
        return SessionRecord(r.session_id, r.summary.replace("abc-SECRET-123", "[gone]"), r.tags,
                             r.created_at)

    assert store.rewrite_holding({"m1": "abc-SECRET-123"}, clean) == 1
    # s1 became a copy of s3's summary: kept once, as upsert keeps a duplicate
    assert store.get("s1") is None and store.get("s3") is not None and store.get("s2") is not None
    assert "SECRET" not in repr(store.connection.execute("SELECT * FROM sessions_fts").fetchall())
    store.upsert(rec("s4", "abc-SECRET-123 written by another tool later"))
    assert store.rewrite_holding({"m1": "abc-SECRET-123"}, clean) == 0   # m1 is done
    assert store.rewrite_holding({}, clean) == 0
    store.close()


def test_a_rewritten_id_already_stored_keeps_the_newer_session(tmp_path: Path) -> None:
    """A session recorded under an id holding a key, then again once the key was configured
    (stored under the redacted id): the rewrite of the old row must not replace the newer one."""
    store = SessionStore(tmp_path / "m.db", clock=lambda: NOW)
    store.upsert(rec("deploy-abc-SECRET-123", "first notes on the deploy", created_at=NOW - 100))
    store.upsert(rec("deploy-[gone]", "the deploy finished, notes updated", created_at=NOW))

    def clean(r: SessionRecord) -> SessionRecord:
        return SessionRecord(r.session_id.replace("abc-SECRET-123", "[gone]"), r.summary, r.tags,
                             r.created_at)

    store.rewrite_holding({"m1": "abc-SECRET-123"}, clean)
    kept = store.get("deploy-[gone]")
    assert kept is not None and kept.summary == "the deploy finished, notes updated"
    assert store.get("deploy-abc-SECRET-123") is None and store.stats()["sessions"] == 1
    store.close()


@pytest.mark.parametrize("column, value", [("created_at", "garbage"), ("created_at", b"\xff"),
                                           ("relevance_score", "high"), ("created_at", 1e999)])
def test_a_row_holding_a_key_whose_number_another_tool_made_unreadable_is_rewritten(
        tmp_path: Path, column: str, value: object) -> None:
    """The key scrub read every stamp and prior through float(): one text or blob cell in a row
    holding a key raised ValueError out of every ContextEngine's construction (every command),
    the key left in the file. The row is rewritten and the unreadable cell kept as it was."""
    needle = "abc-SECRET-123"
    with SessionStore(tmp_path / "m.db", clock=lambda: NOW) as store:
        store.upsert(rec("s1", f"token {needle} for staging", ("deploy",)))
        store.upsert(rec("s2", "nothing to hide here", ("misc",)))
        store.connection.execute(f"UPDATE sessions SET {column} = ? WHERE session_id = 's1'",
                                 (value,))
        store.connection.execute(f"UPDATE sessions_fts SET {column} = ? WHERE session_id = 's1'",
                                 (value,))
        store.connection.commit()
        clean = lambda r: replace(r, summary=r.summary.replace(needle, "[gone]"))  # noqa: E731
        assert store.rewrite_holding({"m1": needle}, clean) == 1
        conn = store.connection
        assert "SECRET" not in repr(conn.execute("SELECT * FROM sessions").fetchall())
        assert "SECRET" not in repr(conn.execute("SELECT * FROM sessions_fts").fetchall())
        [(kept,)] = conn.execute(f"SELECT {column} FROM sessions WHERE session_id = 's1'")
        assert kept == value
        assert store.count() == 2


def test_a_rewrite_leaves_no_piece_of_the_needle_in_the_index_segments(
        planted_archive: Callable[[str, str], tuple[Path, Callable[[], bytes]]]) -> None:
    """FTS5 deletes by adding tombstones: the words of the deleted row stay in its segment (in
    sessions_fts_data) until the segments are merged, so the key's pieces outlived the rewrite."""
    needle = "zq9-Horse7-battery-Staple"
    path, raw = planted_archive("holder", f"the proxy key {needle} for staging")
    assert b"staple" in raw()
    with SessionStore(path, clock=lambda: NOW) as store:
        assert store.rewrite_holding(
            {"m1": needle}, lambda r: replace(r, summary=r.summary.replace(needle, "[gone]"))) == 1
        assert [h.session_id for h in store.search("staging", 5)] == ["holder"]
    assert b"staple" not in raw() and b"battery" not in raw()


def test_a_short_tag_that_turns_up_inside_a_needle_does_not_get_its_row_rewritten(
        tmp_path: Path) -> None:
    """"git" inside a random key is chance, not a piece of it: every session tagged "git" would
    otherwise lose the tag for good. A longer piece ("Horse7") is the key's."""
    needle = "xQgiT7-Horse7-battery"
    with SessionStore(tmp_path / "m.db", clock=lambda: NOW) as store:
        store.upsert(rec("s1", "rebased the branch", ("git",)))
        store.upsert(rec("s2", "proxy notes", ("proxy", "horse7")))
        seen: list[str] = []

        def clean(r: SessionRecord) -> SessionRecord:
            seen.append(r.session_id)
            return replace(r, tags=tuple(t for t in r.tags if t.lower() not in needle.lower()))

        assert store.rewrite_holding({"m1": needle}, clean) == 1
        assert seen == ["s2"]
        s1, s2 = store.get("s1"), store.get("s2")
        assert s1 is not None and s1.tags == ("git",) and s2 is not None and s2.tags == ("proxy",)


def test_a_forgotten_session_leaves_none_of_its_words_in_the_file(
        planted_archive: Callable[[str, str], tuple[Path, Callable[[], bytes]]]) -> None:
    """A deleted row's words stay in its FTS5 segment (a tombstone hides them) until the segments
    are merged: a session the user asked to forget was still readable in sessions.db."""
    path, raw = planted_archive("private", "the user confided xylophonicdiagnosis about their health")
    assert b"xylophonicdiagnosis" in raw()
    with SessionStore(path, clock=lambda: NOW) as store:
        assert store.delete("private") is True
        assert store.search('"xylophonicdiagnosis"', 5) == []
        assert [h.session_id for h in store.search('"pasta"', 1)]
    assert b"xylophonicdiagnosis" not in raw() and b"confided" not in raw()


def _long_reader(path: str, reading: multiprocessing.synchronize.Event,
                 done: multiprocessing.synchronize.Event) -> None:
    """Another agent's process in the middle of a read: its snapshot pins the WAL."""
    with SessionStore(path, create=False) as store, store.snapshot():
        store.search('"pasta"', 1)
        reading.set()
        done.wait(timeout=60)


@pytest.fixture
def reader_process() -> Iterator[Callable[[Path], Callable[[], None]]]:
    """Starts a process holding a read transaction on a database (for up to 60 s); returns the
    call that ends it, which fails if the reader had already given up waiting."""
    ctx = multiprocessing.get_context("spawn")
    started: list[tuple[multiprocessing.process.BaseProcess, multiprocessing.synchronize.Event]] = []

    def start(path: Path) -> Callable[[], None]:
        reading, done = ctx.Event(), ctx.Event()
        proc = ctx.Process(target=_long_reader, args=(str(path), reading, done))
        proc.start()
        started.append((proc, done))
        assert reading.wait(timeout=60), "the reader process never started reading"

        def end() -> None:
            assert proc.is_alive(), "the reader stopped before it was told to"
            done.set()
            proc.join(timeout=60)
            assert proc.exitcode == 0
        return end

    yield start
    for proc, done in started:
        done.set()
        proc.join(timeout=60)


def test_forgetting_while_another_process_reads_neither_waits_for_it_nor_leaves_the_words(
        planted_archive: Callable[[str, str], tuple[Path, Callable[[], bytes]]],
        reader_process: Callable[[Path], Callable[[], None]]) -> None:
    """The WAL cannot be emptied while another process reads from it: the TRUNCATE checkpoint
    after a forget sat in the busy handler for the whole busy timeout (30 s by default), then
    gave up silently, and the forgotten words stayed in ``-wal`` for as long as this process
    kept the file open. The checkpoint now does not wait, and is retried at the next write."""
    path, raw = planted_archive("private", "the user confided xylophonicdiagnosis about their health")
    with SessionStore(path, clock=lambda: NOW, busy_timeout_s=300.0) as store:
        end_reader = reader_process(path)
        assert store.delete("private") is True
        end_reader()   # still reading: the forget did not wait it out
        store.upsert(rec("later", "a later session about pears"))
        assert b"xylophonicdiagnosis" not in raw() and b"confided" not in raw()


def test_the_wal_a_long_reader_let_grow_is_cut_back_once_it_ends(
        tmp_path: Path, reader_process: Callable[[Path], Callable[[], None]]) -> None:
    """Writes behind a long read cannot be checkpointed, so ``-wal`` grows meanwhile; without a
    journal size limit it kept its largest size (82 MB after 1,500 sessions) until the last
    process closed the file, which a long-running agent never does."""
    path = tmp_path / "sessions.db"
    wal = tmp_path / "sessions.db-wal"
    with SessionStore(path, clock=lambda: NOW) as store:
        store.upsert(rec("seed", "pasta to start with"))
        end_reader = reader_process(path)
        words = " ".join(f"word{i}" for i in range(300))
        i = 0
        while wal.stat().st_size <= 2 * context_store.WAL_SIZE_LIMIT_BYTES:
            store.upsert(rec(f"s{i}", f"session {i} {words}"))
            i += 1
        end_reader()
        for j in range(5):
            store.upsert(rec(f"after{j}", f"after the reader {j} {words}"))
        assert wal.stat().st_size <= context_store.WAL_SIZE_LIMIT_BYTES
        assert store.count() == i + 6 and store.stats()["index_in_sync"]


def test_a_forget_the_full_disk_refused_says_the_session_was_not_forgotten(
        planted_archive: Callable[[str, str], tuple[Path, Callable[[], bytes]]]) -> None:
    """Forgetting merges the index, which needs room: on a full disk the error said "nothing was
    stored", an answer to a question the user did not ask, while the session was still there."""
    path, _ = planted_archive("private", "the user confided xylophonicdiagnosis about their health")
    with SessionStore(path, clock=lambda: NOW) as store:
        pages = store.connection.execute("PRAGMA page_count").fetchone()[0]
        store.connection.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(SessionStoreError) as info:
            store.delete("private")
        assert "disk full" in str(info.value) and "'private' was not forgotten" in str(info.value)
        assert "stored" not in str(info.value)
        assert store.get("private") is not None


def test_importing_and_opening_the_store_pulls_in_no_config(tmp_path: Path) -> None:
    """A store needs none of config (pydantic, yaml, the routing rules: ~0.4 s of a process's
    start); ranking names ``RecencyWeights`` in annotations only."""
    path = tmp_path / "sessions.db"
    code = (f"import sys\nfrom hermes_core.agent.episodic.store import SessionStore\n"
            f"SessionStore({str(path)!r}).close()\n"
            f"print([m for m in ('hermes_core.config', 'pydantic', 'yaml') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
