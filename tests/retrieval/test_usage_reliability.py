"""Tests of retrieval/usage_reliability.py: how far the nearest past query can be trusted."""

from __future__ import annotations

import numpy as np
import pytest

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
    dip = reliability_from(best, np.array([1, 1, 0, 0, 0, 0, 1, 1], dtype=float), bins=4)
    assert dip.precision == pytest.approx((1.0, 1.0, 1.0, 1.0))   # a dip is lifted, not kept
    assert rel.at(0.65) == pytest.approx(0.75)                      # read between bins
