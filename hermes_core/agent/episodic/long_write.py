"""A write that may hold the lock longer than another process's busy timeout says so first.

Why: a forget (and the rewrite of a newly configured key's rows) merges the whole full-text index
in one transaction, so its words leave the file (decision 78); FTS5's stepped merge of every level
is not safe beside writers on SQLite 3.40 (decision 108), and its stepped merge of one level at a
time keeps the words of a row in an old segment (decision 119). At 1,000,000 sessions that merge
held the write lock 15.3 s, and past about 2,000,000 it passes the 30 s busy timeout: a session
another process recorded at its close then failed as "busy" and was lost. The long write now first
commits a declaration in ``meta`` (its own short transaction, so other processes can read it while
the lock is held) and withdraws it once the work is committed and the WAL copied into the file
(that checkpoint blocks writers too, for as long as the merge's pages take to copy). A writer
whose busy timeout runs out while a declaration stands keeps waiting, one busy timeout at a time,
up to ``WAIT_S`` from the declaration's stamp; a process killed mid-merge leaves its declaration
behind, which then costs a busy writer at most that long, and only while something else holds the
lock.
"""

from __future__ import annotations

import sqlite3

KEY = "long_write"
#: How long after a declaration a writer still waits for the lock (a merge of ten million
#: sessions, at decision 108's rate, takes about 150 s).
WAIT_S = 600.0


def declare(conn: sqlite3.Connection, now: float) -> None:
    """Record, inside the caller's write transaction, that a long write starts at ``now``."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (KEY, repr(now)))


def withdraw(conn: sqlite3.Connection) -> None:
    """Remove the declaration, inside the long write's own transaction."""
    conn.execute("DELETE FROM meta WHERE key = ?", (KEY,))


def declared_at(conn: sqlite3.Connection) -> float | None:
    """The stamp of a standing declaration; None when there is none (or no ``meta`` table, or a
    value that is not a number: then nothing is waited for)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    try:
        return float(row[0])
    except (TypeError, ValueError):
        return None


def worth_waiting(conn: sqlite3.Connection, now: float) -> bool:
    """Whether a writer refused as busy at ``now`` should wait another busy timeout."""
    at = declared_at(conn)
    return at is not None and abs(now - at) < WAIT_S
