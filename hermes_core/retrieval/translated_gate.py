"""The gate without embeddings for a request in a language no skill of the catalog is written in.

Without a dense layer the gate reads the lexical share: the best BM25 score over what the
request's words could score. A Chinese request meets an English catalog through its translation
(``crosslingual.Expansion``: the lexicon's senses of its words), and the share of the translated
request does not separate small talk from real requests: the untranslatable words weigh on the
denominator, and a bag of translated senses meets some skill through one generic word ("today",
"people", "one") as often as a real request meets one through its topic (decision 45: median share
0.063 for generic Chinese requests, 0.050 for HammerBench's against the English-name catalog).

What does separate them is *which* words match. The shipped off-topic reference
(``calibration.gate_requests``), read in the catalog's language (its English requests as written,
its Chinese ones translated the same way, words of :data:`MIN_CHARS` characters or more), says
which of the catalog's words small talk brings ("time", "people", "new"). The gate score is the
best skill's BM25 score over the request's other words: what it shares with a skill that no
generic request shares. The threshold is the :data:`OFF_QUANTILE` of the same score over the
reference's own requests in the request's language, each read against the words the *other*
reference requests bring (leave-one-out: a request must not vouch for itself); on the catalogs
measured that is 0, so one specific word passes, while a catalog whose own words generic requests
happen to meet more often gets a higher bar. Both are per catalog.

The lexicon is loaded only when a request first crosses languages (about a second and 90 MB,
decision 48), so the calibration is made then, once per catalog, and cached as JSON beside the
dense calibrations (``cache/embeddings/calibration/``), keyed by the catalog's content, the
lexicon's version, the glossary and these constants: a restart reads it back, and a turn pays one
more read of its words (their translation) and one BM25 pass over them.

Chosen on the HammerBench-zh tuning half against the English-name catalog (and its English-described
half of the mixed catalog, a smaller one), with Chinese small talk written for tuning; see
docs/architecture.md, decision 57.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.forked import child_lock
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
from hermes_core.retrieval.calibration import UNJUDGED_MAX_SKILLS, catalog_key, gate_requests, query_language
from hermes_core.retrieval.crosslingual import Expansion
from hermes_core.retrieval.fusion import UNJUDGED, GateDecision
from hermes_core.retrieval.lexicon import Lexicon, lexicon_version
from hermes_core.types import Skill

log = logging.getLogger(__name__)

VERSION = 1
# The threshold: this quantile of the reference's leave-one-out scores. Tuning half (keep / own
# small talk rejected; English-name catalog, 911 skills, and its English half of the mixed one,
# 466): any quantile from 0 to 0.8 gives 0 on both (0.989 / 0.864 and 0.986 / 0.932), 0.84 gives
# 0.941 / 0.864 and 0.986 / 0.932, 0.9 gives 0.895 / 0.898 and 0.866 / 0.983.
OFF_QUANTILE = 0.80
RULE = "lexical:translated"
# Words of one character are not translated (decision 48: 会 reads as "skill, balance, account").
# Tuning half, English-name catalog: with them, 0.989 / 0.814.
MIN_CHARS = 2
# The request languages judged so: a Chinese request read in English. The reverse has no tuning
# requests (English requests against a Chinese catalog) to choose a quantile on.
LANGUAGES = frozenset({"zh"})

#: a request's BM25 tokens with its expansion (own words, glossary terms, translated senses)
Reader = Callable[[str], Sequence[str]]


@dataclass(frozen=True, slots=True)
class TranslatedCalibration:
    """One catalog's translated lexical gate for requests in ``language``."""

    key: str
    language: str
    reference: frozenset[str]             # the catalog's words some reference request brings
    threshold: float
    report: Mapping[str, float] = field(default_factory=dict)

    def score(self, bm25: BM25Index, tokens: Sequence[str]) -> float:
        """The best skill's BM25 score over the tokens the reference does not bring."""
        return specific_best(bm25, tokens, self.reference)

    def decide(self, bm25: BM25Index, tokens: Sequence[str]) -> GateDecision:
        """Passed when the score is above the threshold (strictly: a threshold of 0 is one
        specific word, and a request that meets a skill through none must not pass)."""
        score = self.score(bm25, tokens)
        return GateDecision(score > self.threshold, score, self.threshold, RULE, calibrated=True)


def judged(first: GateDecision, translated: GateDecision | None, size: int) -> GateDecision:
    """The lexical gate's decision given the translated gate's on the same request.

    ``first`` passed on its own (the request's words or the glossary met a skill): it stands.
    It listed a small catalog whole (``UNJUDGED``: nothing of the request matched) and the
    translation passes: the translation's ranked hint instead. It rejected: the translation's
    pass keeps the request on a catalog of more than ``UNJUDGED_MAX_SKILLS`` skills, while a
    catalog small enough to list whole keeps the rejection. On 17-skill samples of the
    English-name catalog (tuning half) passing there too kept 0.943 instead of 0.631 and
    rejected 0.834 instead of 0.845 of the small talk, but on anthropics/skills, whose prose
    descriptions hold common words, it let 3 of the 24 negatives of its own test through (at
    most 1 in 10 is allowed): a small catalog's reference meets too few of its words to say
    which are generic."""
    if translated is None or not translated.passed or (first.passed and first.rule != UNJUDGED):
        return first
    if not first.passed and size <= UNJUDGED_MAX_SKILLS:
        return first
    return translated


def specific_best(bm25: BM25Index, tokens: Sequence[str], reference: Collection[str]) -> float:
    """The best skill's BM25 score over the distinct ``tokens`` not in ``reference`` (0 when
    none is left or nothing matches)."""
    left = [t for t in dict.fromkeys(tokens) if t not in reference]
    scores = bm25.score_array(left) if left else np.zeros(0)
    return float(scores.max()) if scores.size else 0.0


def calibrate(key: str, bm25: BM25Index, read: Reader, language: str,
              reference: Sequence[str] | None = None) -> TranslatedCalibration:
    """The calibration for requests in ``language``: every reference request (``reference``,
    default the gate's) read by ``read``, the catalog words they bring, and the threshold from
    the ``language`` requests' leave-one-out scores. Pure but for ``read``."""
    texts = list(gate_requests() if reference is None else reference)
    brought = [frozenset(t for t in read(text) if bm25.knows(t)) for text in texts]
    counts: Counter[str] = Counter()
    for b in brought:
        counts.update(b)
    off: list[float] = []
    for text, b in zip(texts, brought, strict=True):
        if query_language(text) == language:   # its own words count only if another brings them
            off.append(specific_best(bm25, list(b), {t for t, n in counts.items() if n > (t in b)}))
    threshold = float(np.quantile(off, OFF_QUANTILE)) if off else 0.0
    report = {"threshold": round(threshold, 4), "reference": float(len(off)),
              "off_passed": round(float(np.mean(np.asarray(off) > threshold)), 4) if off else float("nan"),
              "reference_words": float(len(counts))}
    return TranslatedCalibration(key, language, frozenset(counts), threshold, report)


# ------------------------------------------------------------------ cache
def _path(directory: Path, key: str, language: str) -> Path:
    return directory / "calibration" / f"translated-{language}-{key}.json"


def save(directory: str | os.PathLike[str] | None, cal: TranslatedCalibration) -> None:
    """Write ``cal`` beside the dense calibrations (atomic replace); a failure costs a recompute."""
    if directory is None:
        return
    data = {"version": VERSION, "key": cal.key, "language": cal.language,
            "reference": sorted(cal.reference), "threshold": cal.threshold, "report": dict(cal.report)}
    write_cache(_path(Path(directory), cal.key, cal.language),
                json.dumps(data, ensure_ascii=False).encode("utf-8"), "translated gate cache", logger=log)


def load(directory: str | os.PathLike[str] | None, key: str, language: str) -> TranslatedCalibration | None:
    """The cached calibration, or None (missing, torn, foreign or stale: recomputed)."""
    if directory is None:
        return None
    p = _path(Path(directory), key, language)
    try:
        data = json.loads(read_cache(p).decode("utf-8"))   # a FIFO there: not read
        if data.get("version") != VERSION or data.get("key") != key or data.get("language") != language:
            return None
        reference = frozenset(str(t) for t in data["reference"])
        threshold = float(data["threshold"])
        if not np.isfinite(threshold):
            return None
        return TranslatedCalibration(key, language, reference, threshold,
                                     {str(k): float(v) for k, v in dict(data.get("report", {})).items()})
    except FileNotFoundError:
        return None
    except Exception as e:   # an unreadable cache only costs a recompute
        log.warning("translated gate cache %s is unreadable (%s); recomputing it", p, type(e).__name__)
        return None


class TranslatedGate:
    """One catalog's translated gate: calibrated the first time a request in a language no skill
    is written in asks (the lexicon is loaded by then), read from the cache after a restart.

    ``languages``: the request languages that cross to every skill (no skill reads in them),
    among :data:`LANGUAGES`; ``read`` gives a request's tokens with its translation (None when
    no lexicon is installed: nothing to judge by)."""

    def __init__(self, key: str, bm25: BM25Index, read: Reader, languages: frozenset[str],
                 cache_dir: str | os.PathLike[str] | None, translates: Callable[[str], bool]) -> None:
        self.key, self.bm25, self.read = key, bm25, read
        self.languages = languages & LANGUAGES
        self.cache_dir = cache_dir
        self.translates = translates
        # free in a forked child (one a thread held at the fork hung the child's first use)
        self._lock = child_lock(threading.Lock())
        self._cal: dict[str, TranslatedCalibration] = {}

    def calibration(self, language: str) -> TranslatedCalibration | None:
        """The calibration for requests in ``language``, made (or read) once; None when such a
        request is not judged here (some skill reads it, or no lexicon translates it)."""
        cal = self._cal.get(language)
        if cal is not None or language not in self.languages or not self.translates(language):
            return cal
        with self._lock:
            cal = self._cal.get(language)
            if cal is None:
                cal = load(self.cache_dir, self.key, language)
                if cal is None:
                    cal = calibrate(self.key, self.bm25, self.read, language)
                    save(self.cache_dir, cal)
                self._cal[language] = cal
            return cal

    def decide(self, text: str, language: str) -> GateDecision | None:
        """The translated gate's decision on ``text``, or None when it does not judge it."""
        cal = self.calibration(language)
        return None if cal is None else cal.decide(self.bm25, self.read(text))

    def report(self) -> dict[str, dict[str, float]]:
        """The calibrations made so far (``skills reindex --json``'s calibration report)."""
        with self._lock:
            return {lang: dict(c.report) for lang, c in self._cal.items()}

    @classmethod
    def for_catalog(cls, skills: Sequence[Skill], bm25: BM25Index, expand: Expansion,
                    can_read: Mapping[str, np.ndarray],
                    cache_dir: str | os.PathLike[str] | None, digest: str | None = None
                    ) -> TranslatedGate | None:
        """The gate of a catalog (``crosslingual.readable``'s masks): it judges requests in the
        languages of :data:`LANGUAGES` that no skill reads, through ``expand``'s glossary and
        lexicon (words of :data:`MIN_CHARS` or more); None when there are none. Its key names
        the catalog, the reference, the lexicon's version, the glossary and the constants
        (``digest``: ``calibration.catalog_digest(skills)``, when the caller has it)."""
        judged = LANGUAGES & frozenset(lang for lang, m in can_read.items() if len(m) and not bool(np.any(m)))
        if not judged:
            return None
        lexicon: list[Lexicon | None] = []      # looked up once: load_lexicon reads package metadata

        def read(text: str) -> list[str]:
            toks = bm25_tokens(text)
            out = toks + expand.glossary.expansions(text, toks, bm25.knows)
            if not lexicon:
                lexicon.append(expand.lexicon() if expand.lexicon is not None else None)
            lex = lexicon[0]
            if lex is not None and query_language(text) in judged:   # the others: as written
                for word in lex.english_words(text, MIN_CHARS):
                    out.extend(t for t in bm25_tokens(word) if bm25.knows(t))
            return out
        catalog = catalog_key("lexical-translated", skills, digest=digest)
        key = hashlib.sha256(f"{catalog}\x00{lexicon_version()}\x00"
                             f"{VERSION}\x00{OFF_QUANTILE}\x00{MIN_CHARS}\x00"
                             f"{expand.glossary.lines!r}".encode()).hexdigest()[:32]
        return cls(key, bm25, read, judged, cache_dir, expand.translates)
