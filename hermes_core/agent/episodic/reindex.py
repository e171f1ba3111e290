"""The one-time re-index of the episodic archive for a new tokenizer, in batches.

Why: a database built by an older tokenizer (or schema) is re-indexed once when opened. Done as
one write transaction, every other process's write waited for the whole rebuild (88 s for 50,000
sessions on a loaded machine), past its 30 s busy timeout. Here the new index is built beside the
old one, ``sessions_fts_next``, a batch of ``BATCH_ROWS`` rows at a time:

* a batch's rows are read and segmented (the slow part, jieba) with no lock held; the write lock is
  taken only to insert them, after checking that no other opener moved the cursor meanwhile and
  re-reading the rows (a row changed since is segmented again there);
* writes made between batches (by this version or an older one) are caught by triggers on
  ``sessions`` that note the rowid in ``reindex_dirty``; each batch re-derives those rows of the
  new index (a deleted row leaves it, a changed or re-used rowid is indexed again) before moving
  the cursor, so the new index always equals ``sessions`` up to the cursor;
* the cursor (``meta`` ``reindex_cursor``, the last rowid indexed) moves in the same transaction as
  the rows, so a process killed at any point leaves a consistent half-built index that the next
  opener resumes, and two openers at once share the batches instead of doing them twice;
* the last batch swaps the indexes, drops the triggers and records the tokenizer, in one
  transaction: until then searches read the old index as before, so an open indexes at most
  ``OPEN_ROWS`` rows and leaves the rest to later opens rather than hold up its caller;
* an index built before passages by the same tokenizer is cut into them in place instead
  (:func:`_cut_long`): only its long rows change, and their segmented text is in it;
* a store opened once and kept open (a server) carries what its open left on after each write
  it makes, one batch of ``WRITE_ROWS`` rows (``steps=1``), without waiting for the lock
  (``SessionStore._carry_on``): the same batches and cursor, so a kill mid-batch loses nothing;
* an opener with another tokenizer drops this one's half-built index and starts its own: two
  versions opening one file at once would undo each other forever, so an open gives up after
  ``MAX_STARTS`` and opens with the index as it is (the next open goes on).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hermes_core.agent.episodic import passages
from hermes_core.agent.episodic.migrations import FTS_TABLE_SQL

log = logging.getLogger("hermes_core.memory")

#: Rows indexed per write transaction: about what a writer may wait for.
BATCH_ROWS = 500
#: Rows one open re-indexes at most (about 2.7 s with the real segmenter on a loaded machine): an
#: archive past it is re-indexed over several opens, searched on its old index meanwhile, so a
#: chat's start or an Agent's first turn does not wait for the whole archive (20 minutes or more
#: at 1,000,000 sessions).
OPEN_ROWS = 2_000
#: Rows one write carries a re-index on by (one batch) when its store's open left some: a
#: session's write then costs at most about this many rows' segmenting more (~0.1-0.3 s with
#: jieba), and a server recording sessions finishes the re-index without being reopened.
WRITE_ROWS = 200
#: Re-indexes begun by one open before it gives up (see :func:`run`).
MAX_STARTS = 3
NEXT = "sessions_fts_next"
_ROW = "SELECT rowid, summary, tags, session_id, created_at, relevance_score FROM sessions"
_TRIGGERS = {
    "reindex_on_insert": "AFTER INSERT ON sessions BEGIN "
                         "INSERT OR IGNORE INTO reindex_dirty VALUES (new.rowid); END",
    "reindex_on_delete": "AFTER DELETE ON sessions BEGIN "
                         "INSERT OR IGNORE INTO reindex_dirty VALUES (old.rowid); END",
    "reindex_on_update": "AFTER UPDATE ON sessions BEGIN "
                         "INSERT OR IGNORE INTO reindex_dirty VALUES (old.rowid); "
                         "INSERT OR IGNORE INTO reindex_dirty VALUES (new.rowid); END",
}

Segmented = tuple[str, str, str, str]   # summary, tags as stored; their segmented forms
Row = tuple[int, str, str, str, float, float]


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, its lock taken at the start (upkeep's steps: this and drift)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:   # SQLite may have rolled back by itself (disk full)
            conn.execute("ROLLBACK")
        raise


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    """A ``meta`` value, None when unset."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


#: SQLite's lowest rowid. Another tool may insert a session at any rowid, 0 and below too.
LOWEST_ROWID = -2**63
#: A re-index's cursor before its first row: below every rowid, so none is left out.
START = LOWEST_ROWID - 1


def read_cursor(conn: sqlite3.Connection, key: str, start: int = 0) -> int:
    """A cursor kept in ``meta`` (the last rowid done); ``start`` when unset or not a whole
    number (or below it).

    Why ``start`` for a damaged value (a hand edit, another tool): every step re-derives the
    rows it passes (an index row at a rowid is removed before it is written), so starting over
    costs work and loses nothing, where raising failed every open and every write's upkeep."""
    value = meta(conn, key)
    try:
        return max(int(value or start), start)
    except ValueError:
        return start


def after(cursor: int) -> tuple[str, int]:
    """``rowid > cursor`` as SQL and the value to bind: a cursor below SQLite's lowest rowid
    (``START``), which no statement can bind, reads from the lowest one."""
    return ("rowid >= ?", LOWEST_ROWID) if cursor < LOWEST_ROWID else ("rowid > ?", cursor)


def drop_leftovers(conn: sqlite3.Connection) -> None:
    """Remove a batched re-index's state (inside an open write transaction): an explicit rebuild
    replaces it, and the last batch ends it."""
    for name in _TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute("DROP TABLE IF EXISTS reindex_dirty")
    conn.execute(f"DROP TABLE IF EXISTS {NEXT}")
    passages.forget_count(conn, NEXT)
    conn.execute("DELETE FROM meta WHERE key IN ('reindex', 'reindex_cursor', 'cut_cursor')")


def _pending(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (NEXT,)).fetchone() is not None


def pending(conn: sqlite3.Connection, segment_id: str | None) -> bool:
    """Whether the index is not yet ``segment_id``'s (a re-index or an in-place cut to go on),
    or, with no id to compare (a custom segmenter), whether another's re-index is half built."""
    if segment_id is None:
        return _pending(conn)
    return meta(conn, "tokenizer") != segment_id


def unindex(conn: sqlite3.Connection, rowid: int) -> None:
    """Take a session out of a half-built new index too (inside the caller's write transaction).

    Why: the new index holds a copy of every row up to its cursor, and a re-index can wait
    several opens (``OPEN_ROWS``); a forget or a key rewrite must not leave the text there
    until the next batch's catch-up. Below rowid 1 (a session another tool planted), the row
    there may be a passage of the session owning that rowid, which stays (``drift.unindex``'s
    rule, :func:`.passages.owners_passage`)."""
    if _pending(conn) and not passages.owners_passage(conn, NEXT, rowid):
        passages.remove(conn, NEXT, rowid)


def merge(conn: sqlite3.Connection) -> None:
    """Merge a half-built new index as a forget merges the searched one (FTS5 keeps a deleted
    row's words in its segment until then)."""
    if _pending(conn):
        conn.execute(f"INSERT INTO {NEXT}({NEXT}) VALUES ('optimize')")


def _start(conn: sqlite3.Connection, segment_id: str) -> bool:
    """Begin (or find begun, by this tokenizer) a re-index; False when none is needed."""
    with immediate(conn):
        if meta(conn, "tokenizer") == segment_id:
            return False
        if not any(conn.execute("SELECT 1 FROM sessions UNION ALL SELECT 1 FROM sessions_fts "
                                "LIMIT 1")) and meta(conn, "reindex") is None:
            _record(conn, segment_id)          # a new archive: nothing to index
            return False
        if meta(conn, "reindex") == segment_id and _pending(conn):
            return True
        drop_leftovers(conn)   # another tokenizer's half-done work is of no use
        conn.execute(FTS_TABLE_SQL.replace("sessions_fts", NEXT, 1))
        conn.execute("CREATE TABLE reindex_dirty (id INTEGER PRIMARY KEY)")
        for name, body in _TRIGGERS.items():
            conn.execute(f"CREATE TRIGGER {name} {body}")
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                         [("reindex", segment_id), ("reindex_cursor", str(START))])
        return True


def _cut_long(conn: sqlite3.Connection, segment_id: str, max_rows: int | None,
             batch: int, steps: int | None) -> int | None:
    """Cut an index built before passages by this very tokenizer into them in place; None when
    the index is not that (another tokenizer, or a batched re-index begun).

    Why: only a row over ``passages.SPLIT_ABOVE`` tokens changes with the layout, and the index
    holds its segmented text already, so nothing is segmented again and no second index is built
    (a full re-index segments every row: about 20 minutes at 1,000,000 sessions). Rows are read
    with no lock held (``length`` skips those too short to hold that many tokens: a token and
    its separator are two characters at least); each chunk's long rows are cut in one write
    transaction, re-read there. A row already cut has a short first passage, so a killed or
    concurrent run loses or doubles nothing, and writers write the new layout meanwhile. Past
    ``max_rows`` sessions cut, or ``steps`` chunks, it stops, its cursor (``cut_cursor``) kept
    for the next open or write."""
    built_by = meta(conn, "tokenizer")
    if (built_by is None or built_by + passages.LAYOUT != segment_id
            or meta(conn, "reindex") is not None):
        return None
    done, cursor, chunks = 0, read_cursor(conn, "cut_cursor"), 0
    while True:
        seen = conn.execute("SELECT rowid, CASE WHEN length(summary) > ? THEN summary END"
                            " FROM sessions_fts WHERE rowid > ? ORDER BY rowid LIMIT ?",
                            (2 * passages.SPLIT_ABOVE, cursor, batch * 10)).fetchall()
        long = [r[0] for r in seen if r[1] is not None and len(passages.split(r[1])) > 1]
        with immediate(conn):
            if meta(conn, "tokenizer") != built_by or meta(conn, "reindex") is not None:
                return done      # finished by another opener, or another re-index began
            for rowid in long:
                row = conn.execute("SELECT rowid, summary, tags, session_id, created_at,"
                                   " relevance_score FROM sessions_fts WHERE rowid = ?",
                                   (rowid,)).fetchone()
                if row is not None and len(passages.split(row[1])) > 1:
                    passages.insert(conn, "sessions_fts", row)
                    done += 1
            if len(seen) < batch * 10:
                _record(conn, segment_id)
                return done
            cursor = seen[-1][0]
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('cut_cursor', ?)",
                         (str(cursor),))
        chunks += 1
        if (max_rows is not None and done >= max_rows) or (steps is not None and chunks >= steps):
            return done


def run(conn: sqlite3.Connection, segment: Callable[[str], str], segment_id: str,
        max_rows: int | None = None, *, batch: int | None = None,
        steps: int | None = None) -> int:
    """Re-index ``sessions`` with ``segment`` unless ``segment_id`` built the index; returns the
    rows this call indexed (another opener may have done some or all of them). With ``max_rows``
    it returns once it has indexed that many, with ``steps`` once it has committed that many
    batches, the re-index left for the next call to go on. ``batch``: rows a write transaction
    (``BATCH_ROWS``)."""
    batch = batch or BATCH_ROWS
    cut_in_place = _cut_long(conn, segment_id, max_rows, batch, steps)
    if cut_in_place is not None:
        return cut_in_place
    done = 0

    def cut(summary: str, tags: str) -> Segmented:
        summary, tags = passages.as_text(summary), passages.as_text(tags)
        return summary, tags, segment(summary), segment(" ".join(tags.split(",")))

    starts = batches = 0
    while _start(conn, segment_id):
        starts += 1
        if starts > MAX_STARTS:
            # another tokenizer's opener keeps replacing this re-index (two hermes-core versions
            # on one file at once): open with the index as it is rather than never return
            log.warning("re-index for tokenizer %s keeps being replaced by another; left for "
                        "the next open", segment_id)
            return done
        while True:
            cursor = read_cursor(conn, "reindex_cursor", START)
            where, value = after(cursor)
            # read whole before segmenting: a statement left half read by an interrupted
            # segmenter (Ctrl-C, MemoryError) pins a snapshot while its traceback lives
            rows = conn.execute(f"{_ROW} WHERE {where} ORDER BY rowid LIMIT ?",
                                (value, batch)).fetchall()
            ahead = {r[0]: cut(r[1], r[2]) for r in rows}
            with immediate(conn):
                n, over = _batch(conn, cut, ahead, cursor, segment_id, batch)
            done, batches = done + n, batches + 1
            if over:
                break        # finished, here or by another opener, or replaced: _start says
            if (max_rows is not None and done >= max_rows) or (steps is not None
                                                                and batches >= steps):
                log.info("re-index for tokenizer %s: %d rows this open, the rest on later ones "
                         "(searches read the old index until then)", segment_id, done)
                return done

    return done


def _batch(conn: sqlite3.Connection, cut: Callable[[str, str], Segmented],
           ahead: dict[int, Segmented], cursor: int, segment_id: str,
           batch: int) -> tuple[int, bool]:
    """One batch inside its write transaction: the rows after ``cursor`` (segmented ahead where
    unchanged), the rows written meanwhile, and the swap when no row is left. Returns the rows
    indexed and whether this re-index is over (finished here or by another, or replaced)."""
    if meta(conn, "reindex") != segment_id:
        return 0, True
    if read_cursor(conn, "reindex_cursor", START) != cursor:
        return 0, False                            # another opener moved on: read again
    where, value = after(cursor)
    rows: list[Row] = conn.execute(f"{_ROW} WHERE {where} ORDER BY rowid LIMIT ?",
                                   (value, batch)).fetchall()
    for r in rows:
        seg = ahead.get(r[0])
        if seg is None or seg[:2] != (r[1], r[2]):
            seg = cut(r[1], r[2])                  # written since it was read
        passages.insert(conn, NEXT, (r[0], seg[2], seg[3], r[3], r[4], r[5]))
    cursor = rows[-1][0] if rows else cursor
    _catch_up(conn, cut, cursor)
    if len(rows) < batch:
        _finish(conn, segment_id)
        return len(rows), True
    conn.execute("UPDATE meta SET value = ? WHERE key = 'reindex_cursor'", (str(cursor),))
    return len(rows), False


def _catch_up(conn: sqlite3.Connection, cut: Callable[[str, str], Segmented],
              cursor: int) -> None:
    """Rows written since the last batch, up to the cursor, re-derived in the new index.

    A rowid below 1 holding a passage of the session owning it (a session planted there by
    another tool, then forgotten, rewritten or moved by ``drift.rehome``) keeps that passage, as
    ``drift.unindex`` keeps it in the searched index: the owner's words stay, and a planted
    session still there is moved and indexed at its new rowid by the heal after the swap."""
    dirty = [r[0] for r in conn.execute("SELECT id FROM reindex_dirty ORDER BY id")]
    for rowid in dirty:
        if passages.owners_passage(conn, NEXT, rowid):
            continue
        passages.remove(conn, NEXT, rowid)
        if rowid > cursor:
            continue          # a later batch reads it as it is then
        row = conn.execute(f"{_ROW} WHERE rowid = ?", (rowid,)).fetchone()
        if row is not None:
            seg = cut(row[1], row[2])
            passages.insert(conn, NEXT, (row[0], seg[2], seg[3], row[3], row[4], row[5]))
    conn.execute("DELETE FROM reindex_dirty")


def _finish(conn: sqlite3.Connection, segment_id: str) -> None:
    """The new index replaces the old one (inside the last batch's transaction)."""
    for name in _TRIGGERS:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE reindex_dirty")
    conn.execute("DROP TABLE sessions_fts")
    conn.execute(f"ALTER TABLE {NEXT} RENAME TO sessions_fts")
    passages.watch(conn)               # the old index's trigger went with it
    passages.renamed(conn, NEXT, "sessions_fts")
    _record(conn, segment_id)


def _record(conn: sqlite3.Connection, segment_id: str) -> None:
    conn.execute("DELETE FROM meta WHERE key IN ('reindex', 'reindex_cursor', 'cut_cursor')")
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tokenizer', ?)", (segment_id,))
