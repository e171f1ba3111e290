"""L1 hard triggers: a phrase in the message that names a skill outright.

Three tiers, tried on every trigger that qualifies for them:

1. exact substring (case-folded, NFKC-normalised);
2. CJK subsequence, for triggers of >= 2 CJK characters with no ASCII mixed in: the trigger's
   characters appear in order inside a window of at most ``3 * len(trigger)`` characters, so
   ``查违章`` matches ``查一下违章`` but not two characters at opposite ends of a long message;
3. fuzzy regex, for triggers of >= 2 segments (words, CJK words, or the Latin and CJK runs of
   mixed text): the segments joined by ``.{0,3}`` so ``发送 邮件`` matches ``发送一封邮件`` and
   ``PDF转换`` matches ``PDF 转换``.

A trigger that begins (ends) with an ASCII letter or digit only matches where the query has no
ASCII letter or digit just before (after) it, as L3 synonyms do: ``git`` must not auto-load the git
skill for "what digit...", nor ``pr`` for "print". CJK text has no spaces, so CJK ends need none.

Precedence is one sort key, so it is easy to state and to test: the longest matching trigger wins;
at equal length the one found earliest in the query; then the stricter tier; then the skill name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hermes_core.tokenize import has_cjk, is_cjk, tokenize

_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_SPLIT = re.compile(r"[\s,;，、；/|]+")
SUBSEQ_WINDOW_FACTOR = 3


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True, slots=True)
class TriggerHit:
    """The trigger that fired: which skill, which phrase, which tier, where in the query."""

    skill: str
    trigger: str
    tier: int
    position: int
    length: int = 0  # of the normalised trigger (padding stripped, NFKC): what "longest" compares

    def sort_key(self) -> tuple[int, int, int, str]:
        return (-(self.length or len(self.trigger)), self.position, self.tier, self.skill)


@dataclass(frozen=True, slots=True)
class _Rule:
    skill: str
    trigger: str
    norm: str
    cjk_subseq: bool
    fuzzy: re.Pattern[str] | None
    left_bound: bool = False   # starts with an ASCII alnum: needs a non-alnum (or start) before it
    right_bound: bool = False  # ends with an ASCII alnum: needs a non-alnum (or end) after it

    def find(self, q: str) -> int:
        """First tier-1 occurrence of the trigger in ``q`` that respects the word boundaries."""
        n = len(self.norm)
        pos = q.find(self.norm)
        while pos != -1:
            if ((not self.left_bound or pos == 0 or not _is_word(q[pos - 1]))
                    and (not self.right_bound or pos + n == len(q) or not _is_word(q[pos + n]))):
                return pos
            pos = q.find(self.norm, pos + 1)
        return -1


def _is_word(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _script_runs(chunk: str) -> list[str]:
    """``pdf转换`` -> [pdf, 转换]: Latin and CJK runs are words of their own, as a query that
    writes ``PDF 转换`` (spaced, as mixed text often is) would have them.

    Only when every run has >= 2 characters: a lone ``查`` (``查PDF``) is too common a character to
    anchor a fuzzy match, so such a chunk stays whole (exact match only).
    """
    runs: list[str] = []
    for c in chunk:
        if runs and is_cjk(c) == is_cjk(runs[-1][-1]):
            runs[-1] += c
        else:
            runs.append(c)
    return runs if all(len(r) >= 2 for r in runs) else [chunk]


def _segments(norm: str) -> list[str]:
    """Words of a trigger: split on spaces/punctuation and between Latin and CJK runs; CJK runs
    further split by the tokenizer."""
    out: list[str] = []
    for chunk in (run for part in _SPLIT.split(norm) for run in _script_runs(part)):
        if not chunk:
            continue
        if has_cjk(chunk) and not _ASCII_ALNUM.search(chunk) and len(chunk) >= 4:
            parts = [t for t in tokenize(chunk) if t and t in chunk]
            # cut_for_search also yields sub-words; keep a left-to-right cover of the chunk
            cover: list[str] = []
            pos = 0
            for t in sorted(set(parts), key=lambda t: (chunk.find(t), -len(t))):
                i = chunk.find(t, pos)
                if i == pos:
                    cover.append(t)
                    pos += len(t)
            out.extend(cover if pos == len(chunk) and len(cover) > 1 else [chunk])
        else:
            out.append(chunk)
    return out


def _rule(skill: str, trigger: str) -> _Rule | None:
    norm = normalize(trigger).strip()
    if not norm:
        return None
    cjk_chars = sum(1 for c in norm if is_cjk(c))
    subseq = cjk_chars >= 2 and not _ASCII_ALNUM.search(norm)
    segs = _segments(norm)
    left, right = _is_word(norm[0]), _is_word(norm[-1])
    fuzzy = None
    if len(segs) >= 2:
        body = ".{0,3}".join(re.escape(s) for s in segs)
        fuzzy = re.compile(("(?<![a-z0-9])" if left else "") + body
                           + ("(?![a-z0-9])" if right else ""), re.DOTALL)
    return _Rule(skill, trigger, norm, subseq, fuzzy, left, right)


def _subsequence_at(query: str, needle: str) -> int:
    """Start of the shortest window of ``query`` containing ``needle``'s characters in order, or -1.

    Windows longer than ``SUBSEQ_WINDOW_FACTOR * len(needle)`` do not count.
    """
    chars = [c for c in needle if not c.isspace()]
    limit = SUBSEQ_WINDOW_FACTOR * len(chars)
    start = query.find(chars[0])
    while start != -1:
        pos = start
        ok = True
        for c in chars[1:]:
            pos = query.find(c, pos + 1, start + limit)
            if pos == -1:
                ok = False
                break
        if ok:
            return start
        start = query.find(chars[0], start + 1)
    return -1


class TriggerIndex:
    """Compiled trigger rules; :meth:`match` returns the winning hit or None."""

    def __init__(self, triggers: Mapping[str, Iterable[str]] | None = None) -> None:
        self._rules: list[_Rule] = []
        if triggers:
            self.set(triggers)

    def set(self, triggers: Mapping[str, Iterable[str]]) -> None:
        rules = []
        for skill in sorted(triggers):
            for t in triggers[skill]:
                r = _rule(skill, t)
                if r is not None:
                    rules.append(r)
        self._rules = rules

    def __len__(self) -> int:
        return len(self._rules)

    def matches(self, query: str) -> list[TriggerHit]:
        """Every hit (best tier per rule), best first."""
        if not query or not self._rules:
            return []
        q = normalize(query)
        hits: list[TriggerHit] = []
        for r in self._rules:
            pos = r.find(q)
            if pos != -1:
                hits.append(TriggerHit(r.skill, r.trigger, 1, pos, len(r.norm)))
                continue
            if r.cjk_subseq:
                pos = _subsequence_at(q, r.norm)
                if pos != -1:
                    hits.append(TriggerHit(r.skill, r.trigger, 2, pos, len(r.norm)))
                    continue
            if r.fuzzy is not None:
                m = r.fuzzy.search(q)
                if m is not None:
                    hits.append(TriggerHit(r.skill, r.trigger, 3, m.start(), len(r.norm)))
        hits.sort(key=TriggerHit.sort_key)
        return hits

    def match(self, query: str) -> TriggerHit | None:
        hits = self.matches(query)
        return hits[0] if hits else None


def merge_triggers(*sources: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Union of trigger maps (front matter + triggers file), order kept, duplicates dropped."""
    out: dict[str, list[str]] = {}
    for src in sources:
        for skill, trigs in src.items():
            lst = out.setdefault(skill, [])
            for t in trigs:
                if t not in lst:
                    lst.append(t)
    return {k: tuple(v) for k, v in out.items()}
