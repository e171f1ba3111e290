"""Catalogs that mix languages: what each layer can read of a skill in the request's language.

A catalog may describe some skills in English and others in Chinese (a Chinese home with
English-described skills copied in, or the reverse), and a request in one language then meets
skills in the other. Two layers are biased toward the request's own language there:

* BM25 matches words, so a Chinese request scores only the skills written (partly) in Chinese;
  every other skill scores 0, and z-score fusion reads that 0 as evidence against it, while the
  Chinese skills that share a word or two with the request (查看, 订单) get evidence for. While a
  dense layer answers the request, BM25 speaks only for the skills it can read (its z over
  them), and the dense layer's z stands in for the others, as another model's rank scores stand
  in for skills MiniLM cannot read (``SkillRetriever._other_model``). When BM25 can read no
  skill at all (a Chinese request, an English catalog) it abstains, so a glossary expansion
  alone (a few generic words such as "order" or "book") no longer outvotes the multilingual
  embedder. Without a dense layer, BM25 and its glossary are all there is, and nothing changes.
* With the bilingual lexicon (``lexicon.py``) installed, a request in a language some skills are
  not written in also brings its words translated into the other language (:class:`Expansion`,
  BM25 only, like the glossary's terms), so BM25 reads those skills too and scores the whole
  catalog; a catalog every skill of which reads in the request's language gets nothing added.
* A multilingual embedder's raw cosine runs higher for text in the query's language whatever its
  topic. The calibrated z (each skill against its own off-topic cosines in the query's language)
  removes that; the raw half of the dense ranking keeps it. :func:`language_offsets` gives each
  skill the mean off-topic cosine of the skills written in its language, so the raw cosine is
  read relative to its language group; on a catalog in one language that is one constant, and
  the ranking does not change.

Measured on mixed and cross-lingual catalogs built from HammerBench and ACEBench
(``tests/data/catalogs/README.md``); see docs/architecture.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hermes_core.retrieval.bm25 import bm25_tokens
from hermes_core.retrieval.calibration import DenseCalibration, query_language, text_languages
from hermes_core.retrieval.dense import with_parts
from hermes_core.retrieval.fusion import zscores
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexicon import Lexicon, load_lexicon
from hermes_core.tokenize import has_cjk, tokenize
from hermes_core.types import Skill

LANGS = ("en", "zh")


def skill_languages(skill: Skill) -> frozenset[str]:
    """The languages a skill's name and description are (partly) written in
    (:func:`calibration.text_languages`)."""
    return text_languages(skill.name, skill.description)


def readable(skills: Sequence[Skill]) -> dict[str, np.ndarray]:
    """Per language, which skills (in index order) BM25 can read a request in that language by."""
    langs = [skill_languages(s) for s in skills]
    return {lang: np.fromiter((lang in ls for ls in langs), bool, len(langs)) for lang in LANGS}


def written(can_read: Mapping[str, np.ndarray]) -> frozenset[str]:
    """The languages some skill is written in, from :func:`readable`'s masks: what
    ``calibration.catalog_languages`` finds, without asking the skills again (a refresh has the
    masks already; the lexical gate's calibration reads the languages)."""
    return frozenset(lang for lang, m in can_read.items() if bool(np.any(m)))


def mixed(can_read: Mapping[str, np.ndarray]) -> bool:
    """Whether a catalog (``readable``'s masks) is written in both languages, so that requests in
    either cross to some of its skills: what the warm-up loads the lexicon for. A catalog in one
    language crosses only for a request in the other, which may never come."""
    masks = [np.asarray(m, dtype=bool) for m in can_read.values()]
    return bool(masks) and all(m.any() for m in masks) and not all(m.all() for m in masks)


def lexical_in_language(scores: np.ndarray | None, can_read: np.ndarray | None,
                        stand_in: np.ndarray | None = None,
                        translated: np.ndarray | None = None) -> np.ndarray | None:
    """BM25 ``scores`` for a catalog it can read only part of (``can_read``, per skill): with
    ``stand_in`` (the dense layer's scores), BM25's z over the skills it can read and the
    stand-in's z over the catalog for the others; without one, the others get the mean of the
    skills it can read. None (abstain) when it can read none; ``scores`` itself when it can read
    all, or when the mask does not fit.

    ``translated``: BM25's scores of the request with its words also in the other language
    (:class:`Expansion`), which reads the other skills too. With a stand-in, each side gets the
    translated scores' z over its own skills and the stand-in none (HammerBench-zh tuning half,
    Recall@5 on the mixed catalog: 0.753 with the stand-in, 0.783 with half of each, 0.808 with
    the translation's z alone, 0.728 with one z over the whole catalog). Without one (no dense
    layer), only where BM25 can read no skill in the request's language: on a mixed catalog one
    BM25 over the translated request lost same-language requests (ACEBench English requests
    0.952 -> 0.515 Recall@5)."""
    if scores is None or can_read is None or len(can_read) != len(scores) or bool(can_read.all()):
        return scores
    fits = translated is not None and len(translated) == len(scores)
    if fits and stand_in is None:
        return translated if not can_read.any() else scores
    if fits:
        out = np.array(translated, dtype=np.float64)
        for side in (can_read, ~can_read):
            if side.any():
                out[side] = zscores(out[side])
        return out
    if not can_read.any():
        return None
    out = np.array(scores, dtype=np.float64)
    if stand_in is not None and len(stand_in) == len(out):
        out[can_read] = zscores(out[can_read])
        out[~can_read] = zscores(stand_in)[~can_read]
    else:
        out[~can_read] = float(out[can_read].mean())
    return out

def description_languages(skills: Sequence[Skill]) -> np.ndarray:
    """Each skill's description language (``zh`` when mostly CJK, else ``en``), in index order:
    what a multilingual embedder's language bias follows. A catalog whose text holds no CJK
    character at all is English throughout, told by one scan in C instead of two a description
    (about a second at 20,000 skills, in a new process's first refresh)."""
    texts = [s.description or s.name for s in skills]
    if not has_cjk("\x00".join(texts)):
        return np.full(len(texts), "en")
    return np.array([query_language(t) for t in texts])


def language_offsets(off_mean: np.ndarray, groups: np.ndarray) -> np.ndarray | None:
    """Per skill, the mean of ``off_mean`` (each skill's mean cosine to off-topic requests in the
    query's language) over the skills of its description language (``groups``, ``en`` or ``zh``);
    None for a catalog in one language (a constant changes no ranking) or when the sizes do not
    fit. A boolean split: a turn pays two means, not a pass over the language labels."""
    off = np.asarray(off_mean, dtype=np.float64)
    if len(groups) != len(off) or not len(off):
        return None
    zh = groups == "zh"
    n = int(zh.sum())
    if n in (0, len(off)):
        return None
    out: np.ndarray = np.where(zh, float(off[zh].mean()), float(off[~zh].mean()))
    return out


def by_language(scores: np.ndarray, off_mean: np.ndarray, groups: np.ndarray) -> np.ndarray | None:
    """Raw scores less their description language group's mean off-topic score; None on a
    one-language catalog (one constant, no ranking changes). On the mixed HammerBench tuning
    half, half or three quarters of the offset fell between none and all of it, and dividing by
    the group's spread as well changed nothing."""
    centre = language_offsets(off_mean, groups)
    if centre is None or len(scores) != len(centre):
        return None
    out: np.ndarray = np.asarray(scores, dtype=np.float64) - centre
    return out


def ranked(cal: DenseCalibration, sims: np.ndarray, parts: np.ndarray | None, lang: str,
           groups: np.ndarray) -> np.ndarray:
    """The dense layer's calibrated ranking score (``with_parts`` of the cosine's and the part
    score's rank scores), the raw halves read by :func:`by_language`."""
    lang = lang if lang in cal.mean else "en"
    raw = by_language(sims, cal.mean[lang], groups)
    pm = cal.part_mean.get(lang)
    praw = by_language(parts, pm, groups) if parts is not None and pm is not None else None
    return with_parts(cal.rank_scores(sims, lang, raw), cal.part_rank(parts, lang, praw))


@dataclass(frozen=True, slots=True)
class Expansion:
    """What the lexical layer adds to a request's tokens (``bm25.lexical_scores``'s ``expand``):
    the glossary's terms, and, for a request in a language some skill cannot be read in
    (``crossing``), its words translated word by word by the lexicon that the catalog knows.
    ``lexicon`` is called only for such a request (loading it costs a file read once)."""

    glossary: Glossary
    crossing: frozenset[str] = frozenset()
    lexicon: Callable[[], Lexicon | None] | None = None

    @classmethod
    def for_catalog(cls, glossary: Glossary, can_read: Mapping[str, np.ndarray],
                    cache_dir: str | os.PathLike[str] | None) -> Expansion:
        """For a catalog (``readable``'s masks): the languages it crosses, and the lexicon
        loaded from (and cached in) ``cache_dir`` when a request first needs it."""
        crossing = frozenset(lang for lang, m in can_read.items() if len(m) and not bool(m.all()))
        return cls(glossary, crossing, lambda: load_lexicon(cache_dir))

    def translates(self, lang: str) -> bool:
        """Whether a request in ``lang`` is read across languages (a lexicon is installed)."""
        return lang in self.crossing and self.lexicon is not None and self.lexicon() is not None

    def __call__(self, text: str, tokens: Sequence[str], known: Callable[[str], bool]) -> list[str]:
        out = self.glossary.expansions(text, tokens, known)
        lang = query_language(text)
        lex = self.lexicon() if lang in self.crossing and self.lexicon is not None else None
        if lex is None:
            return out
        have = set(tokens) | set(out)
        # a Chinese word is added whole, not with its characters (数据 would match 根据 by 据)
        for word in lex.english_words(text) if lang == "zh" else lex.chinese_words(text):
            for t in bm25_tokens(word) if lang == "zh" else tokenize(word):
                if t not in have and known(t):
                    have.add(t)
                    out.append(t)
        return out
