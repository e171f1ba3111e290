"""The first ``keep`` skills of a ranking without sorting the whole catalog.

The retriever ranks by fused score (descending), then optionally by a tie-break score (descending),
then by index. A full ``np.lexsort`` over 10,000 skills costs more than every other step of a turn
after the layers; the top ``keep`` only needs the skills scoring at least the ``keep``-th best score
(``np.partition``, linear), sorted among themselves by the same keys. Every skill of the full
order's first ``keep`` scores at least that much, and the candidates keep their relative order, so
the result is the full sort's head element for element (pinned by tests against ``np.lexsort``).
"""

from __future__ import annotations

import numpy as np


def top_order(scores: np.ndarray, keep: int, tie: np.ndarray | None = None) -> np.ndarray:
    """Indexes of the ``keep`` best: ``np.lexsort((arange, -tie, -scores))[:keep]`` (no ``tie``:
    ``np.lexsort((arange, -scores))[:keep]``), in time linear in the catalog plus the ties."""
    n = len(scores)
    keep = max(0, min(keep, n))
    s = np.asarray(scores)
    finite = bool(np.isfinite(s).all()) and (tie is None or bool(np.isfinite(tie).all()))
    if keep == 0 or keep * 4 >= n or not finite:   # small catalog or NaN/inf: sort it all
        return _lexsort(np.arange(n), s, tie)[:keep]
    threshold = -np.partition(-s, keep - 1)[keep - 1]   # the keep-th best score
    cand = np.flatnonzero(s >= threshold)
    local = _lexsort(cand, s[cand], tie[cand] if tie is not None else None)
    return np.asarray(cand[local[:keep]])


def _lexsort(index: np.ndarray, scores: np.ndarray, tie: np.ndarray | None) -> np.ndarray:
    keys = (index, -scores) if tie is None else (index, -tie, -scores)
    return np.lexsort(keys)
