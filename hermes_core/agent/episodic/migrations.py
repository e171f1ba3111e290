"""Numbered schema migrations for the episodic-memory database (``sessions.db``).

Each migration is applied once, in order, inside the same ``BEGIN IMMEDIATE`` transaction that
records it in ``schema_version``, so two processes opening a fresh file at the same time cannot both
apply it, and a crash half-way leaves the previous version intact. Never edit a released migration:
append a new one.

The FTS5 table holds *segmented* text (``segment_for_index``), not the raw summary: SQLite's
``unicode61`` keeps a run of Chinese characters as one token, so ``苹果`` would never match
``我喜欢吃苹果`` unless jieba has split it first. ``session_id``, ``created_at`` and
``relevance_score`` ride along UNINDEXED so a search needs no join until the final few rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

#: ``PRAGMA application_id`` of a hermes-core memory database ("HRMS"); a different non-zero value
#: means the file belongs to another program.
APPLICATION_ID = 0x48524D53


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``version`` is its number, ``apply`` runs inside the open transaction."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


def _m1_initial(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("""
        CREATE TABLE sessions (
            rowid INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL UNIQUE,
            summary TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            relevance_score REAL NOT NULL DEFAULT 1.0,
            content_hash TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT 'manual',
            message_count INTEGER NOT NULL DEFAULT 0
        )""")
    conn.execute("CREATE UNIQUE INDEX sessions_content_hash ON sessions(content_hash)")
    conn.execute("CREATE INDEX sessions_created_at ON sessions(created_at)")
    conn.execute("""
        CREATE VIRTUAL TABLE sessions_fts USING fts5(
            summary, tags,
            session_id UNINDEXED, created_at UNINDEXED, relevance_score UNINDEXED,
            tokenize = 'unicode61 remove_diacritics 2'
        )""")


#: The full-text index as the latest migration leaves it, for ``SessionStore.rebuild`` (which drops
#: and re-creates it). Released migrations keep their own copy of the DDL: never edit them.
FTS_TABLE_SQL = """
    CREATE VIRTUAL TABLE sessions_fts USING fts5(
        summary, tags,
        session_id UNINDEXED, created_at UNINDEXED, relevance_score UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
    )"""


def _m2_meta(conn: sqlite3.Connection) -> None:
    # Facts about how the index was built. No 'tokenizer' row yet: the index was built by a
    # tokenizer older than the first recorded one, so the first open after this re-indexes.
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _m3_passages(conn: sqlite3.Connection) -> None:
    # No DDL: from this version a long summary's index rows are passages at negative rowids
    # (``passages.py``). An older hermes-core would delete a session's first row only and leave
    # the others naming a rowid SQLite may hand to another session, so it must refuse the file
    # (a newer schema version); the index is cut into passages by the re-index this version's
    # segmenter id asks for, in batches, not here in one transaction.
    del conn


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions table and FTS5 index over segmented summary and tags", _m1_initial),
    Migration(2, "meta table (which tokenizer built the full-text index)", _m2_meta),
    Migration(3, "a long summary is indexed as passages at negative rowids", _m3_passages),
)

LATEST_VERSION = MIGRATIONS[-1].version
#: The oldest schema the read path (search, texts, stats) works on unchanged. A database that needs
#: a migration but cannot be written (read-only filesystem, disk full) still opens read-only when
#: it is at least this new. Raise it with any migration that changes what reads touch.
READ_COMPAT_VERSION = 1


def current_version(conn: sqlite3.Connection) -> int:
    """The highest applied migration, 0 for a database without our ``schema_version`` table."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone()
    if row is None:
        return 0
    got = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(got[0] or 0)


def apply_pending(conn: sqlite3.Connection, *, now: float) -> list[int]:
    """Apply every migration newer than the database, in one IMMEDIATE transaction each step.

    The version is re-read after the write lock is taken, so a concurrent opener that won the race
    is respected. Returns the versions applied by this call.
    """
    applied: list[int] = []
    for migration in MIGRATIONS:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if current_version(conn) >= migration.version:
                conn.execute("COMMIT")
                continue
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version ("
                         "version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)")
            migration.apply(conn)
            conn.execute("INSERT INTO schema_version(version, description, applied_at) VALUES (?, ?, ?)",
                         (migration.version, migration.description, now))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite rolls back by itself on SQLITE_FULL / IOERR
                conn.execute("ROLLBACK")
            raise
        applied.append(migration.version)
    return applied
