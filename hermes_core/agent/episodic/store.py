"""SQLite storage of episodic memory: one row per session plus an FTS5 index of segmented text.

Why these choices:

* **WAL + busy timeout + ``BEGIN IMMEDIATE``** for every write: readers never block the writer, and
  two processes recording sessions at once queue on the write lock instead of failing with
  "database is locked" (an upgrade from a read to a write transaction would bypass the busy
  handler, so writes take the lock up front).
* **Checked before opened**: a file at the path that is not ours (another program's SQLite
  database, a text file, a truncated or corrupted image) raises :class:`SessionDatabaseUnusable`
  naming it; it is never initialised over, migrated or truncated.
* **Delete-before-upsert**: re-recording a session removes its old row and index entry in the same
  transaction, so there is never a stale or doubled index entry; an identical summary (by content
  hash) is not stored a second time.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from hermes_core import forked_sqlite
from hermes_core.agent.episodic import (
    counts,
    drift,
    long_write,
    passages,
    reindex,
    retention,
    rewriting,
    upkeep,
)
from hermes_core.agent.episodic.migrations import (
    APPLICATION_ID,
    FTS_TABLE_SQL,
    LATEST_VERSION,
    READ_COMPAT_VERSION,
    apply_pending,
    current_version,
)
from hermes_core.agent.episodic.opening import (
    check_file,
    open_again,
    open_read_only,
    read_only_refusal,
)
from hermes_core.agent.episodic.ranking import Hit, as_prefix, match_term
from hermes_core.agent.episodic.records import MAX_TAG_CHARS as MAX_TAG_CHARS
from hermes_core.agent.episodic.records import MAX_TAGS as MAX_TAGS
from hermes_core.agent.episodic.records import SessionRecord as SessionRecord
from hermes_core.agent.episodic.records import UpsertResult as UpsertResult
from hermes_core.agent.episodic.records import UpsertStatus as UpsertStatus
from hermes_core.agent.episodic.records import content_hash_of as content_hash_of
from hermes_core.agent.episodic.records import count_of, number_of, scrub_record, stamp_of
from hermes_core.agent.episodic.records import memory_id_for as memory_id_for
from hermes_core.agent.episodic.records import normalise_tags as normalise_tags
from hermes_core.agent.episodic.records import normalise_text as normalise_text
from hermes_core.agent.episodic.records import scrub_surrogates as scrub_surrogates
from hermes_core.errors import (
    SessionDatabaseMissing,
    SessionDatabaseUnusable,
    SessionQueryInvalid,
    SessionStoreError,
)
from hermes_core.redact import SCRUBBED
from hermes_core.tokenize import (
    emoji_data_record,
    remembered_emoji_data,
    segment_for_index,
    segment_key,
    tokenizer_key,
)

log = logging.getLogger("hermes_core.memory")

DEFAULT_BUSY_TIMEOUT_S = 30.0
#: How large ``-wal`` may stay once checkpointed (``PRAGMA journal_size_limit``).
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024
DF_CACHE_SIZE = 50_000   # remembered term counts (a few MB at most)
#: The tables FTS5 keeps an index in (``sessions_fts_<name>``): all five are read by a search.
_FTS_SHADOWS = ("data", "idx", "content", "docsize", "config")
TEXTS_CHUNK = 500        # rows fetched by one ``texts`` statement (bound parameters are capped)

# --------------------------------------------------------------------------- the store

def _is_busy(e: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds the lock (worth waiting for)."""
    return getattr(e, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class SessionStore:
    """Thread-safe access to one ``sessions.db``; every write is one IMMEDIATE transaction.

    ``create=False`` raises :class:`SessionDatabaseMissing` instead of creating a missing file.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True,
                 busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                 clock: Callable[[], float] = time.time,
                 segment: Callable[[str], str] = segment_for_index,
                 segment_id: str | None = None, read_only: bool = False) -> None:
        self.path = Path(path).expanduser()
        self._clock = clock
        self._segment = segment
        # What built the index: compared with the database's record on open, and the index rebuilt
        # when they differ (an OpenCC or jieba upgrade too: ``tokenizer_key``). A custom segmenter
        # without an id is never compared. The built-in one's is made on open (``_open_schema``):
        # its emoji data digest is read from the file when recorded under the installed release.
        self._builtin = segment is segment_for_index
        self.segment_id = None if self._builtin else segment_id
        self.reindexed = 0
        self._said_damaged = False          # a damaged index row was warned about
        self._unfinished = False               # upkeep the open left: writes carry it on
        self._unchecked = 0                    # writes since upkeep last looked
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._timeout_s = busy_timeout_s
        self._upkeep = upkeep.Upkeep(self.path, (
            f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}", "PRAGMA secure_delete = ON",
            "PRAGMA synchronous = NORMAL"))
        self._writes = 0                       # commits through this store (data_version misses them)
        self._df_cache: dict[str, int] = {}
        self._df_generation: tuple[int, int, int] | None = None
        self._quiet = False                    # its lock was taken over a fork (forked_sqlite)
        self._df_empty = False                 # the index had no row at _df_generation
        self.read_only = False
        # a C int of milliseconds: a larger value wraps (3e6 s became 0, "never wait"), so capped
        self._busy_ms = min(int(busy_timeout_s * 1000), 2**31 - 1)
        # removed text may still be in -wal: the emptying checkpoint is retried after each write
        self._wal_holds_removed = False
        if self.path.exists():
            check_file(self.path)
        elif not create or read_only:
            raise SessionDatabaseMissing(self.path, "does not exist (record a session or use "
                                                   "`hermes-core memory add` first)")
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise SessionStoreError(self.path, f"cannot create its folder: {e.strerror or e}") from None
        if read_only:   # a preview: nothing written, not even a migration or a WAL switch
            ro = open_read_only(self.path, busy_timeout_s, self._versions())
            if ro is None:
                raise SessionStoreError(self.path, read_only_refusal(self.path, self._versions()))
            self._db, self.read_only = ro, True
            self._name_read_only_segmenter()
            forked_sqlite.watch(self)
            return
        try:
            self._db = sqlite3.connect(str(self.path), timeout=busy_timeout_s,
                                         isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise SessionStoreError(self.path, f"cannot open: {e}") from None
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            # -wal grows while another process's read pins it and, unlimited, kept its largest
            # size until the last process closed the file; this cuts it back once checkpointed
            self._conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
            # A deleted or rewritten row (a forgotten session, a key redacted after the fact) must
            # not live on in a freed page; only some SQLite builds (Debian's) turn this on.
            self._conn.execute("PRAGMA secure_delete = ON")
            self._open_schema_retrying(busy_timeout_s)
        except SessionStoreError:
            self._conn.close()
            raise
        except sqlite3.OperationalError as e:  # locked past the timeout, read-only, disk full...
            self._conn.close()
            ro = (None if _is_busy(e) or not self.path.is_file()
                  else open_read_only(self.path, busy_timeout_s, self._versions()))
            if ro is None:
                raise SessionStoreError(self.path, f"cannot open for writing: {e}") from None
            self._db = ro
            self.read_only = True
            self._name_read_only_segmenter()
            log.warning("memory database %s cannot be written (%s); opened read-only: past "
                        "sessions are searchable, new ones are not recorded", self.path, e)
        except sqlite3.DatabaseError as e:  # "file is not a database", "disk image is malformed"
            self._conn.close()
            raise SessionDatabaseUnusable(
                self.path, f"corrupted or unreadable ({e}); left untouched") from None
        forked_sqlite.watch(self)

    @property
    def _conn(self) -> sqlite3.Connection:
        """The store's connection; after a fork, opened again on first use
        (:mod:`hermes_core.forked_sqlite`)."""
        if self._db is None:
            self._db = open_again(self._upkeep.real, self._timeout_s, self._busy_ms,
                                  self._upkeep.pragmas, self._versions() if self.read_only else None)
        return self._db

    def before_fork(self) -> list[forked_sqlite.Lock]:
        """In the parent: other threads' use ended, the connections kept
        (:mod:`hermes_core.forked_sqlite`)."""
        self._quiet = bool(taken := forked_sqlite.quiesce(self._lock, self._timeout_s))
        return [*taken, *self._upkeep.before_fork(self._timeout_s)]

    def after_fork(self) -> list[object]:
        """In a forked child: new locks, the inherited connection closed
        (:mod:`hermes_core.forked_sqlite`)."""
        self._lock, self._df_generation = threading.RLock(), None
        conn, self._db = self._db, None
        return [*forked_sqlite.inherited(conn, self._quiet, self._upkeep.real), *self._upkeep.after_fork()]

    @staticmethod
    def _versions() -> tuple[int, int]:
        """The schemas a read-only open accepts: the oldest the reads work on, the newest known."""
        return READ_COMPAT_VERSION, LATEST_VERSION

    def _open_schema_retrying(self, busy_timeout_s: float) -> None:
        """Open the schema, retrying "database is locked" until the busy timeout.

        Switching a fresh file to WAL (and the first migration) needs an exclusive lock, and SQLite
        answers SQLITE_BUSY at once there, without its busy handler, when another process is
        creating the same file; so two processes starting together must wait here themselves.
        """
        deadline = time.monotonic() + busy_timeout_s
        delay = 0.01
        while True:
            try:
                self._open_schema()
                return
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or time.monotonic() + delay > deadline:
                    raise
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _open_schema(self) -> None:
        conn = self._conn
        tables = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        ours = app_id == APPLICATION_ID or "schema_version" in tables
        user_tables = {t for t in tables if not t.startswith("sqlite_")}
        if user_tables and not ours:
            shown = ", ".join(sorted(user_tables)[:5])
            raise SessionDatabaseUnusable(
                self.path, f"is another program's SQLite database (tables: {shown}); left untouched")
        version = current_version(conn) if ours else 0
        if version > LATEST_VERSION:
            raise SessionDatabaseUnusable(
                self.path, f"schema version {version} is newer than this hermes-core understands "
                           f"({LATEST_VERSION}); upgrade hermes-core")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("%s: journal_mode is %s, not wal", self.path, mode)
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < LATEST_VERSION:
            applied = apply_pending(conn, now=self._clock())
            if applied:
                log.info("%s: applied memory schema migrations %s", self.path, applied)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"sessions", "sessions_fts", "schema_version"} - tables
        if missing:
            raise SessionDatabaseUnusable(
                self.path, f"tables missing ({', '.join(sorted(missing))}): corrupted; left untouched")
        counts.ensure(conn)
        drift.ensure(conn)
        if self._builtin:
            self.segment_id = self._builtin_segment_id(conn)
        if self.segment_id is not None:
            self._ensure_segmenter(self.segment_id)
        self._unfinished = drift.upkeep(conn, self._segment, self.segment_id, drift.OPEN_STEPS)

    def _name_read_only_segmenter(self) -> None:
        """A read-only store's ``segment_id`` as a writable one's would read (nothing written)."""
        if self._builtin:
            try:
                self.segment_id = self._builtin_segment_id(self._conn, record=False)
            except sqlite3.Error:
                self.segment_id = self._builtin_segment_id(None, record=False)

    @staticmethod
    def _builtin_segment_id(conn: sqlite3.Connection | None, *, record: bool = True) -> str:
        """The built-in segmenter's id. The emoji data digest in it is read from ``meta``'s
        ``emoji_data`` row (release, digest) when it was recorded under the installed release;
        otherwise it is computed (imports ``emoji``) and recorded, a write only when the release
        changed: so a release that changes no data the segmenter reads re-indexes nothing, and
        a process's open imports no ``emoji`` (:func:`.tokenize.segment_key`)."""
        row = (None if conn is None
               else conn.execute("SELECT value FROM meta WHERE key = 'emoji_data'").fetchone())
        remembered = remembered_emoji_data(row[0] if row else None)
        fresh = emoji_data_record(remembered) if record else None
        if conn is not None and fresh is not None:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('emoji_data', ?)",
                         (fresh,))
        return f"hermes-tokenize-{tokenizer_key()}.{segment_key(remembered)}{passages.LAYOUT}"

    def _ensure_segmenter(self, segment_id: str) -> None:  # segment_id: self.segment_id, not None
        """Re-index once if another tokenizer built the index (rows indexed by an older one would
        not match the tokens today's queries are cut into). Read first, so an up-to-date database
        needs no write lock; the re-index runs in batches (:mod:`.reindex`) so other processes'
        writes wait for one batch, and a second opener shares the batches; an open does at most
        ``reindex.OPEN_ROWS`` rows, later opens the rest (searches read the old index meanwhile).
        sqlite3 errors reach the open path as they are (busy: retried; read-only: opened
        read-only, search as before)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
        if row is not None and row[0] == segment_id:
            return
        n = reindex.run(self._conn, self._segment, segment_id, reindex.OPEN_ROWS)
        if n:
            self.reindexed += n
            log.info("%s: re-indexed %d sessions for tokenizer %s", self.path, n, segment_id)

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        forked_sqlite.forget(self)                # closed in a child forked later too
        self._upkeep.close()
        with self._lock:
            if self._db is not None:      # a forked child that never used it: none to close
                self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection (benchmarks and diagnostics); hold no transaction open on it."""
        return self._conn

    def _fault(self, e: sqlite3.Error, undone: str = "nothing was stored") -> SessionStoreError:
        if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
            return SessionStoreError(self.path, f"busy: another process held the write lock too long ({e})")
        if getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            return SessionStoreError(self.path, f"disk full: {undone} ({e})")
        return SessionDatabaseUnusable(self.path, f"database error: {e}")

    @contextmanager
    def _write(self, undone: str = "nothing was stored") -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction; ``undone`` says in a failure what did not happen."""
        if self.read_only:
            raise SessionStoreError(self.path, "is read-only here (file or filesystem cannot be "
                                              f"written); {undone}")
        with self._lock:
            while True:
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.Error as e:
                    if not self._long_write_elsewhere(e):
                        raise self._fault(e, undone) from None
            try:
                yield self._conn
                self._conn.execute("COMMIT")
                self._writes += 1
                if self._wal_holds_removed:
                    self._checkpoint("a write")
            except BaseException as e:
                # SQLite may already have rolled back by itself (SQLITE_FULL, IOERR, NOMEM); a
                # second ROLLBACK would raise and hide the real error.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise self._fault(e, undone) from None
                raise

    def _long_write_elsewhere(self, e: sqlite3.Error) -> bool:
        """Whether a refusal as busy came while another process declared a long write (see
        :mod:`.long_write`): then the write waits another busy timeout instead of failing."""
        return _is_busy(e) and long_write.worth_waiting(self._conn, self._clock())

    @contextmanager
    def _long_write(self, undone: str, after: str) -> Iterator[sqlite3.Connection]:
        """A write that may hold the lock past another process's busy timeout: declared in its
        own commit first, then the work, then the WAL copied into the file (its checkpoint blocks
        writers as long as the copy takes, after a merge as long as the merge's pages), and only
        then withdrawn, in a short write of its own (also when the work failed)."""
        with self._write(undone) as conn:
            long_write.declare(conn, self._clock())
        try:
            with self._write(undone) as conn:
                yield conn
            self._checkpoint(after)
        finally:
            try:
                with self._write("the long-write notice was not withdrawn") as conn:
                    long_write.withdraw(conn)
            except SessionStoreError as e:
                log.debug("%s: %s", self.path, e)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same state (WAL snapshot)."""
        with self._lock:
            try:
                self._conn.execute("BEGIN")
            except sqlite3.Error as e:
                raise self._fault(e) from None
            try:
                yield
            finally:
                try:
                    self._conn.execute("COMMIT")
                except sqlite3.Error as e:  # never hide the error raised inside
                    log.debug("%s: ending a read transaction failed: %s", self.path, e)

    def _read(self, sql: str, params: Sequence[Any] = (), *, matching: bool = False) -> list[Any]:
        """``matching``: all parameters but the last are MATCH expressions; one FTS5 cannot parse
        is the caller's fault, told from a broken index (both SQLITE_ERROR) by a plain read."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                if (matching and getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_ERROR
                        and self._index_answers(sql, params)):
                    raise SessionQueryInvalid(self.path, f"not a valid FTS5 search expression in "
                                                         f"{list(params[:-1])!r:.200} ({e})") from None
                raise self._fault(e) from None

    def _index_answers(self, sql: str, params: Sequence[Any]) -> bool:
        """Whether the index is whole (its five tables there) and the same statement with a
        phrase that always parses succeeds: then the failed one's expression was at fault. A
        plain row read is not enough: an index missing its term or size table still reads rows,
        and its MATCH fails with the same SQLITE_ERROR as an expression that cannot parse."""
        probe = ['"probe"'] * (len(params) - 1)
        try:
            have = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN"
                " (?, ?, ?, ?, ?)", [f"sessions_fts_{t}" for t in _FTS_SHADOWS])}
            self._conn.execute(sql, (*probe, params[-1])).fetchall()
        except sqlite3.Error:
            return False
        return len(have) == len(_FTS_SHADOWS)

    # ------------------------------------------------------------------ writes

    def upsert(self, record: SessionRecord) -> UpsertResult:
        """Store one session (delete-before-upsert); see :meth:`upsert_many`."""
        return self.upsert_many([record])[0]

    def upsert_many(self, records: Sequence[SessionRecord]) -> list[UpsertResult]:
        """Store sessions in one transaction; text is segmented before the write lock is taken.

        Per record: the same session with the same summary and tags is ``unchanged``; a summary
        identical to another session's is a ``duplicate`` (not stored; the session's own older row,
        if any, is removed since this recording replaces it); otherwise the old row and its index
        entry are deleted and the new one inserted (``replaced``) or simply inserted (``inserted``).
        """
        records = [scrub_record(r) for r in records]
        prepared = [(r, r.content_hash, ",".join(r.tags), self._segment(r.summary),
                     self._segment(" ".join(r.tags))) for r in records]
        results: list[UpsertResult] = []
        with self._write() as conn:
            for rec, chash, tags, seg_summary, seg_tags in prepared:
                results.append(self._upsert_one(conn, rec, chash, tags, seg_summary, seg_tags,
                                                now=self._clock()))
        self._carry_on()
        return results

    def _carry_on(self) -> None:
        """One bounded step of the upkeep this store's open left (a re-index spread over opens),
        after a write. Why: a server opens its store once, and the rest waited for a reopen or
        ``memory rebuild``. Upkeep, not the write: it runs on a connection of its own
        (:mod:`.upkeep`), so this store's reads on other threads go on meanwhile, never waits
        for the lock, and never raises. With nothing left, drift made since (:mod:`.drift`) is
        looked for every few writes."""
        self._unchecked += 1
        if not self._unfinished and self._unchecked < drift.CHECK_EVERY:
            return
        self._unchecked = 0
        stepped = self._upkeep.step(self._segment, self.segment_id)
        if stepped is not None:
            self.reindexed += stepped[0]
            self._unfinished = stepped[1]

    @staticmethod
    def _upsert_one(conn: sqlite3.Connection, rec: SessionRecord, chash: str, tags: str,
                    seg_summary: str, seg_tags: str, *, now: float | None = None
                    ) -> UpsertResult:
        """``now``: the store's clock, which a repeat's stamp is weighed against before it
        dates the kept copy (:func:`.passages.later_date`); None: every later stamp dates it."""
        mid = rec.memory_id
        old = conn.execute("SELECT rowid, content_hash, tags FROM sessions WHERE session_id = ?",
                           (rec.session_id,)).fetchone()
        if old is not None and old[1] == chash and old[2] == tags:
            return UpsertResult("unchanged", rec.session_id, mid, chash)
        dup = conn.execute("SELECT session_id, rowid, created_at FROM sessions"
                           " WHERE content_hash = ? AND session_id != ?",
                           (chash, rec.session_id)).fetchone()
        if old is not None:
            drift.unindex(conn, old[0])   # below rowid 1: not the passage of its rowid's owner
            conn.execute("DELETE FROM sessions WHERE rowid = ?", (old[0],))
        if dup is not None:
            if passages.later_date(dup[2], rec.created_at, now):
                # a note there before ours is another writer's edit, left for the heal it asks
                noted = conn.execute("SELECT 1 FROM index_drift WHERE id = ?",
                                     (dup[1],)).fetchone() is not None
                if passages.redate(conn, "sessions_fts", dup[1], rec.created_at) and not noted:
                    drift.indexed(conn, dup[1])   # ours
            return UpsertResult("duplicate", rec.session_id, mid, chash, duplicate_of=dup[0])
        cur = conn.execute(
            "INSERT INTO sessions(memory_id, session_id, summary, tags, created_at, relevance_score,"
            " content_hash, source, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (mid, rec.session_id, rec.summary, tags, rec.created_at, rec.relevance_score, chash,
             rec.source, rec.message_count))
        # a row deleted from ``sessions`` outside hermes-core leaves its index rows behind, and
        # SQLite hands its rowid to the next insert: ``insert`` removes those first (and clears
        # the drift note the triggers made of this insert: ours)
        rowid = int(cur.lastrowid or 0)
        passages.insert(conn, "sessions_fts", (rowid, seg_summary, seg_tags, rec.session_id,
                                               rec.created_at, rec.relevance_score))
        return UpsertResult("replaced" if old is not None else "inserted", rec.session_id, mid, chash)

    def rewrite_holding(self, needles: Mapping[str, str],
                        clean: Callable[[SessionRecord], SessionRecord]) -> int:
        """Rewrite through ``clean`` every row whose summary, tags or session id holds one of
        ``needles`` (marker -> text; recorded in ``meta`` under the shared ``scrubbed:`` prefix),
        or with a tag that is a piece of one (older versions made tags of a key's pieces; see
        :func:`.rewriting.rows_holding`), once per marker; returns the rows rewritten.

        Why: a key pasted into a chat before it was configured was stored in clear (nothing knew
        it was a key), and redacting it on every read leaves it in the file. Each marker is
        recorded in ``meta`` when its rows are clean, so an open that finds every marker done
        costs one read and takes no write lock; a row that ``clean`` makes identical to another
        session's summary is dropped as that session's duplicate, as :meth:`upsert` would, and a
        row whose cleaned id is already stored yields to that session when it is the newer
        recording. The index is then merged (FTS5 keeps a deleted row's words in its segment
        until a merge) and the WAL emptied, so no copy of the text is left in the files.
        """
        if not needles or self.read_only:
            return 0
        if not {SCRUBBED + m for m in needles} - {r[0] for r in self._read(rewriting.DONE_SQL)}:
            return 0
        with self._long_write("no row was rewritten", "a rewrite") as conn:
            return rewriting.rewrite_pending(conn, needles, clean, clock=self._clock,
                                             segment=self._segment,
                                             upsert=partial(self._upsert_one, now=self._clock()))

    def _checkpoint(self, after: str) -> None:
        """Copy the WAL into the database and empty it, so text just removed from the database
        has no copy left in ``-wal`` either.

        It cannot finish while another process reads an older snapshot, and waiting for that
        reader (the busy handler) held a forget for the whole busy timeout, 30 s by default, and
        then still left the words in ``-wal``. So it does not wait: when it cannot finish, the
        next write through this store tries again."""
        with self._lock:
            try:
                self._conn.execute("PRAGMA busy_timeout = 0")
                try:
                    busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                finally:
                    self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            except sqlite3.Error as e:
                log.debug("%s: checkpoint after %s failed: %s", self.path, after, e)
                busy = 1
            self._wal_holds_removed = bool(busy)

    def delete(self, session_id: str) -> bool:
        """Forget one session; False when it was not stored.

        Gone from the file too: FTS5 deletes by adding a tombstone and keeps the row's words in
        their segment until a merge, so the index is merged (``optimize``, the cost of rewriting
        the index once: forgetting is rare) and the WAL emptied, as after a key is rewritten.
        """
        sid = scrub_surrogates(session_id)
        if not self._read("SELECT 1 FROM sessions WHERE session_id = ?", (sid,)):
            return False   # nothing to merge: no notice to declare
        with self._long_write(f"session {session_id!r} was not forgotten",
                              "forgetting a session") as conn:
            row = conn.execute("SELECT rowid FROM sessions WHERE session_id = ?", (sid,)).fetchone()
            if row is None:
                return False
            drift.unindex(conn, row[0])
            reindex.unindex(conn, row[0])
            conn.execute("DELETE FROM sessions WHERE rowid = ?", (row[0],))
            conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('optimize')")
            reindex.merge(conn)
        return True

    def prune(self, policy: retention.RetentionPolicy, *, batch: int = retention.PRUNE_BATCH,
              max_batches: int | None = None) -> int:
        """Delete the sessions ``policy`` no longer keeps, oldest first, at most ``batch`` a
        write transaction and ``max_batches`` transactions (None: until none is left); returns
        how many went. Whether anything is due is read first, with no lock taken; a read-only
        store with something due says it cannot (:class:`SessionStoreError`)."""
        if not policy.active:
            return 0
        pruned = steps = 0
        while max_batches is None or steps < max_batches:
            with self._lock:
                try:
                    if not retention.due(self._conn, policy, self._clock()):
                        break
                except sqlite3.Error as e:
                    raise self._fault(e) from None
            with self._write("no session was pruned") as conn:
                done = retention.step(conn, policy, self._clock(), batch)
            pruned, steps = pruned + done, steps + 1
            if not done:
                break
        return pruned

    def rebuild(self) -> int:
        """Re-create the FTS index from the sessions table with the current tokenizer.

        Use after the tokenizer changed or if the index is out of step or damaged; returns the rows
        indexed. The index is dropped and created afresh: deleting its rows one by one goes through
        the very index that may be broken ("database disk image is malformed").
        """
        with self._write() as conn:
            return self._rebuild_in(conn)

    def _rebuild_in(self, conn: sqlite3.Connection) -> int:
        """The rebuild inside an open write transaction; records which segmenter built it."""
        rows = conn.execute("SELECT rowid, summary, tags, session_id, created_at, relevance_score"
                            " FROM sessions ORDER BY rowid").fetchall()
        reindex.drop_leftovers(conn)   # a batched re-index left half done is replaced
        conn.execute("DROP TABLE IF EXISTS sessions_fts")
        passages.forget_count(conn, "sessions_fts")
        conn.execute(FTS_TABLE_SQL)
        passages.watch(conn)
        for r in rows:
            summary, tags = passages.as_text(r[1]), passages.as_text(r[2])
            passages.insert(conn, "sessions_fts", (r[0], self._segment(summary),
                                                   self._segment(" ".join(tags.split(","))),
                                                   r[3], r[4], r[5]))
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('optimize')")
        drift.clear(conn)
        if self.segment_id is not None:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tokenizer', ?)",
                         (self.segment_id,))
        return len(rows)

    # ------------------------------------------------------------------ reads

    def search(self, match: str | Sequence[str], limit: int) -> list[Hit]:
        """Sessions for MATCH expressions (already made safe), best first: one expression, or one
        per query term. A session's bm25 is the sum, over the expressions, of its best passage's
        (:func:`.passages.ranked_sql`): FTS5's ``rank`` for a session of one row."""
        terms = [match] if isinstance(match, str) else list(match)
        if not terms:
            return []
        rows = self._read(passages.ranked_sql(len(terms)), (*terms, limit), matching=True)
        return self._hits(rows)

    def search_recent(self, match: str, limit: int) -> list[Hit]:
        """The newest ``limit`` sessions for a MATCH expression, each with its best passage's
        bm25, newest first.

        FTS5 walks its doclists in rowid order and stops at the limit, so the cost is bounded by
        ``limit`` however many rows match (``search`` ranks every matching row first).
        """
        rows = self._read(passages.recent_sql(), (match, limit), matching=True)
        return self._hits(rows)

    def _hits(self, rows: Sequence[Any]) -> list[Hit]:
        """Rows as hits; a row whose stamp, prior or score is not a finite number (the index's
        copy edited by hand or by another tool: text, NULL, a blob, an infinity) is left out and
        said once, with the way out, instead of failing every search of the archive."""
        hits: list[Hit] = []
        for r in rows:
            try:
                stamp, prior, score = float(r[2]), float(r[3]), float(r[4])
            except (TypeError, ValueError):
                stamp = prior = score = math.nan
            if math.isfinite(stamp + prior + score):   # one test: an inf or a NaN makes it fail
                hits.append(Hit(int(r[0]), str(r[1]), stamp, prior, score))
            elif not self._said_damaged:
                self._said_damaged = True
                log.warning("memory database %s: a session (%s) whose date or relevance in "
                            "the index is not a number is left out of searches ('hermes-core "
                            "memory rebuild' copies the index again from the sessions table)",
                            self.path, str(r[1])[:80])
        return hits

    def index_rows(self) -> int:
        """Rows in the full-text index: FTS5's own count, the N its bm25 weighs terms by."""
        with self._lock:
            try:
                return counts.indexed_rows(self._conn)
            except sqlite3.Error as e:
                raise self._fault(e) from None

    def term_df(self, term: str, cap: int) -> int:
        """In how many sessions ``term`` occurs, counted up to ``cap + 1`` (so at most that many
        index entries are read), remembered until the database changes."""
        return self.term_dfs((term,), cap)[term]

    def term_dfs(self, terms: Sequence[str], cap: int, *,
                 prefix_absent: bool = False) -> dict[str, int]:
        """:meth:`term_df` of several terms, in their order: the database is asked once whether
        it changed (a query, ~12 us here), and counted only for terms not remembered. An empty
        index (a new user's archive) answers 0 for every term without a count: whether it is
        empty is asked once per change of the database, like the counts. With ``prefix_absent``,
        each term no session has whole that may be a prefix (:func:`as_prefix`) is counted as
        one too, under its prefix form, after the terms."""
        with self._lock:
            try:
                version = self._conn.execute("PRAGMA data_version").fetchone()[0]
                generation = (version, self._writes, cap)
                if generation != self._df_generation:
                    self._df_cache.clear()
                    # read after data_version: a commit in between shows here (rows: not empty)
                    # or moves data_version (asked again next time); never a stale "empty"
                    self._df_empty = self._conn.execute(
                        "SELECT 1 FROM sessions_fts LIMIT 1").fetchone() is None
                    self._df_generation = generation
            except sqlite3.Error as e:
                raise self._fault(e) from None
            if self._df_empty:
                return dict.fromkeys(terms, 0)
        out = self._counts(terms, cap)
        if prefix_absent:
            stems = [p for p in (as_prefix(t) for t in terms if out[t] == 0) if p is not None]
            out.update(self._counts(stems, cap))
        return out

    def _counts(self, terms: Sequence[str], cap: int) -> dict[str, int]:
        out: dict[str, int] = {}
        missing: list[str] = []
        with self._lock:
            for term in terms:
                got = self._df_cache.get(term)
                out[term] = -1 if got is None else got
                if got is None:
                    missing.append(term)
        for term in missing:
            rows = self._read("SELECT count(*) FROM (SELECT 1 FROM sessions_fts WHERE sessions_fts"
                              " MATCH ? LIMIT ?)", (match_term(term), cap + 1), matching=True)
            out[term] = df = int(rows[0][0])
            with self._lock:
                if len(self._df_cache) >= DF_CACHE_SIZE:
                    self._df_cache.clear()
                self._df_cache[term] = df
        return out

    def texts(self, rowids: Sequence[int]) -> dict[int, tuple[str, tuple[str, ...]]]:
        """Summary and tags of a few rows, by rowid."""
        out: dict[int, tuple[str, tuple[str, ...]]] = {}
        for at in range(0, len(rowids), TEXTS_CHUNK):   # SQLite caps the bound parameters
            chunk = list(rowids[at:at + TEXTS_CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT rowid, summary, tags FROM sessions WHERE rowid IN ({marks})",
                              chunk)
            out.update((int(r[0]), (passages.as_text(r[1]),
                                    tuple(t for t in passages.as_text(r[2]).split(",") if t)))
                       for r in rows)
        return out

    def indexed(self, rowids: Sequence[int]) -> set[int]:
        """Which of ``rowids`` have a first index row (a few, read when their sessions were not:
        still indexed means drift; gone from both, a forget another process made meanwhile)."""
        marks = ",".join("?" * len(rowids[:TEXTS_CHUNK]))
        return {int(r[0]) for r in self._read(
            f"SELECT rowid FROM sessions_fts WHERE rowid IN ({marks})", rowids[:TEXTS_CHUNK])}

    def get(self, session_id: str) -> SessionRecord | None:
        rows = self._read("SELECT session_id, summary, tags, created_at, relevance_score, source,"
                          " message_count FROM sessions WHERE session_id = ?",
                          (scrub_surrogates(session_id),))
        if not rows:
            return None
        r = rows[0]
        at = stamp_of(r[3])
        if at is None:     # another tool's cell: no date to hand out, and none to invent
            raise SessionStoreError(self.path, f"session {r[0]!r}: its date (created_at "
                                    f"{r[3]!r:.60}) is neither a number nor an ISO 8601 date "
                                    "(written outside hermes-core); `hermes-core memory forget` "
                                    "it, or record it again")
        return SessionRecord(r[0], passages.as_text(r[1]),
                             tuple(t for t in passages.as_text(r[2]).split(",") if t), at,
                             number_of(r[4], 1.0), passages.as_text(r[5]), count_of(r[6]))

    def ids_starting(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` ids starting with ``prefix``, in order: a range on their unique index."""
        return [str(r[0]) for r in self._read(
            "SELECT session_id FROM sessions WHERE session_id >= ?1 AND session_id < ?1 ||"
            " char(1114111) ORDER BY session_id LIMIT ?2", (scrub_surrogates(prefix), limit))]

    def count(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM sessions")[0][0])

    def stats(self) -> dict[str, Any]:
        """Counts, time range, schema version and on-disk size; ``index_in_sync`` compares the
        sessions with the index's rows. Read in one snapshot from counters the writes keep
        (:func:`.counts.stats`), so it costs the same at any size."""
        with self.snapshot():   # holds the store lock too
            try:
                got = counts.stats(self._conn)
            except sqlite3.Error as e:
                raise self._fault(e) from None
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return {"db": str(self.path), **got, "size_bytes": size}
