"""Finding and repairing an index that has drifted from the sessions it indexes.

Why: every hermes-core write changes a session and its index rows in one transaction, but a writer
outside it (the sqlite3 shell, a script, a tool editing the file) can set ``sessions`` and
``sessions_fts`` apart: a session with no index rows is never found, the index rows of a deleted
session keep its words in the file, and a session updated in place is found by its old words.
An open (and, for a store kept open, each write: ``SessionStore._carry_on``) notices and repairs
that, bounded in cost:

* **Noticing costs the same at any size.** A session another writer inserts or updates in place
  is noted in ``index_drift`` by triggers on ``sessions`` (hermes-core never updates a session row,
  and clears the note of a row it inserts in the same transaction, :func:`indexed`), and so is
  the session of an index row another writer inserts or edits in place, by a trigger on FTS5's
  content table (:data:`.passages.NOTE_TRIGGER_SQL`; ours clear it as they write); a row added to
  or taken out of one side only makes the counts disagree (``session_counts`` against FTS5's own
  row count less the extra passages: decision 111's counters, two seeks).
* **Noted rows** are re-derived (index rows removed, the session segmented and indexed again),
  ``REPAIR_ROWS`` a write transaction, segmented before the write lock is taken.
* **Disagreeing counts start a sweep**: ``CHUNK`` sessions a write transaction in rowid order,
  its cursor (``meta`` ``heal_cursor``) moved in the same transaction, so a kill loses nothing and
  another opener goes on from it. Each session's index rows are compared with its row (there,
  naming the same session and stamp, passages numbered with no gap) and index rows of sessions
  that are gone are found by their rowid range; only what disagrees is segmented and re-derived,
  at most ``REPAIR_ROWS`` a step (the cursor then stops at the last one).
  The last chunk recounts the extra passages. Counts still apart after a sweep (what it cannot
  see, such as an index row edited in place) are logged once, pointing at ``memory rebuild``.
* The triggers are made by an open, not a numbered migration, so an older hermes-core still
  opens the file; its inserts are noted and re-derived once, which costs work, not correctness.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence

from hermes_core.agent.episodic import counts, passages, reindex

log = logging.getLogger("hermes_core.memory")

#: Sessions a sweep compares, or noted rows re-derived, in one write transaction.
CHUNK = 5_000
#: Sessions re-derived (segmented again, the slow part) in one write transaction at most.
REPAIR_ROWS = 200
#: Write transactions of healing one open does at most (a write through a kept store: one):
#: about ``reindex.OPEN_ROWS`` sessions segmented, or 50,000 compared.
OPEN_STEPS = 10
#: Sessions below rowid 1 an open moves (:func:`rehome`) and its heal then indexes (its
#: ``OPEN_STEPS``) at most: moving them all made an open's time grow with them (32,000: 6.6 s).
#: The writes after it, and later opens, move and index the rest (:func:`_step`).
REHOME_OPEN_ROWS = OPEN_STEPS * REPAIR_ROWS
#: A store kept open looks for drift made after its open once in this many writes (a few
#: lookups: amortised to nothing next to a write).
CHECK_EVERY = 32
TABLE = "sessions_fts"
_CURSOR, _APART = "heal_cursor", "heal_apart"
_COLUMNS = "rowid, summary, tags, session_id, created_at, relevance_score"
_DDL = (
    "CREATE TABLE IF NOT EXISTS index_drift (id INTEGER PRIMARY KEY)",
    "CREATE TRIGGER IF NOT EXISTS index_drift_on_insert AFTER INSERT ON sessions BEGIN"
    " INSERT OR IGNORE INTO index_drift VALUES (new.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS index_drift_on_update AFTER UPDATE OF summary, tags,"
    " session_id, created_at, relevance_score ON sessions BEGIN"
    " INSERT OR IGNORE INTO index_drift VALUES (old.rowid);"
    " INSERT OR IGNORE INTO index_drift VALUES (new.rowid); END",
    passages.NOTE_TRIGGER_SQL,
)

Segment = Callable[[str], str]
Ahead = dict[int, tuple[str, str, str, str]]   # rowid -> summary, tags; their segmented forms


def ensure(conn: sqlite3.Connection) -> None:
    """Create the notes table and its triggers unless there (read first: no write lock then),
    and move sessions at rowids the index layout cannot hold (:func:`rehome`)."""
    have = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE name IN ('index_drift', 'index_drift_on_insert',"
        " 'index_drift_on_update', 'index_drift_on_index')")}
    if len(have) != 4:
        with reindex.immediate(conn):
            for sql in _DDL:
                conn.execute(sql)
    rehome(conn, most=REHOME_OPEN_ROWS)


def _low_rowids(conn: sqlite3.Connection) -> bool:
    """Whether a session sits at a rowid below 1, where :func:`rehome` moves it from."""
    return conn.execute("SELECT 1 FROM sessions WHERE rowid < 1 LIMIT 1").fetchone() is not None


def rehome(conn: sqlite3.Connection, rows: int = REPAIR_ROWS, most: int = REPAIR_ROWS) -> int:
    """Move up to ``most`` of the sessions another tool inserted at a rowid below 1 to new rowids
    (an ``INSERT`` without one: SQLite's next free rowid), ``rows`` a write transaction,
    committed between so another writer waits at most one batch (of those there when it began:
    a tool planting more meanwhile cannot keep it going). The number moved.

    Why: an index row's rowid below 1 names a passage of another session (passage ``p`` of
    session ``s`` sits at ``-(s * 64 + p)``), so such a session's own index row was read as
    another's, healed away as a passage of no session, and found by no search. Moved, it is a
    session like any other: its index row at the old rowid goes (not a passage of the session
    owning that rowid: :func:`_clear_low`), and the insert trigger notes the new one, which the
    heal re-derives (and moves one planted later: :func:`_rederive`). The session's id, text and
    stamp stay; only the rowid, which no caller sees, changes. A move is a delete and an insert (no
    segmenting): 1,000 cost about as much as one batch of the heal. A lookup on the rowid's
    B-tree: free when there is none (every archive hermes-core wrote).

    An open moves ``REHOME_OPEN_ROWS``, what its heal indexes: a move costs 0.05-0.2 ms, and
    moving every one made an open's time grow with them without bound. The rest, noted or not
    (planted before the triggers, or a note spent), the heal's steps move a batch at a time
    (:func:`_step`: a seek finds one), those of the writes that follow or of later opens."""
    if not _low_rowids(conn):
        return 0
    most = min(most, int(conn.execute("SELECT COUNT(*) FROM sessions WHERE rowid < 1").fetchone()[0]))
    cols = _columns(conn)
    total = 0
    while total < most:
        with reindex.immediate(conn):
            low = conn.execute(f"SELECT rowid, {cols} FROM sessions WHERE rowid < 1 ORDER BY rowid"
                               " LIMIT ?", (min(rows, most - total),)).fetchall()
            for row in low:
                _move(conn, cols, row[0], row[1:])
        total += len(low)
        if len(low) < rows:
            break
    if total:
        log.info("memory database: %d sessions another tool wrote at rowids below 1 moved to "
                 "new rowids", total)
    return total


def _columns(conn: sqlite3.Connection) -> str:
    """The ``sessions`` columns a move copies (all but an ``INTEGER PRIMARY KEY``: the rowid)."""
    return ", ".join(f'"{r[1]}"' for r in conn.execute("PRAGMA table_info(sessions)") if not r[5])


def _move(conn: sqlite3.Connection, cols: str, rowid: int, values: Sequence[object]) -> int:
    """Move the session at ``rowid`` (below 1; ``values`` its ``cols``) to SQLite's next free
    rowid, noted for the heal by the insert trigger; its own note goes (the heal spent its
    budget on a gone row). The new rowid."""
    conn.execute("DELETE FROM sessions WHERE rowid = ?", (rowid,))
    conn.execute("DELETE FROM index_drift WHERE id = ?", (rowid,))
    _clear_low(conn, rowid)
    cur = conn.execute(f"INSERT INTO sessions({cols}) VALUES ({', '.join('?' * len(values))})",
                       values)
    return int(cur.lastrowid or 0)


def unindex(conn: sqlite3.Connection, rowid: int) -> None:
    """Take the session at ``rowid`` out of the index, before a forget, a rewrite, a record
    replacing it or a prune deletes it (inside the caller's write transaction). Below rowid 1
    (a session an open left unmoved: it moves ``REHOME_OPEN_ROWS``), the index row there may be
    a passage of the session owning that rowid, which stays (:func:`_clear_low`): taking it
    out lost the owner's words."""
    if rowid < 1:
        _clear_low(conn, rowid)
    else:
        passages.remove(conn, TABLE, rowid)


def _clear_low(conn: sqlite3.Connection, rowid: int) -> None:
    """Take out the index rows at ``rowid`` (below 1, where a session was planted), except a
    passage of the session owning that rowid (:data:`.passages.NOTE_TRIGGER_SQL`'s arithmetic):
    that passage is the owner's, and taking it out lost the owner's words until it was
    re-derived. Another index row there (the planted session's, as an older heal indexed it
    there) goes, and the owner, whose passage it had replaced, is noted to be re-derived."""
    if passages.owners_passage(conn, TABLE, rowid):
        return
    passages.remove(conn, TABLE, rowid)    # at 0, its passages too
    if rowid < 0:
        conn.execute("INSERT OR IGNORE INTO index_drift SELECT rowid FROM sessions"
                     " WHERE rowid = ?", ((-(rowid + 1)) // passages.MAX_PASSAGES,))


def indexed(conn: sqlite3.Connection, rowid: int) -> None:
    """The session at ``rowid`` was just indexed by hermes-core: not drift (inside its write)."""
    conn.execute("DELETE FROM index_drift WHERE id = ?", (rowid,))


def clear(conn: sqlite3.Connection) -> None:
    """Forget notes and a sweep begun (an explicit rebuild made the index afresh)."""
    conn.execute("DELETE FROM index_drift")
    conn.execute("DELETE FROM meta WHERE key IN (?, ?)", (_CURSOR, _APART))


def _apart(conn: sqlite3.Connection) -> str | None:
    """How far apart the counts are (sessions less indexed ones) when they disagree and no
    finished sweep left them so already. The gap, not the two counts: every write moves both,
    and a gap a sweep cannot close (an index row no sweep reads) would start another whole
    sweep, and its warning, after every write."""
    gap = sum(counts.sources(conn).values()) - (counts.indexed_rows(conn) - passages.extra(conn))
    if gap == 0:
        return None
    return None if reindex.meta(conn, _APART) == str(gap) else str(gap)


def due(conn: sqlite3.Connection) -> bool:
    """Whether anything is left to heal (three seeks and a lookup)."""
    return (conn.execute("SELECT 1 FROM index_drift LIMIT 1").fetchone() is not None
            or reindex.meta(conn, _CURSOR) is not None or _low_rowids(conn)
            or _apart(conn) is not None)


def _disagreeing(conn: sqlite3.Connection, cursor: int) -> tuple[list[int], int, bool]:
    """Session rowids after ``cursor`` whose index rows disagree with them, the last rowid
    compared, and whether that was the end. At most ``CHUNK`` sessions, ``CHUNK`` first rows and
    about ``CHUNK`` passages are read: a chunk ends before whichever of the three fills first,
    so a table emptied outside (every index row an orphan) is cleared a chunk at a time too."""
    n = passages.MAX_PASSAGES
    cols = "rowid, session_id, created_at, relevance_score"
    rows = conn.execute(f"SELECT {cols} FROM sessions WHERE rowid > ? ORDER BY rowid LIMIT ?",
                        (cursor, CHUNK)).fetchall()
    firsts = conn.execute(f"SELECT {cols} FROM {TABLE} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                          (cursor, CHUNK)).fetchall()
    # passages of sessions after the cursor, nearest first (one session's are one range)
    # (a cursor past SQLite's range / n, after a rowid planted there: no passages below it)
    later = conn.execute(f"SELECT {cols} FROM {TABLE} WHERE rowid <= ? ORDER BY rowid DESC"
                         " LIMIT ?", (max(-(cursor + 1) * n, -(2**63)), CHUNK + n)).fetchall()
    ends = [r[-1][0] for r in (rows, firsts) if len(r) == CHUNK]
    if len(later) == CHUNK + n:            # the last session read may have more: not compared
        ends.append(max(cursor + 1, -later[-1][0] // n - 1))
    end = not ends
    hi = min(ends) if ends else max([cursor, *(r[0] for r in rows), *(r[0] for r in firsts),
                                     *(-r[0] // n for r in later)])
    want = {r[0]: (r[1], r[2], r[3]) for r in rows if r[0] <= hi}
    got: dict[int, list[tuple[int, tuple[str, float, float]]]] = {}
    for rowid, sid, at, prior in firsts:
        if rowid <= hi:
            got.setdefault(rowid, []).append((0, (sid, at, prior)))
    for rowid, sid, at, prior in later:
        session, part = divmod(-rowid, n)
        if session <= hi:
            got.setdefault(session, []).append((part, (sid, at, prior)))
    bad = []
    for session in sorted(want.keys() | got.keys()):
        stored, rows_of = want.get(session), got.get(session, [])
        numbers = sorted(p for p, _ in rows_of)
        if (stored is None or not numbers or numbers != list(range(len(numbers)))
                or any(v != stored for _, v in rows_of)):
            bad.append(session)
    return bad, hi, end


def _segmented(conn: sqlite3.Connection, segment: Segment, rowids: Sequence[int]) -> Ahead:
    out: Ahead = {}
    for rowid in rowids:
        row = conn.execute("SELECT summary, tags FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
        if row is not None:
            out[rowid] = _cut(segment, row[0], row[1])
    return out


def _cut(segment: Segment, summary: object, tags: object) -> tuple[str, str, str, str]:
    """A session's cells as text (another tool may have written a blob or a number there: the
    heal must index it, not fail every open while its note stays) and their segmented forms."""
    text, tag_text = passages.as_text(summary), passages.as_text(tags)
    return text, tag_text, segment(text), segment(" ".join(tag_text.split(",")))


def _rederive(conn: sqlite3.Connection, segment: Segment, rowids: Sequence[int],
              ahead: Ahead) -> None:
    """Index the sessions at ``rowids`` afresh from their rows (a gone session: its rows out).
    One below rowid 1 (planted while a store is open) is moved first, as an open's :func:`rehome`
    moves it: indexed where it sat, its text took the place of the passage of the session
    owning that rowid, which lost those words, and the planted one was found by no search."""
    cols = _columns(conn) if any(r < 1 for r in rowids) else ""
    for noted in rowids:
        rowid = noted
        if rowid >= 1:
            passages.remove(conn, TABLE, rowid)
        elif (low := conn.execute(f"SELECT {cols} FROM sessions WHERE rowid = ?",
                                  (rowid,)).fetchone()) is None:
            _clear_low(conn, rowid)
        else:
            rowid = _move(conn, cols, rowid, low)
        row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
        if row is None:
            continue
        seg = ahead.get(noted)
        if seg is None or seg[:2] != (passages.as_text(row[1]), passages.as_text(row[2])):
            seg = _cut(segment, row[1], row[2])              # changed since it was segmented
        passages.insert(conn, TABLE, (row[0], seg[2], seg[3], row[3], row[4], row[5]))


def _step(conn: sqlite3.Connection, segment: Segment) -> bool:
    """One write transaction of healing; False when there was nothing to do."""
    noted = [r[0] for r in conn.execute("SELECT id FROM index_drift ORDER BY id LIMIT ?",
                                        (REPAIR_ROWS,))]
    if noted:
        ahead = _segmented(conn, segment, noted)
        with reindex.immediate(conn):
            _rederive(conn, segment, noted, ahead)
            conn.executemany("DELETE FROM index_drift WHERE id = ?", [(r,) for r in noted])
        return True
    if rehome(conn):           # one batch, noted by the insert trigger: the next step indexes it
        return True
    kept = reindex.meta(conn, _CURSOR)
    if kept is None and _apart(conn) is None:
        return False
    cursor = reindex.read_cursor(conn, _CURSOR)
    ahead = _segmented(conn, segment, _disagreeing(conn, cursor)[0][:REPAIR_ROWS])
    with reindex.immediate(conn):
        if reindex.meta(conn, _CURSOR) != kept or (kept is None and _apart(conn) is None):
            return True                       # another opener moved on, or healed it
        bad, hi, end = _disagreeing(conn, cursor)
        if len(bad) > REPAIR_ROWS:          # the rest of the chunk is compared again next step
            bad, hi, end = bad[:REPAIR_ROWS], bad[REPAIR_ROWS - 1], False
        _rederive(conn, segment, bad, ahead)
        if bad:
            log.warning("memory index: %d session(s) out of step with their index rows "
                        "re-indexed (written outside hermes-core?)", len(bad))
        if not end:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_CURSOR, str(hi)))
            return True
        conn.execute("DELETE FROM meta WHERE key = ?", (_CURSOR,))
        passages.recount(conn, TABLE)
        still = _apart(conn)
        if still is not None:
            # sessions below rowid 1 disagree until a step moves them (:func:`rehome`): not damage
            low = _low_rowids(conn)
            log.log(logging.INFO if low else logging.WARNING,
                    "memory index still disagrees with the sessions after a full check "
                    "(sessions less indexed: %s); %s", still,
                    "sessions below rowid 1 are being moved" if low
                    else "`hermes-core memory rebuild` makes it afresh")
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_APART, still))
    return True


def upkeep(conn: sqlite3.Connection, segment: Segment, segment_id: str | None,
           steps: int) -> bool:
    """Whether upkeep is left for a store: a re-index to go on (``segment_id``'s index not
    built yet), or, up to ``steps`` transactions of healing later, drift. A failed heal is logged
    and left for later: it must not keep a store from opening (``memory rebuild`` needs one)."""
    if reindex.pending(conn, segment_id):
        return True
    try:
        return heal(conn, segment, steps)
    except sqlite3.Error as e:
        busy = getattr(e, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
        # another process writing is the common case after a write (no wait there): not news
        log.log(logging.INFO if busy else logging.WARNING, "the memory index could not be "
                "checked against the sessions (%s); left for later", e)
        return True


def heal(conn: sqlite3.Connection, segment: Segment, steps: int) -> bool:
    """At most ``steps`` write transactions of healing; returns whether some is left."""
    for _ in range(steps):
        if not _step(conn, segment):
            return False
    return due(conn)
