"""Opening ``sessions.db`` safely: what is checked before SQLite touches a file, and the
read-only ways in when it cannot be written.

Why apart from the store: these run once per open and read only the file's header and schema;
the store's module keeps the reads and writes of a session.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_core.agent.episodic.migrations import APPLICATION_ID, current_version
from hermes_core.errors import SessionDatabaseUnusable, SessionStoreError

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, any file that is not an SQLite database of ours."""
    if path.is_dir():
        raise SessionDatabaseUnusable(path, "is a directory, not a database file")
    if not path.is_file():  # opening a FIFO to read its header would block forever
        raise SessionDatabaseUnusable(path, "is not a regular file (a FIFO, device or socket)")
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as e:
        raise SessionDatabaseUnusable(path, f"cannot read: {e.strerror or e}") from None
    if not header:
        return  # an empty file holds nothing to lose; SQLite initialises it
    if not header.startswith(SQLITE_MAGIC):
        raise SessionDatabaseUnusable(
            path, "is not an SQLite database (foreign or corrupted file); refusing to overwrite it")
    if len(header) < 100:
        raise SessionDatabaseUnusable(path, "truncated SQLite header (corrupted file); left untouched")
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        raise SessionDatabaseUnusable(
            path, f"belongs to another program (SQLite application_id {app_id:#x}); left untouched")


def open_read_only(path: Path, busy_timeout_s: float, versions: tuple[int, int]) -> sqlite3.Connection | None:
    """A read-only connection (``versions``: the oldest schema the reads work on and the newest
    this version knows) to an existing, current database whose file or folder cannot be
    written (read-only filesystem or permissions); None when that is not possible either.

    ``mode=ro`` first; on a read-only filesystem a WAL database cannot create its ``-shm``
    file, and ``immutable=1`` (nobody can write there either) is the way in."""
    base = path.resolve().as_uri()
    for query in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(f"{base}?{query}", uri=True, timeout=busy_timeout_s,
                                   isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            continue
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            ours = conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            if (ours and {"sessions", "sessions_fts", "schema_version"} <= tables
                    and versions[0] <= current_version(conn) <= versions[1]):
                return conn
        except sqlite3.Error:
            pass
        conn.close()
    return None

def open_again(path: Path, busy_timeout_s: float, busy_ms: int, pragmas: tuple[str, ...],
               versions: tuple[int, int] | None) -> sqlite3.Connection:
    """A connection like a store's open made, to a file that open already checked and migrated
    (``path`` resolved then; after a fork: :mod:`hermes_core.forked_sqlite`); read-only with
    ``versions``."""
    if versions is not None:
        ro = open_read_only(path, busy_timeout_s, versions)
        if ro is None:
            raise SessionStoreError(path, read_only_refusal(path, versions))
        return ro
    try:      # never creating: a file removed since must not come back empty
        conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, timeout=busy_timeout_s,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as e:
        raise SessionStoreError(path, f"cannot open again after a fork: {e}") from None
    try:
        for pragma in (f"PRAGMA busy_timeout = {busy_ms}", *pragmas):
            conn.execute(pragma)
    except sqlite3.Error as e:
        conn.close()
        raise SessionStoreError(path, f"cannot open again after a fork: {e}") from None
    return conn


def read_only_refusal(path: Path, versions: tuple[int, int]) -> str:
    """Why a preview cannot read the file, in the words a writing open would use: a newer
    version's file, another program's database and an empty file each say so."""
    try:
        empty = path.stat().st_size == 0
    except OSError as e:
        return f"cannot read ({e.strerror or e})"
    if empty:
        return "is an empty file, not a memory database yet (a chat or `memory add` makes one)"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        return f"cannot open read-only ({e})"
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN "
                                             "('table', 'view') AND name NOT LIKE 'sqlite_%'")}
        if not (conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
                or "schema_version" in tables):
            shown = ", ".join(sorted(tables)[:5]) or "none"
            return f"is another program's SQLite database (tables: {shown}); left untouched"
        version = current_version(conn)
        oldest, newest = versions
        if version > newest:
            return (f"schema version {version} is newer than this hermes-core understands "
                    f"({newest}); upgrade hermes-core")
        if version < oldest:
            return (f"schema version {version} is too old to read without migrating; a "
                    "command that writes (`memory rebuild`, a chat) migrates it")
        return "is missing tables of a memory database; left untouched"
    except sqlite3.DatabaseError as e:
        return f"corrupted or unreadable ({e}); left untouched"
    finally:
        conn.close()
