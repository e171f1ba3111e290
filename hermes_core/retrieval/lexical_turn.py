"""The lexical layer's one pass over a request, and what the hint reads from it.

A turn needs three things of BM25: the scores of the request with the glossary's terms (the
ranking), the scores with the lexicon's words too when the request crosses to skills written in
another language (``crosslingual.Expansion``), and, when no dense layer answers, which skills
share a word of two or more characters with the request (the hint's evidence, decision 107).
Each used to tokenise and score the request on its own: a lexical-only turn whose hint listed
more than one skill scored the catalog three times on a mixed-language home and cut the hint
twice. Here the request is tokenised once; the crossing scores are the ranking's own when the
lexicon added no word; and the word evidence is read off the postings of the request's words
(:meth:`BM25Index.reached`), not scored, and only when a turn asks for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hermes_core.retrieval.bm25 import BM25Index, Expander, bm25_tokens, lexical_share, query_terms
from hermes_core.retrieval.calibration import query_language
from hermes_core.retrieval.crosslingual import Expansion
from hermes_core.retrieval.result import lexical_evidence


@dataclass(frozen=True, slots=True)
class LexicalTurn:
    """What BM25 said of one request (:func:`lexical_turn`).

    ``scores``: per skill, with the glossary's terms; ``share``: the lexical share the gate reads
    (of the request as written when that differs from what was ranked); ``crossed``: the scores
    with the lexicon's words too, None when the request does not cross languages; ``terms``: the
    tokens the word evidence is read from (the crossing ones when it crosses); ``asked_terms``:
    the tokens the share was read from, which the lexical gate's word rule reads too."""

    index: BM25Index
    scores: np.ndarray
    share: float
    crossed: np.ndarray | None
    terms: tuple[str, ...]
    asked_terms: tuple[str, ...]

    def words(self) -> np.ndarray:
        """Per skill (index order), whether it shares a word of two or more characters with the
        request (its own, or one the glossary or lexicon adds), not only single characters, read
        off the postings of the turn's own tokens. The Chinese tokens add every character for
        recall (``bm25_tokens``), so a skill can score through characters alone: a travel skill
        met "我的容器一启动就退出了怎么办" through 出, 怎 and 么, nearly as high as the docker skill
        the glossary's "container" and "exit" found. What ``shares_a_word`` says of the catalog
        for the gate, this says of each skill for the hint."""
        return self.index.reached([t for t in self.terms if len(t) > 1])

    def evidence(self, *others: np.ndarray | None) -> np.ndarray:
        """``hint_cut``'s evidence without a dense layer (``result.lexical_evidence``): a skill
        that shares a word with the request, or that ``others`` (synonyms, past use) score."""
        return lexical_evidence(self.words(), *others)


def lexical_turn(bm25: BM25Index, text: str, asked: str, glossary: Expander,
                 expand: Expansion) -> LexicalTurn:
    """BM25 over ``text`` (what the layers rank) with ``glossary``'s terms; the gate's share of
    ``asked`` (the request as written); and, for a request ``expand`` translates, the scores with
    its words as well, scored again only if it added a word."""
    base = bm25_tokens(text)
    toks = base + glossary(text, base, bm25.knows)
    scores = bm25.score_array(toks)
    if asked == text:
        asked_toks, share = toks, lexical_share(bm25, toks, scores)
    else:   # what bm25.lexical_scores computes, its tokens kept
        asked_toks = query_terms(bm25, asked, glossary)
        share = lexical_share(bm25, asked_toks, bm25.score_array(asked_toks))
    crossed: np.ndarray | None = None
    terms: Sequence[str] = toks
    if expand.translates(query_language(text)):
        terms = base + expand(text, base, bm25.knows)
        crossed = scores if terms == toks else bm25.score_array(terms)
    return LexicalTurn(bm25, scores, share, crossed, tuple(terms), tuple(asked_toks))

