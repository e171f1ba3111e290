"""The lexical gate's calibration after an edit, from the last one's shares, equal to a full one.

A full calibration (``calibration.calibrate_lexical``) scores every off-topic reference request
and pseudo-query against the whole index: 0.4-0.7 s at 20,000 skills on every catalog change.
BM25 here has no length normalisation (b = 0, ``bm25.py``), so when a refresh only *edits* skills
(same names in the same order: N unchanged) an unchanged skill's score for a token moves only if
the token's document frequency moved (the edited skills' token sets, old against new, gained or
lost it); otherwise only the edited skills' own scores move. A request's share is therefore kept,
to the bit, unless one of these holds, and then it is scored whole on the new index:

* one of its tokens after glossary expansion is a moved word (its idf, and with it the
  attainable score, moved), or the expansion itself changed (it reads the vocabulary: checked
  only when a word entered or left it);
* an edited skill held its best score (the runner-up is not kept);
* an edited skill, as it is now, scores it at all and not clearly below its best
  (:func:`skill_score`, the index's formula for one skill; a relative margin of 1e-9 covers
  the order of the additions, so a kept share is still the share a full scoring gives).

An add or delete changes N and so every idf (decision 81): those calibrate whole, as does a
first calibration or one on another glossary. The state is the previous refresh's, in memory,
or a new process's rows read back for the catalog they were scored on (``lexical_store``).
A small catalog's word rule (the catalog's words the reference requests bring) is read from the
rows' tokens against the new index's vocabulary, so it is the full calibration's too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hermes_core.retrieval.bm25 import (
    DIRECT_MATCH_BONUS,
    TF_SATURATION,
    BM25Index,
    Expander,
    index_terms,
    lexical_share,
    query_terms,
)
from hermes_core.retrieval.calibration import (
    LexicalCalibration,
    calibrate_lexical,
    gate_requests,
    known_words,
)
from hermes_core.retrieval.token_memo import SkillTerms
from hermes_core.types import Skill

# An edited skill scoring a request below its kept best by at least this share leaves the best
# (and so the share) as it was: far above the rounding of a sum of a few float64 terms (~1e-15).
KEEP_MARGIN = 1e-9


@dataclass(frozen=True, slots=True)
class RowState:
    """One request's tokens after expansion, its share, and the skills that held its best score."""

    tokens: tuple[str, ...]
    share: float
    best: float
    holders: frozenset[int]


def score_row(bm25: BM25Index, text: str, expand: Expander | None) -> RowState:
    """``text`` scored whole on ``bm25``: what ``bm25.lexical_scores`` computes, plus its holders."""
    toks = query_terms(bm25, text, expand)
    scores = bm25.score_array(toks)
    best = float(scores.max()) if scores.size else 0.0
    holders = frozenset(np.flatnonzero(scores == best).tolist()) if best > 0 else frozenset()
    return RowState(tuple(toks), lexical_share(bm25, toks, scores), max(best, 0.0), holders)


def skill_score(bm25: BM25Index, tokens: Sequence[str], terms: SkillTerms) -> float:
    """One skill's BM25 score for ``tokens`` on ``bm25`` (the formula in ``bm25.py``), without
    scoring the catalog; equal to ``bm25.score_array``'s entry up to the order of the additions."""
    tf = dict(zip(terms.tokens, terms.counts, strict=True))
    total = 0.0
    for t in dict.fromkeys(tokens):
        if not bm25.knows(t):
            continue
        w = bm25.token_idf(t)
        n = tf.get(t, 0)
        total += w * n / (n + TF_SATURATION) + (DIRECT_MATCH_BONUS * w if t in terms.verbatim else 0.0)
    return total


@dataclass(slots=True)
class LexicalMemo:
    """What the last lexical calibration keeps for the next: the catalog it measured (names and
    content hashes), the glossary it expanded with and every request's :class:`RowState`.

    ``updated`` / ``rescored`` count edits served from the state and the rows scored again in them
    (for tests and the benchmark)."""

    names: tuple[str, ...] = ()
    vocabulary: Mapping[str, int] = field(default_factory=dict)
    hashes: tuple[str, ...] = ()
    skills: tuple[Skill, ...] = ()
    expand: Expander | None = None
    rows: dict[str, RowState] = field(default_factory=dict)
    updated: int = 0
    rescored: int = 0

    def restore(self, skills: Sequence[Skill], expand: Expander | None, vocabulary: Mapping[str, int],
                rows: Mapping[str, RowState]) -> None:
        """Hold ``rows`` as the last calibration's, scored on ``skills``' index (``vocabulary``)
        with ``expand``: a new process's rows read back for the catalog they were scored on
        (``lexical_store``), so its first calibration scores none and its next edit updates."""
        self.names, self.hashes = tuple(s.name for s in skills), tuple(s.content_hash for s in skills)
        self.skills, self.expand, self.rows, self.vocabulary = tuple(skills), expand, dict(rows), vocabulary

    def edited(self, skills: Sequence[Skill], expand: Expander | None) -> list[int] | None:
        """The positions of the skills an edit changed, or None if this is not an edit of the
        catalog the state describes (or there is no state)."""
        if not self.rows or expand != self.expand or tuple(s.name for s in skills) != self.names:
            return None
        return [i for i, s in enumerate(skills) if s.content_hash != self.hashes[i]]


def calibrate_lexical_memo(key: str, bm25: BM25Index, skills: Sequence[Skill], pseudo: Sequence[str],
                           expand: Expander | None, memo: LexicalMemo,
                           languages: frozenset[str] | None = None) -> LexicalCalibration:
    """``calibrate_lexical`` for ``skills`` indexed in ``bm25``, each request's share kept from
    ``memo`` where the module docstring shows it cannot have moved; ``memo`` then holds this one.
    ``languages``: the catalog's (``calibration.catalog_languages``), when the caller has them."""
    texts = list(dict.fromkeys([*gate_requests(), *pseudo]))
    changed = memo.edited(skills, expand)
    rows: dict[str, RowState] = {}
    if changed is None:
        rows = {t: score_row(bm25, t, expand) for t in texts}
    else:
        old = index_terms([memo.skills[i] for i in changed])
        new = index_terms([skills[i] for i in changed])
        df = Counter(t for terms in new for t in terms.tokens)
        df.subtract(t for terms in old for t in terms.tokens)
        moved = {t for t, d in df.items() if d}
        relisted = any((t in memo.vocabulary) != bm25.knows(t) for t in moved)
        edited = frozenset(changed)
        for t in texts:
            before = memo.rows.get(t)
            if before is None or not _kept(bm25, t, expand, before, moved, relisted, new, edited):
                rows[t] = score_row(bm25, t, expand)
                memo.rescored += 1
            else:
                rows[t] = before
        memo.updated += 1
    memo.names, memo.hashes = tuple(s.name for s in skills), tuple(s.content_hash for s in skills)
    memo.skills, memo.expand, memo.rows, memo.vocabulary = tuple(skills), expand, rows, bm25.vocabulary
    return calibrate_lexical(key, lambda q: rows[q].share, pseudo, skills,
                             lambda q: known_words(bm25, rows[q].tokens), languages)


def _kept(bm25: BM25Index, text: str, expand: Expander | None, before: RowState, moved: set[str],
          relisted: bool, edited_terms: Sequence[SkillTerms], edited: frozenset[int]) -> bool:
    """Whether ``before`` is still ``text``'s state on ``bm25`` (the module docstring's rules)."""
    toks = before.tokens
    if before.holders & edited or any(t in moved for t in toks):
        return False
    if relisted and tuple(query_terms(bm25, text, expand)) != toks:
        return False
    for terms in edited_terms:
        s = skill_score(bm25, toks, terms)
        if s > 0 and not s < before.best * (1 - KEEP_MARGIN):
            return False
    return True
