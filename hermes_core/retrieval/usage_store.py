"""The usage history on disk: (query, skill) events in SQLite, redacted, capped, pruned.

A trigger that fired, a ``skill_view(name)`` after a hint, an author's ``agent.feedback(skill,
good=...)``: each is one event in ``<home>/usage.sqlite3``. The store is the user's history and
another program's file is never ours: a file that cannot be read as a history (damaged, foreign,
newer) turns learning off with one warning naming it and is left as it is, and nothing a reader
or writer meets in it reaches a chat turn as an exception. The layer that learns from the events
is usage.py.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hermes_core import forked_sqlite
from hermes_core.redact import SCRUBBED, redact, scan_needles
from hermes_core.types import clean_text

log = logging.getLogger(__name__)

USAGE_FILE = "usage.sqlite3"
EVENT_KINDS = ("trigger", "view", "feedback", "replay")
DEFAULT_CAP = 20_000         # events kept; the oldest go first
MAX_QUERY_CHARS = 1_000      # a stored query is cut here: the head says what was asked
#: Seconds SQLite waits for the file's lock (each connection's ``timeout``), and at most a fork
#: waits for a write of this store under way on another thread.
BUSY_S = 5.0

#: ``PRAGMA user_version`` of the usage file. 0: written by versions that cut a query at
#: MAX_QUERY_CHARS *before* redacting it (a key across the cut kept its head, which no pattern
#: knows, in clear) and scrubbed key shapes only; such rows are re-redacted once on open
#: (:func:`rescrub_old_query`). 1: redacted, configured secrets included, before the cut.
USAGE_SCHEMA_VERSION = 1
# the run of key characters a cut query ends with: after a cut, possibly the head of a key
_KEY_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=:]+$")
# what a terminal interprets rather than shows (ECMA-48, ECMA-35): a control sequence (ESC [
# ... final byte), a control string (OSC, DCS, SOS, PM, APC: ESC ] P X ^ _ ... BEL or ESC \\),
# or any other escape: intermediates, then one final character, so ESC ( B (tput sgr0), ESC 7 /
# ESC 8 (cursor saved and restored around a progress line), ESC c, ESC = go whole, not only
# ESC + @-_ (which left "(B", "7" and "c" glued to the next word); a CSI also in its C1 form
# (U+009B). The C1 string introducers stay single controls: in Latin-1 mojibake of UTF-8 they
# are bytes of ordinary characters, and as strings they would swallow the rest of the message
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b(?:[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
                     r"|[ -/]*[0-~])")
# C0 and C1 controls but tab, line feed and carriage return (which are text), with a space on
# either side: a run of them stands for one space
_CONTROLS = re.compile(r" ?[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]+ ?")
_ODD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
# a message more than this share of odd characters (controls, U+FFFD) is a file's bytes, not
# words: Perl's -B file test draws the line there; a NUL anywhere is binary too, as git decides
BINARY_SHARE = 0.3

# usage_events_repeat finds the row of a repeated (message, skill) that record() updates: without
# it the update read every event of the skill (72 ms a record at the 20,000 cap with one skill
# used, 0.6 ms over 500 skills); a 64-character head keeps the index a tenth of the queries' size
SCHEMA = """
CREATE TABLE IF NOT EXISTS usage_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    query TEXT NOT NULL,
    skill TEXT NOT NULL,
    kind TEXT NOT NULL,
    good INTEGER NOT NULL,
    content_hash TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS usage_events_skill ON usage_events(skill);
CREATE INDEX IF NOT EXISTS usage_events_repeat ON usage_events(skill, substr(query, 1, 64));
CREATE TABLE IF NOT EXISTS usage_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _read_only_error(e: sqlite3.Error) -> bool:
    """SQLite refused a write because the file or its folder is read-only (SQLITE_READONLY and
    its extended codes), as opposed to a damaged or foreign file."""
    return (getattr(e, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_READONLY


def _text(value: object) -> str:
    """A stored query as text, whatever another writer put in the column (a BLOB, a number)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def _time(value: object) -> float:
    """A stored event time as a number; 0.0 for what another writer put there instead."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def verdict(good: object) -> bool:
    """``good`` as the bool it must be: ``good="no"`` (any non-empty string, any object) was true,
    and stored a wrong skill as a right one. numpy's bool is a bool."""
    if isinstance(good, bool | np.bool_):
        return bool(good)
    raise TypeError(f"good must be True or False, not {good!r} ({type(good).__name__})")


def message_text(query: object) -> str:
    """``query`` as the message text it must be: ``None`` or ``b"..."`` was stored as "None" or
    "b'...'", a past request later ones were ranked against. The value is not shown (a message
    may hold a key)."""
    if isinstance(query, str):
        return query
    raise TypeError(f"query must be the message's text (str), not {type(query).__name__}")


#: SQLite's primary result codes for a file whose pages are not a database's: no later call does
#: better, unlike a lock (SQLITE_BUSY) that another process lets go of
_DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _damaged(e: sqlite3.Error) -> bool:
    """SQLite said the file's pages are not a database's (SQLITE_CORRUPT, SQLITE_NOTADB). Only
    SQLite's own code says so: an IntegrityError or ProgrammingError is a refused call (a caller's
    bad argument, a bug), and calling it damage closed a sound history and hid the bug."""
    return (getattr(e, "sqlite_errorcode", 0) & 0xFF) in _DAMAGED


def message_words(query: str) -> str | None:
    """``query`` without what a terminal would interpret (escape sequences go whole, any other
    control character becomes a space), or None when it is binary: a NUL, or more than
    BINARY_SHARE of its characters controls or replacement characters. A past request is
    matched by its words; a colour code pasted from a terminal is none, and a file's bytes handed
    over as the message would be matched as if they were."""
    if query.isprintable():
        return query
    if "\x00" in query or len(_ODD.findall(query)) > BINARY_SHARE * len(query):
        return None
    return _CONTROLS.sub(" ", _ESCAPE.sub("", query))


#: the columns a usage_events table must have to be ours
COLUMNS = ("at", "query", "skill", "kind", "good", "content_hash")


def rescrub_old_query(query: str, secrets: Sequence[str] = ()) -> str:
    """A query stored by schema 0, made safe: redacted again (configured secrets of any shape
    too) and, when it was cut at MAX_QUERY_CHARS, without its trailing run of key characters,
    which may be the head of a key the cut split. '' means nothing is left worth keeping."""
    text = redact(query, secrets)
    if len(query) >= MAX_QUERY_CHARS:
        text = _KEY_TAIL.sub("", text)
    return text.strip()


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """One use of a skill for a query; ``good`` False is an author's "this was the wrong skill"."""

    query: str
    skill: str
    kind: str = "view"
    good: bool = True
    content_hash: str = ""
    at: float = 0.0
    id: int = 0          # the row's id: later events have larger ones (0: not from a store)


class UsageStore:
    """The events, in SQLite (WAL) at ``path``; ``None`` keeps them in memory (tests, eval replay).

    Thread-safe; every write is one short transaction. Queries are redacted before they are stored
    (``secrets`` adds exact strings to scrub on top of the pattern-based redaction). The file is
    created on the first write: a home that never records anything gets no database.

    ``read_only`` (a preview, ``hermes-core prompt``): the file is opened read-only and never
    written, not even to redact a key configured since a query was stored; such queries are
    redacted as they are read, and the next writable open rewrites them.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, cap: int = DEFAULT_CAP,
                 secrets: Sequence[str] = (), clock: Callable[[], float] = time.time,
                 read_only: bool = False) -> None:
        if cap < 1:
            raise ValueError("cap must be >= 1")
        self.path = Path(path) if path is not None else None
        self.cap = cap
        self.secrets = tuple(secrets)
        self.clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._unreadable = False
        self._read_only = self._preview = read_only and path is not None
        self._unscrubbed: tuple[str, ...] = ()   # configured keys possibly still in stored queries
        self._old_rows = False                   # schema-0 rows read without migrating them
        self._version = 0
        self._quiet = False                      # its lock was taken over a fork
        if self.path is None:
            self._open()
        forked_sqlite.watch(self)

    def before_fork(self) -> list[forked_sqlite.Lock]:
        """In the parent, before a fork (:mod:`hermes_core.forked_sqlite`, as for the
        memory store): a write under way ended, the lock taken, released after the fork."""
        taken = forked_sqlite.quiesce(self._lock, BUSY_S)
        self._quiet = bool(taken)
        return taken

    def after_fork(self) -> list[object]:
        """In a forked child: a new lock, and the file's inherited connection closed under the
        fork guard (or kept, never used, if it was in use); the next call opens the child's
        own. Through the parent's connection, which believed it held the parent's locks, the
        child's writes went to a ``-wal`` the parent's close then checkpointed and removed:
        what the child recorded after that was lost. An in-memory store keeps its connection:
        the child's copy of the memory is its own, and nothing else holds it."""
        self._lock = threading.Lock()
        if self.path is None:
            return []
        conn, self._conn = self._conn, None
        return forked_sqlite.inherited(conn, self._quiet, Path(os.path.realpath(self.path)))

    def _open(self, create: bool = True) -> sqlite3.Connection | None:
        """The connection (call with the lock held, or from __init__); None when the file does not
        exist yet and ``create`` is False."""
        if self._conn is not None or self._unreadable:
            return self._conn
        if self.path is not None and (not create or self._preview) and not self.path.exists():
            return None
        if self._preview:
            preview = self._connect_read_only()
            if preview is None:
                self._give_up(sqlite3.DatabaseError("cannot be opened read-only"))
                return None
            self._old_rows = int(preview.execute("PRAGMA user_version").fetchone()[0]) < USAGE_SCHEMA_VERSION
            self._conn = preview
            return self._scrubbed(preview)
        try:   # a folder where the file should be, a file where the home should be
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path) if self.path is not None else ":memory:",
                                   check_same_thread=False, timeout=BUSY_S)
        except (OSError, sqlite3.Error) as e:
            self._give_up(e)
            return None
        conn.text_factory = lambda b: b.decode("utf-8", "replace")   # invalid UTF-8 from another writer
        try:
            if not self._ours(conn):   # a newer version's file: learnt from, never written
                conn.close()
                newer = self._connect_read_only()
                if newer is None:
                    self._give_up(sqlite3.DatabaseError("written by a newer hermes-core, in a form "
                                                        "this one cannot read"))
                    return None
                self._conn = newer
                self._read_only = True
                return self._scrubbed(newer)
            # a query redacted in place must leave no copy in the freed part of its page; only
            # some SQLite builds (Debian's) turn this on
            conn.execute("PRAGMA secure_delete = ON")
            with conn:   # the table checked before WAL mode is set: another program's file is left as it was
                conn.executescript(SCHEMA)
                conn.execute("SELECT query, skill, kind, good, content_hash, at FROM usage_events "
                             "LIMIT 0")
                if self.path is not None:
                    conn.execute("PRAGMA journal_mode=WAL")
            self._migrate(conn)
        except sqlite3.DatabaseError as e:
            conn.close()
            fallback = self._open_read_only(e)
            if fallback is None:
                self._give_up(e)
                return None
            conn = fallback
        self._conn = conn
        return self._scrubbed(conn)

    def _scrubbed(self, conn: sqlite3.Connection) -> sqlite3.Connection | None:
        """``conn`` once :meth:`_scrub_configured` ran on it. The scrub is the first read of
        ``usage_meta`` and, for a new key, of every query: damaged pages there raised out of the
        open, so out of every read, write and turn. None then, learning off (said once)."""
        try:
            self._scrub_configured(conn)
        except sqlite3.DatabaseError as e:
            conn.close()
            self._conn = None
            self._give_up(e, "damaged" if _damaged(e) else "unreadable")
            return None
        return conn

    def _ours(self, conn: sqlite3.Connection) -> bool:
        """True when the file may be written by this version: new, or a usage history of this
        schema or an older one. Another program's database (tables, none of them ours) raises
        DatabaseError: creating our tables in it would change a file that is not ours. A newer
        version's history is False: migrating it "down" would corrupt it for that version."""
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        if tables and "usage_events" not in tables:
            shown = ", ".join(sorted(tables)[:5])
            raise sqlite3.DatabaseError(f"another program's SQLite database (tables: {shown})")
        if tables:   # our schema script would add an index and a table to a foreign usage_events
            have = {r[1] for r in conn.execute("PRAGMA table_info(usage_events)")}
            if missing := [c for c in COLUMNS if c not in have]:
                raise sqlite3.DatabaseError(
                    "its usage_events table is another program's (no column "
                    + ", ".join(missing) + ")")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > USAGE_SCHEMA_VERSION:
            log.warning("usage history %s was written by a newer hermes-core (schema %d; this one "
                        "knows %d); skill retrieval learns from it, new uses are not recorded",
                        self.path, version, USAGE_SCHEMA_VERSION)
            return False
        return True

    def _scrub_configured(self, conn: sqlite3.Connection) -> None:
        """Redact, in the file, queries recorded before one of ``secrets`` was configured: then
        nothing knew it was a key, and it stayed in clear. One unindexed scan per secret, once:
        the secret's fingerprint is then recorded in ``usage_meta`` (every later query is redacted
        before it is stored), so an open with every key done costs one read of the markers.
        A key that cannot be scrubbed now (read-only) is redacted as queries are read."""
        if not self.secrets:
            return
        try:
            done = {r[0] for r in conn.execute(f"SELECT key FROM usage_meta WHERE key LIKE '{SCRUBBED}%'")}
        except sqlite3.OperationalError:   # a read-only file of a version without the table
            done = set()
        todo = {marker: needle for marker, needle in scan_needles(self.secrets).items()
                if SCRUBBED + marker not in done}
        if not todo:
            return
        self._unscrubbed = tuple(todo.values())
        if self._read_only:
            return
        try:
            hits: dict[int, str] = {}
            for needle in todo.values():
                hits.update(conn.execute("SELECT id, query FROM usage_events WHERE instr(query, ?) > 0",
                                         (needle,)).fetchall())
            changed = [(clean, row_id) for row_id, raw in hits.items()
                       if (clean := redact(_text(raw), self.secrets)) != raw]
            marks = [(SCRUBBED + marker, repr(float(self.clock()))) for marker in todo]
            if not self._write(conn, [("UPDATE usage_events SET query = ? WHERE id = ?", changed),
                                      ("INSERT OR REPLACE INTO usage_meta (key, value) VALUES (?, ?)",
                                       marks)]):
                return
            self._unscrubbed = ()
            if changed:
                log.info("usage history %s: %d stored queries held a configured key; redacted",
                         self.path, len(changed))
        except sqlite3.Error as e:
            if _damaged(e):   # not a key left in clear: a file no later call reads either
                raise
            log.warning("usage history %s: queries stored before a key was configured could not "
                        "be redacted (%s); they are redacted as they are read", self.path, e)

    def _shown(self, query: str) -> str:
        """A stored query as it may be used: redacted for a configured key the file may still
        hold (read-only), and made safe as a migration would for a schema-0 row never migrated."""
        if self._old_rows:
            return rescrub_old_query(query, self.secrets)
        if any(s in query for s in self._unscrubbed):
            return redact(query, self.secrets)
        return query

    def _open_read_only(self, e: sqlite3.DatabaseError) -> sqlite3.Connection | None:
        """A read-only connection when opening failed only because nothing may be written (a
        read-only home or file): the history is still learnt from, nothing new is recorded."""
        if not _read_only_error(e):
            return None
        conn = self._connect_read_only()
        if conn is not None:
            self._now_read_only(e)
        return conn

    def _connect_read_only(self) -> sqlite3.Connection | None:
        """A connection that cannot write the file, or None. ``immutable`` when ``mode=ro``
        fails: a WAL file in a read-only folder cannot get its ``-shm`` file, and no writer can
        change it there."""
        if self.path is None or not self.path.is_file():
            return None
        for flag in ("mode=ro", "immutable=1"):
            try:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{flag}", uri=True,
                                       check_same_thread=False, timeout=BUSY_S)
            except sqlite3.Error:
                continue
            conn.text_factory = lambda b: b.decode("utf-8", "replace")
            try:
                conn.execute("SELECT query, skill, kind, good, content_hash, at FROM usage_events "
                             "LIMIT 0")
            except sqlite3.DatabaseError:
                conn.close()
                continue
            return conn
        return None

    def _write(self, conn: sqlite3.Connection,
               statements: Sequence[tuple[str, Sequence[tuple[object, ...]]]]) -> bool:
        """Run ``statements`` in one transaction; False, changing nothing, when the history is
        read-only (known already, or refused now: the store then stays read-only)."""
        if self._read_only:
            return False
        try:
            with conn:
                for sql, rows in statements:
                    conn.executemany(sql, rows)
        except sqlite3.OperationalError as e:
            if not _read_only_error(e):
                raise
            self._now_read_only(e)
            return False
        self._version += 1
        return True

    def _now_read_only(self, e: sqlite3.Error) -> None:
        if not self._read_only:
            log.warning("usage history %s is read-only (%s); skill retrieval learns from the "
                        "uses recorded so far, new uses are not recorded", self.path, e)
        self._read_only = True

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring rows of an older schema up to :data:`USAGE_SCHEMA_VERSION`, once: in one
        IMMEDIATE transaction that re-reads the version (a concurrent opener that won is
        respected); a failure rolls back and leaves the file as it was."""
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) >= USAGE_SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) < USAGE_SCHEMA_VERSION:
                changed: list[tuple[str, int]] = []
                dropped: list[tuple[int]] = []
                for row_id, raw in conn.execute("SELECT id, query FROM usage_events").fetchall():
                    query = _text(raw)
                    clean = rescrub_old_query(query, self.secrets)
                    if not clean:
                        dropped.append((row_id,))
                    elif clean != raw:
                        changed.append((clean, row_id))
                conn.executemany("UPDATE usage_events SET query = ? WHERE id = ?", changed)
                conn.executemany("DELETE FROM usage_events WHERE id = ?", dropped)
                conn.execute(f"PRAGMA user_version = {USAGE_SCHEMA_VERSION}")
                if changed or dropped:
                    log.info("usage history %s: %d stored queries redacted again, %d dropped "
                             "(written by an older version)", self.path, len(changed), len(dropped))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _give_up(self, e: OSError | sqlite3.Error, how: str = "unreadable") -> None:
        """The file is the user's history (or another program's): never overwritten nor deleted.
        Learning from use stops for this store, said once."""
        if not self._unreadable:
            log.warning("usage history %s is %s (%s); learning from use is off until the "
                        "file is repaired or moved away", self.path, how, e)
        self._unreadable = True

    def _failed(self, e: sqlite3.DatabaseError) -> None:
        """A read or write of an open history failed (call with the lock held). Damaged pages
        (a disk fault, a copy cut short) fail every later call too: learning is off, said once,
        and the file is kept. Anything else (a lock another process held past the timeout, a
        full disk, a value SQLite refused) costs this call only, said each time, the error's class
        named. Either way nothing reaches the turn."""
        if _damaged(e):
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._give_up(e, "damaged")
        else:
            log.warning("usage history %s: %s: %s; this use of it is skipped", self.path,
                        type(e).__name__, e)

    @property
    def read_only(self) -> bool:
        """The history is read (learning from use goes on) but nothing new can be recorded."""
        return self._read_only

    @property
    def unreadable(self) -> bool:
        """The file could not be opened as a usage history: learning from use is off for this
        store (the file is kept as it is)."""
        return self._unreadable

    @property
    def version(self) -> tuple[int, int]:
        """Changes with every write to the history, made through this store or committed by
        another process on the same home (SQLite's ``data_version``): the usage layer rebuilds
        its index on change, so one chat learns from another's uses without a restart."""
        with self._lock:
            conn = self._open(create=False)
            if conn is None:
                return self._version, -1
            try:
                theirs = int(conn.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:
                theirs = -1
        return self._version, theirs

    def record(self, query: str, skill: str, kind: str = "view", *, good: bool = True,
               content_hash: str = "") -> bool:
        """Store one event; False (and nothing stored) for an empty query or skill name, or a
        binary one (:func:`message_words`)."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown usage event kind {kind!r}; use {', '.join(EVENT_KINDS)}")
        good, query = verdict(good), message_text(query)
        # redacted before it is cut: a key across the cut would no longer be whole, and its head
        # would be stored in clear (the margin past the cut is thrown away after redaction)
        # a lone surrogate (half an emoji a JSON escape carried) cannot be stored as UTF-8
        words = message_words(clean_text(query[:4 * MAX_QUERY_CHARS]))
        text = "" if words is None else redact(words, self.secrets)[:MAX_QUERY_CHARS].strip()
        if not text or not skill:
            return False
        # the same message for the same skill again is the same evidence, its verdict the latest,
        # and it is as recent as its last mark: its row goes and the event is written anew, and
        # the cap drops the oldest rows beyond ``cap`` by count. A new row per repeat let one
        # user's repeated feedback fill every neighbour of that message; an update in place kept
        # its first id, so the cap dropped it as old; a cap by id range with a repeat's new id
        # would drop one other event per repeat.
        at, name, mark = float(self.clock()), str(skill), 1 if good else 0
        with self._lock:
            conn = self._open()
            try:
                if conn is None or not self._write(conn, [
                        ("DELETE FROM usage_events "
                         "WHERE skill = ? AND substr(query, 1, 64) = substr(?, 1, 64) AND query = ?",
                         [(name, text, text)]),
                        ("INSERT INTO usage_events (at, query, skill, kind, good, content_hash) "
                         "VALUES (?,?,?,?,?,?)", [(at, text, name, kind, mark, content_hash)]),
                        ("DELETE FROM usage_events WHERE id IN (SELECT id FROM usage_events "
                         "ORDER BY id LIMIT max(0, (SELECT COUNT(*) FROM usage_events) - ?))",
                         [(self.cap,)])]):
                    return False
            except sqlite3.DatabaseError as e:
                self._failed(e)
                return False
        return True

    def events(self) -> list[UsageEvent]:
        """The stored events, oldest first; none from a history that cannot be read now."""
        with self._lock:
            conn = self._open(create=False)
            try:
                rows = [] if conn is None else conn.execute(
                    "SELECT query, skill, kind, good, content_hash, at, id FROM usage_events ORDER BY id"
                ).fetchall()
            except sqlite3.DatabaseError as e:
                self._failed(e)
                rows = []
        # a row stored before record() cleaned messages (same schema: nothing migrated it) is
        # read as record() would store it now: escapes out, a binary one not at all
        events = [UsageEvent(words.strip(), _text(s), _text(k), bool(g), _text(h), _time(a), i)
                  for q, s, k, g, h, a, i in rows
                  if (words := message_words(self._shown(_text(q)))) is not None]
        return [e for e in events if e.query]   # a schema-0 row with nothing safe left

    def __len__(self) -> int:
        with self._lock:
            conn = self._open(create=False)
            try:
                if conn is None:
                    return 0
                return int(conn.execute("SELECT COUNT(*) FROM usage_events").fetchone()[0])
            except sqlite3.DatabaseError as e:
                self._failed(e)
                return 0

    def prune(self, current: Mapping[str, str], *, drop_absent: bool = True) -> int:
        """Drop events of skills whose content hash differs from ``current`` (name -> content
        hash: the skill was rewritten, and what was learnt about the old text may not hold) and,
        with ``drop_absent``, of skills not in ``current``. Events stored without a hash are kept
        while their skill exists. Returns how many were dropped.

        An empty ``current`` drops nothing: a catalog with no skill at all is far more likely a
        folder missing for a moment (moved, unmounted, a checkout switching branches) than every
        skill deleted, and the history cannot be learnt again. For the same reason the caller
        passes ``drop_absent=False`` when the catalog may be incomplete (a file it skipped, a
        folder it could not find): the absent skill may be one with a typo being fixed."""
        if not current:
            return 0
        with self._lock:
            conn = self._open(create=False)
            if conn is None:
                return 0
            try:
                rows = conn.execute("SELECT id, skill, content_hash FROM usage_events").fetchall()
                stale = [(i,) for i, s, h in rows
                         if (s not in current and drop_absent) or (s in current and h and h != current[s])]
                if stale and not self._write(conn, [("DELETE FROM usage_events WHERE id = ?", stale)]):
                    return 0
            except sqlite3.DatabaseError as e:
                self._failed(e)
                return 0
        return len(stale)

    def clear(self) -> None:
        with self._lock:
            conn = self._open(create=False)
            if conn is None:
                self._version += 1
            else:   # read-only (a newer version's file, a read-only home): left as it is
                try:
                    self._write(conn, [("DELETE FROM usage_events", [()])])
                except sqlite3.DatabaseError as e:
                    self._failed(e)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

