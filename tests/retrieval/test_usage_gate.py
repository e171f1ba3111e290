"""Tests of ``hermes_core/retrieval/usage_gate.py``.

The gate's second opinion from past use: its calibration from the history itself (leave-one-out
nearest-past similarities against the off-topic reference's), the weight that follows the
separation of the two, abstention with no, sparse or other-language history, and keep/reject on
a small fixture (a catalog's past requests embedded with the hashing test embedder).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval import usage_gate as G
from hermes_core.retrieval.calibration import calibrated_gate, offtopic_requests
from hermes_core.retrieval.fusion import GateDecision
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.usage import UsageEvent, UsageIndex, UsageLayer, UsageStore
from hermes_core.retrieval.usage_gate import LanguageGate, UsageGate, calibrate_language, weight_for
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder


# ------------------------------------------------------------------ the arithmetic
def test_weight_follows_the_separation_of_on_and_off_topic() -> None:
    assert weight_for(G.MIN_SEPARATION) == 0.0 and weight_for(0.0) == 0.0
    assert weight_for(float("nan")) == 0.0
    assert weight_for(G.FULL_SEPARATION) == G.GATE_WEIGHT and weight_for(10.0) == G.GATE_WEIGHT
    mid = (G.MIN_SEPARATION + G.FULL_SEPARATION) / 2
    assert weight_for(mid, 4.0) == pytest.approx(2.0)


def test_language_calibration_is_midpoint_of_medians_in_pooled_spreads() -> None:
    on = np.array([0.7, 0.8, 0.9] * 4)          # median 0.8, variance 1/150
    off = np.array([0.3, 0.4, 0.5] * 2)         # median 0.4, variance 1/150
    g = calibrate_language(on, off)
    assert g is not None
    spread = np.sqrt((1 / 150 + 1 / 150) / 2)   # pooled
    assert g.neutral == pytest.approx(0.6) and g.spread == pytest.approx(spread)
    assert g.separation == pytest.approx(0.4 / spread) and g.weight == G.GATE_WEIGHT
    assert (g.on_topic, g.reference) == (12, 6)
    assert g.floor == pytest.approx(float(np.quantile(on, G.FLOOR_QUANTILE)))
    # evidence: pooled spreads from the neutral point, clipped both ways; NaN counts as far
    assert g.evidence(g.neutral) == 0.0 and g.evidence(g.neutral + spread) == pytest.approx(1.0)
    assert g.evidence(5.0) == G.MAX_EVIDENCE and g.evidence(-5.0) == -G.MAX_EVIDENCE
    assert g.evidence(float("nan")) == -G.MAX_EVIDENCE


def test_too_little_history_or_reference_calibrates_nothing() -> None:
    assert calibrate_language(np.full(G.MIN_ON_TOPIC - 1, 0.9), np.full(20, 0.1)) is None
    assert calibrate_language(np.full(20, 0.9), np.full(G.MIN_REFERENCE - 1, 0.1)) is None


def test_history_that_does_not_tell_on_from_off_topic_earns_no_weight() -> None:
    rng = np.random.default_rng(3)
    same = rng.normal(0.5, 0.1, 200)
    g = calibrate_language(same[:100], same[100:])
    assert g is not None and g.weight == 0.0
    assert UsageGate({"en": g}).for_language("en") is None


def test_a_language_without_its_own_reference_borrows_the_whole_reference() -> None:
    on = {"en": np.full(20, 0.8) + np.linspace(0, 0.1, 20), "zh": np.full(20, 0.9) + np.linspace(0, 0.05, 20)}
    ref = {"en": np.linspace(0.2, 0.4, 10), "zh": np.array([0.3, 0.35])}   # too few in Chinese
    gate = G.calibrate_usage_gate(on, ref)
    whole = np.concatenate([ref["en"], ref["zh"]])
    assert gate.languages["en"].off_median == pytest.approx(float(np.median(ref["en"])))
    assert gate.languages["zh"].off_median == pytest.approx(float(np.median(whole)))
    assert gate.languages["zh"].reference == 12


def _gate(weight: float = 2.0) -> UsageGate:
    return UsageGate({"en": LanguageGate(neutral=0.6, spread=0.1, weight=weight, on_median=0.8,
                                         off_median=0.4, separation=4.0, on_topic=100, reference=50)})


def test_near_past_use_keeps_a_marginal_request_and_far_from_it_rejects_one() -> None:
    gate = _gate()
    below = calibrated_gate(0.9, 1.0, "dense:m")          # just failed the calibrated gate
    above = calibrated_gate(1.1, 1.0, "dense:m")          # just passed it
    near = gate.apply(below, 0.75, "en")                  # evidence +1.5: score 0.9 + 3.0
    assert near.passed and near.score == pytest.approx(3.9) and near.rule == "dense:m+usage"
    assert near.threshold == 1.0 and near.calibrated
    far = gate.apply(above, 0.45, "en")                   # evidence -1.5: score 1.1 - 3.0
    assert not far.passed and far.score == pytest.approx(-1.9)
    # a clear gate verdict survives the opposite evidence at full weight
    assert gate.apply(calibrated_gate(9.0, 1.0, "dense:m"), 0.0, "en").passed
    assert not gate.apply(calibrated_gate(-8.0, 1.0, "dense:m"), 1.0, "en").passed


def test_the_gate_abstains_where_history_cannot_judge() -> None:
    gate = _gate()
    d = calibrated_gate(1.1, 1.0, "dense:m")
    assert gate.apply(d, None, "en") is d                          # no similarity
    assert gate.apply(d, 0.0, "zh") is d                           # no history in this language
    assert _gate(weight=0.0).apply(d, 0.0, "en") is d              # sparse history: no weight
    fixed = GateDecision(True, 0.3, 0.2, "dense:m")                # a user's fixed threshold
    assert gate.apply(fixed, 0.0, "en") is fixed
    lexical = calibrated_gate(0.5, 0.05, "lexical")                # share, not reference z
    assert gate.apply(lexical, 0.0, "en") is lexical
    assert UsageGate().apply(d, 0.0, "en") is d


# ------------------------------------------------------------------ calibrated from a history
ON_TOPIC = [f"send an email to {who} about the {what}"
            for who in ("Bob", "Alice", "the team", "my landlord", "HR", "the client")
            for what in ("meeting", "invoice", "release", "report")]
ON_TOPIC += [f"what is the weather forecast for {city} {when}"
             for city in ("Paris", "Tokyo", "Berlin", "Rome", "Oslo", "Lima")
             for when in ("tomorrow", "today", "this weekend", "on Monday")]


def _events() -> list[UsageEvent]:
    return [UsageEvent(q, "email-send" if "email" in q else "weather-forecast") for q in ON_TOPIC]


def _history_index(events: list[UsageEvent]) -> UsageIndex:
    emb = HashingEmbedder()
    vecs = emb.embed_documents([e.query for e in events])
    ref = emb.embed_documents(list(offtopic_requests()))
    names = sorted({e.skill for e in events} | {"email-send", "weather-forecast"})
    return UsageIndex(events, names, vecs, reference=ref)


def test_history_index_calibrates_its_gate_and_judges_requests_by_their_nearest_past() -> None:
    idx = _history_index(_events())
    g = idx.gate.for_language("en")
    assert g is not None and g.on_topic == len(ON_TOPIC) and g.separation > G.FULL_SEPARATION
    assert g.reference == sum(1 for t in offtopic_requests() if not any("\u4e00" <= c <= "\u9fff" for c in t))
    emb = HashingEmbedder()
    on = idx.assess("send an email to Carol about the invoice", emb.embed_query(
        "send an email to Carol about the invoice"))
    off = idx.assess("who painted the Mona Lisa", emb.embed_query("who painted the Mona Lisa"))
    assert on.similarity is not None and off.similarity is not None
    assert g.evidence(on.similarity) > 0 > g.evidence(off.similarity)
    marginal = calibrated_gate(1.05, 1.0, "dense:test:hashing")
    assert not off.decide(marginal, "email-send").passed
    assert on.decide(calibrated_gate(0.95, 1.0, "dense:test:hashing"), "email-send").passed


def test_sparse_or_absent_history_leaves_the_gate_alone() -> None:
    sparse = _history_index([UsageEvent(q, "email-send") for q in ON_TOPIC[:5]])
    assert sparse.gate.for_language("en") is None
    d = calibrated_gate(1.05, 1.0, "dense:test:hashing")
    mona = "who painted the Mona Lisa"
    assessed = sparse.assess(mona, HashingEmbedder().embed_query(mona))
    assert assessed.decide(d, "email-send") is d
    # English history does not judge a Chinese request
    idx = _history_index(_events())
    zh = idx.assess("今天晚饭吃什么好", HashingEmbedder().embed_query("今天晚饭吃什么好"))
    assert zh.lang == "zh" and zh.decide(d, "email-send") is d


def test_lexical_history_calibrates_the_gate_without_embeddings() -> None:
    idx = UsageIndex(_events(), ["email-send", "weather-forecast"])
    g = idx.gate.for_language("en")
    assert g is not None and g.on_median > g.off_median


def test_retriever_gate_uses_past_use(tmp_path: Path) -> None:
    layer = UsageLayer(UsageStore(None))
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path, usage=layer)
    before = r.retrieve("send an email to Carol about the invoice")
    assert before.gate is not None and "+usage" not in before.gate.rule      # no history: zero-shot
    for q in ON_TOPIC:
        assert r.record_use(q, "email-send" if "email" in q else "weather-forecast")
    after = r.retrieve("send an email to Carol about the invoice")
    assert after.gate is not None and after.gate.rule.endswith("+usage") and after.gate.passed
    assert after.gate.score > before.gate.score                               # near past use
    off = r.retrieve("who painted the Mona Lisa")
    assert off.gate is not None and off.gate.rule.endswith("+usage") and off.gated


def test_a_reliable_neighbour_vouches_only_when_it_is_near() -> None:
    from hermes_core.retrieval.usage import UsageAssessment, UsageScores
    u = UsageScores(np.array([3.0, 0.0]), 3.0, "weather in Lima", "weather-forecast", 1.0, 1)
    failed = calibrated_gate(-5.0, 1.0, "dense:m")         # far below: the shift alone cannot lift it
    near = UsageAssessment(u, 0.65, "en", _gate())         # evidence +0.5: score -4.0, still short
    assert near.decide(failed, "weather-forecast").rule == "usage"           # vouched for
    assert not near.decide(failed, "git-commit").passed                      # another skill first
    far = UsageAssessment(u, 0.5, "en", _gate())           # below the neutral point
    assert not far.decide(failed, "weather-forecast").passed
    # sparse history (no calibrated language): the reliable neighbour vouches as before
    assert UsageAssessment(u, 0.5, "en", UsageGate()).decide(failed, "weather-forecast").passed


def test_distance_from_history_only_lifts_a_request_for_a_skill_never_used() -> None:
    gate = _gate()
    passed = calibrated_gate(1.1, 1.0, "dense:m")
    far = gate.apply(passed, 0.45, "en", penalise=False)       # evidence -1.5, not counted
    assert far.passed and far.score == pytest.approx(1.1)
    near = gate.apply(calibrated_gate(0.9, 1.0, "dense:m"), 0.75, "en", penalise=False)
    assert near.passed and near.score == pytest.approx(3.9)


def test_a_home_that_used_one_skill_still_serves_the_others(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path,
                       usage=UsageLayer(UsageStore(None)))
    query = "temperature and wind forecast for the city"
    before = r.retrieve(query)
    for q in ON_TOPIC[:24]:                                    # email requests only
        assert r.record_use(q, "email-send")
    after = r.retrieve(query)
    # far from every past request: the email history neither votes in the ranking (its neighbours
    # are below the neutral point) nor counts against a skill it never saw
    assert after.candidates[:3] == before.candidates[:3] and after.candidates[0] == "weather-forecast"
    assert after.usage is None and "usage" not in after.answered
    assert after.gate is not None and before.gate is not None
    assert after.gate.rule.endswith("+usage") and after.gate.score == pytest.approx(before.gate.score)
    assert not after.gated and not before.gated
