"""The gate's second opinion on a request that crosses languages: its translation, judged at home.

The calibrated gate reads a Chinese request against an English-described skill on the Chinese
side of the calibration: each skill's cosine as a z-score over Chinese off-topic requests, the
threshold from the off-topic reference and pseudo-queries made of the skill's own (English) words.
A cross-language request reaches that threshold less often than a same-language one does
(HammerBench-zh requests against the English-name catalog: 0.86 kept, 0.95 elsewhere), and a
threshold calibrated across languages let small talk through (docs/architecture.md, decision 45).

So a request the gate rejected, in a language some skills of the catalog are not written in, is
translated word by word with the lexicon (``Lexicon.translate``: jieba's words and their
CC-CEDICT senses) and the translation is judged as a request in the other language would be: its
own embedder, that language's calibration and threshold. The request is kept only when the
translation clears that threshold by :data:`MARGIN` on the calibrated scale: a word-by-word
translation of small talk is a bag of generic words that the other side's threshold sometimes
passes by chance (passed alone, 0.175 of generic Chinese requests got through), while one that
names what a skill does clears it by far. The hint list stays the original request's ranking:
the second opinion only decides keep or reject.

Without a dense layer the lexical gate has no such opinion to ask: a translated request shares
about as many words with an English catalog when it is small talk as when it is on topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core.retrieval.crosslingual import Expansion
from hermes_core.retrieval.fusion import GateDecision
from hermes_core.tokenize import head_tokens

# How far (calibrated gate-score units, where the threshold sits a quarter of the way from the
# off-topic median to the pseudo-queries) the translation must clear its own threshold. Chosen on
# the HammerBench-zh tuning half against the English-name and mixed catalogs with Chinese small
# talk written for tuning (docs/architecture.md, decision 48).
MARGIN = 3.5
RULE_PREFIX = "translated:"
# A single character is mostly a function word whose dictionary senses are noise in a translation
# (会 reads as "skill, balance, account, accounting", and small talk met the banking skills through
# it); the content of a request sits in its longer words. Tuning half, margin 3.5, keep / generic
# Chinese requests rejected: English-name catalog 0.954 / 0.847 with every word, 0.968 / 0.864
# with words of two characters or more.
MIN_CHARS = 2
# Words in Latin script inside a Chinese request ("帮我把PDF转成Word", "用Docker部署") pass into the
# translation as written: they name what the request is about, in the catalog's own language.
LATIN = True
# The directions asked: a Chinese request read in English. The reverse (an English request in
# Chinese words, judged by the Chinese side) has no tuning requests to choose a margin on.
DIRECTIONS = {"zh": "en"}


def translation(expand: Expansion, text: str, lang: str,
                tokens: int | None = None) -> tuple[str, str] | None:
    """A Chinese request (``lang``) word by word in English, its words of :data:`MIN_CHARS` or
    more characters only (and its words in Latin script as written, :data:`LATIN`), and
    ``"en"``; None for a request in another language, on a catalog that reads every skill in
    ``lang`` (nothing to cross: the lexicon is never touched), without a lexicon, or when no word
    translates. ``tokens``: the translation's head of that many (``head_tokens``): each Chinese
    word brings all its senses, so a request cut to one model window translates to several,
    which a sliding-window embedder would embed whole."""
    if lang not in DIRECTIONS or lang not in expand.crossing or expand.lexicon is None:
        return None
    lex = expand.lexicon()
    if lex is None:
        return None
    target = DIRECTIONS[lang]
    out = lex.translate(text, target, MIN_CHARS, latin=LATIN).strip()
    if tokens is not None:
        out = head_tokens(out, tokens).strip()
    return (out, target) if out else None


@dataclass(frozen=True, slots=True)
class SecondOpinion:
    """The translated request's own gate decision and what it was (for ``--explain``)."""

    text: str
    language: str
    decision: GateDecision
    margin: float = MARGIN

    @property
    def keeps(self) -> bool:
        """The translation clears its calibrated threshold by the margin."""
        return keeps(self.decision, self.margin)


def keeps(decision: GateDecision, margin: float = MARGIN) -> bool:
    """Whether a translation's gate decision keeps the request: it clears its calibrated threshold
    by ``margin``. Its own verdict, whatever decided the request in the end (past use may keep a
    request its translation did not: ``skills search --explain`` shows both)."""
    return decision.calibrated and decision.score > 0 and decision.score - decision.threshold >= margin


def stronger(own: GateDecision, other: GateDecision | None) -> GateDecision:
    """The translation's gate decision: its embedder's (``own``), or that of the model serving the
    skills this one cannot read (``other``, which passes only when its best skill is one of them)
    when that passes by more."""
    if other is not None and other.passed and other.score - other.threshold > own.score - own.threshold:
        return other
    return own


def judged(first: GateDecision, opinion: SecondOpinion | None) -> GateDecision:
    """The gate's decision given the second opinion: ``first`` unless it rejected and the
    translation keeps the request; then a passing decision under ``translated:<rule>`` whose
    score is the translation's and whose threshold is its own plus the margin, so the explain
    line reads as any other gate line."""
    if first.passed or opinion is None or not opinion.keeps:
        return first
    d = opinion.decision
    return GateDecision(True, d.score, d.threshold + opinion.margin, RULE_PREFIX + d.rule, calibrated=True)
