"""Tests of ``hermes_core/retrieval/dense_gate.py``.

One model's calibrated gate verdict on a text: the same arithmetic whichever opinion asks (the
request, the other model's say over skills the first cannot read, the translation), on the
hashing embedder of ``hermes_core.testing`` over the sample skills.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval.dense_gate import GateModel, either, fixed_rule
from hermes_core.retrieval.fusion import GateDecision, GateEvidence, gate
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.types import Skill

REQUESTS = ["send an email to my manager", "what is the weather tomorrow", "tell me a joke"]


@pytest.fixture
def judge(tmp_path: Path) -> GateModel:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    r.refresh()
    m = r._gate_model(r.dense[0])
    assert m is not None
    return m


def _passing(judge: GateModel, text: str) -> GateModel:
    """``judge`` with its thresholds set just under ``text``'s score (which is positive)."""
    d = judge.decide(text, "en")
    assert d.score > 0, d
    th = {k: d.score - 0.01 for k in judge.calibration.threshold}
    return dataclasses.replace(judge, calibration=dataclasses.replace(judge.calibration, threshold=th))


@pytest.mark.parametrize("text", REQUESTS)
def test_the_fixed_rule_scores_a_text_as_the_per_turn_gate_does(judge: GateModel, text: str) -> None:
    # the calibration puts fixed_rule on the catalog's scale; the first opinion reads fusion.gate
    d, v = judge.index, judge.index.query_vector(text)
    sims = np.asarray(d.matrix, dtype=np.float64) @ v
    a = np.asarray(judge.anchors, dtype=np.float64) @ v
    per_turn = gate(GateEvidence(float(sims.max()), float(a.max()), d.embedder.model_id, 0.0, False,
                                 float(a.mean()), float(sims.mean())), {}, weights={d.embedder.model_id:
                                                                                   judge.weights})
    assert fixed_rule(d, judge.weights, judge.anchors)(v[None, :])[0] == pytest.approx(per_turn.score)
    assert judge.fixed(text) == pytest.approx(per_turn.score)


@pytest.mark.parametrize("text", REQUESTS)
def test_a_decision_is_the_calibrated_score_against_the_languages_threshold(
        judge: GateModel, text: str) -> None:
    cal = judge.calibration
    sims = judge.index.similarities(text)
    want = cal.gate_score(sims, "en", judge.fixed(text) if cal.scale else None)
    d = judge.decide(text, "en")
    assert (d.score, d.threshold, d.rule, d.calibrated) == (
        pytest.approx(want), cal.threshold_for("en"), "dense:test:hashing", True)
    assert d.passed == (want >= cal.threshold_for("en") and want > 0)
    # what the caller already holds is read, not recomputed
    assert cal.scale
    given = judge.decide(text, "en", sims=sims, fixed=judge.fixed(text) + 1.0)
    assert given.score > d.score


def test_the_other_models_verdict_passes_only_when_its_best_skill_is_one_the_first_cannot_read(
        judge: GateModel) -> None:
    text = "send an email to my manager"
    m = _passing(judge, text)
    best = int(np.argmax(m.calibration.gate_z(m.index.similarities(text), "en")))
    mask = np.zeros(len(SAMPLE_SKILLS), dtype=bool)
    assert m.decide(text, "en").passed
    assert not m.decide(text, "en", only=mask).passed           # its best skill is read by the first
    mask[best] = True
    assert m.decide(text, "en", only=mask).passed


def test_a_score_at_or_below_zero_never_passes_whoever_asks(judge: GateModel) -> None:
    # a calibrated threshold at or below 0 (the reference's median above the pseudo-queries) lets
    # no request through on a score of 0 or less: the same rule for the serving model and for the
    # other model speaking for the skills the first cannot read
    text = "tell me a joke"
    low = {k: -1e9 for k in judge.calibration.threshold}
    m = dataclasses.replace(judge, calibration=dataclasses.replace(judge.calibration, threshold=low))
    sims = m.index.similarities(text)
    every = np.ones(len(SAMPLE_SKILLS), dtype=bool)
    assert m.calibration.scale   # the fixed-rule score moves the gate score
    for fixed, positive in ((-50.0, False), (50.0, True)):
        d = m.decide(text, "en", sims=sims, fixed=fixed)
        assert (d.score > 0) == positive and d.passed == positive, d
        assert m.decide(text, "en", sims=sims, fixed=fixed, only=every).passed == (d.score > 0)


A = GateDecision(False, 1.0, 3.0, "dense:a", True)
A_PASSED = GateDecision(True, 4.0, 3.0, "dense:a", True)
B = GateDecision(True, 9.0, 4.0, "dense:b", True)
B_REJECTED = GateDecision(False, 2.0, 4.0, "dense:b", True)


@pytest.mark.parametrize(("own", "other", "want"), [
    (A, None, A), (A, B, B), (A, B_REJECTED, A),
    (A_PASSED, B, A_PASSED),          # the serving model's pass stands, whatever the other's margin
])
def test_the_requests_verdict_is_the_other_models_only_when_the_serving_model_rejects(
        own: GateDecision, other: GateDecision | None, want: GateDecision) -> None:
    assert either(own, other) is want

MIXED = [*SAMPLE_SKILLS, Skill("weather-zh", "查询城市的天气预报和气温"),
         Skill("mail-zh", "给联系人发送电子邮件")]


def test_the_other_model_judges_the_request_as_written_as_the_serving_model_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the layers rank a request without the clause saying where a detail came from; the gate
    # judges it as written, and so must the model speaking for the skills the first cannot read
    from hermes_core.retrieval.query import without_source_clauses
    r = SkillRetriever(skills=MIXED, embedders=[HashingEmbedder("test:en", english_only=True),
                                                HashingEmbedder("test:all")], cache_dir=tmp_path)
    r.refresh()
    seen: list[tuple[str, str]] = []
    decide = GateModel.decide

    def spy(self: GateModel, text: str, lang: str, **kw: object) -> GateDecision:
        seen.append((self.rule, text))
        return decide(self, text, lang, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(GateModel, "decide", spy)
    query = "what is the weather in the city mentioned in the email"
    assert without_source_clauses(query) != query
    r.retrieve(query)
    assert {rule for rule, _ in seen} == {"dense:test:en", "dense:test:all"}, seen
    assert {text for _, text in seen} == {query}, seen
