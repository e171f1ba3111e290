"""Tests of ``hermes_core/retrieval/result.py``: the hint cut's arithmetic.

The cut lists the ranked skills close to the best in the fusion and, with embeddings, backed by
the calibrated gate's per-skill evidence (see ``DenseCalibration.own_gate_margins``).
"""

from __future__ import annotations

import numpy as np

from hermes_core.retrieval.result import HINT_MARGIN, HINT_RATIO, HINT_REACH, hint_cut


def test_defaults_are_a_scale_free_ratio_and_no_absolute_margin() -> None:
    assert (HINT_RATIO, HINT_MARGIN, HINT_REACH) == (0.5, 0.0, 2.0)


def test_a_weak_best_no_longer_lists_every_skill_above_the_mean() -> None:
    # best 1.2 (< 3): the old margin of 1.5 admitted all of 0.9, 0.7, 0.5, 0.2; the ratio keeps
    # the ones >= 0.6
    scores = np.array([1.2, 0.9, 0.7, 0.5, 0.2])
    order = np.arange(5)
    assert hint_cut(scores, order) == [0, 1, 2]
    assert hint_cut(scores, order, 0.5, 1.5) == [0, 1, 2, 3, 4]


def test_a_clear_winner_lists_only_skills_the_gate_would_pass() -> None:
    # the fused scores are a crowd; the evidence says the best clears the gate by 2.9 (>= reach),
    # the second by 1.6, the others not at all: only the first two are listed
    scores = np.array([0.83, 0.75, 0.72, 0.52])
    evidence = np.array([2.9, 1.6, -0.4, -0.6])
    assert hint_cut(scores, np.arange(4), evidence=evidence) == [0, 1]
    assert hint_cut(scores, np.arange(4)) == [0, 1, 2, 3]  # without evidence: the crowd


def test_a_weak_best_keeps_its_near_rivals_within_reach() -> None:
    # the best fails or barely passes: floor = its evidence - reach, so rivals within 2 stay
    scores = np.array([0.83, 0.75, 0.72, 0.52])
    evidence = np.array([0.5, -1.4, -1.6, -3.0])
    assert hint_cut(scores, np.arange(4), evidence=evidence) == [0, 1]
    assert hint_cut(scores, np.arange(4), evidence=evidence, reach=4.0) == [0, 1, 2, 3]
    # the floor never rises above 0: a skill the gate passes on its own is never cut for evidence
    assert hint_cut(scores, np.arange(4), evidence=np.array([9.0, 0.0, 0.1, -0.1])) == [0, 1, 2]


def test_the_best_is_always_listed_and_unread_skills_have_no_say() -> None:
    scores = np.array([0.4, 0.3, -0.2])
    # the best's evidence far below any rival's: it is still listed, first
    assert hint_cut(scores, np.arange(3), evidence=np.array([-9.0, -12.0, 0.0])) == [0]
    assert hint_cut(scores, np.arange(3), evidence=np.array([-9.0, -10.0, 0.0])) == [0, 1]
    # +inf (a skill this model cannot read, ranked by another): evidence never cuts it
    assert hint_cut(scores, np.arange(3), evidence=np.array([5.0, np.inf, 0.0])) == [0, 1]
    # nothing above the catalog's mean but the best
    assert hint_cut(np.array([-0.1, -0.2]), np.arange(2)) == [0]
    assert hint_cut(scores, np.array([], dtype=int)) == []


def test_indices_follow_the_given_order() -> None:
    scores = np.array([1.0, 4.0, 3.0, 2.5])
    evidence = np.array([0.0, 3.0, 1.0, -0.5])
    order = np.array([1, 2, 3, 0])
    assert hint_cut(scores, order, evidence=evidence) == [1, 2]
