"""Learning from use: (query, skill) events in SQLite, and the sixth layer that reads them.

What was actually used says more about a catalog than its descriptions do: a trigger that fired, a
``skill_view(name)`` the model made after a hint, an author's ``agent.feedback(skill, good=...)``.
Each is stored as one event (the query redacted, capped in count, pruned when its skill changes or
goes away) in ``<home>/usage.sqlite3``.

The usage layer scores every skill from the past queries nearest to this one:

* **kNN with label votes** (when an embedder serves the query): each of the ``k`` most similar past
  queries votes for its skill, +1 if it was a good use and -1 if an author marked it bad, weighted by
  how often a past query that close named the right skill (below).
* **BM25 over past queries** (without embeddings): the same votes, with each past query a BM25
  document and the lexical share (score over what the query's words could score) as similarity.

How much a neighbour is worth is measured on the history itself when the index is built: for a
sample of past queries, the nearest *other* past query, its cosine, and whether it was for the same
skill (leave-one-out). That gives the precision of "the nearest past query names the skill" as a
function of cosine (:class:`Reliability`), for this catalog, this model and this much history. With
little history per skill (fewer past queries than skills) the precision is low and the layer weighs
little; with dense history a close neighbour weighs a lot. The layer abstains (None) with no
history or when the neighbours' precision is no better than ``MIN_PRECISION``.

The same history gives the confidence gate a second opinion (usage_gate.py): how near the query is
to past use, against how near the shipped off-topic requests come to it.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core.forked import renew_in_child
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
from hermes_core.retrieval.calibration import offtopic_requests, query_language
from hermes_core.retrieval.fusion import GateDecision
from hermes_core.retrieval.usage_gate import UsageGate, calibrate_usage_gate
from hermes_core.retrieval.usage_nearest import Nearest, carried, digest, measure, sample, similarities
from hermes_core.retrieval.usage_reliability import (  # noqa: F401  (re-exported)
    LEXICAL_LOO_SAMPLE,
    LOO_SAMPLE,
    MIN_PRECISION,
    PROTOTYPE_MIN_EVENTS,
    PROTOTYPE_WEIGHT,
    RELIABILITY_BINS,
    Reliability,
    leave_one_out,
    measure_reliability,
    prototypes,
    reliability_from,
)
from hermes_core.retrieval.usage_store import (  # noqa: F401  (re-exported)
    DEFAULT_CAP,
    EVENT_KINDS,
    MAX_QUERY_CHARS,
    SCHEMA,
    USAGE_FILE,
    USAGE_SCHEMA_VERSION,
    UsageEvent,
    UsageStore,
    rescrub_old_query,
)
from hermes_core.types import Skill

log = logging.getLogger(__name__)

KNN_K = 10
# Fusion weight of the usage layer at full evidence (the dense layer weighs 0.8, BM25 0.2), and the
# neighbour precision below which it earns nothing. Tuning halves (MetaTool: 4,551 past queries for
# 199 skills; HammerBench-zh: 219 for 911), Recall@5: MIN_PRECISION 0.25 / weight 2.5 -> MetaTool
# 0.78 -> ~0.915 but HammerBench 0.868 -> 0.864 (R@1 -0.014; without embeddings R@1 0.60 -> 0.55);
# 0.4 / 2.5 -> 0.913 and HammerBench unchanged (the layer abstains); 0.4 / 3.5 -> 0.920; 0.5 / 2.5
# -> 0.890.
USAGE_WEIGHT = 3.0
USAGE_SCALE = 3.0   # the best-voted skill's score, in z units (a clear dense winner scores 3-5)
# The gate lets a query through when its nearest past query, for the skill now ranked first, is
# this reliable (measured precision, see Reliability).
USAGE_GATE_PRECISION = 0.9
# A rebuild of the usage index that took longer than this, of a history of at least this many
# events, runs beside the next turns (UsageLayer); a smaller history is always rebuilt in the turn,
# so a new user's first lessons (and a test's) count at once whatever a cold start cost
INLINE_REBUILD_S = 0.25
BACKGROUND_MIN_EVENTS = 1_000


# A past message's name in the lexical index: its key in base 5, written with the invisible
# format characters U+2060-U+2064, which the tokenizer drops. BM25 indexes a skill's name with its
# description, and "event-12" made every past message match "event" and "12" (and the bonus for
# any word inside the name), so a request saying either met messages nobody had asked.
_NAME_DIGITS = "\u2060\u2061\u2062\u2063\u2064"


def document_name(key: int) -> str:
    """A name unique to ``key`` (>= 0) that has no word in it."""
    digits = ""
    while True:
        key, d = divmod(key, len(_NAME_DIGITS))
        digits = _NAME_DIGITS[d] + digits
        if not key:
            return digits


@dataclass(frozen=True, slots=True)
class UsageScores:
    """The layer's answer for one query: per-skill scores (catalog order), the fusion weight its
    evidence earns, and what it was based on (shown by ``--explain``)."""

    scores: np.ndarray
    weight: float
    nearest: str | None
    nearest_skill: str | None
    precision: float          # how often a past query this close named the right skill
    neighbours: int           # neighbours that voted


@dataclass(frozen=True, slots=True)
class UsageAssessment:
    """Everything the history says about one query: the layer's ranking scores (None when it
    abstains from ranking), the similarity of the nearest good past query, and the gate that
    similarity is judged by (see usage_gate.py)."""

    scores: UsageScores | None
    similarity: float | None
    lang: str
    gate: UsageGate
    used: frozenset[str] = frozenset()     # skills with at least one good past use

    def decide(self, decision: GateDecision, top: str | None) -> GateDecision:
        """The gate's verdict with history: moved by the nearest past query's similarity (when
        the history of this language earned a weight), and kept when a near-copy of a past
        request for the skill now ranked ``top`` vouches for it. A neighbour further away than
        the neutral point vouches for nothing, however reliable its cosine bin: the reliability
        curve is measured on on-topic neighbours and says nothing below them. Distance from past
        use counts against a request only when the skill ranked ``top`` has been used: a request
        for a skill never used before is far from the history by nature."""
        out = self.gate.apply(decision, self.similarity, self.lang, penalise=top in self.used)
        u = self.scores
        g = self.gate.for_language(self.lang)
        near = g is None or (self.similarity is not None and g.evidence(self.similarity) >= 0)
        if (u is not None and not out.passed and u.precision >= USAGE_GATE_PRECISION and near
                and top is not None and u.nearest_skill == top):
            out = GateDecision(True, u.precision, USAGE_GATE_PRECISION, "usage")
        return out


def usage_weight(precision: float, full: float = USAGE_WEIGHT) -> float:
    """The fusion weight a neighbour of this measured precision earns: nothing at MIN_PRECISION
    or below, ``full`` at precision 1, linear between."""
    if not np.isfinite(precision) or precision <= MIN_PRECISION:
        return 0.0
    return full * min(1.0, (precision - MIN_PRECISION) / (1.0 - MIN_PRECISION))


class UsageIndex:
    """Past queries of the current catalog; scores a query in O(events).

    Similarity between two queries is their cosine when the past queries were embedded, else the
    BM25 share (what the query's words score on a past query over what they could score). Either
    way the neighbours vote through the same measured :class:`Reliability`.
    """

    def __init__(self, events: Sequence[UsageEvent], names: Sequence[str],
                 vectors: np.ndarray | None = None, *, unrelated_mean: float = 0.0,
                 unrelated_std: float = 1.0, k: int = KNN_K, full_weight: float = USAGE_WEIGHT,
                 reference: np.ndarray | None = None, previous: UsageIndex | None = None,
                 sample: int | None = None) -> None:
        """``reference``: the off-topic reference requests (``offtopic_requests()``, in order)
        embedded by the model of ``vectors``; without vectors they are scored lexically.
        ``previous``: the lexical index of an earlier history of the same store, which this one
        is updated from (usage_nearest.py) with the same result as a build from scratch;
        ``sample``: how many good past messages the leave-one-out measures (by default
        ``LOO_SAMPLE`` with vectors, ``LEXICAL_LOO_SAMPLE`` without: a lexical history up to that
        size is measured whole, not by a pick that moves what it learns)."""
        pos = {n: i for i, n in enumerate(names)}
        # a (message, skill) counts once, with its latest verdict: copies (a history written before
        # the store merged repeats) filled all k neighbours of their message and, each the others'
        # nearest neighbour at cosine 1, raised the measured precision with no new evidence
        last = {(e.query, e.skill): i for i, e in enumerate(events) if e.skill in pos}
        keep = sorted(last.values())
        self.events = [events[i] for i in keep]
        self.names = list(names)
        self._skill_idx = np.fromiter((pos[e.skill] for e in self.events), np.int64, len(self.events))
        self._sign = np.fromiter((1.0 if e.good else -1.0 for e in self.events), np.float64,
                                 len(self.events))
        self.vectors = (np.asarray(vectors, dtype=np.float32)[keep] if vectors is not None and len(keep)
                        else None)
        self.unrelated_mean = unrelated_mean
        self.unrelated_std = max(unrelated_std, 1e-6)
        self.k = k
        self.full_weight = full_weight
        self.sample = sample if sample is not None else (
            LOO_SAMPLE if self.vectors is not None else LEXICAL_LOO_SAMPLE)
        self._langs = [query_language(e.query) for e in self.events]
        self.used = frozenset(e.skill for e in self.events if e.good)
        self._good = self._sign > 0
        self._has_good = bool(self._good.any())
        # without vectors: one BM25 document per past query, keyed by its event id when the
        # events come from a store (ids rising), so the next history's index is an update of this
        # one and its leave-one-out is carried (usage_nearest.py)
        n = len(self.events)
        ids = np.fromiter((e.id for e in self.events), np.int64, n)
        self._stable = not n or bool(ids[0] > 0 and np.all(np.diff(ids) > 0))
        self._keys = ids if self._stable else np.arange(n, dtype=np.int64)   # an event's key
        self._pos = {int(key): i for i, key in enumerate(self._keys.tolist())}
        self._near: dict[int, Nearest] = {}
        self._ref_near: list[Nearest] = []
        self._fresh = np.zeros(0, dtype=np.int64)
        self._idf_moved: dict[str, float] = {}   # from the index carried from (usage_nearest.carried)
        self.measured = 0       # requests measured whole by this build (the rest were carried)
        self._lex: BM25Index | None = None
        self._docs: list[Skill] = []
        self._digests = np.zeros(0, dtype=np.uint64)
        self._was: list[int] = []   # each event's position in the index carried from, or -1
        prev = self._carrying(previous)
        if self.vectors is None:
            # a kept event's document is the same Skill object (the update carries it by identity)
            for key, e, j in zip(self._keys.tolist(), self.events, self._was or [-1] * n, strict=True):
                self._docs.append(Skill(document_name(key), e.query) if prev is None or j < 0
                                  else prev._docs[j])
            self._lex = (prev._lex.updated(self._docs) if prev is not None and prev._lex is not None
                         else BM25Index(self._docs))
            self._digests = np.fromiter(
                (digest(e.query, e.skill) if prev is None or j < 0 else int(prev._digests[j])
                 for e, j in zip(self.events, self._was or [-1] * n, strict=True)), np.uint64, n)
        pick, best, hit = self._leave_one_out(prev)
        self.reliability = (reliability_from(best, hit, RELIABILITY_BINS)
                            if len(pick) >= 2 * RELIABILITY_BINS else Reliability())
        self.gate = self._calibrate_gate(pick, best, reference, prev)
        self._protos: np.ndarray | None = None
        self.prototype_accuracy = 0.0
        self.prototype_weight = 0.0
        if self.vectors is not None and self._has_good:
            protos, has, acc = prototypes(self.vectors, self._skill_idx, self._good, len(self.names))
            self.prototype_accuracy = acc
            self.prototype_weight = usage_weight(acc, PROTOTYPE_WEIGHT)
            if self.prototype_weight > 0:
                self._protos, self._proto_has = protos.astype(np.float32), has

    def __len__(self) -> int:
        return len(self.events)

    def _carrying(self, previous: UsageIndex | None) -> UsageIndex | None:
        """``previous`` when this index can be updated from it: both lexical and named by event
        id, and every event new since it after every event kept (the store's ids rise)."""
        if (previous is None or self.vectors is not None or previous._lex is None
                or not (self._stable and previous._stable)):
            return None
        at, was = previous._pos, previous.events
        self._was = [j if (j := at.get(e.id, -1)) >= 0 and was[j] == e else -1 for e in self.events]
        self._fresh = np.flatnonzero(np.asarray(self._was, dtype=np.int64) < 0)
        if len(self._fresh) and self._fresh[0] != len(self.events) - len(self._fresh):
            self._was = []
            return None
        return previous

    def _nearest(self, prev: UsageIndex | None, before: Nearest | None, tokens: Sequence[str],
                 candidates: np.ndarray, own: int = -1) -> Nearest:
        """``tokens``' nearest candidate: carried from ``before`` (on ``prev``) when it can be,
        else measured whole."""
        assert self._lex is not None
        if prev is not None and before is not None and prev._lex is not None:
            fresh = self._fresh[candidates[self._fresh]] if len(self._fresh) else self._fresh
            got = carried(before, prev._lex, self._lex, candidates, self._keys, self._pos, fresh,
                          self._idf_moved, own)
            if got is not None:
                return got
        self.measured += 1
        return measure(self._lex, tokens, candidates, self._keys, own)

    def _leave_one_out(self, prev: UsageIndex | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sampled good past queries, their nearest other good past query's similarity, and
        whether it named the same skill."""
        good = self._sign > 0
        if self.vectors is not None:
            return leave_one_out(self.vectors, self._skill_idx, good, self.sample)
        idx = np.flatnonzero(good)
        if len(idx) < 2:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        pick = sample(self._digests, good, self.sample)
        best, hit = [], []
        for i in pick.tolist():
            e, key = self.events[i], int(self._keys[i])
            before = prev._near.get(key) if prev is not None and self._was[i] >= 0 else None
            near = self._nearest(prev, before, before.tokens if before else bm25_tokens(e.query), good, i)
            self._near[key] = near
            best.append(near.similarity)
            hit.append(float(self._skill_idx[self._pos[near.key]] == self._skill_idx[i]))
        return pick, np.asarray(best), np.asarray(hit)

    def _calibrate_gate(self, pick: np.ndarray, best: np.ndarray, reference: np.ndarray | None,
                        prev: UsageIndex | None = None) -> UsageGate:
        """The usage gate (usage_gate.py): past queries' leave-one-out similarities per language
        against the off-topic reference's nearest-past similarities."""
        if not len(pick):
            return UsageGate()
        on: dict[str, list[float]] = {}
        for i, b in zip(pick, best, strict=True):
            on.setdefault(self._langs[int(i)], []).append(float(b))
        texts = offtopic_requests()
        good = self._sign > 0
        if self.vectors is not None:
            if reference is None or len(reference) != len(texts):
                return UsageGate()
            ref_sims = np.asarray(np.asarray(reference, dtype=np.float32) @ self.vectors[good].T,
                                  dtype=np.float64).max(axis=1)
        else:
            before = prev._ref_near if prev is not None and len(prev._ref_near) == len(texts) else []
            self._ref_near = [self._nearest(prev, before[n] if before else None,
                                            before[n].tokens if before else bm25_tokens(t), good)
                              for n, t in enumerate(texts)]
            ref_sims = np.array([r.similarity for r in self._ref_near])
        off: dict[str, list[float]] = {}
        for text, s in zip(texts, ref_sims, strict=True):
            off.setdefault(query_language(text), []).append(float(s))
        return calibrate_usage_gate({k: np.asarray(v) for k, v in on.items()},
                                    {k: np.asarray(v) for k, v in off.items()})

    def _similarities(self, query: str, vector: np.ndarray | None = None) -> np.ndarray:
        if self.vectors is not None and vector is not None:
            return np.asarray(self.vectors @ np.asarray(vector, dtype=np.float32), dtype=np.float64)
        if self._lex is None:
            return np.zeros(len(self.events))
        return similarities(self._lex, bm25_tokens(query))

    def score(self, query: str, vector: np.ndarray | None = None) -> UsageScores | None:
        """Scores for ``query`` (``vector``: its embedding by the same model as the past queries;
        None with a lexical index), or None to abstain (no history, or nothing reliable)."""
        return self.assess(query, vector).scores

    def assess(self, query: str, vector: np.ndarray | None = None) -> UsageAssessment:
        """The ranking scores (see :meth:`score`) and the gate's evidence for ``query``: the
        similarity of its nearest good past query."""
        lang = query_language(query)
        if not self.events or (self.vectors is not None and vector is None):
            return UsageAssessment(None, None, lang, self.gate, self.used)
        sims = self._similarities(query, vector)
        nearest = float(sims[self._good].max()) if self._has_good else None
        g = self.gate.for_language(lang)
        floor = g.floor if g is not None else -np.inf
        votes = self._votes(sims, floor)
        if self._protos is not None and vector is not None and nearest is not None and nearest >= floor:
            votes = self._with_prototypes(votes, sims, np.asarray(vector, dtype=np.float32))
        return UsageAssessment(votes, nearest, lang, self.gate, self.used)

    def _with_prototypes(self, votes: UsageScores | None, sims: np.ndarray,
                         vector: np.ndarray) -> UsageScores | None:
        """The kNN votes plus the prototypes' lift: the query's cosine to each prototype as a z
        over the skills that have one, only its positive part (a skill never used, or used less
        like this, is not pushed down), weighted by the measured prototype accuracy."""
        assert self._protos is not None
        ps = np.asarray(self._protos @ vector, dtype=np.float64)[self._proto_has]
        sd = float(ps.std())
        lift = np.zeros(len(self.names))
        if sd > 1e-12:
            lift[self._proto_has] = np.clip((ps - float(ps.mean())) / sd, 0.0, None)
        if votes is None:
            if not lift.any():
                return None
            j0 = int(np.argmax(sims))
            return UsageScores(lift, self.prototype_weight, self.events[j0].query, self.events[j0].skill,
                               float(self.reliability.at(float(sims[j0]))), 0)
        return UsageScores(votes.scores + (self.prototype_weight / votes.weight) * lift, votes.weight,
                           votes.nearest, votes.nearest_skill, votes.precision, votes.neighbours)

    def _votes(self, sims: np.ndarray, floor: float = -np.inf) -> UsageScores | None:
        """The k nearest past queries' votes. A neighbour below ``floor`` (the usage gate's
        floor: nearer than almost every past query's own nearest neighbour) votes nothing: the
        reliability curve was measured between past queries, and a request that far from every
        one of them (off-topic, or for a skill never used) is not like them."""
        top = np.argsort(-sims, kind="stable")[: self.k]
        j0 = int(top[0])
        if not sims[j0] > 0:
            return None
        prec = np.array([self.reliability.at(float(sims[j])) if sims[j] >= floor else 0.0 for j in top])
        votes = np.clip(prec - MIN_PRECISION, 0.0, None) * self._sign[top]
        scores = np.zeros(len(self.names))
        np.add.at(scores, self._skill_idx[top], votes)
        weight = usage_weight(float(prec[0]), self.full_weight)
        if weight <= 0.0 or not np.any(scores > 0):
            return None
        # on the z scale of the other layers (fusion does not standardise this one): the best-voted
        # skill stands USAGE_SCALE above the rest
        scores = USAGE_SCALE * np.clip(scores, 0.0, None) / float(scores.max())
        return UsageScores(scores, weight, self.events[j0].query, self.events[j0].skill, float(prec[0]),
                           int(np.count_nonzero(votes)))


class _Closing(Exception):
    """A background rebuild that meets a closed layer before it embeds: the process is ending."""


_OPEN_LAYERS: weakref.WeakSet[UsageLayer] = weakref.WeakSet()


@atexit.register
def _close_open_layers() -> None:
    """At exit, let a background rebuild's embedding end and start no other: its thread is a
    daemon (an exit must not wait out a 10-50 s rebuild), and torch aborts the process in C++ when
    a daemon thread is cut off inside it (decision 8's warm-up has the same constraint)."""
    for layer in list(_OPEN_LAYERS):
        layer.close()


class UsageLayer:
    """The store plus the index built from it, rebuilt only when the events or the catalog change.

    ``embed(texts)`` turns past queries into vectors with the model that serves the current query;
    vectors are kept per (model, query text), so a new event costs one embedding once.

    Every recorded event changes the history, so the turn after one rebuilds. A rebuild is in the
    turn while the last one took at most ``inline_s`` or indexed fewer than ``background_min``
    events; past that (a large history without
    embeddings: 10-50 s at the 20,000-event cap, benchmarks/usage_scale.py) it runs in a thread,
    one at a time, and the turn is served the index it already had, for the same catalog: one
    event behind for a few seconds, against a turn held for as long.
    """

    def __init__(self, store: UsageStore, *, full_weight: float = USAGE_WEIGHT,
                 inline_s: float = INLINE_REBUILD_S,
                 background_min: int = BACKGROUND_MIN_EVENTS) -> None:
        self.store = store
        self.full_weight = full_weight
        self.inline_s = inline_s
        self.background_min = background_min
        self._lock = threading.Lock()
        self._built: dict[str, tuple[tuple[tuple[int, int], int], UsageIndex]] = {}
        self._took: dict[str, float] = {}
        # builds begun per model, and which one the kept index came from: a background build of
        # the old catalog that ends after the turn built the new one must not replace it (the
        # next turn of the new catalog would then rebuild in the turn, the wait it exists to spare)
        self._begun: dict[str, int] = {}
        self._kept: dict[str, int] = {}
        self._building: dict[str, threading.Thread] = {}
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self._reference: dict[str, np.ndarray] = {}
        # held while a background rebuild embeds; close() takes it, so the process's exit waits
        # for an embedding under way (a few new queries: the rest are kept vectors) and no later
        # one starts
        self._embedding = threading.Lock()
        self._closed = False
        _OPEN_LAYERS.add(self)
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): locks of its own, and no rebuild under
        way. The parent's rebuild threads are not in the child, yet they stood in its table, so
        the child never rebuilt those indexes (its turns kept the history as it was at the fork),
        and one embedding at the fork held the lock the child's close waits on, for ever."""
        self._lock = threading.Lock()
        self._embedding = threading.Lock()
        self._building = {}

    def record(self, query: str, skill: str, kind: str = "view", *, good: bool = True,
               content_hash: str = "") -> bool:
        return self.store.record(query, skill, kind, good=good, content_hash=content_hash)

    def prune(self, current: Mapping[str, str], *, drop_absent: bool = True) -> int:
        return self.store.prune(current, drop_absent=drop_absent)

    def gate_report(self) -> dict[str, dict[str, dict[str, float]]]:
        """The usage gate's calibration of each index built so far, by model ("" = lexical)."""
        with self._lock:
            built = dict(self._built)
        return {model: idx.gate.report() for model, (_, idx) in sorted(built.items())}

    def settle(self, timeout: float | None = None) -> None:
        """Wait for the rebuilds running in the background (tests, a clean exit)."""
        with self._lock:
            running = list(self._building.values())
        for t in running:
            t.join(timeout)

    def close(self) -> None:
        """Stop background rebuilds from embedding (the rest of a rebuild is Python a daemon may be
        cut off in), once any embedding under way has ended. Turns still build in the turn."""
        with self._lock:
            self._closed = True
        with self._embedding:
            pass

    def index(self, names: Sequence[str], model: str | None,
              embed: Callable[[Sequence[str]], np.ndarray] | None, *, unrelated_mean: float = 0.0,
              unrelated_std: float = 1.0) -> UsageIndex:
        """The index for this catalog (``names``, index order) and model (None: lexical only)."""
        stamp = (self.store.version, hash(tuple(names)))
        key = model or ""
        args = (key, stamp, tuple(names), model, embed, unrelated_mean, unrelated_std)
        with self._lock:
            hit = self._built.get(key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
            if (hit is not None and hit[0][1] == stamp[1] and len(hit[1]) >= self.background_min
                    and self._took.get(key, 0.0) > self.inline_s):
                if key not in self._building:
                    t = threading.Thread(target=self._rebuild, args=args, daemon=True,
                                         name=f"usage-index-{key or 'lexical'}")
                    self._building[key] = t
                    t.start()
                return hit[1]
        return self._build(*args)

    def _rebuild(self, key: str, *args: Any) -> None:
        try:
            self._build(key, *args, background=True)
        except _Closing:
            log.debug("usage index rebuild for %r left: the layer closed", key or "lexical")
        except Exception as e:   # the index the turns have is kept; the next change tries again
            log.warning("usage index rebuild failed: %s", e, exc_info=True)   # no caller to see it
        finally:
            with self._lock:
                self._building.pop(key, None)

    def _build(self, key: str, stamp: tuple[tuple[int, int], int], names: Sequence[str],
               model: str | None, embed: Callable[[Sequence[str]], np.ndarray] | None,
               unrelated_mean: float, unrelated_std: float, *,
               background: bool = False) -> UsageIndex:
        began = time.perf_counter()

        def embedded(texts: Sequence[str]) -> Any:
            assert embed is not None
            if not background:
                return embed(texts)
            with self._embedding:
                if self._closed:
                    raise _Closing
                return embed(texts)

        with self._lock:
            self._begun[key] = ours = self._begun.get(key, 0) + 1
        events = self.store.events()
        vectors = None
        if model is not None and embed is not None and events:
            todo = sorted({e.query for e in events if (model, e.query) not in self._vectors})
            if todo:
                for t, v in zip(todo, embedded(todo), strict=True):
                    self._vectors[(model, t)] = np.asarray(v, dtype=np.float32)
            vectors = np.vstack([self._vectors[(model, e.query)] for e in events])
        reference = None
        if vectors is not None and model is not None and embed is not None:
            if model not in self._reference:   # the off-topic reference, for the usage gate
                self._reference[model] = np.asarray(embedded(offtopic_requests()),
                                                    dtype=np.float32)
            reference = self._reference[model]
        with self._lock:   # the last index of this model: a lexical one is updated from it
            last = self._built.get(key)
        idx = UsageIndex(events, names, vectors, unrelated_mean=unrelated_mean,
                         unrelated_std=unrelated_std, full_weight=self.full_weight, reference=reference,
                         previous=None if last is None else last[1])
        with self._lock:
            if ours > self._kept.get(key, 0):
                self._built[key] = (stamp, idx)
                self._took[key] = time.perf_counter() - began
                self._kept[key] = ours
        return idx


def usage_layer_for(home: Path, su: Any, settings: Any = None, *,
                    read_only: bool = False) -> UsageLayer | None:
    """The home's usage store (created on its first event) redacting every configured secret (any
    length: a short one is not registered process-wide), or None with ``skill_utils.learn: false``;
    ``read_only``: learnt from, never written (see :class:`UsageStore`)."""
    if not su.learn:
        return None
    redactor = getattr(settings, "redactor", None)
    secrets = tuple(redactor().secrets) if callable(redactor) else ()
    return UsageLayer(UsageStore(home / USAGE_FILE, cap=su.usage_cap, secrets=secrets,
                                 read_only=read_only))
