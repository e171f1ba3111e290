"""Tests of retrieval/usage_reliability.py: how far the nearest past query can be trusted, and
the per-skill prototypes with their leave-one-out accuracy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import usage as U
from hermes_core.retrieval.usage import UsageEvent, UsageIndex, usage_weight
from hermes_core.retrieval.usage_reliability import (
    Reliability,
    measure_reliability,
    prototypes,
    reliability_from,
)


def test_no_measurement_trusts_no_past_query() -> None:
    assert Reliability().at(0.99) == 0.0


def test_precision_per_similarity_bin_never_falls_as_similarity_rises() -> None:
    best = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    hit = np.array([0, 1, 1, 0, 0, 1, 1, 1], dtype=float)
    rel = reliability_from(best, hit, bins=4)
    assert rel.cosines == pytest.approx((0.15, 0.35, 0.55, 0.75))
    # bins' raw precision 0.5, 0.5, 0.5, 1.0 -> already non-decreasing
    assert rel.precision == pytest.approx((0.5, 0.5, 0.5, 1.0))
    # a dip is pooled with the bin above it: 1, 0, 0, 1 right reads 1/3 up to the last bin (2 of
    # the 6 neighbours there were right), not 1.0 (lifted to the first bin's, 6 of 6 claimed)
    dip = reliability_from(best, np.array([1, 1, 0, 0, 0, 0, 1, 1], dtype=float), bins=4)
    assert dip.precision == pytest.approx((1 / 3, 1 / 3, 1 / 3, 1.0))
    assert rel.at(0.65) == pytest.approx(0.75)                      # read between bins


PAIRS = st.integers(12, 400).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(pairs=PAIRS)
def test_the_curve_claims_as_many_right_neighbours_as_were_measured(
        pairs: tuple[list[float], list[bool]]) -> None:
    """Made non-decreasing, the curve still averages (over the bins, by their sizes) to the
    measured share of right neighbours: a monotone fit moves evidence between adjacent bins, it
    does not add any. A running maximum lifted every bin above a lucky one to its precision."""
    best, hit = np.asarray(pairs[0]), np.asarray(pairs[1], dtype=float)
    rel = reliability_from(best, hit)
    sizes = [len(c) for c in np.array_split(np.arange(len(best)), 6)]
    assert np.all(np.diff(rel.precision) >= 0)
    assert float(np.dot(sizes, rel.precision)) == pytest.approx(float(hit.sum()), abs=1e-9)


@pytest.mark.parametrize("events", [50, 200, 1000])
def test_a_small_history_whose_neighbours_are_right_at_random_is_not_read_as_reliable(
        events: int) -> None:
    """Neighbours right half the time whatever their similarity: the top bin's precision,
    averaged over 300 such histories, is near 0.5. With a running maximum it was the best of six
    noisy bins: 0.72 at 50 pairs (weight 1.6 of 3 instead of 0.5), 0.61 at 200."""
    rng = np.random.default_rng(events)
    tops = [reliability_from(rng.random(events), (rng.random(events) < 0.5).astype(float)).precision[-1]
            for _ in range(300)]
    assert float(np.mean(tops)) < 0.6, float(np.mean(tops))


def test_reliability_is_the_leave_one_out_precision_by_cosine() -> None:
    # six pairs of near-copies for the same skill (cosine ~0.995) and six pairs of loosely related
    # queries for different skills (cosine ~0.707); every pair is orthogonal to every other pair
    eye = np.eye(48)
    vecs, labels = [], []
    for k in range(6):
        a, b = eye[4 * k], eye[4 * k + 1]
        vecs += [a, (a + 0.1 * b) / np.linalg.norm(a + 0.1 * b)]
        labels += [k, k]
        c, d = eye[4 * k + 2], eye[4 * k + 3]
        vecs += [c, (c + d) / np.sqrt(2)]
        labels += [100 + k, 200 + k]
    rel = measure_reliability(np.vstack(vecs), np.array(labels), np.ones(len(labels), bool), bins=2)
    assert rel.precision == (0.0, 1.0)
    assert rel.cosines[0] == pytest.approx(1 / np.sqrt(2)) and rel.cosines[1] > 0.99
    assert rel.at(0.0) == 0.0 and rel.at(1.0) == 1.0
    assert rel.at(0.85) == pytest.approx((0.85 - rel.cosines[0]) / (rel.cosines[1] - rel.cosines[0]))
    # too little history to measure: no reliability, so the kNN layer earns no weight
    assert measure_reliability(np.vstack(vecs[:4]), np.array(labels[:4]), np.ones(4, bool)) == Reliability()


def test_prototypes_are_normalised_means_and_their_accuracy_is_leave_one_out() -> None:
    eye = np.eye(4)
    # skill 0: three queries around axis 0; skill 1: three around axis 1; skill 2: one query
    vecs = np.vstack([eye[0], (eye[0] + 0.2 * eye[2]) / np.linalg.norm(eye[0] + 0.2 * eye[2]),
                      (eye[0] + 0.2 * eye[3]) / np.linalg.norm(eye[0] + 0.2 * eye[3]),
                      eye[1], (eye[1] + 0.2 * eye[2]) / np.linalg.norm(eye[1] + 0.2 * eye[2]),
                      (eye[1] + 0.2 * eye[3]) / np.linalg.norm(eye[1] + 0.2 * eye[3]), eye[3]])
    labels = np.array([0, 0, 0, 1, 1, 1, 2])
    protos, has, acc = prototypes(vecs, labels, np.ones(7, bool), 3)
    assert list(has) == [True, True, False]                  # one query is no prototype
    mean0 = vecs[:3].sum(axis=0)
    assert protos[0] == pytest.approx(mean0 / np.linalg.norm(mean0)) and not protos[2].any()
    # the six clustered queries find their own skill without themselves; the lone one cannot
    assert acc == pytest.approx(6 / 7)
    assert usage_weight(acc, U.PROTOTYPE_WEIGHT) == pytest.approx(
        U.PROTOTYPE_WEIGHT * (6 / 7 - U.MIN_PRECISION) / (1 - U.MIN_PRECISION))


def test_history_of_single_uses_earns_prototypes_no_weight() -> None:
    eye = np.eye(8)
    protos, has, acc = prototypes(eye, np.arange(8), np.ones(8, bool), 8)
    assert not has.any() and not protos.any() and acc == 0.0
    idx = UsageIndex([UsageEvent(f"q{i}", f"s{i}") for i in range(8)], [f"s{i}" for i in range(8)],
                     eye.astype(np.float32))
    assert idx.prototype_weight == 0.0
