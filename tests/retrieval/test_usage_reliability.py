"""Tests of retrieval/usage_reliability.py: how far the nearest past query can be trusted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval.usage_reliability import Reliability, reliability_from


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
