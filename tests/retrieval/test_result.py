"""Tests of ``hermes_core/retrieval/result.py``: the hint cut's arithmetic.

The cut lists the ranked skills close to the best in the fusion and, with embeddings, backed by
the calibrated gate's per-skill evidence (see ``DenseCalibration.own_gate_margins``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval.result import HINT_MARGIN, HINT_RATIO, HINT_REACH, hint_cut, lexical_evidence


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


def test_without_a_dense_layer_a_rival_met_through_single_characters_is_not_listed() -> None:
    # docker-debugging shares words; travel (0.76 of the best: within the ratio) and notes share
    # single characters only, so the evidence cuts them
    scores = np.array([0.78, 0.76, 0.47, -0.2])
    evidence = lexical_evidence(np.array([True, False, False, False]))
    assert evidence.tolist() == [0.0, -np.inf, -np.inf, -np.inf]
    assert hint_cut(scores, np.arange(4), evidence=evidence) == [0]
    assert hint_cut(scores, np.arange(4)) == [0, 1, 2]


def test_a_synonym_or_past_use_backs_a_skill_that_shares_no_word() -> None:
    words = np.array([True, False, False])
    synonyms, usage = np.array([0.0, 0.3, 0.0]), np.array([0.0, 0.0, 0.9])
    assert lexical_evidence(words, synonyms).tolist() == [0.0, 0.0, -np.inf]
    assert lexical_evidence(words, synonyms, usage).tolist() == [0.0, 0.0, 0.0]
    # a layer of another length (out of step with the catalog) has no say
    assert lexical_evidence(words, None, np.array([1.0])).tolist() == [0.0, -np.inf, -np.inf]


def test_a_best_that_shares_no_word_lists_its_rivals_as_before() -> None:
    # nothing tells single-character matches apart: the ratio alone decides, as without evidence
    scores = np.array([0.9, 0.6, 0.2])
    evidence = lexical_evidence(np.array([False, False, True]))
    assert hint_cut(scores, np.arange(3), evidence=evidence) == hint_cut(scores, np.arange(3)) == [0, 1]


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=12),
       words=st.lists(st.booleans(), min_size=12, max_size=12), top_k=st.integers(1, 8))
def test_one_cut_with_the_lexical_evidence_lists_what_the_plain_cut_then_the_evidence_cut_listed(
        scores: list[float], words: list[bool], top_k: int) -> None:
    # the evidence is built before a single cut; the turn used to cut without it and, only when
    # that listed more than the best, again with it
    s = np.asarray(scores)
    order = np.argsort(-s, kind="stable")[:top_k]       # the ranking's order, best first
    evidence = lexical_evidence(np.asarray(words[: len(s)]))
    plain = hint_cut(s, order)
    before = plain if len(plain) <= 1 else hint_cut(s, order, evidence=evidence)
    assert hint_cut(s, order, evidence=evidence) == before
