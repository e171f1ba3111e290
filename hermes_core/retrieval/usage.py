"""Learning from use: (query, skill) events in SQLite, and the sixth layer that reads them.

What was actually used says more about a catalog than its descriptions do: a trigger that fired, a
``skill_view(name)`` the model made after a hint, an author's ``agent.feedback(skill, good=...)``.
Each is stored as one event (the query redacted, capped in count, pruned when its skill changes or
goes away) in ``<home>/usage.sqlite3``.

The usage layer scores every skill from the past queries nearest to this one:

* **kNN with label votes** (when an embedder serves the query): each of the ``k`` most similar past
  queries votes for its skill, +1 if it was a good use and -1 if an author marked it bad, weighted by
  how far its cosine stands above what two unrelated queries score with this model
  (``unrelated_mean`` / ``unrelated_std``, measured by the calibration on the shipped off-topic set).
* **BM25 over past queries per skill**: each skill's past queries form one document.

It abstains (returns None) with no history, or when no past query is close: a query unlike any past
one is scored zero-shot. Its fusion weight follows the evidence (:func:`usage_weight`): a near-copy of
a past query counts for a lot, a loose neighbour for little; so a catalog with less history than
skills is not pulled off its zero-shot ranking.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hermes_core.redact import redact
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
from hermes_core.types import Skill

log = logging.getLogger(__name__)

USAGE_FILE = "usage.sqlite3"
EVENT_KINDS = ("trigger", "view", "feedback", "replay")
DEFAULT_CAP = 20_000         # events kept; the oldest go first
MAX_QUERY_CHARS = 1_000      # a stored query is cut here: the head says what was asked
KNN_K = 10
# A neighbour counts once its cosine stands this many unrelated-pair standard deviations above the
# unrelated-pair mean; its vote grows linearly from there and saturates at NEAR_Z.
MIN_Z = 3.0
NEAR_Z = 8.0
# Fusion weight of the usage layer at full evidence (the dense layer weighs 0.8, BM25 0.2).
USAGE_WEIGHT = 1.2
LEXICAL_SHARE = 0.35  # the BM25-over-past-queries share of the layer (kNN takes the rest)
# The gate lets a query through when a past request for its top skill is this close (z as above).
USAGE_GATE_Z = 10.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS usage_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    query TEXT NOT NULL,
    skill TEXT NOT NULL,
    kind TEXT NOT NULL,
    good INTEGER NOT NULL,
    content_hash TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS usage_events_skill ON usage_events(skill);
"""


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """One use of a skill for a query; ``good`` False is an author's "this was the wrong skill"."""

    query: str
    skill: str
    kind: str = "view"
    good: bool = True
    content_hash: str = ""
    at: float = 0.0


class UsageStore:
    """The events, in SQLite (WAL) at ``path``; ``None`` keeps them in memory (tests, eval replay).

    Thread-safe; every write is one short transaction. Queries are redacted before they are stored
    (``secrets`` adds exact strings to scrub on top of the pattern-based redaction). The file is
    created on the first write: a home that never records anything gets no database.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, cap: int = DEFAULT_CAP,
                 secrets: Sequence[str] = (), clock: Callable[[], float] = time.time) -> None:
        if cap < 1:
            raise ValueError("cap must be >= 1")
        self.path = Path(path) if path is not None else None
        self.cap = cap
        self.secrets = tuple(secrets)
        self.clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._version = 0
        if self.path is None:
            self._open()

    def _open(self, create: bool = True) -> sqlite3.Connection | None:
        """The connection (call with the lock held, or from __init__); None when the file does not
        exist yet and ``create`` is False."""
        if self._conn is not None:
            return self._conn
        if self.path is not None:
            if not create and not self.path.exists():
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path) if self.path is not None else ":memory:",
                               check_same_thread=False, timeout=5.0)
        with conn:
            if self.path is not None:
                conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
        self._conn = conn
        return conn

    @property
    def version(self) -> int:
        """Changes with every write made through this store (the usage layer rebuilds on change)."""
        return self._version

    def record(self, query: str, skill: str, kind: str = "view", *, good: bool = True,
               content_hash: str = "") -> bool:
        """Store one event; False (and nothing stored) for an empty query or skill name."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown usage event kind {kind!r}; use {', '.join(EVENT_KINDS)}")
        text = redact(str(query)[:MAX_QUERY_CHARS], self.secrets).strip()
        if not text or not skill:
            return False
        with self._lock:
            conn = self._open()
            assert conn is not None
            with conn:
                conn.execute(
                    "INSERT INTO usage_events (at, query, skill, kind, good, content_hash) "
                    "VALUES (?,?,?,?,?,?)",
                    (float(self.clock()), text, str(skill), kind, 1 if good else 0, content_hash))
                conn.execute("DELETE FROM usage_events WHERE id <= (SELECT MAX(id) FROM usage_events) - ?",
                             (self.cap,))
            self._version += 1
        return True

    def events(self) -> list[UsageEvent]:
        with self._lock:
            conn = self._open(create=False)
            rows = [] if conn is None else conn.execute(
                "SELECT query, skill, kind, good, content_hash, at FROM usage_events ORDER BY id").fetchall()
        return [UsageEvent(q, s, k, bool(g), h, a) for q, s, k, g, h, a in rows]

    def __len__(self) -> int:
        with self._lock:
            conn = self._open(create=False)
            return 0 if conn is None else int(conn.execute("SELECT COUNT(*) FROM usage_events").fetchone()[0])

    def prune(self, current: Mapping[str, str]) -> int:
        """Drop events of skills not in ``current`` (name -> content hash) or whose content hash
        differs (the skill was rewritten: what was learnt about the old text may not hold). Events
        stored without a hash are kept while their skill exists. Returns how many were dropped."""
        with self._lock:
            conn = self._open(create=False)
            if conn is None:
                return 0
            rows = conn.execute("SELECT id, skill, content_hash FROM usage_events").fetchall()
            stale = [(i,) for i, s, h in rows if s not in current or (h and h != current[s])]
            if stale:
                with conn:
                    conn.executemany("DELETE FROM usage_events WHERE id = ?", stale)
                self._version += 1
        return len(stale)

    def clear(self) -> None:
        with self._lock:
            conn = self._open(create=False)
            if conn is not None:
                with conn:
                    conn.execute("DELETE FROM usage_events")
            self._version += 1

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


@dataclass(frozen=True, slots=True)
class UsageScores:
    """The layer's answer for one query: per-skill scores (catalog order), the fusion weight its
    evidence earns, and what it was based on (shown by ``--explain``)."""

    scores: np.ndarray
    weight: float
    nearest: str | None
    nearest_skill: str | None
    nearest_z: float
    neighbours: int


def usage_weight(nearest_z: float, full: float = USAGE_WEIGHT, min_z: float = MIN_Z,
                 near_z: float = NEAR_Z) -> float:
    """The fusion weight the nearest past query earns: 0 below ``min_z`` unrelated-pair standard
    deviations above chance, ``full`` at ``near_z`` and beyond, linear between."""
    if not np.isfinite(nearest_z) or nearest_z <= min_z:
        return 0.0
    return full * min(1.0, (nearest_z - min_z) / (near_z - min_z))


class UsageIndex:
    """Past queries of the current catalog, embedded once per build; scores a query in O(events)."""

    def __init__(self, events: Sequence[UsageEvent], names: Sequence[str],
                 vectors: np.ndarray | None = None, *, unrelated_mean: float = 0.0,
                 unrelated_std: float = 1.0, k: int = KNN_K, full_weight: float = USAGE_WEIGHT) -> None:
        pos = {n: i for i, n in enumerate(names)}
        keep = [i for i, e in enumerate(events) if e.skill in pos]
        self.events = [events[i] for i in keep]
        self.names = list(names)
        self._skill_idx = np.fromiter((pos[e.skill] for e in self.events), np.int64, len(self.events))
        self._sign = np.fromiter((1.0 if e.good else -1.0 for e in self.events), np.float64,
                                 len(self.events))
        self.vectors = (np.asarray(vectors, dtype=np.float32)[keep] if vectors is not None and len(keep)
                        else None)
        self.unrelated_mean = unrelated_mean
        self.unrelated_std = max(unrelated_std, 1e-6)
        self.k = k
        self.full_weight = full_weight
        # one BM25 document per skill with good history: its past queries
        by_skill: dict[str, list[str]] = {}
        for e in self.events:
            if e.good:
                by_skill.setdefault(e.skill, []).append(e.query)
        self._lex_names = sorted(by_skill)
        self._lex_pos = np.fromiter((pos[n] for n in self._lex_names), np.int64, len(self._lex_names))
        self._lex = BM25Index([Skill(n, " \n".join(by_skill[n])) for n in self._lex_names])

    def __len__(self) -> int:
        return len(self.events)

    def score(self, query: str, vector: np.ndarray | None = None) -> UsageScores | None:
        """Scores for ``query`` (``vector``: its embedding by the same model as the past queries),
        or None to abstain (no history, or nothing close enough)."""
        if not self.events:
            return None
        n = len(self.names)
        knn = np.zeros(n)
        nearest_z = -np.inf
        nearest = nearest_skill = None
        used = 0
        if vector is not None and self.vectors is not None and len(self.vectors):
            sims = self.vectors @ np.asarray(vector, dtype=np.float32)
            z = (sims - self.unrelated_mean) / self.unrelated_std
            top = np.argsort(-z, kind="stable")[: self.k]
            j0 = int(top[0])
            nearest_z = float(z[j0])
            nearest, nearest_skill = self.events[j0].query, self.events[j0].skill
            votes = np.clip((z[top] - MIN_Z) / (NEAR_Z - MIN_Z), 0.0, 1.0) * self._sign[top]
            used = int(np.count_nonzero(votes))
            np.add.at(knn, self._skill_idx[top], votes)
        lex = np.zeros(n)
        if len(self._lex_names):
            toks = bm25_tokens(query)
            raw = self._lex.score_array(toks)
            mx = self._lex.max_score(toks)
            if mx > 0 and raw.size:
                lex[self._lex_pos] = raw / mx  # share of what the query's words could score
        if vector is None or self.vectors is None:
            # lexical evidence only: its best share stands in for the neighbour's closeness
            best = float(lex.max()) if lex.size else 0.0
            nearest_z = MIN_Z + (NEAR_Z - MIN_Z) * max(0.0, (best - 0.3) / 0.5)
            scores = lex
        else:
            scores = (1.0 - LEXICAL_SHARE) * knn + LEXICAL_SHARE * lex
        weight = usage_weight(nearest_z, self.full_weight)
        if weight <= 0.0 or not np.any(scores > 0):
            return None
        return UsageScores(scores, weight, nearest, nearest_skill, nearest_z, used)


class UsageLayer:
    """The store plus the index built from it, rebuilt only when the events or the catalog change.

    ``embed(texts)`` turns past queries into vectors with the model that serves the current query;
    vectors are kept per (model, query text), so a new event costs one embedding once.
    """

    def __init__(self, store: UsageStore, *, full_weight: float = USAGE_WEIGHT) -> None:
        self.store = store
        self.full_weight = full_weight
        self._lock = threading.Lock()
        self._built: dict[str, tuple[tuple[int, int], UsageIndex]] = {}
        self._vectors: dict[tuple[str, str], np.ndarray] = {}

    def record(self, query: str, skill: str, kind: str = "view", *, good: bool = True,
               content_hash: str = "") -> bool:
        return self.store.record(query, skill, kind, good=good, content_hash=content_hash)

    def prune(self, current: Mapping[str, str]) -> int:
        return self.store.prune(current)

    def index(self, names: Sequence[str], model: str | None,
              embed: Callable[[Sequence[str]], np.ndarray] | None, *, unrelated_mean: float = 0.0,
              unrelated_std: float = 1.0) -> UsageIndex:
        """The index for this catalog (``names``, index order) and model (None: lexical only)."""
        stamp = (self.store.version, hash(tuple(names)))
        key = model or ""
        with self._lock:
            hit = self._built.get(key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        events = self.store.events()
        vectors = None
        if model is not None and embed is not None and events:
            todo = sorted({e.query for e in events if (model, e.query) not in self._vectors})
            if todo:
                for t, v in zip(todo, embed(todo), strict=True):
                    self._vectors[(model, t)] = np.asarray(v, dtype=np.float32)
            vectors = np.vstack([self._vectors[(model, e.query)] for e in events])
        idx = UsageIndex(events, names, vectors, unrelated_mean=unrelated_mean,
                         unrelated_std=unrelated_std, full_weight=self.full_weight)
        with self._lock:
            self._built[key] = (stamp, idx)
        return idx
