"""How far past use can be trusted: the precision of the nearest past query's skill as a
function of its cosine, measured leave-one-out, and the skill prototypes that add to the kNN votes.
Pure arithmetic over vectors and labels, kept apart from the usage store and its index."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_PRECISION = 0.4    # a neighbour this unreliable (or less) earns no weight
# Skill prototypes (the normalised mean of a skill's past query vectors) add to the kNN votes with
# this weight at a leave-one-out accuracy of 1 (usage_weight of the accuracy: nothing at or below
# MIN_PRECISION). Tuning halves, Recall@5 with usage: MetaTool (leave-one-out accuracy 0.74, weight
# 0.57) 0.912 -> 0.930; HammerBench-zh (accuracy 0.01, most skills used once or never) unchanged,
# where a fixed weight of 0.5 cost R@1 0.709 -> 0.618.
PROTOTYPE_WEIGHT = 1.0
PROTOTYPE_MIN_EVENTS = 2   # good past queries a skill needs before it has a prototype
LOO_SAMPLE = 2000      # past queries used to measure the reliability (a fixed, evenly spaced sample)
# Without embeddings: which 2,000 of the MetaTool dev half's 5,102 past messages were picked moved
# with-usage Recall@5 over 0.799-0.834 (six digest salts; 3,000: 0.8165-0.8465); 4,000 kept it
# within 0.820-0.8295 of the 0.825 all of them give, at 1.5x the CPU of an updated index at the
# 20,000 cap (334 -> 499 ms; decision 231)
LEXICAL_LOO_SAMPLE = 4000
RELIABILITY_BINS = 6


@dataclass(frozen=True, slots=True)
class Reliability:
    """Precision of the nearest past query's skill, as a function of its cosine (increasing)."""

    cosines: tuple[float, ...] = ()
    precision: tuple[float, ...] = ()

    def at(self, cosine: float) -> float:
        if not self.cosines:
            return 0.0
        return float(np.interp(cosine, self.cosines, self.precision))


def measure_reliability(vectors: np.ndarray, labels: np.ndarray, good: np.ndarray,
                        sample: int = LOO_SAMPLE, bins: int = RELIABILITY_BINS) -> Reliability:
    """Leave-one-out over (a sample of) the good past queries: the nearest other past query's
    cosine, and whether it was for the same skill; binned by cosine quantile, precision made
    non-decreasing in cosine. Pure."""
    idx = np.flatnonzero(good)
    if len(idx) < 2 * bins:
        return Reliability()
    _, best, hit = leave_one_out(vectors, labels, good, sample)
    return reliability_from(best, hit, bins)


def leave_one_out(vectors: np.ndarray, labels: np.ndarray, good: np.ndarray,
                  sample: int = LOO_SAMPLE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (an evenly spaced sample of) the good past queries: their indices, the cosine of the
    nearest other good past query, and whether it was for the same skill. Pure."""
    idx = np.flatnonzero(good)
    if len(idx) < 2:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    pick = idx[np.unique(np.linspace(0, len(idx) - 1, min(sample, len(idx))).astype(np.int64))]
    sims = np.asarray(vectors[pick] @ vectors[idx].T, dtype=np.float64)
    sims[np.arange(len(pick)), np.searchsorted(idx, pick)] = -np.inf   # not itself
    nn = idx[np.argmax(sims, axis=1)]
    return pick, sims.max(axis=1), (labels[nn] == labels[pick]).astype(np.float64)


def prototypes(vectors: np.ndarray, labels: np.ndarray, good: np.ndarray, n_skills: int,
               sample: int = LOO_SAMPLE) -> tuple[np.ndarray, np.ndarray, float]:
    """Each skill's prototype (normalised mean of its good past query vectors; a zero row for a
    skill with fewer than PROTOTYPE_MIN_EVENTS), which skills have one, and the leave-one-out
    accuracy of "the nearest prototype names the skill" over (a sample of) the good past queries:
    each query is compared with its own skill's prototype made without it, and counts as a miss
    when that leaves its skill without a prototype (the history does not cover it). Pure."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    idx = np.flatnonzero(good)
    sums = np.zeros((n_skills, dim))
    np.add.at(sums, labels[idx], np.asarray(vectors[idx], dtype=np.float64))
    counts = np.bincount(labels[idx], minlength=n_skills)
    norms = np.linalg.norm(sums, axis=1)
    has = (counts >= PROTOTYPE_MIN_EVENTS) & (norms > 0)
    protos = np.zeros_like(sums)
    protos[has] = sums[has] / norms[has, None]
    if len(idx) < 2 or not has.any():
        return protos, has, 0.0
    pick = idx[np.unique(np.linspace(0, len(idx) - 1, min(sample, len(idx))).astype(np.int64))]
    v = np.asarray(vectors[pick], dtype=np.float64)
    own = labels[pick]
    sims = v @ protos.T
    sims[:, ~has] = -np.inf
    # cosine to the own skill's prototype without this query: (v.sum - v.v) / |sum - v|
    dot = np.einsum("ij,ij->i", v, sums[own])
    vv = np.einsum("ij,ij->i", v, v)
    rest = np.sqrt(np.maximum(norms[own] ** 2 - 2 * dot + vv, 0.0))
    ok = (counts[own] - 1 >= PROTOTYPE_MIN_EVENTS) & (rest > 1e-9)
    sims[np.arange(len(pick)), own] = np.where(ok, (dot - vv) / np.where(rest > 1e-9, rest, 1.0), -np.inf)
    hit = (np.argmax(sims, axis=1) == own) & np.isfinite(sims.max(axis=1))
    return protos, has, float(hit.mean())


def reliability_from(best: np.ndarray, hit: np.ndarray, bins: int = RELIABILITY_BINS) -> Reliability:
    """Bin (similarity, nearest-was-right) pairs by similarity quantile; precision per bin, made
    non-decreasing in similarity by isotonic regression (pool adjacent violators, weighted by the
    bins' sizes), which keeps the measured share of right neighbours. A running maximum lifted
    every bin above a lucky one to its precision: with few pairs a bin is lucky by chance, and
    neighbours right half the time read 0.72 at 50 pairs, 0.85 at 20 (the weight, and the gate's
    0.9, follow that figure). Pure."""
    # imported here: 1.5 s cold, 1.5 ms once the injection scan's learned layer loaded sklearn
    from sklearn.isotonic import isotonic_regression

    order = np.argsort(best)
    chunks = [c for c in np.array_split(order, bins) if len(c)]
    cos = [float(best[c].mean()) for c in chunks]
    raw = np.asarray([float(hit[c].mean()) for c in chunks])
    prec = isotonic_regression(raw, sample_weight=np.asarray([len(c) for c in chunks], dtype=np.float64))
    return Reliability(tuple(cos), tuple(float(p) for p in prec))
