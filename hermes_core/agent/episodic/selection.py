"""Which recalled sessions reach the prompt, and how much of each: pure functions, no SQLite.

* **Near duplicates.** A fact the user repeats in many chats ("my dog Biscuit is a golden
  retriever") is summarised into many sessions whose summaries differ by a word or two; the
  content hash only catches identical ones. Ranked by relevance and recency, those copies would
  take every recall slot and push out the sessions that add something. Of summaries whose word
  sets overlap by :data:`NEAR_DUPLICATE` or more (Jaccard, on the part that is shown), only the
  best ranked one is kept.
* **Token budget.** ``render_chars`` clips each summary by characters, but a Chinese character
  is about one token where four Latin ones are: five Chinese summaries cost four times the tokens
  of five English ones, every turn. :func:`fit_to_budget` shortens the summaries (long ones share
  what the short ones leave) so the rendered block stays within ``context_engine.block_tokens``
  counted with :func:`~hermes_core.tokens.count_tokens` in the model's encoding, and drops the lowest ranked
  sessions only when even a short line each would not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TypeVar

import regex

from hermes_core.agent.episodic.ranking import STOPWORDS, clip_text
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens, head_tokens
from hermes_core.types import MemoryFragment

#: Summaries whose shown words overlap this much (Jaccard) say the same thing.
NEAR_DUPLICATE = 0.8
#: A summary shortened to fewer tokens than this says too little to be worth its line.
MIN_SUMMARY_TOKENS = 24
ELLIPSIS = "…"

T = TypeVar("T")


_PIECES = regex.compile(r"(\p{Han}+)|([^\W_\p{Han}]+)")


@lru_cache(maxsize=2048)
def _words(text: str) -> frozenset[str]:
    """Shingles of ``text``: its case-folded words, stopwords left out, and each Chinese run as
    its character pairs (a single character alone). No jieba: segmenting every candidate cost
    ~2 ms a recall, and overlapping pairs tell copies apart as well."""
    out: set[str] = set()
    for han, word in _PIECES.findall(text.casefold()):
        if han:
            out.update(han[i:i + 2] for i in range(max(1, len(han) - 1)))
        elif word not in STOPWORDS:
            out.add(word)
    return frozenset(out)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of two texts' content words; 1.0 for two texts without any."""
    wa, wb = _words(a), _words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def distinct(ranked: Sequence[T], text_of: Callable[[T], str | None], *, limit: int,
             shown_chars: int, threshold: float = NEAR_DUPLICATE) -> list[T]:
    """The first ``limit`` items of ``ranked`` (best first) that are not near duplicates of a
    better one; items without text (``text_of`` None) are skipped. Only the first
    ``shown_chars`` characters are compared: what the prompt would show, and a bounded cost
    whatever a stored summary's length."""
    kept: list[T] = []
    kept_texts: list[str] = []
    for item in ranked:
        if len(kept) >= limit:
            break
        text = text_of(item)
        if text is None:
            continue
        shown = clip_text(text, shown_chars)
        if any(similarity(shown, other) >= threshold for other in kept_texts):
            continue
        kept.append(item)
        kept_texts.append(shown)
    return kept


def clip_tokens(text: str, tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """``text`` cut to at most ``tokens`` tokens of ``encoding``, an ellipsis included, at a space
    when one is near (Chinese has none: cut between characters)."""
    if count_tokens(text, encoding) <= tokens:
        return text
    cut = head_tokens(text, max(0, tokens - count_tokens(ELLIPSIS, encoding)), encoding).rstrip()
    space = cut.rfind(" ")
    if space > len(cut) * 0.6:
        cut = cut[:space]
    return cut + ELLIPSIS


def _shares(needs: Sequence[int], total: int) -> list[int]:
    """Water-filling: each need is met when it fits an equal share of what is left; the longer
    ones split the rest evenly."""
    out = [0] * len(needs)
    left, todo = total, sorted(range(len(needs)), key=lambda i: needs[i])
    for n, i in enumerate(todo):
        share = left // (len(todo) - n)
        out[i] = min(needs[i], share)
        left -= out[i]
    return out


def fit_to_budget(fragments: Sequence[MemoryFragment],
                  render: Callable[[Sequence[MemoryFragment]], str],
                  max_tokens: int, encoding: str = DEFAULT_ENCODING) -> tuple[MemoryFragment, ...]:
    """``fragments`` (best first) with summaries shortened so ``count_tokens(render(...))``
    (in ``encoding``, the model's) is at most ``max_tokens``; the lowest ranked are dropped while
    each could not keep :data:`MIN_SUMMARY_TOKENS`. ``render`` is the block's renderer; the
    fragments it is given come back as they were when the block already fits."""
    frags = list(fragments)

    def count(text: str) -> int:
        return count_tokens(text, encoding)

    if count(render(frags)) <= max_tokens:
        return tuple(frags)
    while frags:
        bare = [replace(f, summary="") for f in frags]
        room = max_tokens - count(render(bare))
        if room >= MIN_SUMMARY_TOKENS * len(frags):
            needs = [count(f.summary) for f in frags]
            caps = _shares(needs, room)
            out = [replace(f, summary=clip_tokens(f.summary, cap, encoding))
                   for f, cap in zip(frags, caps, strict=True)]
            # a whole can count a token more than its parts where they join (BPE merges across
            # the seam): checked, and one fragment fewer when it does not fit
            if count(render(out)) <= max_tokens:
                return tuple(out)
        frags.pop()
    return ()

