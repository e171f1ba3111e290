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

An add or delete changes N and so every idf (decision 81), so every request's best may move, but
a skill's score is a sum of the request's idfs weighted by numbers that depend on that skill
alone (``tf / (tf + 1.5)`` and the verbatim bonus's 0.5): each row also keeps those weights
(:class:`Weights`) for the skills that scored within ``NEAR_SHARE`` of its best when it was last
scored whole, and the highest score of any other skill then (``ceiling``). After a change of
names (kept skills in their order), a row drops the removed and changed skills from that set,
adds the new and changed ones, and reads its best off the set with the new idfs, summed in
bm25s's order, so to the bit. That best is the catalog's while it stays above the ceiling
times the most any of the row's idfs grew since (an unchanged skill outside the set scores at
most that); otherwise, or when one of its words entered or left the vocabulary, its expansion
changed, or more than ``MAX_NEAR`` skills were near its best, the row is scored whole. A first
calibration, a reordered catalog or another glossary calibrate whole. The state is the
previous refresh's, in memory.
A small catalog's word rule (the catalog's words the reference requests bring) is read from the
rows' tokens against the new index's vocabulary, so it is the full calibration's too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from hermes_core.retrieval.bm25 import (
    DIRECT_MATCH_BONUS,
    TF_SATURATION,
    BM25Index,
    Expander,
    bm25_tokens,
    index_terms,
    lexical_share,
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
# A row keeps the weights of the skills scoring at least (1 - NEAR_SHARE) of its best: an add or
# delete moves each idf by well under 1% on a catalog of hundreds of skills (N in the log), so
# the skills below stay below for many changes; at most MAX_NEAR of them (a best that thousands
# of skills tie on, through one common word, is scored whole on a change instead).
NEAR_SHARE = 0.2
MAX_NEAR = 256


@dataclass(frozen=True, slots=True)
class Weights:
    """One skill's weights for a row's known words, in scoring order: its ``tf / (tf + 1.5)``
    (0 where it lacks the word) and whether it holds the word verbatim. Its score is the sum of
    each word's idf times the first, then 0.5 x the idf of each word it holds verbatim."""

    tf: tuple[float, ...]
    verbatim: tuple[bool, ...]

    def scores(self) -> bool:
        return any(self.tf) or any(self.verbatim)


@dataclass(frozen=True, slots=True)
class RowState:
    """One request's tokens after expansion, its share, the skills (names) that held its best
    score; for adds and deletes, its known words in scoring order with their idfs when it was
    scored whole, the :class:`Weights` of the skills near its best (None: too many) and the best
    score of any other skill then; and the words whose presence in the vocabulary decided its
    expansion (only a change among those can change it)."""

    tokens: tuple[str, ...]
    share: float
    best: float
    holders: frozenset[str]
    known: tuple[str, ...] = ()
    idf: tuple[float, ...] = ()
    near: Mapping[str, Weights] | None = None
    ceiling: float = 0.0
    asked: frozenset[str] = frozenset()     # the words its glossary expansion asked the index about


def score_row(bm25: BM25Index, text: str, expand: Expander | None) -> RowState:
    """``text`` scored whole on ``bm25``: what ``bm25.lexical_scores`` computes, plus its holders
    and the skills near its best."""
    toks, asked = expanded_terms(bm25, text, expand)
    scores = bm25.score_array(toks)
    best = max(float(scores.max()) if scores.size else 0.0, 0.0)
    known = tuple(t for t in dict.fromkeys(toks) if bm25.knows(t))
    near: dict[str, Weights] | None = {}
    ceiling = 0.0
    holders: frozenset[str] = frozenset()
    if best > 0:
        holders = frozenset(bm25.names[i] for i in np.flatnonzero(scores == best).tolist())
        close = scores >= best * (1 - NEAR_SHARE)
        rest = scores[~close]
        ceiling = float(rest.max()) if rest.size else 0.0
        idx = np.flatnonzero(close)
        terms = bm25.parts.terms
        near = None if idx.size > MAX_NEAR else {bm25.names[i]: weights(terms[i], known)
                                                  for i in idx.tolist()}
    return RowState(tuple(toks), lexical_share(bm25, toks, scores), best, holders, known,
                    tuple(bm25.token_idf(t) for t in known), near, ceiling, asked)


def expanded_terms(bm25: BM25Index, text: str, expand: Expander | None) -> tuple[list[str], frozenset[str]]:
    """``bm25.query_terms(bm25, text, expand)``, and the words ``expand`` asked the index whether
    it knows: the expansion is a function of those answers, so it is the same while none of
    those words entered or left the vocabulary."""
    toks = bm25_tokens(text)
    if expand is None:
        return toks, frozenset()
    asked: set[str] = set()

    def knows(word: str) -> bool:
        asked.add(word)
        return bm25.knows(word)
    return toks + expand(text, toks, knows), frozenset(asked)


def _expansion_moved(bm25: BM25Index, text: str, expand: Expander | None, before: RowState,
                     relisted: frozenset[str]) -> bool:
    """Whether ``text``'s tokens after expansion differ from ``before``'s now that the words
    ``relisted`` entered or left the vocabulary."""
    return bool(before.asked & relisted) and tuple(expanded_terms(bm25, text, expand)[0]) != before.tokens


def weights(terms: SkillTerms | tuple[Mapping[str, int], str], known: Sequence[str]) -> Weights:
    """A skill's :class:`Weights` for ``known`` from its terms alone (the index's own arithmetic:
    ``tf / (1.5 + tf)`` in float64, a verbatim word is a substring of its normalised text);
    ``terms`` may be given as its token counts and verbatim text (:func:`counted`)."""
    tf, text = counted(terms) if isinstance(terms, SkillTerms) else terms
    return Weights(tuple(float(tf[t]) / (TF_SATURATION + float(tf[t])) if t in tf else 0.0 for t in known),
                   tuple(t in text for t in known))


def counted(terms: SkillTerms) -> tuple[Mapping[str, int], str]:
    """A skill's token counts and verbatim text: what :func:`weights` reads, made once a change."""
    return dict(zip(terms.tokens, terms.counts, strict=True)), terms.verbatim


def near_scores(idf: Sequence[float], near: Iterable[Weights]) -> list[float]:
    """Each skill's score from its weights and the words' ``idf``, added in the order bm25s and
    ``BM25Index.score_array`` add them (word by word, then the verbatim bonus word by word), in
    float64 as they do, so equal to the index's score to the bit. A handful of skills a row: plain
    floats, no array to build."""
    bonus = [DIRECT_MATCH_BONUS * w for w in idf]
    out = []
    for weight in near:
        s = 0.0
        for w, f in zip(idf, weight.tf, strict=True):
            if f:
                s += w * f
        for b, v in zip(bonus, weight.verbatim, strict=True):
            if v:
                s += b
        out.append(s)
    return out


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

    def edited(self, skills: Sequence[Skill], expand: Expander | None) -> list[int] | None:
        """The positions of the skills an edit changed, or None if this is not an edit of the
        catalog the state describes (or there is no state)."""
        if not self.rows or expand != self.expand or tuple(s.name for s in skills) != self.names:
            return None
        return [i for i, s in enumerate(skills) if s.content_hash != self.hashes[i]]

    def resized(self, skills: Sequence[Skill], expand: Expander | None
                ) -> tuple[frozenset[str], dict[str, SkillTerms]] | None:
        """For skills added or deleted (the kept ones in their order, as ``BM25Index.updated``
        keeps them): the names gone or changed, and the terms of the skills new or changed; None
        if there is no state, another glossary, or the kept skills were reordered."""
        if not self.rows or expand != self.expand:
            return None
        now = {s.name: s.content_hash for s in skills}
        was = dict(zip(self.names, self.hashes, strict=True))
        if [n for n in self.names if n in now] != [s.name for s in skills if s.name in was]:
            return None
        gone = frozenset(n for n, h in was.items() if now.get(n) != h)
        new = [s for s in skills if was.get(s.name) != s.content_hash]
        return gone, dict(zip((s.name for s in new), index_terms(new), strict=True))


def calibrate_lexical_memo(key: str, bm25: BM25Index, skills: Sequence[Skill], pseudo: Sequence[str],
                           expand: Expander | None, memo: LexicalMemo) -> LexicalCalibration:
    """``calibrate_lexical`` for ``skills`` indexed in ``bm25``, each request's share kept from
    ``memo`` (an edit) or read off the skills near its best (an add or delete) where the module
    docstring shows that is the share a full scoring gives; ``memo`` then holds this one."""
    texts = list(dict.fromkeys([*gate_requests(), *pseudo]))
    changed = memo.edited(skills, expand)
    rows: dict[str, RowState] = {}
    if changed is not None:
        old = index_terms([memo.skills[i] for i in changed])
        new = index_terms([skills[i] for i in changed])
        moved = _moved(old, new)
        relisted = frozenset(t for t in moved if (t in memo.vocabulary) != bm25.knows(t))
        edited = frozenset(skills[i].name for i in changed)
        fresh = {skills[i].name: counted(t) for i, t in zip(changed, new, strict=True)}
        for t in texts:
            before = memo.rows.get(t)
            if before is None or not _kept(bm25, t, expand, before, moved, relisted, new, edited):
                rows[t] = score_row(bm25, t, expand)
                memo.rescored += 1
            else:
                rows[t] = _renear(before, edited, fresh)
        memo.updated += 1
    elif (resized := memo.resized(skills, expand)) is not None:
        gone, added = resized
        moved = _moved(index_terms([s for s in memo.skills if s.name in gone]), list(added.values()))
        fresh = {name: counted(t) for name, t in added.items()}
        relisted = frozenset(t for t in moved if (t in memo.vocabulary) != bm25.knows(t))
        for t in texts:
            before = memo.rows.get(t)
            after = None if before is None else _reread(bm25, t, expand, before, gone, fresh, relisted)
            if after is None:
                after = score_row(bm25, t, expand)
                memo.rescored += 1
            rows[t] = after
        memo.updated += 1
    else:
        rows = {t: score_row(bm25, t, expand) for t in texts}
    memo.names, memo.hashes = tuple(s.name for s in skills), tuple(s.content_hash for s in skills)
    memo.skills, memo.expand, memo.rows, memo.vocabulary = tuple(skills), expand, rows, bm25.vocabulary
    return calibrate_lexical(key, lambda q: rows[q].share, pseudo, skills,
                             lambda q: known_words(bm25, rows[q].tokens))


def _moved(old: Sequence[SkillTerms], new: Sequence[SkillTerms]) -> set[str]:
    """The words whose document frequency the change from ``old`` to ``new`` terms moved."""
    df = Counter(t for terms in new for t in terms.tokens)
    df.subtract(t for terms in old for t in terms.tokens)
    return {t for t, d in df.items() if d}


def _renear(before: RowState, edited: frozenset[str],
            fresh: Mapping[str, tuple[Mapping[str, int], str]]) -> RowState:
    """``before`` with the edited skills' weights replaced by their new ones (the share is kept)."""
    if before.near is None or not edited:
        return before
    near = {n: w for n, w in before.near.items() if n not in edited}
    for name, terms in fresh.items():
        if (w := weights(terms, before.known)).scores():
            near[name] = w
    return replace(before, near=near)


def _reread(bm25: BM25Index, text: str, expand: Expander | None, before: RowState,
            gone: frozenset[str], fresh: Mapping[str, tuple[Mapping[str, int], str]],
            relisted: frozenset[str]) -> RowState | None:
    """``text``'s state after skills were added or deleted (``gone``: the names no longer there or
    changed, ``fresh``: the new and changed skills' terms), read off the skills near its best, or
    None when it must be scored whole (the module docstring's rules)."""
    if before.near is None:
        return None
    toks = before.tokens
    if _expansion_moved(bm25, text, expand, before, relisted):
        return None
    known = tuple(t for t in dict.fromkeys(toks) if bm25.knows(t))
    if known != before.known:
        return None
    near = {n: w for n, w in before.near.items() if n not in gone}
    for name, terms in fresh.items():
        if (w := weights(terms, known)).scores():
            near[name] = w
    idf = [bm25.token_idf(t) for t in known]
    scores = near_scores(idf, near.values())
    best = max(scores, default=0.0)
    grew = max((a / b for a, b in zip(idf, before.idf, strict=True)), default=1.0)
    if before.ceiling > 0 and not best >= before.ceiling * grew * (1 + KEEP_MARGIN):
        return None
    holders = frozenset(n for n, s in zip(near, scores, strict=True) if s == best) if best > 0 \
        else frozenset()
    mx = bm25.max_score(toks)
    share = 0.0 if best <= 0 or mx <= 0 or not bm25.shares_a_word(toks) else best / mx
    return RowState(toks, share, best, holders, known, before.idf, near, before.ceiling, before.asked)


def _kept(bm25: BM25Index, text: str, expand: Expander | None, before: RowState, moved: set[str],
          relisted: frozenset[str], edited_terms: Sequence[SkillTerms], edited: frozenset[str]) -> bool:
    """Whether ``before`` is still ``text``'s state on ``bm25`` after an edit (the module
    docstring's rules)."""
    toks = before.tokens
    if before.holders & edited or any(t in moved for t in toks):
        return False
    if _expansion_moved(bm25, text, expand, before, relisted):
        return False
    for terms in edited_terms:
        s = skill_score(bm25, toks, terms)
        if s > 0 and not s < before.best * (1 - KEEP_MARGIN):
            return False
    return True
