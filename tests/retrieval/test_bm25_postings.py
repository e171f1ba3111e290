"""Sorted (row, doc) entries carried from one catalog to the next keep their order and values."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval.bm25_postings import Postings, verbatim_pairs


def pairs(p: Postings) -> list[tuple[int, int]]:
    return list(zip(p.rows.tolist(), p.docs.tolist(), strict=True))


def postings(entries: dict[tuple[int, int], float]) -> Postings:
    keys = list(entries)
    return Postings.of(np.array([k[0] for k in keys], dtype=np.int64),
                       np.array([k[1] for k in keys], dtype=np.int64), np.array(list(entries.values())))


def test_entries_in_any_order_come_out_by_row_then_doc_with_their_values() -> None:
    p = Postings.of(np.array([2, 0, 2, 0]), np.array([1, 3, 0, 1]), np.array([0.1, 0.2, 0.3, 0.4]))
    assert pairs(p) == [(0, 1), (0, 3), (2, 0), (2, 1)]
    assert p.values is not None and p.values.tolist() == [0.4, 0.2, 0.3, 0.1]
    assert p.indptr(4).tolist() == [0, 2, 2, 4, 4]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n_docs=st.integers(0, 12), n_rows=st.integers(1, 8))
def test_moving_then_merging_equals_sorting_the_surviving_and_new_entries_afresh(
        seed: int, n_docs: int, n_rows: int) -> None:
    """Skills deleted or kept (in order, renumbered), rows dropped (the rest moving up), and the
    new skills' entries merged in: the same entries, values and order as sorting them whole."""
    rng = random.Random(seed)
    old = {(r, d): rng.random() for r in range(n_rows) for d in range(n_docs) if rng.random() < 0.4}
    p = postings(old)
    kept_docs = sorted(rng.sample(range(n_docs), rng.randint(0, n_docs)))
    n_new = len(kept_docs) + rng.randint(0, 3)
    targets = sorted(rng.sample(range(n_new), len(kept_docs)))
    doc_map = np.full(n_docs, -1, dtype=np.int64)
    doc_map[kept_docs] = targets
    alive = [rng.random() < 0.8 for _ in range(n_rows)]
    row_map = np.where(alive, np.cumsum(alive) - 1, -1)
    fresh_docs = [d for d in range(n_new) if d not in targets]
    extra = {(r, d): rng.random() for r in range(sum(alive)) for d in fresh_docs if rng.random() < 0.5}
    got = p.moved(doc_map, row_map).merged(postings(extra))
    want = {(int(row_map[r]), int(doc_map[d])): v for (r, d), v in old.items()
            if alive[r] and doc_map[d] >= 0}
    want.update(extra)
    assert pairs(got) == sorted(want)
    assert got.values is not None and got.values.tolist() == [want[k] for k in sorted(want)]


def test_a_move_keeps_an_unvalued_postings_unvalued() -> None:
    p = Postings.of(np.array([0, 1]), np.array([0, 1]))
    moved = p.moved(np.array([-1, 0]), None).merged(Postings.of(np.array([0]), np.array([1])))
    assert pairs(moved) == [(0, 1), (1, 0)] and moved.values is None


def test_verbatim_pairs_finds_each_word_inside_each_text_once() -> None:
    words = [("mail", 0), ("sky", 1), ("查询", 2)]
    found = verbatim_pairs(words, ["send email mail", "blue skyline", "违章查询"], [5, 7, 9])
    assert pairs(found) == [(0, 5), (1, 7), (2, 9)]
    assert len(verbatim_pairs([], ["text"], [0])) == 0 and len(verbatim_pairs(words, [], [])) == 0
