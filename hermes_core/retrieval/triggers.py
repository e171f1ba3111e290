"""L1 hard triggers: a phrase in the message that names a skill outright.

Three tiers, tried on every trigger that qualifies for them:

1. exact substring (case-folded, NFKC-normalised, Han folded to simplified); a trigger with
   traditional characters is also found where the query writes those very characters: t2s folds a
   character alone and the same character inside a phrase apart (乾 -> 干, 乾隆 kept), and a trigger
   written 乾 names the characters the user typed;
2. CJK subsequence, for triggers of >= 2 CJK characters with no ASCII mixed in: the trigger's
   characters appear in order inside a window of at most ``3 * len(trigger)`` characters, so
   ``查违章`` matches ``查一下违章`` but not two characters at opposite ends of a long message;
3. fuzzy regex, for triggers of >= 2 segments (words, CJK words, or the Latin and CJK runs of
   mixed text): the segments joined by ``.{0,3}`` so ``发送 邮件`` matches ``发送一封邮件`` and
   ``PDF转换`` matches ``PDF 转换``.

A trigger that begins (ends) with a letter, mark or digit of a script written with spaces (Latin,
Cyrillic, Greek, Arabic...) only matches where the query has no such character just before (after)
it, as L3 synonyms do: ``git`` must not auto-load the git skill for "what digit...", ``pr`` for
"print", nor ``кот`` for "который". CJK text has no spaces, so CJK ends need none, and a CJK
neighbour is a boundary (``用git提交``).

A trigger of stopwords or punctuation only (``a``, ``the``, ``how to``, ``的``) is ignored and listed
in :attr:`TriggerIndex.ignored`: it would auto-load its skill into nearly every message.

Precedence is one sort key, so it is easy to state and to test: the longest matching trigger wins;
at equal length the one found earliest in the query; then the stricter tier; then the skill name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import ahocorasick
import regex

from hermes_core.retrieval.token_memo import uses_jieba
from hermes_core.tokenize import (
    SPACED_WORD_CHAR,
    content_tokens,
    has_cjk,
    is_cjk,
    jieba_available,
    to_simplified,
    tokenize,
)
from hermes_core.tokenize import is_spaced_word_char as _is_word
from hermes_core.tokenize import normalize as normalize_text

_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_SPLIT = re.compile(r"[\s,;，、；/|]+")
SUBSEQ_WINDOW_FACTOR = 3
# Compiled tier-3 patterns kept. A pattern is compiled the first time a query holds all of its
# rule's segments, not when the index is built: compiling one costs about a millisecond (its
# boundary classes are Unicode properties), and 15,000 three-word triggers took 18 s to compile on
# every refresh of the catalog, while a turn reaches a handful of them.
FUZZY_COMPILED = 4096
# Rules remembered by (skill, trigger): a refresh re-indexes every trigger of the catalog, and
# normalising, segmenting and checking each for stopwords again cost 2.5 s for 60,000 triggers.
RULE_MEMO = 65_536


@lru_cache(maxsize=FUZZY_COMPILED)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.DOTALL)


def _bounded(q: str, start: int, end: int, left: bool, right: bool) -> bool:
    """Whether ``q[start:end + 1]`` respects a trigger's word boundaries: no spaced-script word
    character just before it when ``left``, none just after it when ``right``."""
    return ((not left or start == 0 or not _is_word(q[start - 1]))
            and (not right or end + 1 == len(q) or not _is_word(q[end + 1])))


def normalize(text: str) -> str:
    """The tokenizer's normalisation (NFKC, case-folded, Latin accents dropped), so a trigger
    written ``résumé`` fires on ``resume`` as BM25 would match it."""
    return normalize_text(text)


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
    fuzzy: str | None          # the tier-3 pattern (compiled on first use, see FUZZY_COMPILED)
    left_bound: bool = False   # starts with a spaced-script word char: needs none (or start) before
    right_bound: bool = False  # ends with a spaced-script word char: needs none (or end) after it
    written: str | None = None  # normalised without the Han fold, where that differs from ``norm``

    def find(self, q: str) -> int:
        """First tier-1 occurrence of the trigger in ``q`` that respects the word boundaries."""
        n = len(self.norm)
        pos = q.find(self.norm)
        while pos != -1:
            if _bounded(q, pos, pos + n - 1, self.left_bound, self.right_bound):
                return pos
            pos = q.find(self.norm, pos + 1)
        return -1

    def fuzzy_at(self, q: str) -> int:
        """Where the tier-3 pattern first matches in ``q``, or -1 (also for a rule without one)."""
        if self.fuzzy is None:
            return -1
        m = _compiled(self.fuzzy).search(q)
        return -1 if m is None else m.start()


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
        body = ".{0,3}".join(regex.escape(s) for s in segs)
        fuzzy = ((f"(?<!{SPACED_WORD_CHAR})" if left else "") + body
                 + (f"(?!{SPACED_WORD_CHAR})" if right else ""))
    written = normalize_text(trigger, fold=False).strip()
    return _Rule(skill, trigger, norm, subseq, fuzzy, left, right,
                 written if written != norm else None)


@lru_cache(maxsize=RULE_MEMO)
def _prepared(skill: str, trigger: str, jieba: bool | None) -> tuple[_Rule | None, bool, frozenset[str]]:
    """A trigger's rule (None: nothing left once normalised), whether it holds nothing but
    stopwords, and its tier-3 segments. ``jieba``: whether jieba segments the trigger's CJK text
    (None without CJK): it decides the segments and the stopword check, so it is part of the key."""
    r = _rule(skill, trigger)
    if r is None:
        return None, False, frozenset()
    if not content_tokens(r.norm):
        return r, True, frozenset()
    return r, False, frozenset(_segments(r.norm)) if r.fuzzy is not None else frozenset()


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
    """Compiled trigger rules; :meth:`match` returns the winning hit or None.

    One Aho-Corasick automaton holds every trigger (tier 1) and every fuzzy segment (tier 3), so a
    query is scanned once, in time linear in its length plus the matches; word boundaries are
    checked after each match. Tier 2 only looks at rules whose every character the query has; tier 3
    runs a rule's regex only when each of its segments was found. Both are necessary conditions of
    the tier, so the hits are exactly those of trying every rule in turn. Each rule is filed under
    its rarest character (tier 2) and its rarest segment (tier 3) across the catalog, so a query
    looks only at rules whose rarest key it contains: a word common to thousands of triggers does
    not make every turn walk them.
    """

    def __init__(self, triggers: Mapping[str, Iterable[str]] | None = None) -> None:
        self._rules: list[_Rule] = []
        self._automaton: Any = None
        self._written: Any = None    # tier 1 as written (rules whose Han the fold rewrites)
        self._by_rarest_char: dict[str, list[int]] = {}    # rarest character -> CJK rules (tier 2)
        self._chars: list[frozenset[str]] = []
        self._segments: list[frozenset[str]] = []
        self._segment_rules: dict[str, list[int]] = {}   # rarest segment -> fuzzy rules (tier 3)
        #: (skill, trigger) pairs left out because they hold no word but stopwords
        self.ignored: tuple[tuple[str, str], ...] = ()
        if triggers:
            self.set(triggers)

    def set(self, triggers: Mapping[str, Iterable[str]]) -> None:
        rules = []
        ignored: list[tuple[str, str]] = []
        rule_segments: list[frozenset[str]] = []
        for skill in sorted(triggers):
            for t in triggers[skill]:
                r, stopwords_only, segs = _prepared(skill, t, jieba_available() if uses_jieba(t) else None)
                if r is None:
                    continue
                if stopwords_only:
                    ignored.append((skill, t))   # "a", "the": every message would fire it
                    continue
                rules.append(r)
                rule_segments.append(segs)
        self._rules = rules
        self.ignored = tuple(ignored)
        exact: dict[str, list[int]] = {}       # normalised trigger -> rules (tier 1)
        segment_of: dict[str, list[int]] = {}  # fuzzy segment -> rules (tier 3)
        self._by_rarest_char = {}
        self._chars = []
        self._segments = []
        for i, r in enumerate(rules):
            exact.setdefault(r.norm, []).append(i)
            self._chars.append(frozenset(c for c in r.norm if not c.isspace()))
            segs = rule_segments[i]
            self._segments.append(segs)
            for seg in segs:
                segment_of.setdefault(seg, []).append(i)
        # file each rule under its rarest key: the query must contain every key of a rule anyway
        char_df: dict[str, int] = {}
        for i, r in enumerate(rules):
            if r.cjk_subseq:
                for c in self._chars[i]:
                    char_df[c] = char_df.get(c, 0) + 1
        for i, r in enumerate(rules):
            if r.cjk_subseq:
                rarest = min(self._chars[i], key=lambda c: (char_df[c], c))
                self._by_rarest_char.setdefault(rarest, []).append(i)
        self._segment_rules = {}
        for i, segs in enumerate(self._segments):
            if segs:
                rarest = min(segs, key=lambda g: (len(segment_of[g]), g))
                self._segment_rules.setdefault(rarest, []).append(i)
        self._automaton = None
        written: dict[str, list[int]] = {}
        for i, r in enumerate(rules):
            if r.written is not None:
                written.setdefault(r.written, []).append(i)
        self._written = None
        if written:
            as_written = ahocorasick.Automaton(ahocorasick.STORE_ANY)
            for key, ids in written.items():
                as_written.add_word(key, (len(key), _is_word(key[0]), _is_word(key[-1]), tuple(ids)))
            as_written.make_automaton()
            self._written = as_written
        if exact or segment_of:
            auto = ahocorasick.Automaton(ahocorasick.STORE_ANY)
            for key in {*exact, *segment_of}:
                auto.add_word(key, (key, len(key), _is_word(key[0]), _is_word(key[-1]),
                                    tuple(exact.get(key, ())), key in segment_of))
            auto.make_automaton()
            self._automaton = auto

    def __len__(self) -> int:
        return len(self._rules)

    def matches(self, query: str) -> list[TriggerHit]:
        """Every hit (best tier per rule), best first."""
        if not query or not self._rules or self._automaton is None:
            return []
        # a Chinese query is also looked for as written; its fold is that form's t2s (what
        # ``normalize`` does after the same NFKC, case fold and accents): normalised once
        as_written = self._written is not None and has_cjk(query)
        qw = normalize_text(query, fold=False) if as_written else ""
        q = to_simplified(qw) if as_written else normalize(query)
        tier1: dict[int, int] = {}     # rule -> first position where it matches whole
        found_segments: set[str] = set()
        for end, (key, length, left, right, rule_ids, is_segment) in self._automaton.iter(q):
            if is_segment:
                found_segments.add(key)
            if not rule_ids:
                continue
            start = end - length + 1
            if _bounded(q, start, end, left, right):
                for i in rule_ids:
                    tier1.setdefault(i, start)
        if self._written is not None and as_written:
            for end, (length, left, right, rule_ids) in self._written.iter(qw):
                start = end - length + 1
                if _bounded(qw, start, end, left, right):
                    for i in rule_ids:
                        tier1.setdefault(i, start)
        found: dict[int, TriggerHit] = {
            i: TriggerHit(self._rules[i].skill, self._rules[i].trigger, 1, pos, len(self._rules[i].norm))
            for i, pos in tier1.items()}
        qchars = set(q)
        for c in qchars & self._by_rarest_char.keys():
            for i in self._by_rarest_char[c]:
                r = self._rules[i]
                if i in found or not self._chars[i] <= qchars:
                    continue
                pos = _subsequence_at(q, r.norm)
                if pos != -1:
                    found[i] = TriggerHit(r.skill, r.trigger, 2, pos, len(r.norm))
        candidates = sorted(i for seg in found_segments for i in self._segment_rules.get(seg, ()))
        for i in candidates:
            r = self._rules[i]
            if r.fuzzy is not None and i not in found and self._segments[i] <= found_segments:
                pos = r.fuzzy_at(q)
                if pos != -1:
                    found[i] = TriggerHit(r.skill, r.trigger, 3, pos, len(r.norm))
        hits = [found[i] for i in sorted(found)]   # rule order, then the precedence sort (stable)
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
