"""A shipped bilingual glossary that lets the lexical layer cross a language or naming gap.

Without a multilingual embedder, a Chinese request meets an English-described catalog through no
word at all ("帮我做一个PPT" and "PowerPoint presentations (.pptx)" share none), and the lexical gate
rejects what it cannot read. ``data/glossary.txt`` lists common software, document and office-task
concepts, one a line, as terms in Chinese and English and file-type names. For a request, a
glossary term found in it that the catalog does not use brings in the tokens of the line's other
terms that the catalog does use. So the glossary speaks only where the catalog lacks the request's
own word: a catalog that says 演示文稿 or PPT itself is ranked on that word alone, and nothing is
added that no skill could match.

A CJK term is found as a substring of the request; a single CJK character is never a term (列 is
in 列车, 行 in 银行). A Latin term is found when each of its word tokens is among the request's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import ahocorasick

from hermes_core.retrieval.bm25 import bm25_tokens
from hermes_core.tokenize import is_cjk, normalize


def _norm(text: str) -> str:
    return normalize(text)


@dataclass(frozen=True, slots=True)
class Term:
    text: str                  # normalised
    cjk: bool                  # found as a substring; otherwise by its word tokens
    words: tuple[str, ...]     # its BM25 tokens without single CJK characters


def _term(raw: str) -> Term | None:
    text = _norm(raw.strip())
    cjk = any(is_cjk(c) for c in text)
    if not text or (cjk and len(text) < 2):
        return None
    words = tuple(dict.fromkeys(t for t in bm25_tokens(text) if not (len(t) == 1 and is_cjk(t))))
    return Term(text, cjk, words) if words else None


class Glossary:
    """Concept lines of terms; see the module docstring for how a request is expanded.

    Looking a request up costs its own length, not the glossary's: CJK terms are found by one
    Aho-Corasick pass over the request, Latin terms through an index from word to the terms that
    hold it.
    """

    def __init__(self, lines: Sequence[Sequence[Term]]) -> None:
        self.lines = tuple(tuple(terms) for terms in lines)
        self._automaton: Any = None
        self._by_word: dict[str, list[tuple[int, Term]]] = {}
        cjk: dict[str, list[tuple[int, Term]]] = {}
        for n, terms in enumerate(self.lines):
            for t in terms:
                if t.cjk:
                    cjk.setdefault(t.text, []).append((n, t))
                else:
                    self._by_word.setdefault(t.words[0], []).append((n, t))
        if cjk:
            auto = ahocorasick.Automaton(ahocorasick.STORE_ANY)
            for text, found in cjk.items():
                auto.add_word(text, tuple(found))
            auto.make_automaton()
            self._automaton = auto

    @classmethod
    def parse(cls, text: str) -> Glossary:
        """Lines of ``term | term | ...``; ``#`` comments and blank lines skipped."""
        lines = []
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            terms = tuple(t for t in (_term(x) for x in line.split("|")) if t is not None)
            if len(terms) > 1:
                lines.append(terms)
        return cls(lines)

    def named(self, text: str, tokens: Sequence[str]) -> dict[int, list[Term]]:
        """The request's terms, by glossary line."""
        have = set(tokens)
        out: dict[int, list[Term]] = {}
        if self._automaton is not None:
            for _end, found in self._automaton.iter(_norm(text)):
                for n, t in found:
                    out.setdefault(n, []).append(t)
        for w in have:
            for n, t in self._by_word.get(w, ()):
                if all(x in have for x in t.words):
                    out.setdefault(n, []).append(t)
        return out

    def expansions(self, text: str, tokens: Sequence[str], known: Callable[[str], bool]) -> list[str]:
        """Tokens to add to a request (``text``, its BM25 ``tokens``) for a catalog whose vocabulary
        ``known`` answers: the catalog's own tokens of every concept the request names in words the
        catalog does not use."""
        have = set(tokens)
        out: dict[str, None] = {}
        for n, named in sorted(self.named(text, tokens).items()):
            if any(all(known(w) for w in t.words) for t in named):
                continue
            for t in self.lines[n]:
                for w in t.words:
                    if w not in have and known(w):
                        out[w] = None
        return list(out)


@cache
def default_glossary() -> Glossary:
    """The shipped ``data/glossary.txt``, parsed once."""
    text = resources.files("hermes_core.retrieval").joinpath("data/glossary.txt").read_text("utf-8")
    return Glossary.parse(text)
