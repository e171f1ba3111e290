"""Offline evaluation: Recall@k, MRR@10, gate keep/reject rates, latency.

Recall and MRR are measured on the ranking before the gate (so they say how good the ranking is);
the gate is measured separately: keep rate = share of on-topic queries it lets through, reject rate
= share of off-topic queries (``gold: null``) it stops. ``recall@5_gated`` counts a gated on-topic
query as a miss, i.e. what the model actually sees. ``hint_recall`` and ``hint_len_mean`` measure the
hint list before the gate (the top-k after the closeness cut): how often it holds the gold skill, and
how many skills it lists.

:func:`evaluate_layers` ranks the same queries by each layer alone (the others' fusion weights set
to 0), so one run gives the per-layer rows beside the fused one.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core.errors import ConfigError
from hermes_core.jsonl import read_jsonl
from hermes_core.retrieval.retriever import SkillRetriever

DEFAULT_SEED = 7
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LabeledQuery:
    query: str
    gold: str | None


def load_queries(path: str | Path) -> list[LabeledQuery]:
    """``{"query": ..., "gold": name-or-null}`` per line; a bad line raises naming file and line."""
    p = Path(path)
    out = []
    for n, d in read_jsonl(p, what="queries"):
        if not isinstance(d, dict) or not isinstance(d.get("query"), str):
            raise ConfigError("expected an object with a string 'query'", file=str(p), line=n)
        gold = d.get("gold")
        if gold is not None and not isinstance(gold, str):
            raise ConfigError("'gold' must be a skill name or null", file=str(p), line=n)
        out.append(LabeledQuery(d["query"], gold))
    return out


def sample(items: Sequence[LabeledQuery], limit: int | None, seed: int = DEFAULT_SEED) -> list[LabeledQuery]:
    """A fixed-seed sample of ``limit`` items (all of them when limit is None or larger)."""
    if limit is None or limit >= len(items):
        return list(items)
    return random.Random(seed).sample(list(items), limit)


def recall_at(ranking: Sequence[str], gold: str, k: int) -> float:
    return 1.0 if gold in ranking[:k] else 0.0


def reciprocal_rank(ranking: Sequence[str], gold: str, k: int = 10) -> float:
    for i, name in enumerate(ranking[:k], start=1):
        if name == gold:
            return 1.0 / i
    return 0.0


def evaluate(retriever: SkillRetriever, queries: Sequence[LabeledQuery],
             negatives: Sequence[LabeledQuery] = ()) -> dict[str, Any]:
    """Run every query through ``retriever.retrieve`` and summarise."""
    retriever.ensure_built()
    r1 = r5 = mrr = kept = r5g = hint_hit = hint_len = 0.0
    latencies: list[float] = []
    answered: Counter[str] = Counter()
    pos_gate: dict[str, list[float]] = {}
    neg_gate: dict[str, list[float]] = {}
    deciding: Counter[str] = Counter()
    positives = [q for q in queries if q.gold is not None]
    known = {s.name for s in retriever.skills}
    unknown = sorted({q.gold for q in positives if q.gold not in known}, key=str)
    unknown_count = sum(1 for q in positives if q.gold not in known)
    if unknown_count:  # every one is a miss: say why, or recall reads as a retriever failure
        log.warning("%d of %d queries name a gold skill the catalog does not have (e.g. %s)",
                    unknown_count, len(positives), ", ".join(map(str, unknown[:5])))
    for q in positives:
        res = retriever.retrieve(q.query)
        latencies.append(res.timings_ms.get("total", 0.0))
        ranking = res.candidates if res.layer != "L1" else res.names
        gold = q.gold or ""
        r1 += recall_at(ranking, gold, 1)
        r5 += recall_at(ranking, gold, 5)
        mrr += reciprocal_rank(ranking, gold, 10)
        kept += 0.0 if res.gated else 1.0
        r5g += recall_at(res.names, gold, 5)
        hint = list(res.contributions) if res.layer != "L1" else list(res.names)
        hint_hit += 1.0 if gold in hint else 0.0
        hint_len += len(hint)
        answered.update(res.answered)
        deciding[res.layer] += 1
        if res.gate is not None:
            pos_gate.setdefault(res.gate.rule, []).append(res.gate.score)
    rejected = 0.0
    negs = [q for q in negatives if q.gold is None] + [q for q in queries if q.gold is None]
    for q in negs:
        res = retriever.retrieve(q.query)
        latencies.append(res.timings_ms.get("total", 0.0))
        rejected += 1.0 if (res.gated or not res.skills) else 0.0
        if res.gate is not None:
            neg_gate.setdefault(res.gate.rule, []).append(res.gate.score)
    lat = np.asarray(latencies) if latencies else np.zeros(1)

    def rate(total: float, digits: int = 4) -> float | None:
        # no on-topic queries: no rate (0.0 would read as "missed every query")
        return round(total / len(positives), digits) if positives else None

    return {
        "queries": len(positives),
        "negatives": len(negs),
        "unknown_gold": unknown_count,
        "recall@1": rate(r1),
        "recall@5": rate(r5),
        "mrr@10": rate(mrr),
        "recall@5_gated": rate(r5g),
        "hint_recall": rate(hint_hit),
        "hint_len_mean": rate(hint_len, 3),
        "gate_keep_rate": rate(kept),
        "gate_reject_rate": round(rejected / len(negs), 4) if negs else None,
        "latency_ms_p50": round(float(np.percentile(lat, 50)), 3),
        "latency_ms_p95": round(float(np.percentile(lat, 95)), 3),
        "layers": list(retriever.layers),
        "answered": dict(sorted(answered.items())),
        "deciding_layer": dict(sorted(deciding.items())),
        "skills": len(retriever.skills),
        "fusion": retriever.fusion,
        "gate_calibration": calibrate(pos_gate, neg_gate),
    }


def calibrate(pos: dict[str, list[float]], neg: dict[str, list[float]],
              keep: float = 0.95) -> dict[str, dict[str, float | int | None]]:
    """Per gate rule: the threshold that keeps ``keep`` of on-topic queries, and the share of
    off-topic ones it would reject. This is how the default thresholds were chosen (on dev data)."""
    out: dict[str, dict[str, float | int | None]] = {}
    for rule, scores in sorted(pos.items()):
        th = float(np.quantile(np.asarray(scores), 1.0 - keep))
        ns = neg.get(rule, [])
        out[rule] = {"threshold_at_95_keep": round(th, 4), "on_topic": len(scores), "off_topic": len(ns),
                     "reject_at_95_keep": round(float(np.mean(np.asarray(ns) < th)), 4) if ns else None}
    return out


#: the fusion names of the layers :func:`evaluate_layers` can rank by alone, and the layer each
#: needs switched on (the usage layer reads the dense layer's query vector, so L4 stays on for it)
SINGLE_LAYERS = {"bm25": ("L2",), "synonyms": ("L3",), "dense": ("L4",), "usage": ("L4", "L6")}


def evaluate_layers(retriever: SkillRetriever, queries: Sequence[LabeledQuery]) -> dict[str, Any]:
    """Recall@1, Recall@5 and MRR@10 of each layer alone, for the layers the retriever has switched
    on (fusion weight 1 for that layer, 0 for the others, so the ranking is that layer's own).
    A layer that never answered (synonyms on a catalog without any, the usage layer without history)
    is left out; ``answered`` says on how many queries the layer did answer (a query it abstained on
    counts as a miss). The retriever's layers and weights are put back afterwards."""
    retriever.ensure_built()
    positives = [q for q in queries if q.gold is not None]
    saved_layers, saved_weights = retriever.layers, retriever.weights
    out: dict[str, Any] = {}
    try:
        for name, needs in SINGLE_LAYERS.items():
            if needs[-1] not in saved_layers or (name == "usage" and retriever.usage is None):
                continue
            retriever.layers = needs
            retriever.weights = {k: (1.0 if k == name else 0.0) for k in saved_weights}
            r1 = r5 = mrr = answered = 0.0
            for q in positives:
                res = retriever.retrieve(q.query)
                if name not in res.answered:
                    continue
                answered += 1
                gold = q.gold or ""
                r1 += recall_at(res.candidates, gold, 1)
                r5 += recall_at(res.candidates, gold, 5)
                mrr += reciprocal_rank(res.candidates, gold, 10)
            if answered and positives:
                n = len(positives)
                out[name] = {"recall@1": round(r1 / n, 4), "recall@5": round(r5 / n, 4),
                             "mrr@10": round(mrr / n, 4), "answered": int(answered)}
    finally:
        retriever.layers, retriever.weights = saved_layers, saved_weights
    return out


def replay_usage(retriever: SkillRetriever, usage: Sequence[LabeledQuery]) -> int:
    """Record each labelled query as a past use of its gold skill, as if it had been served (a
    trigger hit or a ``skill_view`` after a hint). Queries whose gold is null or unknown are skipped.
    Returns how many were recorded."""
    retriever.ensure_built()
    if retriever.usage is None:
        raise ConfigError("this retriever has no usage store to replay into")
    return sum(1 for q in usage if q.gold is not None and retriever.record_use(q.query, q.gold, "replay"))


def evaluate_with_usage(retriever: SkillRetriever, queries: Sequence[LabeledQuery],
                        negatives: Sequence[LabeledQuery], usage: Sequence[LabeledQuery], *,
                        per_layer: bool = False) -> dict[str, Any]:
    """Zero-shot and with ``usage`` replayed as past use, side by side, on the same queries.

    The replay goes to an in-memory store (nothing is written to the home), and the retriever's own
    store is put back afterwards. Queries that also appear in ``usage`` are evaluated all the same:
    split the data so that they do not (the dev files' halves are for that). ``per_layer`` adds
    each side's :func:`evaluate_layers` rows as its ``per_layer``.
    """
    from hermes_core.retrieval.usage import UsageLayer
    from hermes_core.retrieval.usage_store import DEFAULT_CAP, UsageStore
    saved = retriever.usage
    try:
        retriever.usage = None
        zero = evaluate(retriever, queries, negatives)
        if per_layer:
            zero["per_layer"] = evaluate_layers(retriever, queries)
        # the whole file is the history asked for: the home's cap does not apply to a replay
        layer = retriever.usage = UsageLayer(UsageStore(None, cap=max(DEFAULT_CAP, len(usage))))
        recorded = replay_usage(retriever, usage)
        used = evaluate(retriever, queries, negatives)
        if per_layer:
            used["per_layer"] = evaluate_layers(retriever, queries)
    finally:
        retriever.usage = saved
    overlap = len({q.query for q in queries} & {q.query for q in usage})
    return {"zero_shot": zero, "with_usage": used, "usage_events": recorded,
            "usage_overlap": overlap, "usage_gate": layer.gate_report()}
