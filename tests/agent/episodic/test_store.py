"""Tests of ``hermes_core/agent/episodic/store.py``.

The SQLite store: migrations, WAL, refusing foreign/corrupted files, replace rules, concurrency.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core import emoji_groups
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import passages, ranking
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.migrations import APPLICATION_ID, Migration
from hermes_core.agent.episodic.store import (
    SessionDatabaseMissing,
    SessionDatabaseUnusable,
    SessionRecord,
    SessionStore,
    SessionStoreError,
    memory_id_for,
)
from hermes_core.cli.main import main
from hermes_core.emoji_groups import toned_forms
from hermes_core.errors import HermesError, SessionQueryInvalid
from hermes_core.tokenize import (
    SEGMENT_VERSION,
    emoji_release,
    segment_key,
    symbol_terms,
    tokenizer_key,
)
from hermes_core.types import Message

NOW = 1_800_000_000.0


def rec(session_id: str, summary: str, tags: tuple[str, ...] = (), created_at: float = NOW) -> SessionRecord:
    return SessionRecord(session_id, summary, tags, created_at)


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


def test_failed_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration 2 exploded")

    old = memory_migrations.LATEST_VERSION
    monkeypatch.setattr(memory_migrations, "MIGRATIONS", (*memory_migrations.MIGRATIONS,
                                                          Migration(old + 1, "broken", broken)))
    monkeypatch.setattr(context_store, "LATEST_VERSION", old + 1)
    with pytest.raises(RuntimeError, match="exploded"):
        SessionStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == old
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None


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


def _assert_refused(path: Path, fragment: str) -> None:
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(SessionDatabaseUnusable) as e:
        SessionStore(path)
    assert isinstance(e.value, HermesError)
    assert str(path) in str(e.value)
    assert fragment in str(e.value)
    if before is not None:
        assert path.read_bytes() == before, "the file must never be overwritten"


def test_text_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_text("my important notes\n" * 50)
    _assert_refused(path, "is not an SQLite database")


def test_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.mkdir()
    _assert_refused(path, "is a directory")


def test_other_programs_sqlite_database_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
                     "INSERT INTO users(name) VALUES ('ada')")
    _assert_refused(path, "another program's SQLite database (tables: users)")


def test_foreign_application_id_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("PRAGMA application_id = 1234", "CREATE TABLE t (x)")
    _assert_refused(path, "application_id 0x4d2")


def test_corrupted_pages_are_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("a", "some summary"))
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    raw[100:] = b"\xde\xad\xbe\xef" * ((len(raw) - 100) // 4)
    path.write_bytes(bytes(raw))
    _assert_refused(path, "corrupted")


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


def test_truncated_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"SQLite format 3\x00\x10\x00")
    _assert_refused(path, "truncated")


def test_newer_schema_is_refused(sqlite_at: Callable[..., Path]) -> None:
    path = sqlite_at("INSERT INTO schema_version VALUES (99, 'future', 0)", ours=True)
    _assert_refused(path, "newer than this hermes-core")


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


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "sessions.db"
    os.mkfifo(fifo)
    code = (f"from hermes_core.agent.episodic.store import SessionStore\n"
            f"SessionStore({str(fifo)!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode != 0
    assert "not a regular file" in proc.stderr and str(fifo) in proc.stderr


def test_socket_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.db"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    try:
        with pytest.raises(SessionDatabaseUnusable, match="not a regular file"):
            SessionStore(path)
    finally:
        sock.close()


def test_cli_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "sessions.db"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "hermes_core.cli", "memory", "stats", "--db", str(fifo)],
                          capture_output=True, text=True, timeout=120,   # a hang's bound: the CLI's
                          env={**os.environ, "PYTHONPATH": os.getcwd()})  # import took 20 s under load
    assert proc.returncode == 1
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


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


def test_migration_on_a_full_disk_names_the_real_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Upgrading an old database when the disk fills up: the warning says 'full', the old version
    stays, and the old schema (still readable) opens read-only: past sessions stay searchable."""
    import sqlite3

    from hermes_core.agent.episodic import migrations as memory_migrations
    from hermes_core.agent.episodic import store as context_store
    from hermes_core.agent.episodic.migrations import Migration

    path = tmp_path / "sessions.db"
    with ContextEngine(path, clock=lambda: NOW) as engine:
        engine.add("s0", "kept across the failed upgrade")

    def grows_past_the_disk(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        conn.execute("ALTER TABLE sessions ADD COLUMN notes TEXT")
        conn.execute("UPDATE sessions SET notes = ?", ("x" * 100_000,))

    old = memory_migrations.LATEST_VERSION
    monkeypatch.setattr(memory_migrations, "MIGRATIONS",
                        (*memory_migrations.MIGRATIONS, Migration(old + 1, "grows", grows_past_the_disk)))
    monkeypatch.setattr(context_store, "LATEST_VERSION", old + 1)
    with caplog.at_level("WARNING"), ContextEngine(path, clock=lambda: NOW) as engine:
        assert engine.store.read_only
        assert [m.session_id for m in engine.retrieve("upgrade")] == ["s0"]
        with pytest.raises(SessionStoreError, match="read-only"):
            engine.add("s1", "not recorded while the disk is full")
    assert "full" in caplog.text and "rollback" not in caplog.text
    # a schema the read path does not understand is refused instead, naming the real error
    monkeypatch.setattr(context_store, "READ_COMPAT_VERSION", old + 1)
    with pytest.raises(SessionStoreError) as info:
        ContextEngine(path, clock=lambda: NOW)
    assert "full" in str(info.value) and "rollback" not in str(info.value)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == old
    assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    conn.close()


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



NOW_TOKENIZER_UPGRADE = 1_750_000_000.0


TEXT = "明天下午3点和John开会讨论预算"


def _old_segment(text: str) -> str:
    """How the first tokenizer cut mixed text: Chinese glued to a digit or a Latin word stayed one
    token (3点和John开会 -> one term), so '开会' never matched it."""
    return text.lower()


def v1_database(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sessions.db as the first release left it: schema 1, rows indexed by the old tokenizer."""
    with monkeypatch.context() as m:
        m.setattr(memory_migrations, "MIGRATIONS", memory_migrations.MIGRATIONS[:1])
        m.setattr(context_store, "LATEST_VERSION", 1)
        with SessionStore(path, clock=lambda: NOW_TOKENIZER_UPGRADE, segment=_old_segment) as store:
            from hermes_core.agent.episodic.store import SessionRecord
            store.upsert(SessionRecord("s-old", TEXT, ("预算",), NOW_TOKENIZER_UPGRADE))
            assert store.search("开会", 5) == []   # the stale index cannot find it


def test_opening_an_old_database_reindexes_it_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    v1_database(path, monkeypatch)
    with SessionStore(path) as store:
        assert store.reindexed == 1
        assert [h.session_id for h in store.search("开会", 5)] == ["s-old"]
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (
            f"hermes-tokenize-{tokenizer_key()}.{segment_key()}{passages.LAYOUT}",)
        assert store.stats()["index_in_sync"]
    with SessionStore(path) as again:          # recorded: nothing to do the second time
        assert again.reindexed == 0
    with ContextEngine(path, clock=lambda: NOW_TOKENIZER_UPGRADE) as engine:
        assert [m.session_id for m in engine.retrieve("John 开会")] == ["s-old"]


def test_a_store_with_a_custom_segmenter_never_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=_old_segment) as store:
        from hermes_core.agent.episodic.store import SessionRecord
        store.upsert(SessionRecord("s1", TEXT, (), NOW_TOKENIZER_UPGRADE))
        assert store.reindexed == 0
    with SessionStore(path, segment=_old_segment) as again:
        assert again.reindexed == 0
    with SessionStore(path, segment=_old_segment, segment_id="mine-1") as named:
        assert named.reindexed == 1                      # a named segmenter is compared
    with SessionStore(path, segment=_old_segment, segment_id="mine-1") as named_again:
        assert named_again.reindexed == 0


def engine_with(tmp_path: Path, n_common: int) -> ContextEngine:
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    for i in range(n_common):
        eng.add(f"c{i}", f"routine deploy of the billing service number {i}", created_at=1_900_000_000.0 + i)
    return eng


def test_term_df_counts_up_to_the_cap_and_is_refreshed_by_a_write(tmp_path: Path) -> None:
    eng = engine_with(tmp_path, 12)
    try:
        store = eng.store
        assert store.term_df("billing", 100) == 12
        assert store.term_df("billing", 5) == 6          # counted no further than cap + 1
        assert store.term_df("nowhere", 100) == 0
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_df("billing", 100) == 13       # the write invalidated the cached count
    finally:
        eng.close()


def test_term_dfs_asks_once_whether_the_database_changed_and_counts_only_new_terms(
        tmp_path: Path, statements_of: Callable[[SessionStore], AbstractContextManager[list[str]]]
) -> None:
    eng = engine_with(tmp_path, 3)
    try:
        store = eng.store
        assert store.term_dfs(["billing", "nowhere"], 100) == {"billing": 3, "nowhere": 0}
        with statements_of(store) as ours:
            assert store.term_dfs(["nowhere", "billing", "deploy"], 100) == {
                "nowhere": 0, "billing": 3, "deploy": 3}
        assert ours[0] == "PRAGMA data_version"
        assert len(ours) == 2 and '"deploy"' in ours[1]    # only 'deploy' was counted
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_dfs(["billing", "bank"], 100) == {"billing": 4, "bank": 1}
    finally:
        eng.close()


def test_term_dfs_of_an_empty_archive_count_nothing_until_a_session_is_added(
        tmp_path: Path, statements_of: Callable[[SessionStore], AbstractContextManager[list[str]]]
) -> None:
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        store = eng.store
        assert store.term_dfs(["billing"], 100) == {"billing": 0}
        with statements_of(store) as ours:
            assert store.term_dfs(["billing", "deploy"], 100) == {"billing": 0, "deploy": 0}
        assert ours == ["PRAGMA data_version"]               # no count of a term: nothing to count
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_dfs(["billing", "deploy"], 100) == {"billing": 1, "deploy": 0}
    finally:
        eng.close()


def test_a_session_another_connection_adds_to_an_empty_archive_is_found_next_turn(
        tmp_path: Path) -> None:
    reader = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    writer = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        assert reader.retrieve("the zorblax quota") == []      # empty: remembered as such
        writer.add("elsewhere", "the zorblax quota ran out", created_at=1_950_000_000.0)
        assert [f.session_id for f in reader.retrieve("the zorblax quota")] == ["elsewhere"]
    finally:
        reader.close()
        writer.close()


def test_search_recent_returns_the_newest_rows_up_to_the_limit(tmp_path: Path) -> None:
    eng = engine_with(tmp_path, 10)
    try:
        hits = eng.store.search_recent('"billing"', 3)
        assert [h.session_id for h in hits] == ["c9", "c8", "c7"]
        assert all(h.bm25 < 0 for h in hits)               # FTS5 bm25 still computed per row
    finally:
        eng.close()


def test_planted_sessions_are_found_among_common_ones(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The recall probe in small: with the common-term cut far below the archive size, a session
    holding the message's rare words is still the first one found."""
    monkeypatch.setattr("hermes_core.agent.context_engine.COMMON_DF", 5)
    eng = engine_with(tmp_path, 40)
    try:
        eng.add("planted", "the billing service deploy failed on a zorblax quota", created_at=1_800_000_000.0)
        found = eng.retrieve("why did the billing deploy hit the zorblax quota?", max_results=3)
        assert found[0].session_id == "planted"
        only_common = eng.retrieve("billing deploy service", max_results=3)
        assert only_common and all(f.session_id.startswith("c") for f in only_common)
        assert ranking.COMMON_DF == 1_000   # the module default is untouched
    finally:
        eng.close()


def test_message_is_searched_and_history_only_breaks_ties(tmp_path: Path) -> None:
    from hermes_core.types import Message, RetrievalQuery

    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        eng.add("rebase", "resolved a git rebase conflict in the billing repo", created_at=1_999_000_000.0)
        eng.add("pg", "postgres query slow after deploy: added an index", created_at=1_999_000_000.0)
        hist = [Message("user", "How do I fix a git rebase conflict?"), Message("assistant", "...")]
        got = eng.retrieve(RetrievalQuery.of("my postgres query got slow after the deploy", hist))
        assert [f.session_id for f in got] == ["pg"]
        follow = eng.retrieve(RetrievalQuery.of("why?", hist))
        assert [f.session_id for f in follow] == ["rebase"]
    finally:
        eng.close()


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


def test_migrating_a_v1_database_keeps_every_row_and_every_field(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    from hermes_core.agent.episodic.store import SessionRecord

    records = [SessionRecord(f"s{i}", f"会话 {i}: deployed service-{i} 和数据库{i}", (f"t{i}", "部署"),
                             NOW_TOKENIZER_UPGRADE - i * 3600.0, 0.5 + i / 100, "model", i)
               for i in range(250)]
    columns = "SELECT * FROM sessions ORDER BY rowid"
    with monkeypatch.context() as m:
        m.setattr(memory_migrations, "MIGRATIONS", memory_migrations.MIGRATIONS[:1])
        m.setattr(context_store, "LATEST_VERSION", 1)
        with SessionStore(path, segment=_old_segment) as old:
            old.upsert_many(records)
            before = old.connection.execute(columns).fetchall()
    with SessionStore(path) as store:
        assert store.stats()["schema_version"] == memory_migrations.LATEST_VERSION
        assert store.connection.execute(columns).fetchall() == before
        assert store.stats()["index_in_sync"] and store.count() == 250
        assert len(store.search('"数据库"', 300)) == 250
        assert all(store.get(r.session_id) == r for r in records)


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


@pytest.mark.parametrize("expression", ['"unbalanced', "NEAR(", "tags:", "*", "", "(a OR", 'a"\x00"'])
def test_a_search_expression_fts5_cannot_parse_is_blamed_on_the_query_not_the_file(
        tmp_path: Path, expression: str) -> None:
    """``SessionStore.search`` takes FTS5 syntax: one it cannot parse is the caller's mistake,
    said as such (a ``ValueError`` too), never "the database is unusable", and nothing changes."""
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        for ask in (lambda: store.search(expression, 5), lambda: store.search([expression], 5),
                    lambda: store.search_recent(expression, 5)):
            with pytest.raises(SessionQueryInvalid, match="search expression") as caught:
                ask()
            assert isinstance(caught.value, ValueError)
            assert not isinstance(caught.value, SessionDatabaseUnusable)
        assert [h.session_id for h in store.search('"hello"', 5)] == ["a"]


def test_a_search_of_a_file_whose_index_is_gone_still_says_the_file_is_at_fault(
        tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        store.connection.execute("DROP TABLE sessions_fts")
        with pytest.raises(SessionDatabaseUnusable):
            store.search('"hello"', 5)


@pytest.mark.parametrize("shadow", ["sessions_fts_idx", "sessions_fts_docsize"])
def test_a_valid_search_of_an_index_missing_a_shadow_table_blames_the_file(
        tmp_path: Path, shadow: str) -> None:
    """An index whose rows still read but whose term table is gone fails a MATCH with the same
    SQLITE_ERROR as a bad expression: a plain read answering did not clear the file, and
    ``'"hello"'`` was called "not a valid FTS5 search expression" instead of pointing at the
    file (and ``memory rebuild``)."""
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        store.connection.execute(f"DROP TABLE {shadow}")
        asks = [lambda: store.search('"hello"', 5), lambda: store.search_recent('"hello"', 5)]
        if shadow == "sessions_fts_idx":       # a count reads no sizes: it still answers then
            asks.append(lambda: store.term_df("hello", 5))
        for ask in asks:
            with pytest.raises(SessionDatabaseUnusable):
                ask()


HAN_SESSIONS = [("s-simplified", "排查了生产环境的数据库连接错误，原因是连接池耗尽"),
                ("s-traditional", "在會議室討論了颱風天的出差安排"),
                ("s-other", "deploy the billing service")]


@pytest.mark.parametrize(("query", "gold"), [
    ("數據庫連接錯誤", "s-simplified"),        # a Taiwan / Hong Kong user, a mainland summary
    ("数据库连接错误", "s-simplified"),
    ("台风天出差", "s-traditional"),           # and the reverse (颱風 folds to 台风)
    ("上次 database 連接池 的问题", "s-simplified"),
])
def test_a_query_in_either_chinese_script_recalls_a_session_written_in_the_other(
        tmp_path: Path, query: str, gold: str) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for sid, text in HAN_SESSIONS:
            engine.add(sid, text, created_at=NOW)
        found = engine.retrieve(query)
        assert [m.session_id for m in found][:1] == [gold]
        assert found[0].summary == dict(HAN_SESSIONS)[gold]     # shown as it was written


def _segment_before_folding(text: str) -> str:
    """How tokenizer 3 indexed Chinese: jieba over the characters as written."""
    import jieba
    return " ".join(w for w in jieba.cut_for_search(text.lower()) if w.strip())


def test_an_archive_indexed_before_chinese_folding_is_re_indexed_once_and_then_found(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    before = f"hermes-tokenize-3.{SEGMENT_VERSION}{passages.LAYOUT}"
    text = dict(HAN_SESSIONS)["s-traditional"]
    with SessionStore(path, segment=_segment_before_folding, segment_id=before) as old:
        old.upsert(rec("s-traditional", text))
        assert old.search('"台风"', 5) == []          # the old index holds 颱風 only
    with SessionStore(path) as store:
        assert store.reindexed == 1
        assert [h.session_id for h in store.search('"台风"', 5)] == ["s-traditional"]
        got = store.get("s-traditional")
        assert got is not None and got.summary == text      # the stored text is not folded
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert [m.session_id for m in engine.retrieve("颱風 出差")] == ["s-traditional"]


def _segment_before_emoji_bases(text: str) -> str:
    """How segment version 4 indexed an emoji: its cluster's term only (no keycap, no base)."""
    from hermes_core.tokenize import symbol_terms, tokenize
    return " ".join([*tokenize(text, keep_whole=True), *symbol_terms(text.replace("\u20e3", " "))])


@contextmanager
def _re_indexed_once(tmp_path: Path, segment: Callable[[str], str], version: int,
                     texts: dict[str, str],
                     as_old: Callable[[SessionStore], None] = lambda old: None,
                     digest: str | None = None) -> Iterator[ContextEngine]:
    """An archive segment version ``version`` indexed (``texts`` by session id, ``as_old``
    checked on it) is re-indexed once by the next store, every text, and then not again; what
    the block checks is read through an engine between the two. ``digest``: the emoji data
    digest it was indexed under, recorded under the installed release as a store records it,
    so the next store takes it from the file (only the version tells the two indexes apart)."""
    path = tmp_path / "sessions.db"
    emoji_key = f"+emoji-{digest}" if digest else ""
    before = f"hermes-tokenize-{tokenizer_key()}.{version}{emoji_key}{passages.LAYOUT}"
    with SessionStore(path, segment=segment, segment_id=before) as old:
        for session_id, text in texts.items():
            old.upsert(rec(session_id, text))
        as_old(old)
        if digest:
            old.connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES "
                                   "('emoji_data', ?)", (f"{emoji_release()} {digest}",))
    with SessionStore(path) as store:
        assert store.reindexed == len(texts)
    with ContextEngine(path, clock=lambda: NOW) as engine:
        yield engine
    with SessionStore(path) as again:
        assert again.reindexed == 0


def test_an_archive_indexed_before_emoji_bases_and_keycaps_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"toned": "the review got a 👍🏽 from ops", "cap": "step 1\ufe0f\u20e3 restart the deploy"}
    with _re_indexed_once(tmp_path, _segment_before_emoji_bases, 4, texts) as engine:
        assert [m.session_id for m in engine.retrieve("👍")] == ["toned"]
        assert [m.session_id for m in engine.retrieve("1\ufe0f\u20e3")] == ["cap"]


def _segment_before_objects_and_tag_bases(text: str) -> str:
    """How segment version 5 indexed: a toned emoji's bases, but no profession's object and no
    subdivision flag's 🏴."""
    from hermes_core.tokenize import symbol_terms, tokenize
    return " ".join([*tokenize(text, keep_whole=True), *symbol_terms(text)])


def _found_as_5_had_it(old: SessionStore) -> None:
    assert [h.session_id for h in old.search("zsym1f4bb", 5)] == ["laptop"]


def test_an_archive_indexed_before_profession_objects_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"coder": "pairing with the 👩\u200d💻 on the parser", "laptop": "bought a 💻 for ops"}
    with _re_indexed_once(tmp_path, _segment_before_objects_and_tag_bases, 5, texts,
                          as_old=_found_as_5_had_it) as engine:
        assert {m.session_id for m in engine.retrieve("💻")} == {"coder", "laptop"}
        assert [m.session_id for m in engine.retrieve("👩\u200d💻")] == ["coder"]


#: How segment version 6 indexed a ZWJ sequence with no person (one term, no parts): as 5 read a
#: text without bases.
_segment_before_zwj_parts = _segment_before_objects_and_tag_bases


def test_an_archive_indexed_before_zwj_parts_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"polar": "部署🐻\u200d❄\ufe0f完成 at the zoo", "snow": "the ❄ storm closed the road"}
    with _re_indexed_once(tmp_path, _segment_before_zwj_parts, 6, texts) as engine:
        assert {m.session_id for m in engine.retrieve("❄")} == {"polar", "snow"}
        assert [m.session_id for m in engine.retrieve("🐻\u200d❄\ufe0f")] == ["polar"]


def _segment_before_group_parts(text: str) -> str:
    """How segment version 7 indexed: a listed sequence's parts, but none for a group of people
    or a flag (the parts table without them)."""
    from hermes_core import tokenize as tok

    table = {k: v for k, v in tok._listed_parts().items()
             if k[0] not in "\U0001F3F3\U0001F3F4" and not any(p in tok._PEOPLE for p in k.split("\u200d"))}
    real = tok._listed_parts
    tok._listed_parts = lambda: table  # type: ignore[assignment]
    try:
        return tok.segment_for_index(text)
    finally:
        tok._listed_parts = real


def test_an_archive_indexed_before_group_and_flag_parts_is_re_indexed_once_and_then_found(
        tmp_path: Path) -> None:
    texts = {"family": "dinner 👨\u200d👩\u200d👧 on sunday", "pride": "a 🏳\ufe0f\u200d🌈 on the door"}

    def as_old(old: SessionStore) -> None:
        assert old.search(ranking.match_term(symbol_terms("👩")[0]), 5) == []

    with _re_indexed_once(tmp_path, _segment_before_group_parts, 7, texts, as_old=as_old) as engine:
        assert [m.session_id for m in engine.retrieve("👩")] == ["family"]
        assert [m.session_id for m in engine.retrieve("🌈")] == ["pride"]


def _table_without_forms(strip: Callable[[str], bool]) -> dict[str, tuple[str, ...]]:
    """The parts table as it was before the toned-only sequences whose emoji ``strip`` says
    had one: that emoji without their parts, and they without it (nor its gender-less group)."""
    import emoji

    from hermes_core import tokenize as tok

    forms = {k: v for k, v in toned_forms(emoji.EMOJI_DATA).items() if strip(v)}
    gone = {k: {v, tok._GENDER_HAIR.sub("", v)} for k, v in forms.items()}
    return {k: tuple(p for p in v if p not in gone.get(k, ()))
            for k, v in _table_before_listed_forms().items() if k not in set(forms.values())}


def _digest_under(monkeypatch: pytest.MonkeyPatch, table: dict[str, tuple[str, ...]]) -> str:
    """The emoji data digest an older release's parts ``table`` gave, checked to differ from
    today's (else the re-index under test would have nothing to re-key)."""
    from hermes_core import tokenize as tok

    with monkeypatch.context() as before:
        before.setattr(tok, "_listed_parts", lambda: table)
        tok.emoji_data_digest.cache_clear()
        digest = tok.emoji_data_digest()
    tok.emoji_data_digest.cache_clear()
    assert digest != tok.emoji_data_digest()
    return digest


def _table_before_listed_forms() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 11: no group of one code point had its listed
    gendered forms' people (👪 none), nor they it."""
    import emoji

    real = emoji_groups.listed_forms
    emoji_groups.listed_forms = lambda data: {}  # type: ignore[assignment]
    try:
        return emoji_groups.parts_table(emoji.EMOJI_DATA)
    finally:
        emoji_groups.listed_forms = real


def _table_before_single_groups() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 9: no group of one code point (👬) had parts, and no
    sequence listed only toned (👨🏻‍🤝‍👨🏿) had its one code point (nor a gendered group's)."""
    return _table_without_forms(lambda single: True)


def _table_before_gendered_groups() -> dict[str, tuple[str, ...]]:
    """The parts table of segment version 10: a gender variant's group (👯‍♂) had no parts, and
    its mixed-tone sequence (👨🏻‍🐰‍👨🏿) neither it nor 👯."""
    return _table_without_forms(lambda single: "\u200d" in single)


def _segment_before_single_groups(text: str) -> str:
    """How segment version 9 indexed: :func:`_table_before_single_groups`, and an emoji Unicode
    files as a math sign or punctuation (↔) was a lone mark in a text with words, no term."""
    import regex

    from hermes_core import tokenize as tok

    table = _table_before_single_groups()
    real = tok._listed_parts
    tok._listed_parts = lambda: table  # type: ignore[assignment]
    try:
        return tok.segment_for_index(regex.sub(r"(?V1)[\p{Extended_Pictographic}--\p{So}]", " ", text))
    finally:
        tok._listed_parts = real


def test_an_archive_indexed_before_single_groups_and_pictographs_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store records the emoji data's digest under the installed release and takes it from the
    file on open: under the same release, an archive indexed by segment version 9 (👬 without
    parts, ↔ no term) read as up to date, and 👨 never found its 👬. The version re-keys it."""
    texts = {"pair": "two 👬 at the gate", "swap": "sync \u2194\ufe0f backup nightly"}

    def as_old(old: SessionStore) -> None:
        for symbol in ("👨", "\u2194"):
            assert old.search(ranking.match_term(symbol_terms(symbol)[0]), 5) == []

    table = _table_before_single_groups()
    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, _segment_before_single_groups, 9, texts, as_old=as_old,
                          digest=digest) as engine:
        assert [m.session_id for m in engine.retrieve("👨")] == ["pair"]
        assert [m.session_id for m in engine.retrieve("\u2194")] == ["swap"]


def test_an_archive_indexed_before_gendered_groups_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segment version 10's table gave 👯‍♂️ (men with bunny ears) no 👨 and its two-tone form
    no 👯‍♂️: an archive it indexed, its digest recorded under the installed release, read as up
    to date under the table that has them. The version re-keys it."""
    pair = "👨\U0001F3FB\u200d🐰\u200d👨\U0001F3FF"
    texts = {"party": "two 👯\u200d\u2642\ufe0f at the door", "mixed": f"a {pair} photo"}

    from hermes_core import tokenize as tok

    table = _table_before_gendered_groups()

    def segment(text: str) -> str:
        with monkeypatch.context() as before:
            before.setattr(tok, "_listed_parts", lambda: table)
            return tok.segment_for_index(text)

    def as_old(old: SessionStore) -> None:       # each found by one half of the group only
        for symbol, found in (("👨", {"mixed"}), ("👯", {"party"})):
            hits = old.search(ranking.match_term(symbol_terms(symbol)[0]), 5)
            assert {h.session_id for h in hits} == found, symbol

    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, segment, 10, texts, as_old=as_old, digest=digest) as engine:
        assert {m.session_id for m in engine.retrieve("👨")} == {"party", "mixed"}
        assert {m.session_id for m in engine.retrieve("👯")} == {"party", "mixed"}


def test_an_archive_indexed_before_families_and_letter_emoji_is_re_indexed_once_and_then_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segment version 11 gave 👪 (family) no people and ℹ️ no term (NFKC's i, a stopword): an
    archive it indexed, its digest recorded under the installed release, read as up to date
    under the table that has them. The version re-keys it."""
    texts = {"family": "dinner 👪 on sunday", "info": "the \u2139\ufe0f panel moved"}

    from hermes_core import tokenize as tok

    table = _table_before_listed_forms()

    def segment(text: str) -> str:
        with monkeypatch.context() as old:
            old.setattr(tok, "_listed_parts", lambda: table)
            old.setattr(tok, "_letter_emoji", lambda text: [])
            return tok.segment_for_index(text)

    def as_old(old: SessionStore) -> None:
        for symbol in ("👨", "\u2139"):
            assert old.search(ranking.match_term(symbol_terms(symbol)[0]), 5) == [], symbol

    digest = _digest_under(monkeypatch, table)
    with _re_indexed_once(tmp_path, segment, 11, texts, as_old=as_old, digest=digest) as engine:
        assert [m.session_id for m in engine.retrieve("👨")] == ["family"]
        assert [m.session_id for m in engine.retrieve("\u2139\ufe0f")] == ["info"]
        assert [m.session_id for m in engine.retrieve("\u24c2")] == []


BEAR_ON_FIRE = "🐻\u200d🔥"    # no sequence Unicode lists: a later release may


def test_an_emoji_release_that_changes_no_data_the_index_reads_re_indexes_nothing(
        tmp_path: Path, emoji_released: Callable[..., None]) -> None:
    """The index was keyed by the ``emoji`` package's release: any release (2.14.0 and 2.16.0
    list the same ZWJ sequences) re-indexed a whole archive. It is keyed by a digest of what the
    segmenter reads from the data; the release it was read under is recorded beside it."""
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("polar", "the 🐻\u200d❄\ufe0f at the zoo"))
    emoji_released("99.0.0")
    with SessionStore(path) as later:
        assert later.reindexed == 0
        assert later.connection.execute(
            "SELECT value FROM meta WHERE key = 'emoji_data'").fetchone()[0].startswith("99.0.0 ")
        assert [h.session_id for h in later.search(ranking.match_term(
            symbol_terms("❄")[0]), 5)] == ["polar"]
    with SessionStore(path, read_only=True) as preview:    # named as a writable store names it
        assert preview.segment_id == later.segment_id


def test_an_emoji_release_listing_a_new_sequence_re_indexes_the_archive_once(
        tmp_path: Path, emoji_released: Callable[..., None]) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.upsert(rec("mascot", f"the {BEAR_ON_FIRE} mascot"))
        store.upsert(rec("drill", "a 🔥 drill at noon"))
    emoji_released("99.0.0", **{BEAR_ON_FIRE: {"en": ":bear_on_fire:", "status": 2, "E": 99}})
    with SessionStore(path) as later:
        assert later.reindexed == 2
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert {m.session_id for m in engine.retrieve("🔥")} == {"mascot", "drill"}
    with SessionStore(path) as again:
        assert again.reindexed == 0


def _emoji_unreadable(monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    """This process reads no emoji data (the package missing, or failing to import) though its
    release reads as ``release`` (``-``: no metadata, as a bundled app that carries the package)."""
    from hermes_core import tokenize as tok

    monkeypatch.setattr(tok, "emoji_release", lambda: release)
    monkeypatch.setattr(tok, "_listed_parts", lambda: {})
    tok.emoji_data_digest.cache_clear()


@pytest.mark.parametrize("release", ["-", "99.0.0"])
def test_a_digest_read_from_no_emoji_data_is_not_remembered_to_skip_a_later_re_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emoji_released: Callable[..., None],
        release: str) -> None:
    """A process that read no emoji data recorded the empty table's digest under its release
    (``-`` for every process without the package's metadata): a later process under that release
    that reads the data took that digest from the file, named the index as built with the parts,
    and did not re-index it: 👩 did not find the family indexed without them."""
    path = tmp_path / "sessions.db"
    emoji_released(release)
    with monkeypatch.context() as unreadable:
        _emoji_unreadable(unreadable, release)
        with SessionStore(path) as store:
            store.upsert(rec("family", "dinner 👨\u200d👩\u200d👧 on sunday"))
    emoji_released(release)                       # the data read again, under the same release
    with SessionStore(path) as later:
        assert later.reindexed == 1
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert [m.session_id for m in engine.retrieve("👩")] == ["family"]


def test_a_store_whose_emoji_data_is_recorded_opens_without_importing_emoji(tmp_path: Path) -> None:
    """Reading the digest imports ``emoji`` (90-190 ms); an open under the release the store
    recorded reads the digest from the file instead."""
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    code = (f"import sys\nfrom hermes_core.agent.episodic.store import SessionStore\n"
            f"SessionStore({str(path)!r}).close()\nprint('emoji' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


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


def test_an_archive_indexed_before_an_opencc_or_jieba_upgrade_is_re_indexed_once(
        tmp_path: Path, tokenizer_upgraded: Callable[[], None]) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        for sid, text in HAN_SESSIONS:
            store.upsert(rec(sid, text))
    with SessionStore(path) as same:
        assert same.reindexed == 0                 # the same libraries: the index is reused
    tokenizer_upgraded()
    with SessionStore(path) as upgraded:
        assert upgraded.reindexed == len(HAN_SESSIONS)
        assert [h.session_id for h in upgraded.search('"台风"', 5)] == ["s-traditional"]
    with SessionStore(path) as again:
        assert again.reindexed == 0


def _text_default_emoji() -> list[str]:
    """Every emoji the ``emoji`` data lists as one code point and its emoji presentation selector
    (❤️, 🅿️, ↔️): shown as text without it, so both spellings are typed."""
    import emoji

    return sorted(k[0] for k in emoji.EMOJI_DATA if len(k) == 2 and k[1] == "\ufe0f")


def test_a_chinese_name_with_a_variation_selector_and_its_plain_form_find_each_other(
        tmp_path: Path) -> None:
    """A name written with an ideographic variation selector (葛󠄀城: the family's own glyph of
    葛) is the name: each spelling finds a memory of the other, and no other name's."""
    names = [("葛\U000E0100城", "葛城"), ("王\ufe00小明", "王小明"), ("辻\U000E0100本", "辻本"),
             ("张\U000E0100伟", "张伟")]
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for i, (written, plain) in enumerate(names):
            engine.add(f"ivs-{i}", f"和{written}开会讨论预算", created_at=NOW)
            engine.add(f"plain-{i}", f"和{plain}开会讨论预算", created_at=NOW)
        engine.add("other", "和李娜开会讨论预算", created_at=NOW)
        for i, (written, plain) in enumerate(names):
            both = {f"ivs-{i}", f"plain-{i}"}
            for query in (written, plain):
                found = [m.session_id for m in engine.retrieve(query, max_results=20)]
                assert set(found[:2]) == both, (query, found)


def test_an_emoji_with_or_without_its_presentation_selector_finds_the_other_through_the_store(
        tmp_path: Path) -> None:
    """A memory holding ❤ is found by ❤️ and ❤︎ and the reverse, for each of the data's 207: ↔ ◻
    ◼ ⤴ ⤵ 〰 〽 (emoji Unicode files as math signs or punctuation) were indexed in neither form and
    ↔️ searched nothing; ℹ and Ⓜ, the letters i and m after NFKC (stopwords), were found by no
    form. ✔️ is no ✅."""
    symbols = _text_default_emoji()
    assert {"\u2764", "🅿", "\u2194", "\u2714"} <= set(symbols)
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW) as engine:
        for i, symbol in enumerate(symbols):
            engine.add(f"text-{i}", f"note {symbol} here", created_at=NOW)
            engine.add(f"emoji-{i}", f"note {symbol}\ufe0f here", created_at=NOW)
        engine.add("check", "tests pass ✅ now", created_at=NOW)
        for i, symbol in enumerate(symbols):
            both = {f"text-{i}", f"emoji-{i}"}
            for query in (symbol, symbol + "\ufe0f", symbol + "\ufe0e"):
                found = {m.session_id for m in engine.retrieve(query, max_results=50)}
                assert both <= found, (query, sorted(found))
        for other in ("\u2714\ufe0f", "\u2714", "\u2611\ufe0f"):      # ✔️ ✔ ☑️: other symbols
            assert "check" not in {m.session_id for m in engine.retrieve(other, max_results=50)}
        assert [m.session_id for m in engine.retrieve("✅")] == ["check"]
