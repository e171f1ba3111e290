"""Pure decisions of episodic memory: the MATCH expression, recency weights, and the prompt block.

Nothing here touches SQLite or the clock, so every rule is tested with plain tables.

Scoring (pinned by tests)::

    relevance = -bm25(sessions_fts)                      FTS5's bm25 is negative; larger is better
    recency   = age_weight(age_days) ** recency_bias     from week / month / quarter / older
    score     = relevance * recency * relevance_score    relevance_score: a stored per-session prior

The exponent form keeps every weight positive for any bias >= 0: ``bias = 0`` switches recency off
(all weights 1), ``bias = 1`` uses the configured weights as written, ``bias = 2`` squares them
(stronger preference for recent sessions). A linear form ``1 + (w - 1) * bias`` would turn the
0.7 weight negative for bias > 3.3 and invert the ranking.

``age_weight`` is a smooth curve through the configured weights, not steps: with buckets a session
6.9 days old outweighed one 7.1 days old by a third, and which of two equal matches was recalled
turned on the hour. Each weight holds exactly in the middle of its age range (``ANCHOR_DAYS``) and
below the first / past the last anchor; between anchors the log weight follows a smoothstep, so
the curve has no jump and no kink, stays between its two anchors' weights (monotone when the
weights are), and the largest ratio between two ages is still the largest over the smallest weight.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex

from hermes_core.tokenize import (
    MAX_CLUSTER_POINTS,
    has_cjk,
    is_word,
    symbol_terms,
    tokenize,
    without_keycaps,
)
from hermes_core.types import MemoryFragment

if TYPE_CHECKING:   # only named in annotations: config (pydantic, yaml, the routing rules) costs
    from hermes_core.config import RecencyWeights  # ~0.4 s to import; a store needs none of it

SECONDS_PER_DAY = 86_400.0

#: The ages (days) at which the week / month / quarter / older weights hold exactly: the middles of
#: 0-7, 7-30 and 30-90 days, and four months for "older" (90 days and more).
ANCHOR_DAYS = (3.5, 18.5, 60.0, 120.0)

#: At most this many distinct terms go into one MATCH: a pasted log must not become a 2,000-way OR.
MAX_QUERY_TERMS = 24
#: Only the start (and the last ``MAX_TAIL_CHARS``) of a very long message is segmented (jieba on
#: a 1 MB paste would cost a turn).
MAX_QUERY_CHARS = 4_000

# Words that match nearly every summary: they cost a scan of the whole index and rank nothing.
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no",
    "not", "of", "on", "or", "our", "please", "so", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "would", "you", "your",
    # what the tokenizer leaves of English contractions (what's, don't, we'd, you're, it'll, I've,
    # I'm, isn't): as terms they matched every session with an apostrophe ("Let's Encrypt")
    "s", "t", "d", "re", "ll", "ve", "m", "don", "doesn", "didn", "isn", "aren", "wasn", "weren",
    "hasn", "haven", "hadn", "couldn", "wouldn", "shouldn",
    "的", "了", "是", "我", "你", "他", "她", "它", "在", "和", "有", "就", "不", "也", "都",
    "这", "那", "吗", "呢", "吧", "啊",
    "与", "及", "或", "把", "被", "给", "让", "个", "么", "什么", "怎么", "如何", "一下",
))


def query_terms(text: str, *, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """Distinct index terms of a user query, in order, without stopwords; at most ``limit``.

    The query goes through the same :func:`tokenize` as the indexed text, so a Chinese word is
    looked up exactly as jieba segmented it at index time, and its symbols through the same
    :func:`symbol_terms` (an emoji; punctuation in a query of no word); a keycap's digit is
    no word of a query (1️⃣ is not "1").

    A long message keeps both its ends: its first ``MAX_QUERY_CHARS`` and last
    ``MAX_TAIL_CHARS`` characters are segmented, and past ``limit`` terms its first and last
    terms are kept, not only the first. A log or a long story pasted before the question, or a
    chatty message, ends with what it asks ("... how did we configure the ingress?"). The last
    terms are the ones said last: a word the question repeats from the middle is the end's.
    A question asked in the unread middle (between two pasted logs) is segmented too
    (:func:`_questions`), and past ``limit`` its words are kept before the ends'. A link's words
    (:func:`_split_links`) come after the message's own, only where there is room: a question
    followed by links is searched by the question, not by ``https``, ``io`` and ``docs``.
    """
    head = ""
    tail = ""
    asked: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        end = _grapheme_end(text, MAX_QUERY_CHARS)
        cut = text[:end]   # never inside an emoji or keycap
        head = _long_cluster_head(text, end) if end < MAX_QUERY_CHARS else ""
        space = max(cut.rfind(" "), cut.rfind("\n"))
        kept = cut[:space] if space > MAX_QUERY_CHARS // 2 else cut  # no half word at the end
        if len(kept) < len(cut) and len(text) - MAX_TAIL_CHARS <= len(kept):
            tail = text[len(kept):]   # the ends meet at that space: the word across the cut too
        else:
            tail = _tail(text, max(len(cut), len(text) - MAX_TAIL_CHARS))
            asked = _questions(text, len(kept), len(text) - len(tail))
        text = kept
    text, links = _split_links(text)
    symbols = symbol_terms(f"{text} {head}" if head else text)
    tokens = [*tokenize(without_keycaps(text)), *symbols]
    asked_tokens: list[str] = []
    for question in asked:
        question, more = _split_links(question)
        asked_tokens += tokenize(without_keycaps(question))
        links += more
    tokens += asked_tokens
    if tail:
        tail, more = _split_links(tail)
        tokens += [*tokenize(without_keycaps(tail)), *symbol_terms(tail)]
        links += more
    # as the index has them; no stopword, no lone ZWJ / selector
    words = [tok for tok in tokens if tok not in STOPWORDS and is_word(tok)]
    terms = list(dict.fromkeys(words))
    if len(terms) <= limit:
        return terms + [t for t in _link_words(links) if t not in terms][:limit - len(terms)]
    # a question asked mid-paste is what the message asks: its words go first
    keep = list(dict.fromkeys(t for t in asked_tokens if t not in STOPWORDS and is_word(t)))
    keep = keep[:limit // 3]
    room = limit - len(keep)
    first = [t for t in terms if t not in keep][:room // 2]
    taken = {*first, *keep}
    # the end's terms are the ones said last: a word the closing question repeats from the
    # middle of the message ("... the ingress broke ... how did we configure the ingress?")
    # belongs to the end, not to the middle where it was first said
    last = list(dict.fromkeys(t for t in reversed(words) if t not in taken))
    return first + keep + last[:room - len(first)][::-1]


# a link written out (a scheme, or www.): its words are the message's last resort
# (a link ends at a space or at full-width punctuation: Chinese puts no space after "，")
_LINK_END = "\\s<>\"'`\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
# (and starts after anything but a Latin letter or digit: "看https://..." is a link, as Chinese
# is written; "\b" saw no boundary between 看 and h)
_LINK = re.compile(rf"(?<![A-Za-z0-9_])(?:(?:https?|ftp)://|www\.)[^{_LINK_END}]+", re.IGNORECASE)
#: Pieces of links that name no topic: schemes, hosts' common parts, page suffixes.
LINK_NOISE = frozenset(("http", "https", "ftp", "www", "com", "org", "net", "io", "co", "html",
                        "htm", "php", "aspx", "index"))


def _split_links(text: str) -> tuple[str, list[str]]:
    """``text`` with each link replaced by a space, and the links."""
    if "://" not in text and "www." not in text.casefold():
        return text, []
    links = _LINK.findall(text)
    return (_LINK.sub(" ", text), links) if links else (text, [])


def _link_words(links: Sequence[str]) -> list[str]:
    """The distinct words of ``links`` that may name a topic (a repository, a product, a page):
    no scheme or common host part (``LINK_NOISE``), no lone letter or number."""
    words = (t for link in links for t in tokenize(link))
    return list(dict.fromkeys(t for t in words if t not in STOPWORDS and t not in LINK_NOISE
                              and is_word(t) and len(t) > 1 and not t.isdigit()))


#: How many marks of one sign :func:`_questions` reads back before it gives up on that sign.
MAX_MARKS_READ = 1_024
# what may stand before a "?" that ends a question, besides a letter or digit
_BEFORE_MARK = frozenset(")]\"'`»”’」』")


def _ends_a_word(text: str, at: int, start: int) -> bool:
    """The "?" at ``at`` follows a word (past up to two "?" or "!" before it): "ok??" asks,
    "= ?", "=?" and a run of "?" (text whose encoding was lost) do not."""
    floor = max(start, at - 2)
    while at > floor and text[at - 1] in "?!":
        at -= 1
    return at > start and (text[at - 1].isalnum() or text[at - 1] in _BEFORE_MARK)


#: At most this many questions asked in the unread middle of a long message are segmented, each
#: at most ``MAX_QUESTION_CHARS`` characters: the last ones asked.
MID_QUESTIONS = 2
MAX_QUESTION_CHARS = 300
# where the sentence before a question mark begins
_SENTENCE_END = re.compile(r"\n|[。！？]|[.!?](?=\s)")


def _questions(text: str, start: int, stop: int) -> list[str]:
    """The last ``MID_QUESTIONS`` questions asked between ``start`` and ``stop``: each from the
    start of its sentence (or ``MAX_QUESTION_CHARS`` before its question mark) to the mark. Found
    by the mark alone, so a megabyte's middle costs no segmenting."""
    marks: list[int] = []
    # read back from the end: str.rfind, no regex over a megabyte. A full-width mark always ends
    # a question; "?" only before a space (not a URL's "?id=") and after a word (not a SQL
    # placeholder's "id = ? AND" or "id=?"), and each sign reads at most MAX_MARKS_READ marks,
    # so a middle of "?" (a paste whose encoding was lost) costs no walk over every one.
    for sign in ("？", "? ", "?\n", "?\r", "?\t"):
        at, found, read = stop, 0, 0
        while (found < MID_QUESTIONS and read < MAX_MARKS_READ
               and (at := text.rfind(sign, start, at)) >= 0):
            read += 1
            if sign == "？" or _ends_a_word(text, at, start):
                marks.append(at + 1)
                found += 1
    if stop - 1 >= start and text[stop - 1] == "?" and _ends_a_word(text, stop - 1, start):
        marks.append(stop)
    out: list[str] = []
    for mark in sorted(marks)[-MID_QUESTIONS:]:
        begin = max(start, mark - MAX_QUESTION_CHARS)
        for m in _SENTENCE_END.finditer(text, begin, mark - 1):
            begin = m.end()
        if text[begin:mark].strip():
            out.append(text[begin:mark])
    return out


#: How much of the end of a message longer than ``MAX_QUERY_CHARS`` is segmented too.
MAX_TAIL_CHARS = 1_000
# where the tail of a long message may start: after a space or a mark that ends a clause, never
# inside a word, an emoji or a keycap
_TAIL_START = regex.compile(r"[\s,.;:!?，。；：！？、]+(?![\p{M}\p{Cf}\p{Sk}])")
_HAN = regex.compile(r"\p{Han}")


def _tail(text: str, start: int) -> str:
    """The end of ``text`` from a word's start at or after ``start``: after the first clause or
    word boundary in the first half of what is left; else from its first Chinese character (a
    Chinese run with no punctuation, a voice transcript, starts a word at each character); else
    after the first boundary further on (a one-line blob, a kubeconfig's key or an inline image,
    pasted before the question fills the first half). "" when there is none of these (one long
    run of letters or emoji, whose pieces would be terms of no word)."""
    m = _TAIL_START.search(text, start, start + (len(text) - start) // 2)
    if m:
        return text[m.end():]
    han = _HAN.search(text, start)
    if han:
        return text[han.start():]
    m = _TAIL_START.search(text, start)
    return text[m.end():] if m else ""


#: A term found in more sessions than this is common: it is left out of the MATCH. Common terms
#: contribute little to bm25 (low idf) yet cost most (the longest doclists), so the search cost is
#: bounded by the rare terms' doclists whatever the archive's size.
COMMON_DF = 1_000
#: At most this many (the rarest) terms go into one MATCH.
MAX_MATCH_TERMS = 8
#: A message of only common terms searches this many of the newest matching sessions, OR of its
#: rarest ``COMMON_ONLY_TERMS`` terms, and ranks those.
COMMON_ONLY_TERMS = 3
RECENT_BUDGET = 400


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """Which terms to MATCH, and whether every one is common (then search the newest sessions)."""

    terms: tuple[str, ...]
    common_only: bool = False

    @property
    def expression(self) -> str | None:
        return " OR ".join(match_term(t) for t in self.terms) if self.terms else None

    @property
    def expressions(self) -> tuple[str, ...]:
        """One MATCH expression a term: a session is scored per term (``SessionStore.search``)."""
        return tuple(match_term(t) for t in self.terms)


def plan_match(dfs: Mapping[str, int], *, common_df: int = COMMON_DF,
               max_terms: int = MAX_MATCH_TERMS) -> MatchPlan:
    """The terms worth searching, given each query term's document frequency (in query order).

    Terms no session has are dropped (they match nothing); terms in more than ``common_df``
    sessions are dropped while a rarer one remains; of the rest the ``max_terms`` rarest are kept
    (ties keep query order). A query of common terms only keeps its ``COMMON_ONLY_TERMS`` rarest.
    A prefix term (:func:`as_prefix`) in more than ``common_df`` sessions is dropped, never
    searched among the newest sessions.
    """
    order = {t: i for i, t in enumerate(dfs)}
    # a prefix found in more than common_df sessions is the start of common words: a guess that
    # ranks nothing, and FTS5 builds a prefix's whole doclist to search it
    present = sorted((t for t, df in dfs.items() if df > 0 and t.strip()
                      and not (t.endswith(PREFIX_MARK) and df > common_df)),
                     key=lambda t: (dfs[t], order[t]))
    rare = [t for t in present if dfs[t] <= common_df]
    if rare:
        return MatchPlan(tuple(rare[:max_terms]))
    return MatchPlan(tuple(present[:COMMON_ONLY_TERMS]), common_only=bool(present))


def quote_term(term: str) -> str:
    """One FTS5 string literal: wrapped in double quotes, inner quotes doubled.

    Inside quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``^``, ``:`` and parentheses are plain
    characters, so no user text can become syntax or a column filter.
    """
    return '"' + term.replace('"', '""') + '"'


#: A query word no session has whole is looked up as the start of longer words (postgres:
#: PostgreSQL, deploy: deployments) when it is at least this long; a shorter one would match too
#: much (api: apiary, log: logistics).
MIN_PREFIX_CHARS = 4
_LETTERS = re.compile(r"[^\W\d_]+")
#: Marks a term of a plan looked up as a prefix (no index term holds it: tokens are words).
PREFIX_MARK = "*"


def as_prefix(term: str) -> str | None:
    """``term`` marked to be looked up as the start of longer words, or None when it may not be:
    shorter than ``MIN_PREFIX_CHARS``, not all letters (numbers, versions), or Chinese (jieba's
    terms are whole words, and ``cut_for_search`` already indexes the words inside a longer one).
    """
    if len(term) >= MIN_PREFIX_CHARS and _LETTERS.fullmatch(term) and not has_cjk(term):
        return term + PREFIX_MARK
    return None


def match_term(term: str) -> str:
    """One plan term as FTS5 looks it up: quoted, and a prefix term (``as_prefix``) with FTS5's
    star outside the quotes. A document frequency is counted, and the MATCH made, from it."""
    if term.endswith(PREFIX_MARK):
        return quote_term(term[:-1]) + "*"
    return quote_term(term)


def build_match(text: str) -> str | None:
    """A MATCH expression that is always valid FTS5: quoted terms joined by OR; None if no terms.

    OR (not AND) because a query is a whole user message: requiring every word would match almost
    nothing, and bm25 already ranks sessions that share more (and rarer) terms first.
    """
    terms = [t for t in query_terms(text) if t.strip()]
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)


def relevance_from_bm25(bm25: float) -> float:
    """FTS5's bm25() is negative (more negative = better); relevance is its positive mirror."""
    return max(0.0, -float(bm25))


def age_days(created_at: float, now: float) -> float:
    """Age in days; a timestamp in the future (clock skew) counts as brand new, never negative."""
    return max(0.0, (now - created_at) / SECONDS_PER_DAY)


#: How far ahead of the clock a session's stamp may be and still count as new (another
#: machine's drift); further ahead, the stamp says nothing of its age (``memory add`` refuses it).
FUTURE_SLACK_DAYS = 1.0


def weighed_age(created_at: float, now: float) -> float:
    """The age recency weighs: :func:`age_days`, except that a stamp more than
    ``FUTURE_SLACK_DAYS`` ahead of ``now`` weighs as the oldest (``ANCHOR_DAYS[-1]``). As brand
    new, a session recorded while the clock ran a year fast outranked every real one for a year."""
    if created_at - now > FUTURE_SLACK_DAYS * SECONDS_PER_DAY:
        return ANCHOR_DAYS[-1]
    return age_days(created_at, now)


def _log_weights(weights: RecencyWeights) -> tuple[float, float, float, float]:
    """The logs of the weights at ``ANCHOR_DAYS``: taken once per ranking, not per hit."""
    return (math.log(weights.week), math.log(weights.month), math.log(weights.quarter),
            math.log(weights.older))


def _recency(age: float, logs: tuple[float, float, float, float], bias: float) -> float:
    if bias == 0.0:
        return 1.0
    if age <= ANCHOR_DAYS[0]:
        log_w = logs[0]
    elif age >= ANCHOR_DAYS[-1]:
        log_w = logs[-1]
    else:   # the log weight follows a smoothstep from one anchor's to the next
        i = bisect.bisect_right(ANCHOR_DAYS, age) - 1
        t = (age - ANCHOR_DAYS[i]) / (ANCHOR_DAYS[i + 1] - ANCHOR_DAYS[i])
        log_w = logs[i] + (logs[i + 1] - logs[i]) * t * t * (3.0 - 2.0 * t)
    return math.exp(bias * log_w)


def recency_weight(age: float, weights: RecencyWeights, bias: float) -> float:
    """``age_weight(age) ** bias``: the weights' smooth curve at ``age`` days (see the module
    docstring for the curve, and why an exponent)."""
    return _recency(age, _log_weights(weights), bias)


@dataclass(frozen=True, slots=True)
class Hit:
    """One FTS5 row before re-ranking."""

    rowid: int
    session_id: str
    created_at: float
    prior: float
    bm25: float


def rerank(hits: Iterable[Hit], *, now: float, weights: RecencyWeights, bias: float,
           exclude_session: str | None, limit: int, min_score: float = 0.0
           ) -> list[tuple[Hit, float, float]]:
    """(hit, score, age_days) for the best ``limit`` hits, the excluded session dropped.

    Ties keep FTS order (stable sort), so the result is deterministic.
    """
    scored: list[tuple[Hit, float, float]] = []
    logs = _log_weights(weights)
    for hit in hits:
        if exclude_session is not None and hit.session_id == exclude_session:
            continue
        age = age_days(hit.created_at, now)
        recency = _recency(weighed_age(hit.created_at, now), logs, bias)
        score = relevance_from_bm25(hit.bm25) * recency * max(0.0, hit.prior)
        if score < min_score:
            continue
        scored.append((hit, score, age))
    scored.sort(key=lambda item: item[1], reverse=True)
    return scored[:limit]


#: A configured ``min_score`` is the floor for an index of this many rows; smaller and larger
#: indexes scale it by :func:`best_idf` (:func:`score_floor`).
MIN_SCORE_ROWS = 1_000
#: FTS5's bm25 gives a term found in half the index rows or more this idf, not a negative one.
FTS5_IDF_CLAMP = 1e-6


def best_idf(rows: int) -> float:
    """The largest idf FTS5's bm25 gives a term in an index of ``rows`` rows (a term one row
    has), clamped as FTS5 clamps it: ``log((N - 0.5) / 1.5)``, 1e-6 below three rows."""
    return max(math.log((rows - 0.5) / 1.5), FTS5_IDF_CLAMP) if rows > 0 else FTS5_IDF_CLAMP


def score_floor(min_score: float, rows: int) -> float:
    """``min_score`` for an index of ``rows`` rows. bm25 scores grow with the log of the index
    size, and in an index of one or two rows every idf is FTS5's clamp (1e-6): a fixed floor
    tuned on a real archive dropped every match of a young one. Scaled by the largest idf the
    index can give against that of ``MIN_SCORE_ROWS`` rows, one match scores about the same
    against its floor at any size (measured: the ingress session 1.97 / 0.079 at 3 sessions,
    24.6 / 1.0 at 1,000)."""
    if min_score <= 0:
        return 0.0
    return min_score * best_idf(rows) / best_idf(MIN_SCORE_ROWS)


def tie_break(ranked: Sequence[tuple[Hit, float, float]],
              texts: Mapping[int, tuple[str, tuple[str, ...]]],
              history_terms: Sequence[str]) -> list[tuple[Hit, float, float]]:
    """``ranked`` with sessions of equal score ordered by how many ``history_terms`` their summary
    or tags contain (more first); different scores keep their order. The conversation so far may
    choose between equally good matches of the message, never outvote a better one.

    Only sessions that share their score with another are looked at, by substring (the terms are
    already index terms), so a ranking without ties costs nothing.
    """
    counts: dict[float, int] = {}
    for _, score, _ in ranked:
        counts[score] = counts.get(score, 0) + 1
    if not history_terms or all(n == 1 for n in counts.values()):
        return list(ranked)
    wanted = tuple(dict.fromkeys(t.casefold() for t in history_terms))

    def overlap(item: tuple[Hit, float, float]) -> int:
        if counts[item[1]] == 1:
            return 0
        summary, tags = texts.get(item[0].rowid, ("", ()))
        text = " ".join((summary, *tags)).casefold()
        return sum(1 for t in wanted if t in text)

    return sorted(ranked, key=lambda item: (-item[1], -overlap(item)))


# --------------------------------------------------------------------------- rendering

_WS = re.compile(r"\s+")
_GRAPHEME = regex.compile(r"\X")
#: How far past a cut a character may run on (a family emoji is 7 code points; Zalgo more).
_CLUSTER_SPAN = 64


def format_age(days: float) -> str:
    """A human age: today, yesterday, N days / weeks / months / years ago."""
    if days < 1:
        return "today"
    if days < 2:
        return "yesterday"
    if days < 14:
        return f"{int(days)} days ago"
    if days < 60:
        return f"{int(days // 7)} weeks ago"
    if days < 365:
        return f"{int(days // 30)} months ago"
    years = int(days // 365)
    return "1 year ago" if years == 1 else f"{years} years ago"


def _grapheme_end(text: str, at: int) -> int:
    """``at`` moved back to where a character as a reader sees it begins (``regex``'s ``\\X``:
    an emoji joined by ZWJ, a flag's two letters, a letter and its accents), so a cut never
    splits one; ``at`` itself when that would leave nothing. Read from the start (a flag's
    letters pair from the start of their run), so it costs the clip's length, not the text's."""
    end = 0
    for m in _GRAPHEME.finditer(text, 0, min(len(text), at + _CLUSTER_SPAN)):
        if m.end() > at:
            break
        end = m.end()
    return end if end > 0 else at


def _long_cluster_head(text: str, at: int) -> str:
    """The first ``MAX_CLUSTER_POINTS`` code points (presentation selectors aside) of the cluster
    at ``at`` when it has that many: its index term is that head (:func:`symbol_terms`), so a
    query cut before it still searches it; "" for a shorter one, whose piece would be another
    emoji's term. Read at most ``_CLUSTER_SPAN`` characters on."""
    m = _GRAPHEME.match(text, at, at + _CLUSTER_SPAN)
    points = [c for c in m.group() if c not in "\ufe0e\ufe0f"] if m else []
    return "".join(points[:MAX_CLUSTER_POINTS]) if len(points) >= MAX_CLUSTER_POINTS else ""


def clip_text(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters with the ellipsis that marks a cut, cut
    at a space when one is near: how a summary is shown. Clipping the result again changes
    nothing, so a summary shortened before the injection scan renders as it was scanned."""
    text = _WS.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[:_grapheme_end(text, max(1, limit - 1))].rstrip()
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut + "…"


def render_memories(fragments: Sequence[MemoryFragment], *, max_chars_each: int = 600) -> str:
    """The per-turn "Relevant past sessions" block; empty string when there is nothing to show.

    Each summary is collapsed to one line (so stored text cannot forge headings or fake turns) and
    clipped to ``max_chars_each`` characters.
    """
    if not fragments:
        return ""
    lines = ["## Relevant past sessions",
             "Summaries of earlier conversations that may relate to this message (oldest facts may be "
             "out of date):"]
    for f in fragments:
        tags = f" [tags: {', '.join(f.tags)}]" if f.tags else ""
        lines.append(f"- ({format_age(f.age_days)}) {clip_text(f.summary, max_chars_each)}{tags}")
    return "\n".join(lines)
