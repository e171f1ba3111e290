"""The lexical index's sparse parts, kept so that a refresh changes only the skills it must.

Both of ``BM25Index``'s matrices are sets of (term row, skill) entries: the tf/idf part (one
entry per token a skill has, valued ``tf / (tf + 1.5)``; bm25s's column ``data`` is that times
the term's idf) and the verbatim bonus (one entry per term found in a skill's normalised text).
Kept sorted by row then skill, as a CSC / CSR matrix lays them out, they can be carried from
one catalog to the next: an entry of an unchanged skill keeps its value and only its numbers
move (a skill's position after adds and deletes above it, a term's row after terms left the
vocabulary), and both renumberings keep order, so the kept entries stay sorted; the few entries
of the changed skills are then inserted where they sort. That is linear in the entries with a
small constant (numpy), where rebuilding derives every skill again in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ahocorasick
import numpy as np

_SHIFT = 32   # a (row, doc) key packs the row above the skill's position (< 2**32 skills)


@dataclass(frozen=True, slots=True)
class Postings:
    """(row, doc) entries sorted by row then doc, each pair at most once, with one float each
    (``values``; None where the entry's presence is all it says)."""

    rows: np.ndarray
    docs: np.ndarray
    values: np.ndarray | None = None

    @classmethod
    def empty(cls, valued: bool) -> Postings:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, np.zeros(0, dtype=np.float64) if valued else None)

    @classmethod
    def of(cls, rows: np.ndarray, docs: np.ndarray, values: np.ndarray | None = None) -> Postings:
        """Entries in any order (distinct pairs), sorted."""
        order = np.argsort(_keys(rows, docs), kind="stable")
        return cls(rows[order], docs[order], None if values is None else values[order])

    def __len__(self) -> int:
        return int(self.rows.size)

    def moved(self, doc_map: np.ndarray, row_map: np.ndarray | None) -> Postings:
        """The entries whose skill and term survive, renumbered: ``doc_map[old]`` / ``row_map[old]``
        is the new number, -1 for gone. Both maps must keep the order of what survives."""
        docs = doc_map[self.docs]
        keep = docs >= 0
        rows = self.rows
        if row_map is not None:
            rows = row_map[rows]
            keep &= rows >= 0
        values = None if self.values is None else self.values[keep]
        return Postings(rows[keep], docs[keep], values)

    def merged(self, extra: Postings) -> Postings:
        """These entries and ``extra``'s (sorted, no pair in both), in order."""
        if not len(extra):
            return self
        at = np.searchsorted(_keys(self.rows, self.docs), _keys(extra.rows, extra.docs))
        values = None
        if self.values is not None and extra.values is not None:
            values = np.insert(self.values, at, extra.values)
        return Postings(np.insert(self.rows, at, extra.rows), np.insert(self.docs, at, extra.docs), values)

    def indptr(self, n_rows: int) -> np.ndarray:
        """Where each row's entries start (and the last ends): the compressed layout's pointer."""
        out = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.rows, minlength=n_rows), out=out[1:])
        return out


def _keys(rows: np.ndarray, docs: np.ndarray) -> np.ndarray:
    return (rows.astype(np.int64) << _SHIFT) | docs.astype(np.int64)


def verbatim_pairs(words: Iterable[tuple[str, int]], texts: Sequence[str],
                   docs: Sequence[int]) -> Postings:
    """Every (row, doc) where the word of that row is a substring of the text of that doc
    (``texts[k]`` is doc ``docs[k]``), sorted.

    One Aho-Corasick automaton over the words scans the texts once, joined by NUL (which no
    token holds, so no match spans two texts): linear in the text plus the matches, in C but for
    the matches. Building it is cheap (about 6 ms for 20,000 words), so each update builds its
    own and none is shared between indexes. A few words new to the catalog scanned over every
    kept skill's text then cost one pass, not one Python call per skill.
    """
    auto = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for word, row in words:
        auto.add_word(word, row)
    if not len(auto) or not texts:
        return Postings.empty(valued=False)
    auto.make_automaton()
    ends: list[int] = []
    rows: list[int] = []
    for end, row in auto.iter("\x00".join(texts)):
        ends.append(end)
        rows.append(row)
    starts = np.zeros(len(texts), dtype=np.int64)     # where each text begins in the join
    np.cumsum([len(t) + 1 for t in texts[:-1]], out=starts[1:])
    at = np.searchsorted(starts, np.asarray(ends, dtype=np.int64), side="right") - 1
    keys = np.unique(_keys(np.asarray(rows, dtype=np.int64), np.asarray(docs, dtype=np.int64)[at]))
    return Postings(keys >> _SHIFT, keys & ((1 << _SHIFT) - 1))
