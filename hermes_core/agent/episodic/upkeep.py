"""The upkeep a store kept open does after its writes, on a connection of its own.

Why a connection of its own: a server opens its store once and carries its open's re-index (and
drift repair) on one bounded batch after each write (decision 125). On the store's connection that
batch ran under the store's thread lock, so a turn's recall on another thread waited for a batch
of segmenting (~0.1 s with jieba) it had nothing to do with. On its own connection the batch takes
only SQLite's write lock, and only for its inserts (segmenting is done before, with no lock), and
WAL lets the store's reads go on meanwhile. The batches, the cursor and their kill safety are the
same as another process's (:mod:`.reindex`, :mod:`.drift`): the connection is just another writer.

Why it never raises: it runs after the write committed, so a failure here (the lock held
elsewhere, a full disk, a folder gone, a segmenter out of memory, a damaged row) must not report a
stored session as lost. A busy lock is the common case and said at INFO each time; anything else is
said once a store as a warning, scrubbed of keys (an error may quote the text it failed on), and
the next write tries again.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from hermes_core import forked_sqlite
from hermes_core.agent.episodic import drift, reindex
from hermes_core.redact import redact

log = logging.getLogger("hermes_core.memory")


class Upkeep:
    """One store's after-write upkeep: at most one thread at a time runs a batch, others skip."""

    def __init__(self, path: Path, pragmas: tuple[str, ...]) -> None:
        self.path = path
        # where the store's own connection opens, taken now: the connection here opens at the
        # first upkeep, and a relative path read then would follow a chdir to another file
        self.real = Path(os.path.realpath(path))       # a loop: no raise
        self._uri = f"{self.real.as_uri()}?mode=rw"
        self.pragmas = pragmas
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False                  # the store closed: no connection opened again
        self._said = False                    # a failure other than SQLite's was warned about
        self._quiet = False                   # its lock was taken over a fork

    def _connection(self) -> sqlite3.Connection:
        """Opened on first use, read-write but never creating: a file removed under a running
        server must not be replaced by an empty one here."""
        if self._conn is None:
            conn = sqlite3.connect(self._uri, uri=True, timeout=0,
                                   isolation_level=None, check_same_thread=False)
            try:
                for pragma in ("PRAGMA busy_timeout = 0", *self.pragmas):
                    conn.execute(pragma)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def before_fork(self, timeout_s: float) -> list[forked_sqlite.Lock]:
        """In the parent (:mod:`hermes_core.forked_sqlite`): a running batch ended, the connection
        kept; the lock taken, released after the fork."""
        taken = forked_sqlite.quiesce(self._lock, timeout_s)
        self._quiet = bool(taken)
        return taken

    def after_fork(self) -> list[object]:
        """In a forked child (:mod:`hermes_core.forked_sqlite`): a new lock, the inherited
        connection closed (or handed back to be kept, if in use); the next step opens one of the
        child's own."""
        self._lock = threading.Lock()
        conn, self._conn = self._conn, None
        return forked_sqlite.inherited(conn, self._quiet, self.real)

    def step(self, segment: Callable[[str], str],
             segment_id: str | None) -> tuple[int, bool] | None:
        """One batch: rows re-indexed and whether upkeep is left; None when it did not run
        (another thread is at it) or failed (logged; left for the next write)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._closed:   # the store closed between the write and this
                return None
            conn = self._connection()
            done = 0
            if segment_id is not None and reindex.pending(conn, segment_id):
                done = reindex.run(conn, segment, segment_id, reindex.WRITE_ROWS,
                                   batch=reindex.WRITE_ROWS, steps=1)
            return done, drift.upkeep(conn, segment, segment_id, 1)
        except sqlite3.Error as e:
            self._discard()
            log.info("%s: upkeep after a write left for the next one (%s)", self.path, e)
        except Exception as e:   # the write it follows is stored, whatever this is
            self._discard()
            said = redact(f"{type(e).__name__}: {e}")
            if self._said:
                log.debug("%s: upkeep after a write failed again (%s)", self.path, said)
            else:
                self._said = True
                log.warning("%s: upkeep after a write failed (%s); the session is stored, the "
                            "next write tries again", self.path, said)
        finally:
            self._lock.release()
        return None

    def _discard(self) -> None:
        """Drop the connection after a failure: a batch cut short may leave a statement half
        read (its snapshot pinned: every later batch would be refused as busy) or a transaction
        open; the next write opens a fresh one."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()      # finalises open statements, rolls an open transaction back
            except sqlite3.Error as e:
                log.debug("%s: closing upkeep's connection failed: %s", self.path, e)

    def close(self) -> None:
        """Close the connection once a running batch has ended; a later step runs no batch."""
        with self._lock:
            self._closed = True
            self._discard()
