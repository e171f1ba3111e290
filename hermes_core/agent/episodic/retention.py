"""Retention: the oldest sessions go once they pass an age or a count, a few at a time.

Why in bounded steps: a delete of many rows in one transaction holds the write lock for all of
them, and another process recording a session at its close would wait for the whole prune (and
give up after its busy timeout). Each step deletes at most ``PRUNE_BATCH`` sessions in its own
write transaction and re-reads what to delete under the lock, so a session written between two
steps is judged like any other (it is the newest: it stays). A recording prunes at most
``BATCHES_PER_RECORD`` steps, so a retention set on a large archive spreads its work over the
next recordings (or ``hermes-core memory prune`` does it at once).

Pruned rows leave ``sessions`` at once (``secure_delete`` zeroes them); their words stay in the
index's segments until FTS5's automerge rewrites them, as every replaced summary's do (a forget
merges the whole index instead: it holds the lock as long as the archive is large).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core.agent.episodic import counts, drift
from hermes_core.agent.episodic.ranking import SECONDS_PER_DAY

PRUNE_BATCH = 200          # sessions deleted by one write transaction at most
BATCHES_PER_RECORD = 5     # steps one recording runs at most


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Keep sessions younger than ``max_age_days`` and at most ``max_sessions`` of them (the
    newest); None leaves that bound off."""

    max_age_days: float | None = None
    max_sessions: int | None = None

    @property
    def active(self) -> bool:
        return self.max_age_days is not None or self.max_sessions is not None

    def cutoff(self, now: float) -> float | None:
        """Stamps before this are too old (None: no age bound)."""
        return None if self.max_age_days is None else now - self.max_age_days * SECONDS_PER_DAY


def pick(oldest: Sequence[tuple[int, float]], total: int, policy: RetentionPolicy,
         now: float) -> list[int]:
    """Rowids to delete from ``oldest`` (rowid, created_at; oldest first), given ``total``
    sessions stored: the first ``total - max_sessions``, and any stamped before the cutoff."""
    excess = 0 if policy.max_sessions is None else max(0, total - policy.max_sessions)
    cutoff = policy.cutoff(now)
    return [rowid for i, (rowid, at) in enumerate(oldest)
            if i < excess or (cutoff is not None and at < cutoff)]


def _total(conn: sqlite3.Connection) -> int:
    return sum(counts.sources(conn).values())


def _oldest(conn: sqlite3.Connection, limit: int) -> list[tuple[int, float]]:
    """The oldest sessions with a readable stamp. One another tool wrote as text, a blob or an
    infinity has no age to judge, so it is never pruned (SQLite sorts text and blobs after every
    number: the range is a seek on the stamp index, as before)."""
    return [(int(r[0]), float(r[1])) for r in conn.execute(
        "SELECT rowid, created_at FROM sessions WHERE created_at BETWEEN -1e300 AND 1e300"
        " ORDER BY created_at, rowid LIMIT ?", (limit,))]


def due(conn: sqlite3.Connection, policy: RetentionPolicy, now: float) -> bool:
    """Whether a step would delete anything: the oldest stamp and the count (two seeks)."""
    return bool(policy.active and pick(_oldest(conn, 1), _total(conn), policy, now))


def step(conn: sqlite3.Connection, policy: RetentionPolicy, now: float,
         batch: int = PRUNE_BATCH) -> int:
    """One step inside the caller's write transaction: at most ``batch`` sessions and their
    index rows deleted, oldest first; returns how many."""
    doomed = pick(_oldest(conn, batch), _total(conn), policy, now)
    for rowid in doomed:
        drift.unindex(conn, rowid)   # below rowid 1: not the passage of its rowid's owner
    conn.executemany("DELETE FROM sessions WHERE rowid = ?", [(rowid,) for rowid in doomed])
    return len(doomed)
