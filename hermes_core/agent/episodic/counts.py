"""The counts ``memory stats`` shows, kept as rows are written instead of counted when asked.

Why: ``COUNT(*)`` over the index and ``GROUP BY source`` each read the whole file; at 1,000,000
sessions ``memory stats`` took 7-12 s cold. Now:

* **Sessions per source** live in ``session_counts``, kept by triggers on ``sessions``. A trigger
  runs inside the writing transaction whoever writes (another process, an older hermes-core, the
  sqlite3 shell), so the counts are exact under concurrent writers and after a crash (a rolled
  back write rolls its count back). The table is made by an open, not by a numbered migration,
  so an older hermes-core still opens the file (a newer schema version would make it refuse),
  and its writes keep the counts too. The first open fills it from one scan, once, in the same
  transaction that creates the triggers; ``meta`` ``counts`` records that it is done.
* **Rows in the index** come from FTS5's own "averages" record (``<table>_data`` id 1: the row
  count, then each column's token total, as varints), which FTS5 updates in every transaction
  that changes the index. A view or file without it falls back to ``COUNT(*)``.
* The oldest and newest stamp are ``MIN``/``MAX`` on the ``created_at`` index: two seeks.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from hermes_core.agent.episodic import passages
from hermes_core.agent.episodic.migrations import current_version

META_KEY = "counts"
#: FTS5's record of the index's row count and column sizes (``FTS5_AVERAGES_ROWID``).
AVERAGES_ROWID = 1

_DDL = (
    "CREATE TABLE IF NOT EXISTS session_counts ("
    " source TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    """CREATE TRIGGER IF NOT EXISTS session_counts_insert AFTER INSERT ON sessions BEGIN
         INSERT INTO session_counts(source, n) VALUES (new.source, 1)
           ON CONFLICT(source) DO UPDATE SET n = n + 1;
       END""",
    """CREATE TRIGGER IF NOT EXISTS session_counts_delete AFTER DELETE ON sessions BEGIN
         UPDATE session_counts SET n = n - 1 WHERE source = old.source;
         DELETE FROM session_counts WHERE source = old.source AND n <= 0;
       END""",
    """CREATE TRIGGER IF NOT EXISTS session_counts_move AFTER UPDATE OF source ON sessions
       WHEN old.source IS NOT new.source BEGIN
         UPDATE session_counts SET n = n - 1 WHERE source = old.source;
         DELETE FROM session_counts WHERE source = old.source AND n <= 0;
         INSERT INTO session_counts(source, n) VALUES (new.source, 1)
           ON CONFLICT(source) DO UPDATE SET n = n + 1;
       END""",
)


def _done(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM meta WHERE key = ?", (META_KEY,)).fetchone() is not None


def ensure(conn: sqlite3.Connection) -> bool:
    """Create and fill the counters once (True when this call did it). Read first, so a file
    that has them costs one lookup and no write lock; checked again under the lock, so two
    openers fill it once. sqlite3 errors reach the open path as they are (busy is retried there,
    a read-only file opens read-only and counts by scanning). A schema before ``meta`` (only
    a test's stand-in for the first release: opening migrates) is left as it is."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if has_meta is None or _done(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _done(conn):
            conn.execute("COMMIT")
            return False
        for sql in _DDL:
            conn.execute(sql)
        conn.execute("DELETE FROM session_counts")
        conn.execute("INSERT INTO session_counts(source, n)"
                     " SELECT source, COUNT(*) FROM sessions GROUP BY source")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (META_KEY,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


def read_sources(conn: sqlite3.Connection) -> dict[str, int] | None:
    """Sessions per source from the counters; None for a file that has none yet (written by an
    older version and opened read-only here)."""
    try:
        if not _done(conn):
            return None
    except sqlite3.OperationalError:   # schema 1: no meta table
        return None
    return {str(s): int(n) for s, n in conn.execute(
        "SELECT source, n FROM session_counts WHERE n > 0 ORDER BY source")}


def scan_sources(conn: sqlite3.Connection) -> dict[str, int]:
    """Sessions per source the slow way (a file without counters)."""
    return {str(s): int(n) for s, n in conn.execute(
        "SELECT source, COUNT(*) FROM sessions GROUP BY source ORDER BY source")}


def sources(conn: sqlite3.Connection) -> dict[str, int]:
    """Sessions per source: the counters, or a scan for a file that has none."""
    kept = read_sources(conn)
    return scan_sources(conn) if kept is None else kept


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """One SQLite varint (big-endian 7-bit groups, the ninth byte whole) and where the next
    begins; the format FTS5 writes its records in."""
    value = 0
    for i in range(8):
        if at + i >= len(data):
            raise ValueError("varint runs past the record")
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    if at + 8 >= len(data):
        raise ValueError("varint runs past the record")
    return (value << 8) | data[at + 8], at + 9


def indexed_rows(conn: sqlite3.Connection) -> int:
    """Rows in the FTS5 index: the count FTS5 keeps (two page reads), or ``COUNT(*)``
    when that record is not there or not readable."""
    try:
        row = conn.execute("SELECT block FROM sessions_fts_data WHERE id = ?",
                           (AVERAGES_ROWID,)).fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None and isinstance(row[0], bytes):
        if not row[0]:
            return 0   # FTS5 writes the record empty until the first row
        try:
            return _varint(row[0], 0)[0]
        except ValueError:
            pass
    return int(conn.execute("SELECT COUNT(*) FROM sessions_fts").fetchone()[0])


def stats(conn: sqlite3.Connection) -> dict[str, Any]:
    """``memory stats``' counts and time range, read inside the caller's snapshot: a few seeks
    (a file whose counters could not be made, read-only, is counted by scanning)."""
    # one aggregate a statement: SQLite seeks the index only for a lone MIN or MAX
    oldest, newest = conn.execute("SELECT (SELECT MIN(created_at) FROM sessions),"
                                  " (SELECT MAX(created_at) FROM sessions)").fetchone()
    if not all(isinstance(t, int | float) and math.isfinite(t)
               for t in (oldest, newest) if t is not None):
        # a stamp written by another tool (text and blobs sort after every number, an infinity
        # at an end): the range of the readable ones, scanned (rare)
        oldest, newest = conn.execute(
            "SELECT MIN(created_at), MAX(created_at) FROM sessions WHERE"
            " typeof(created_at) IN ('integer', 'real')"
            " AND created_at BETWEEN -1e300 AND 1e300").fetchone()
    by_source = sources(conn)
    indexed = indexed_rows(conn) - passages.extra(conn)
    sessions = sum(by_source.values())
    return {
        "sessions": sessions,
        "indexed": indexed,
        "index_in_sync": sessions == indexed,
        "oldest": oldest,
        "newest": newest,
        "sources": by_source,
        "schema_version": current_version(conn),
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
    }
