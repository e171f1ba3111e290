"""The dense gate's calibration kept up to date through edits equals one computed from scratch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval import gate_state
from hermes_core.retrieval.dense import DenseIndex, soft_max_by_skill
from hermes_core.retrieval.dense_gate import FixedRule
from hermes_core.retrieval.fusion import GateWeights, anchor_vectors
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill

WORDS = ["invoice", "flight", "weather", "playlist", "meeting", "recipe", "ticket", "album",
         "route", "note", "查询", "快递", "天气", "会议", "create", "cancel", "share", "export"]


class MemoEmbedder(HashingEmbedder):
    """The hashing embedder, each text embedded once (the examples re-ask the same texts)."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__("test:gate-state", dim=dim)
        self._seen: dict[str, np.ndarray] = {}

    def _vec(self, text: str) -> np.ndarray:
        if text not in self._seen:
            self._seen[text] = super()._vec(text)
        return self._seen[text]


def _skill(i: int, words: Sequence[int], revision: int = 0) -> Skill:
    text = " ".join(WORDS[w % len(WORDS)] for w in words)
    return Skill(f"skill-{i}", f"{text.capitalize()} for the user. Revision {revision} of {text}.")


def _from_scratch(d: DenseIndex, skills: Sequence[Skill], fixed: FixedRule) -> cal.DenseCalibration:
    """The calibration as the reference computes it: every skill against every row."""
    off_texts = list(cal.gate_requests())
    off = cal.cached_query_vectors(d, off_texts)
    texts = [t for i in cal.pseudo_sample(skills) for t in cal.pseudo_queries(skills[i])]
    ps = cal.cached_query_vectors(d, texts) if texts else np.zeros((0, off.shape[1]))
    rows, starts = np.asarray(d.parts, dtype=np.float64), d.part_starts

    def parts(vectors: np.ndarray) -> np.ndarray:
        return np.vstack([soft_max_by_skill(r, starts) for r in np.asarray(vectors) @ rows.T])
    return cal.calibrate_dense("m", "k", d.matrix, off, [cal.query_language(t) for t in off_texts], ps,
                               [cal.query_language(t) for t in texts], fixed, parts,
                               ranking_rows=len(cal.offtopic_requests()))


def _assert_same(got: cal.DenseCalibration, want: cal.DenseCalibration) -> None:
    tol = {"rel": 1e-9, "abs": 1e-9}
    assert dict(got.threshold) == pytest.approx(dict(want.threshold), **tol)
    assert set(got.scale) == set(want.scale)
    for lang in want.scale:
        assert got.scale[lang] == pytest.approx(want.scale[lang], **tol)
    for lang in cal.LANGS:
        assert got.report[lang] == pytest.approx(want.report[lang], **tol)
        for field in ("mean", "std", "gate_mean", "gate_std", "part_mean", "part_std"):
            assert getattr(got, field)[lang] == pytest.approx(getattr(want, field)[lang], **tol)
    assert (got.unrelated_mean, got.unrelated_std) == pytest.approx((want.unrelated_mean, want.unrelated_std))


OPS = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete"]), st.integers(0, 10_000),
                         st.lists(st.integers(0, 100), min_size=1, max_size=5)), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, top=st.sampled_from([1, 3, 32]))
def test_an_updated_calibration_equals_one_computed_from_scratch(
        ops: list[tuple[str, int, list[int]]], top: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # a small sample limit so that adds and deletes move who gives pseudo-queries, and short
    # per-row lists so that rows run out and are scored whole again
    monkeypatch.setattr(cal, "MAX_PSEUDO_SKILLS", 12)
    monkeypatch.setattr(gate_state, "TOP", top)
    skills = [_skill(i, [i, i + 3, i * 7]) for i in range(30)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0, catalog_mean=2.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
    assert memo.last[d.query_cache_id] == "full"
    made = 30
    for n, (op, at, words) in enumerate(ops):
        if op == "edit":
            i = at % len(skills)
            skills[i] = _skill(int(skills[i].name.split("-")[1]), words, revision=n + 1)
        elif op == "add":
            skills.insert(at % (len(skills) + 1), _skill(made, words))
            made += 1
        elif len(skills) > 2:
            del skills[at % len(skills)]
        d.build(skills)
        got = gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
        assert memo.last[d.query_cache_id] == "update"
        _assert_same(got, _from_scratch(d, skills, fixed))


def test_a_full_calibration_equals_the_reference_and_is_read_from_the_cache(tmp_path) -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0, catalog_mean=2.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    first = gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo)
    _assert_same(first, _from_scratch(d, skills, fixed))
    again = gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo)
    assert memo.last[d.query_cache_id] == "cache" and again.threshold == pytest.approx(first.threshold)


def test_many_changes_or_another_fixed_rule_calibrate_whole() -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
    other = [_skill(i, [i + 5], revision=1) for i in range(20)]   # every skill rewritten
    d.build(other)
    _assert_same(gate_state.calibrate_index(d, other, None, fixed, "rule", memo),
                 _from_scratch(d, other, fixed))
    assert memo.last[d.query_cache_id] == "full"
    reweighted = FixedRule(d, GateWeights(anchor_mean=2.0), fixed.anchors)
    other[0] = _skill(0, [1, 2], revision=2)
    d.build(other)
    _assert_same(gate_state.calibrate_index(d, other, None, reweighted, "rule-2", memo),
                 _from_scratch(d, other, reweighted))
    assert memo.last[d.query_cache_id] == "full"


def test_a_model_of_another_width_under_the_same_id_calibrates_whole() -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    memo = gate_state.GateMemo()
    for dim in (64, 32):   # no fixed rule: no anchors of the other width to tell them apart
        d = DenseIndex(MemoEmbedder(dim))
        d.build(skills)
        got = gate_state.calibrate_index(d, skills, None, None, "", memo)
        assert memo.last[d.query_cache_id] == "full"
        assert len(got.gate_mean["en"]) == len(skills) and np.isfinite(got.threshold_for("en"))
        skills[0] = _skill(0, [dim, 3], revision=dim)
