"""Fixtures for the episodic-memory tests.

* ``sqlite_at``: writes ``sessions.db`` in the test's folder with the SQL statements given (after
  creating it as ours, with ``ours=True``): a foreign, future or tampered database to open.
* ``statements_of``: a context manager that lists the SQL a store runs inside it (FTS5's own
  reads of its shadow tables left out), for tests that pin what a lookup costs.
* ``open_and_die``: (not a fixture: spawned) opens a store whose segmenter SIGKILLs its process
  at a given call, for tests of a re-index killed mid-way.
* ``open_tracing`` / ``open_and_die_at_statement``: open a store with every SQL statement its
  re-index runs seen (its own, its triggers', FTS5's on its shadow tables), counted or SIGKILLed
  at a given one (spawned): a seam inside an in-place cut, which calls no segmenter.
* ``planted_archive``: ``m.db`` of 200 filler sessions with one given session among them; returns
  its path and a reader of every byte of its files (WAL too), for tests that look for words a
  rewrite or a delete must leave nowhere in the file.
* ``batches``: the texts of each ``guard_many`` call the recall guard (``episodic/guard.py``)
  makes, for tests that pin what it scans and when.
* ``deploy_archive`` / ``indexed_once`` (with ``segment_old``, ``segment_new``, ``OLD``, ``NEW``):
  an archive indexed by an old tokenizer, and the check that the re-index to the new one holds
  every session exactly once; shared by the re-index and upkeep tests.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.episodic import guard as guard_module
from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import reindex
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.errors import HermesError, SessionDatabaseUnusable
from hermes_core.injection import GuardedText
from hermes_core.tokenize import tokenize

PLANTED_AT = 1_800_000_000.0


@pytest.fixture
def sqlite_at(tmp_path: Path) -> Callable[..., Path]:
    def write(*statements: str, ours: bool = False) -> Path:
        path = tmp_path / "sessions.db"
        if ours:
            SessionStore(path).close()
        conn = sqlite3.connect(path)
        try:
            for sql in statements:
                conn.execute(sql)
            conn.commit()
        finally:
            conn.close()
        return path

    return write


@pytest.fixture
def statements_of() -> Callable[[SessionStore], AbstractContextManager[list[str]]]:
    @contextmanager
    def trace(store: SessionStore) -> Iterator[list[str]]:
        seen: list[str] = []
        store.connection.set_trace_callback(seen.append)
        try:
            yield seen
        finally:
            store.connection.set_trace_callback(None)
            seen[:] = [st for st in seen if not st.startswith("--")]

    return trace


@pytest.fixture
def planted_archive(tmp_path: Path) -> Callable[[str, str], tuple[Path, Callable[[], bytes]]]:
    def plant(session_id: str, summary: str) -> tuple[Path, Callable[[], bytes]]:
        path = tmp_path / "m.db"
        records = [SessionRecord(f"s{i}", f"filler {i} about cooking pasta", (), PLANTED_AT)
                   for i in range(200)]
        records.insert(100, SessionRecord(session_id, summary, (), PLANTED_AT))
        with SessionStore(path, clock=lambda: PLANTED_AT) as store:
            store.upsert_many(records)

        def raw() -> bytes:
            return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("m.db*")))

        return path, raw

    return plant


def open_and_die(path: str, kill_after: int, batch: int, segment: Callable[[str], str],
                 segment_id: str) -> None:
    """Open ``path`` with ``segment`` (re-indexing in batches of ``batch`` rows when
    ``segment_id`` did not build its index) and SIGKILL this process at its ``kill_after``-th
    call: run in a spawned process."""
    reindex.BATCH_ROWS = batch
    calls = [0]

    def dying(text: str) -> str:
        calls[0] += 1
        if calls[0] == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return segment(text)

    SessionStore(path, segment=dying, segment_id=segment_id)


def open_tracing(path: str | Path, batch: int, segment_id: str,
                 on_statement: Callable[[str], None]) -> int:
    """Open ``path`` (segmenter ``str.lower``) re-indexing in batches of ``batch`` rows, with
    ``on_statement`` traced on the connection for the length of the re-index; returns the rows
    it re-indexed. The module's batch size and ``run`` are restored after."""
    saved = reindex.BATCH_ROWS, reindex.run

    def traced(conn: sqlite3.Connection, *args: Any) -> int:
        conn.set_trace_callback(on_statement)
        try:
            return saved[1](conn, *args)
        finally:
            conn.set_trace_callback(None)

    reindex.BATCH_ROWS, reindex.run = batch, traced
    try:
        with SessionStore(path, segment=str.lower, segment_id=segment_id) as store:
            return store.reindexed
    finally:
        reindex.BATCH_ROWS, reindex.run = saved


def open_and_die_at_statement(path: str, kill_at: int, batch: int, segment_id: str) -> None:
    """:func:`open_tracing`, SIGKILLing this process as its re-index's ``kill_at``-th statement
    starts: run in a spawned process."""
    seen = [0]

    def dying(_sql: str) -> None:
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    open_tracing(path, batch, segment_id, dying)


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The texts of each guard_many call the guard makes."""
    seen: list[list[str]] = []
    real = guard_module.guard_many

    def recording(texts: Sequence[str], **kwargs: object) -> list[GuardedText]:
        seen.append(list(texts))
        return real(texts, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(guard_module, "guard_many", recording)
    return seen


@pytest.fixture
def emoji_released(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Call it to make the installed ``emoji`` package read as another release, its data
    listing the sequences given too (sequence -> its entry): what the index is keyed by must
    change exactly when the data the segmenter reads does. Caches cleared on both sides."""
    import emoji

    from hermes_core import tokenize as tok

    def release(version: str = "99.0.0", **listing: dict[str, Any]) -> None:
        monkeypatch.setattr(tok, "emoji_release", lambda: version)
        for seq, about in listing.items():
            monkeypatch.setitem(emoji.EMOJI_DATA, seq, about)
        tok._listed_parts.cache_clear()
        tok.emoji_data_digest.cache_clear()

    yield release
    monkeypatch.undo()
    tok._listed_parts.cache_clear()
    tok.emoji_data_digest.cache_clear()


#: The clock of the store's tests: every session ``rec`` makes is stamped with it.
NOW = 1_800_000_000.0


def rec(session_id: str, summary: str, tags: tuple[str, ...] = (), created_at: float = NOW) -> SessionRecord:
    return SessionRecord(session_id, summary, tags, created_at)


def assert_refused(path: Path, fragment: str) -> None:
    """Opening ``path`` is refused with an error that names it and says ``fragment``, and the file
    is left byte for byte as it was."""
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(SessionDatabaseUnusable) as e:
        SessionStore(path)
    assert isinstance(e.value, HermesError)
    assert str(path) in str(e.value)
    assert fragment in str(e.value)
    if before is not None:
        assert path.read_bytes() == before, "the file must never be overwritten"


#: The clock of a database written by the first release (``v1_database``), and a session of it
#: whose mixed text the first tokenizer cut so that '开会' never matched it.
NOW_TOKENIZER_UPGRADE = 1_750_000_000.0


TEXT = "明天下午3点和John开会讨论预算"


def old_segment(text: str) -> str:
    """How the first tokenizer cut mixed text: Chinese glued to a digit or a Latin word stayed one
    token (3点和John开会 -> one term), so '开会' never matched it."""
    return text.lower()


def v1_database(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sessions.db as the first release left it: schema 1, rows indexed by the old tokenizer."""
    with monkeypatch.context() as m:
        m.setattr(memory_migrations, "MIGRATIONS", memory_migrations.MIGRATIONS[:1])
        m.setattr(context_store, "LATEST_VERSION", 1)
        with SessionStore(path, clock=lambda: NOW_TOKENIZER_UPGRADE, segment=old_segment) as store:
            from hermes_core.agent.episodic.store import SessionRecord
            store.upsert(SessionRecord("s-old", TEXT, ("预算",), NOW_TOKENIZER_UPGRADE))
            assert store.search("开会", 5) == []   # the stale index cannot find it


OLD, NEW = "test-old-1", "test-new-1"


AT = 1_800_000_000.0


def segment_old(text: str) -> str:
    return text.lower()


def segment_new(text: str) -> str:
    """A tokenizer the old index does not match: every word also indexed with an ``x`` in front."""
    words = text.lower().split()
    return " ".join(words + [f"x{w}" for w in words])


def deploy_summary(i: int) -> str:
    return f"session w{i} about deploys"


def deploy_archive(path: Path, n: int) -> None:
    with SessionStore(path, segment=segment_old, segment_id=OLD) as store:
        store.upsert_many([SessionRecord(f"s{i}", deploy_summary(i), (), AT + i) for i in range(n)])


def indexed_once(path: Path, ids: set[str], words: dict[str, str] | None = None) -> None:
    """Every stored session is in the new index exactly once, found by the new tokenizer's
    terms (its ``w<n>`` word, or ``words[id]``), and nothing else is."""
    with SessionStore(path, segment=segment_new, segment_id=NEW) as store:
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


def spawn_process(target: Callable[..., None], *args: object) -> multiprocessing.process.BaseProcess:
    proc = multiprocessing.get_context("spawn").Process(target=target, args=args)
    proc.start()
    return proc


def reindex_between_batches(conn: sqlite3.Connection, batch: int, between: Callable[[int], None],
                             *closing: SessionStore | sqlite3.Connection) -> None:
    """Re-index on ``conn`` with ``segment_new`` in batches of ``batch`` rows, calling ``between`` with
    the segmenter's call count at each call made outside a write transaction (between batches);
    ``conn`` and ``closing`` closed after."""
    calls = [0]

    def segment(text: str) -> str:
        calls[0] += 1
        if not conn.in_transaction:
            between(calls[0])
        return segment_new(text)

    old_batch = reindex.BATCH_ROWS
    try:
        reindex.BATCH_ROWS = batch
        reindex.run(conn, segment, NEW)
    finally:
        reindex.BATCH_ROWS = old_batch
        for c in (conn, *closing):
            c.close()


def segment_before_symbols(text: str) -> str:
    """What ``segment_for_index`` indexed before symbols were terms (segment version 2)."""
    return " ".join(tokenize(text, keep_whole=True))
