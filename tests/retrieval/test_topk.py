import numpy as np
import pytest

from hermes_core.retrieval.topk import top_order


@pytest.mark.parametrize("seed", range(20))
def test_top_order_is_the_full_sort_head_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    # few distinct values: many ties at the cut, which the index must break as the full sort does
    scores = rng.integers(-3, 4, size=n).astype(np.float64) * 0.5
    tie = rng.integers(0, 3, size=n).astype(np.float64)
    for keep in (0, 1, 5, 10, n, n + 3):
        assert top_order(scores, keep).tolist() == np.lexsort((np.arange(n), -scores))[:keep].tolist()
        assert (top_order(scores, keep, tie).tolist()
                == np.lexsort((np.arange(n), -tie, -scores))[:keep].tolist())


def test_top_order_of_distinct_scores_is_descending() -> None:
    scores = np.random.default_rng(3).normal(size=5000)
    got = top_order(scores, 10)
    assert got.tolist() == np.argsort(-scores)[:10].tolist()


def test_top_order_with_nan_falls_back_to_the_full_sort() -> None:
    scores = np.array([1.0, np.nan, 3.0, 2.0] * 50)
    assert top_order(scores, 5).tolist() == np.lexsort((np.arange(200), -scores))[:5].tolist()
