"""Rewriting the stored rows that hold a secret: the write half of scrubbing a key from memory.

Why apart from the store: finding the rows a key is in (its text, its id, or a tag made of one of
its pieces), rebuilding each as a record, cleaning it and storing it again with its stamp and
prior as they were is one job with its own rules (a cleaned row may become another session's
duplicate, or yield to a newer recording of its redacted id). The store owns the transaction and
the lock (:meth:`.SessionStore.rewrite_holding`); this module does the work inside it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Mapping, Sequence

from hermes_core.agent.episodic import drift, passages, reindex
from hermes_core.agent.episodic.records import SessionRecord, UpsertResult, number_of, scrub_record
from hermes_core.redact import SCRUBBED, is_key_piece

#: Stores one record inside an open write transaction (``SessionStore._upsert_one``'s shape):
#: connection, record, content hash, joined tags, segmented summary, segmented tags.
Upsert = Callable[[sqlite3.Connection, SessionRecord, str, str, str, str], UpsertResult]

#: Which markers' rows are clean already (recorded in ``meta`` as each one is done).
DONE_SQL = f"SELECT key FROM meta WHERE key LIKE '{SCRUBBED}%'"


def rewrite_pending(conn: sqlite3.Connection, needles: Mapping[str, str],
                    clean: Callable[[SessionRecord], SessionRecord], *,
                    clock: Callable[[], float], segment: Callable[[str], str],
                    upsert: Upsert) -> int:
    """Inside an open write transaction: rewrite through ``clean`` the rows holding each needle
    whose marker is not yet recorded done, record it done, and merge the index when any row
    changed (FTS5 keeps a deleted row's words in its segment until a merge); returns the rows
    rewritten."""
    rewritten = 0
    done = {r[0] for r in conn.execute(DONE_SQL)}
    for marker, needle in needles.items():
        if SCRUBBED + marker in done:
            continue
        rewritten += rewrite_rows(conn, rows_holding(conn, needle), clean,
                                  clock=clock, segment=segment, upsert=upsert)
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                     (SCRUBBED + marker, repr(clock())))
    if rewritten:
        conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('optimize')")
        reindex.merge(conn)
    return rewritten


def rows_holding(conn: sqlite3.Connection, needle: str) -> list[int]:
    """Rowids of the rows holding ``needle``, or with a tag that is a piece of it
    (:func:`is_key_piece`, the rule the engine drops tags by)."""
    found = {r[0] for r in conn.execute(
        "SELECT rowid FROM sessions WHERE instr(summary, ?1) > 0 OR instr(tags, ?1) > 0"
        " OR instr(session_id, ?1) > 0", (needle,))}
    found |= {rowid for rowid, tags in conn.execute("SELECT rowid, tags FROM sessions WHERE tags != ''")
              if any(is_key_piece(t, (needle,)) for t in passages.as_text(tags).split(","))}
    return sorted(found)


def rewrite_rows(conn: sqlite3.Connection, rowids: Sequence[int],
                 clean: Callable[[SessionRecord], SessionRecord], *,
                 clock: Callable[[], float], segment: Callable[[str], str], upsert: Upsert) -> int:
    """Rewrite ``rowids`` through ``clean``; a row ``clean`` leaves as it was is left alone.
    Returns the rows rewritten."""
    rewritten = 0
    for rowid in rowids:
        r = conn.execute("SELECT session_id, summary, tags, created_at, relevance_score, source,"
                         " message_count FROM sessions WHERE rowid = ?", (rowid,)).fetchone()
        at, prior = number_of(r[3], clock()), number_of(r[4], 1.0)
        old = SessionRecord(r[0], passages.as_text(r[1]),
                            tuple(t for t in passages.as_text(r[2]).split(",") if t),
                            at, prior, r[5], int(r[6]))
        new = scrub_record(clean(old))
        if new == old:   # a short secret inside a longer word: not redacted there
            continue
        drift.unindex(conn, rowid)
        reindex.unindex(conn, rowid)
        conn.execute("DELETE FROM sessions WHERE rowid = ?", (rowid,))
        rewritten += 1
        if new.session_id != old.session_id:
            held = conn.execute("SELECT created_at FROM sessions WHERE session_id = ?",
                                (new.session_id,)).fetchone()
            if held is not None and number_of(held[0], -math.inf) >= old.created_at:
                continue   # the session was recorded again since, under its redacted id
        upsert(conn, new, new.content_hash, ",".join(new.tags),
               segment(new.summary), segment(" ".join(new.tags)))
        if (at, prior) != (r[3], r[4]):
            keep_cells(conn, new.session_id, r[3], r[4])
    return rewritten


def keep_cells(conn: sqlite3.Connection, session_id: str, at: object, prior: object) -> None:
    """Put back a rewritten session's stamp and prior as they were (cells another tool made
    unreadable: the rewrite removes a key, it does not invent a date), in the index too."""
    row = conn.execute("SELECT rowid FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    if row is None:
        return                                      # dropped as another session's duplicate
    conn.execute("UPDATE sessions SET created_at = ?, relevance_score = ? WHERE rowid = ?",
                 (at, prior, row[0]))
    low, high = (max(passages.passage_rowid(row[0], k), -(2**63))
                 for k in (passages.MAX_PASSAGES - 1, 1))
    conn.execute("UPDATE sessions_fts SET created_at = ?, relevance_score = ? WHERE rowid = ?"
                 " OR rowid BETWEEN ? AND ?", (at, prior, row[0], low, high))
    drift.indexed(conn, row[0])                     # ours, not another writer's
