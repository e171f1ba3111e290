"""The lexical usage index's nearest neighbours, carried from one history to the next.

Without embeddings the usage layer learns how far a neighbour can be trusted (usage.py,
``Reliability``) and calibrates its gate by finding, for a sample of past messages and for each
shipped off-topic request, the nearest good past message by BM25 share (a past message's score
over what the request's words could score, ``BM25Index.max_score``). Measured whole that is one
scoring of every past message per request: at the 20,000-event cap about 4,100 of them (the
sample of ``LEXICAL_LOO_SAMPLE`` and the off-topic reference), 4.0 s of CPU, and every new
event asked for them all again. Most cannot have moved.

What is kept per request (:class:`Nearest`): its words, the share's divisor, the nearest
candidate's event id and similarity, and a lower bound on the margin to every other candidate.
Between two histories (new events come after every kept one, as the store's ids do; any may
have left), a kept past message's score for the request moves only through the idf of the
request's words: each word adds idf x w to a past message's score, w in [0, 1.5) (a tf factor
below 1, plus the verbatim bonus 0.5), so every kept score moves by an amount within one interval
1.5 x the sum of |idf change| over the request's words wide (a word neither index has changes
nothing), and a difference of two scores by at most that. Every share is its score over the
same divisor, so with margin m (a share difference, at the old divisor D) the margin on the new
divisor D' is at least (m x D - 1.5 x sum |idf change|) / D', less 1e-9 for rounding. While that
is above 0 the nearest is still the nearest; its share is scored again exactly
(``BM25Index.score_of``) and the new past messages alone are scored and compared with it (they
come last, so a tie leaves the older one nearest, as ``argmax`` does). Otherwise, or when the
nearest left the history, the request is measured whole. Either way the result is, to the bit,
what a measurement from scratch gives; tests/retrieval/test_usage_nearest.py holds that over
random histories.

The sample itself must not move when one event arrives and the oldest goes: the good past
messages whose digest (of message and skill) is among the ``size`` smallest, not every n-th
by position (which picked other messages after every shift).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hermes_core.retrieval.bm25 import DIRECT_MATCH_BONUS, BM25Index

ENTRY_CEIL = 1.0 + DIRECT_MATCH_BONUS     # what one word adds to a score, in units of its idf
ROUNDING = 1e-9                          # far above a sum of a few float64 terms' error


@dataclass(frozen=True, slots=True)
class Nearest:
    """A request's nearest candidate: its words, the share's divisor (``max_score``), the
    nearest's event id and similarity, and a lower bound of similarity minus the next one's
    (``inf``: no other candidate)."""

    tokens: tuple[str, ...]
    scale: float
    key: int
    similarity: float
    margin: float


def similarities(bm25: BM25Index, tokens: Sequence[str]) -> np.ndarray:
    """Every past message's share for ``tokens``: score over ``max_score``; zeros when the
    request has no word at all."""
    mx = bm25.max_score(tokens)
    raw = bm25.score_array(tokens)
    return raw / mx if mx > 0 else np.zeros(len(bm25))


def measure(bm25: BM25Index, tokens: Sequence[str], candidates: np.ndarray, keys: np.ndarray,
            own: int = -1) -> Nearest:
    """``tokens``' nearest among ``candidates`` (a mask over the index's past messages, ``own``
    excluded) scored whole; ties go to the first, as ``argmax``."""
    mx = bm25.max_score(tokens)
    sims = bm25.score_array(tokens) / mx if mx > 0 else np.zeros(len(bm25))
    if own >= 0:
        sims[own] = -np.inf
    sims[~candidates] = -np.inf
    j = int(np.argmax(sims))
    best = float(sims[j])
    sims[j] = -np.inf
    second = float(sims.max()) if len(sims) > 1 else -np.inf
    return Nearest(tuple(tokens), mx, int(keys[j]), best,
                   np.inf if second == -np.inf else best - second)


def carried(before: Nearest, old: BM25Index, new: BM25Index, candidates: np.ndarray,
            keys: np.ndarray, position: dict[int, int], fresh: np.ndarray,
            idf_moved: dict[str, float], own: int = -1) -> Nearest | None:
    """``before`` (measured on ``old``) on ``new``, or None when it must be measured whole (see
    the module docstring). ``position``: event id -> position in ``new``; ``fresh``: the
    positions of the candidates new since ``old``, ascending and after every kept one;
    ``idf_moved``: each word's |idf change| from ``old`` to ``new`` so far (filled as met, shared by
    the requests of one update); ``own``: the request's own position, never a candidate."""
    toks = before.tokens
    scale = new.max_score(toks)
    if scale <= 0 or before.scale <= 0:
        return None
    moved = 0.0
    for t in set(toks):
        if (d := idf_moved.get(t)) is None:
            d = idf_moved[t] = abs(new.token_idf(t) - old.token_idf(t))
        moved += d
    best, margin, key = before.similarity, before.margin, before.key
    at = position.get(key, -1)
    # a new message holding the id of the one that left (a table without AUTOINCREMENT gives a
    # new row the id of the newest deleted one) is not the kept nearest: it left
    if at < 0 or not candidates[at] or (len(fresh) and at >= fresh[0]):
        if best != 0.0 or moved:
            return None
        # no kept candidate shared a word with the request, and none does now: the first one
        # is the nearest, as argmax picks among equals (an off-topic request in another
        # language meets this at every event, its last nearest being the oldest message)
        mask = candidates.copy()
        if own >= 0:
            mask[own] = False
        at = int(np.argmax(mask))
        if not mask[at]:
            return None
        key, margin = int(keys[at]), 0.0
    elif moved or scale != before.scale:
        margin = (margin * before.scale - ENTRY_CEIL * moved) / scale - ROUNDING
        if not margin > 0:
            return None
        best = float(new.score_of(toks, np.asarray([at]))[0] / scale)
    if len(fresh):
        for j, v in zip(fresh.tolist(), (new.score_of(toks, fresh) / scale).tolist(), strict=True):
            if j == at:
                continue
            if v > best:
                margin, best, key = v - best, v, int(keys[j])
            else:
                margin = min(margin, best - v)
    return Nearest(toks, scale, key, best, margin)


def digest(query: str, skill: str) -> int:
    """A past message's place in the sample: 8 bytes of BLAKE2b over message and skill, the same
    in every process (Python's ``hash`` of a str is salted per process)."""
    data = f"{skill}\x00{query}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def sample(digests: np.ndarray, good: np.ndarray, size: int) -> np.ndarray:
    """Positions (ascending) of the ``size`` good past messages with the smallest digests (all
    of them when there are no more): a sample an arriving or leaving event changes by one."""
    idx = np.flatnonzero(good)
    if len(idx) <= size:
        return idx
    order = np.argsort(digests[idx], kind="stable")[:size]
    return np.sort(idx[order])
