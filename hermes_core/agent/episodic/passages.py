"""A long summary is indexed as several passages of bounded length, each its own FTS5 row.

Why: FTS5's bm25 normalises by the row's length against the average (``b`` = 0.75, fixed), so a
summary ten times the average scored each of its words ~4.7x lower than a short one: a long
session that held every word a user asked by ranked below short ones holding one of them
(decision 111). Cut into passages about as long as a short summary, each passage is normalised
like one, and a session's score is worked out per query term from its best passage
(:meth:`SessionStore.search`), so a long session scores a word as well as a short one does.

The layout keeps every existing reader and row as they were:

* passage 0 (the whole summary when it is short, the first passage otherwise, with the tags) sits
  at the session's own rowid, as every row did before: a file indexed before passages existed is
  a valid index of this layout with no extra passages;
* passage ``p`` (1..``MAX_PASSAGES - 1``) sits at rowid ``-(rowid * MAX_PASSAGES + p)``: negative,
  so it never meets a session's rowid, and a session's passages are one rowid range;
* how many extra passages an index holds is kept in ``meta`` (``passages:<table>``), in the
  transaction that adds or removes them, so ``memory stats`` can tell sessions from passages
  without scanning.
"""

from __future__ import annotations

import sqlite3
from itertools import pairwise

from hermes_core.agent.episodic.ranking import FUTURE_SLACK_DAYS, SECONDS_PER_DAY

#: A passage holds about this many index tokens: the length of a short summary.
PASSAGE_TOKENS = 64
#: A summary is cut only past this many tokens (one a little longer than a passage stays whole).
SPLIT_ABOVE = PASSAGE_TOKENS * 3 // 2
#: Part of the built-in segmenter's id (``SessionStore.segment_id``): an index built before
#: passages is re-indexed once, in batches (:mod:`.reindex`), into this layout.
LAYOUT = ".p1"
#: Passages per session at most (rowid arithmetic); a longer summary gets longer passages.
MAX_PASSAGES = 64

_INSERT = ("INSERT INTO {t}(rowid, summary, tags, session_id, created_at, relevance_score)"
           " VALUES (?, ?, ?, ?, ?, ?)")

_SQLITE_MIN = -(2**63)
#: The last session rowid whose passages fit SQLite's rowids; past it (or below 0: a rowid
#: another tool chose, which SQLite then continues from) a session is indexed as one row.
_LAST_SPLIT = (2**63 - MAX_PASSAGES) // MAX_PASSAGES
#: One index row of a session: rowid, segmented summary and tags, session id, stamp, prior.
Row = tuple[int, str, str, str, float, float]


def split(segmented: str) -> list[str]:
    """The passages of a segmented summary: itself when short, else equal runs of tokens of
    about ``PASSAGE_TOKENS`` each (at most ``MAX_PASSAGES``), in order, nothing left out."""
    tokens = segmented.split()
    if len(tokens) <= SPLIT_ABOVE:
        return [segmented]
    parts = min(MAX_PASSAGES, -(-len(tokens) // PASSAGE_TOKENS))
    cuts = [len(tokens) * i // parts for i in range(parts + 1)]
    return [" ".join(tokens[a:b]) for a, b in pairwise(cuts)]


def passage_rowid(rowid: int, p: int) -> int:
    """The index rowid of passage ``p`` of the session at ``rowid``."""
    return rowid if p == 0 else -(rowid * MAX_PASSAGES + p)


def session_rowid_sql(column: str = "rowid") -> str:
    """SQL for the session rowid an index rowid belongs to (integer division in SQLite)."""
    return f"(CASE WHEN {column} < 0 THEN (-{column}) / {MAX_PASSAGES} ELSE {column} END)"


def _key(table: str) -> str:
    return f"passages:{table}"


def _add(conn: sqlite3.Connection, table: str, n: int) -> None:
    if n:
        conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                     " SET value = CAST(value AS INTEGER) + excluded.value", (_key(table), n))


def extra(conn: sqlite3.Connection, table: str = "sessions_fts") -> int:
    """Extra passages (beyond one row a session) in ``table``; 0 for a file without the record
    (indexed before passages, or without ``meta``)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_key(table),)).fetchone()
    except sqlite3.OperationalError:
        return 0
    return 0 if row is None else int(row[0])


def remove(conn: sqlite3.Connection, table: str, rowid: int) -> None:
    """Delete every passage of the session at ``rowid`` from ``table`` (inside the caller's
    write transaction)."""
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    if rowid < 0:      # planted outside: no passages (its range would be other sessions' rows)
        return
    # a rowid past SQLite's range / MAX_PASSAGES (a row planted outside) has no passage range
    low, high = (max(passage_rowid(rowid, k), _SQLITE_MIN) for k in (MAX_PASSAGES - 1, 1))
    cur = conn.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", (low, high))
    _add(conn, table, -cur.rowcount)


#: How far ahead of the clock a stamp may be and still date a kept copy (seconds): past it
#: recency weighs a stamp as the oldest (:func:`.ranking.weighed_age`).
FUTURE_SLACK_S = FUTURE_SLACK_DAYS * SECONDS_PER_DAY


def later_date(kept: object, stamp: float, now: float | None) -> bool:
    """Whether a repeat stamped ``stamp`` dates the copy kept at ``kept``: a later stamp does,
    unless it is past the clock's slack (another machine's clock a year fast would move the
    copy where recency weighs it as the oldest); and a kept stamp past that slack (a repeat
    recorded while this clock ran fast) is no date, so the next true repeat dates it again.
    ``now`` None: no clock to weigh by, every later stamp dates it."""
    if not isinstance(kept, int | float):
        return False
    if now is None:
        return stamp > kept
    ahead = now + FUTURE_SLACK_S
    return stamp <= ahead and (stamp > kept or kept > ahead)


def redate(conn: sqlite3.Connection, table: str, rowid: int, created_at: float) -> bool:
    """The session at ``rowid`` dated ``created_at``, in ``sessions`` and in each of its
    passages in ``table`` (inside the caller's write transaction): the same summary recorded
    again by a later session is as new as that session, for recency, though stored once.
    False when its index rows were left as they were: below rowid 1 (planted by another tool)
    the row there may be another session's passage, so the drift note the update left has the
    session's index made again from its row (:mod:`.drift`)."""
    conn.execute("UPDATE sessions SET created_at = ? WHERE rowid = ?", (created_at, rowid))
    if rowid < 1:
        return False
    conn.execute(f"UPDATE {table} SET created_at = ? WHERE rowid = ?", (created_at, rowid))
    if rowid <= _LAST_SPLIT:   # as :func:`remove` reads its passages' range
        low, high = (passage_rowid(rowid, k) for k in (MAX_PASSAGES - 1, 1))
        conn.execute(f"UPDATE {table} SET created_at = ? WHERE rowid BETWEEN ? AND ?",
                     (created_at, low, high))
    return True


def owners_passage(conn: sqlite3.Connection, table: str, rowid: int) -> bool:
    """Whether ``table``'s row at ``rowid`` is a passage of the session owning that rowid (by
    :data:`NOTE_TRIGGER_SQL`'s arithmetic; it names that session). Below rowid 1 another tool
    may plant a session at such a rowid: taking the planted one out of an index must leave the
    owner's passage there, or the owner loses those words."""
    if rowid >= 0:
        return False
    owner = (-(rowid + 1)) // MAX_PASSAGES
    return conn.execute(f"SELECT 1 FROM {table} f, sessions s WHERE f.rowid = ? AND s.rowid = ?"
                        " AND f.session_id = s.session_id", (rowid, owner)).fetchone() is not None


def insert(conn: sqlite3.Connection, table: str, row: Row) -> None:
    """Index one session as its passages (any rows left at its rowids first removed: a session
    deleted outside hermes-core leaves its rows, and SQLite hands its rowid on)."""
    rowid, summary, tags, sid, created_at, prior = row
    remove(conn, table, rowid)
    parts = split(summary) if 0 <= rowid <= _LAST_SPLIT else [summary]
    sql = _INSERT.format(t=table)
    conn.executemany(sql, [(passage_rowid(rowid, p), text, tags if p == 0 else "", sid,
                            created_at, prior) for p, text in enumerate(parts)])
    _add(conn, table, len(parts) - 1)
    if table == "sessions_fts":        # ours: not drift (:data:`NOTE_TRIGGER_SQL`)
        conn.execute("DELETE FROM index_drift WHERE id = ?", (rowid,))


#: Notes (``index_drift``, :mod:`.drift`) the session of every index row another writer inserts;
#: FTS5 writes an ``UPDATE sessions_fts`` into its content table as a delete and an insert, so an
#: index row edited in place is noted too (a trigger on the virtual table itself cannot be made).
#: :func:`insert` clears the note of each row of ours in the same transaction. The rowid of a
#: passage at SQLite's lowest rowid would overflow ``-id``: ``-(id + 1)`` names the same session.
NOTE_TRIGGER_SQL = (
    "CREATE TRIGGER IF NOT EXISTS index_drift_on_index AFTER INSERT ON sessions_fts_content BEGIN"
    f" INSERT OR IGNORE INTO index_drift VALUES (CASE WHEN new.id < 0 THEN (-(new.id + 1))"
    f" / {MAX_PASSAGES} ELSE new.id END); END")


def watch(conn: sqlite3.Connection) -> None:
    """Note index rows other writers insert or edit (an index made afresh has no trigger yet)."""
    conn.execute(NOTE_TRIGGER_SQL)


def renamed(conn: sqlite3.Connection, old: str, new: str) -> None:
    """The count of ``old`` moves to ``new`` (a rebuilt index took its name)."""
    conn.execute("DELETE FROM meta WHERE key = ?", (_key(new),))
    conn.execute("UPDATE meta SET key = ? WHERE key = ?", (_key(new), _key(old)))


def recount(conn: sqlite3.Connection, table: str) -> None:
    """Count ``table``'s extra passages afresh (a rowid range: no text read), after a repair of
    an index whose rows were changed outside hermes-core, which the kept count did not see."""
    n = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE rowid < 0").fetchone()[0]
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_key(table), n))


def forget_count(conn: sqlite3.Connection, table: str) -> None:
    """The count of a dropped index goes with it."""
    conn.execute("DELETE FROM meta WHERE key = ?", (_key(table),))


def ranked_sql(terms: int, table: str = "sessions_fts") -> str:
    """Sessions matching any of ``terms`` MATCH parameters, best first, ``LIMIT`` the last
    parameter: rowid (the session's), session id, stamp, prior, score.

    The score is the sum over the terms of each term's bm25 in the session's best passage for
    it. FTS5's bm25 of an OR query is the sum of each term's part in the row, so a session of one
    row scores exactly as the OR query ranked it; a long session's words count where they are
    found, each in a passage of a short summary's length."""
    each = " UNION ALL ".join(
        f"SELECT {session_rowid_sql()} AS s, {i} AS t, rank AS r, session_id, created_at,"
        f" relevance_score FROM {table} WHERE {table} MATCH ?" for i in range(terms))
    return ("SELECT s, session_id, created_at, relevance_score, SUM(best) AS score FROM ("
            " SELECT s, t, MIN(r) AS best, session_id, created_at, relevance_score"
            f" FROM ({each}) GROUP BY s, t)"
            " GROUP BY s ORDER BY score, s LIMIT ?")


def recent_sql(table: str = "sessions_fts") -> str:
    """The newest sessions matching the MATCH parameter (``?1``), at most ``?2``, each with its
    best passage's bm25, newest first.

    Two walks, each bounded by the limit whatever the archive's size: the newest sessions' first
    passages (rowid descending), and their other passages (negative rowids ascending: newest
    session first, a session's passages one range). The second counts rows, and one session may
    match in up to ``MAX_PASSAGES - 1`` of them, so it reads up to that many a session asked for,
    and stops at the oldest session the first walk filled the limit with: none older can be
    among the newest."""
    cols = f"{session_rowid_sql()} AS s, session_id, created_at, relevance_score, bm25({table}) AS b"
    first = f"SELECT rowid FROM {table} WHERE {table} MATCH ?1 AND rowid > 0 ORDER BY rowid DESC LIMIT ?2"
    oldest = f"(SELECT CASE WHEN COUNT(*) < ?2 THEN 0 ELSE MIN(rowid) END FROM ({first}))"
    return (f"SELECT s, session_id, created_at, relevance_score, MIN(b) FROM ("
            f" SELECT * FROM (SELECT {cols} FROM {table} WHERE {table} MATCH ?1 AND rowid > 0"
            "  ORDER BY rowid DESC LIMIT ?2)"
            f" UNION ALL SELECT * FROM (SELECT {cols} FROM {table} WHERE {table} MATCH ?1"
            f"  AND rowid <= -({oldest} * {MAX_PASSAGES} + 1)"
            f"  ORDER BY rowid LIMIT ?2 * {MAX_PASSAGES - 1}))"
            " GROUP BY s ORDER BY s DESC LIMIT ?2")


def as_text(value: object) -> str:
    """A summary or tags cell as text: another tool may have written a blob or NULL into it, and
    neither a search that finds the row nor the rebuild that mends the index may fail on it."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)
