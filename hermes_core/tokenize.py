"""Mixed Chinese/English tokenisation shared by BM25, synonyms and the FTS5 memory index.

One tokenizer everywhere means a term found by the skill retriever is found by episodic memory too.
Chinese runs are segmented by jieba (search mode, so ``苹果`` is a token of ``我喜欢吃苹果``); other
runs of letters, digits and combining marks (any script: café, Größe, ёлка, हिन्दी) are split on
punctuation and camelCase and normalised by :func:`normalize`: case-folded, and Latin letters
stripped of their accents, so ``cafe`` finds ``café`` as SQLite FTS5's ``remove_diacritics`` would.
Greek, Cyrillic and other scripts keep their marks (``й`` is a letter of its own, not an ``и``).
Without jieba, Chinese falls back to character bigrams plus single characters, which still matches
sub-words. Traditional Chinese is folded to simplified (:func:`to_simplified`, OpenCC's t2s) before
it is segmented or matched, so a query typed in Taiwan or Hong Kong finds text written in mainland
China and the reverse; only match keys are folded, never the text that is stored or shown.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import shutil
import stat
import tempfile
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import regex

from hermes_core.forked import child_lock, renew_in_child

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_LETTER = regex.compile(r"\p{L}")   # letters of every script, CJK included
# Scripts written without spaces between words (CJK, Thai...) and Hangul, whose particles attach to
# the noun (회의를): a neighbour in one of them is no word boundary problem (用git提交, gitを使う), so
# only the other scripts' letters, marks and digits join words.
_UNSPACED = (r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}")
#: A character that continues a word of a spaced script: a letter, mark or digit of any script
#: but the unspaced ones (a regex character class, for lookarounds in ``regex`` patterns).
SPACED_WORD_CHAR = f"[^\\W_{_UNSPACED}]"
_SPACED_WORD = regex.compile(SPACED_WORD_CHAR)
# CJK runs, and word runs *without* CJK: CJK characters are word characters too, so a plain
# ``[^\W_]+`` would swallow the Chinese after "John" or "3" (3点和John开会 -> "点和john开会")
# and it would never reach jieba. ``regex``'s ``\w`` holds combining marks (the stdlib's does not,
# and cut हिन्दी at each vowel sign and an NFD café before its accent).
_SEGMENTS = regex.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
# Words of an identifier: an upper-case run before a capitalised word (HTTP|Server), a capitalised
# or lower-case word, an upper-case run, digits, and runs of caseless letters; marks stay with the
# letter they follow (naïve|Bayes, not na|ïve|bayes).
_UP = r"\p{Lu}\p{M}*"
_LOW = r"[\p{Ll}\p{M}]"
_CAMEL = regex.compile(f"(?:{_UP})+(?={_UP}\\p{{Ll}})|(?:{_UP})?{_LOW}+|(?:{_UP})+|\\d+"
                       r"|(?:[^\W\d_\p{Lu}\p{Ll}]|\p{M})+")
_LATIN_MARKS = regex.compile(r"(?<=[a-z])\p{M}+")

#: Bump whenever ``tokenize`` can return different tokens for the same text. Stored full-text
#: indexes record the version that built them and are rebuilt when it differs (episodic memory does
#: so on open), so old rows stay findable by the new query tokens. 2: CJK split from adjacent
#: letters and digits. 3: non-ASCII letters kept in their word, case-folded, Latin accents folded.
#: 4: traditional Chinese folded to simplified. 5: 暱 folded to 昵 (``_T2S_GAPS``). 6: no token
#: without a letter or a digit (a lone ZWJ, selector, mark or connector: :func:`is_word`), each
#: from its first one (✅️done is done; 🅿 is read as a letter). Stores key on
#: :func:`tokenizer_key`, which adds the fold's OpenCC config and OpenCC's and jieba's releases.
#: 7: no token keeps a presentation selector (🅿️ is 🅿, 🈁️ ココ).
TOKENIZER_VERSION = 7
#: The OpenCC config that folds Han text to simplified for every match key: t2s, characters and
#: their phrases. Not tw2sp (Taiwan words read as the mainland's, 軟體 -> 软件): it also reads 查詢
#: as 查找 and 行程 as 进程, so the commonest words stop meeting their simplified spelling
#: (decision 140 has the measurements).
HAN_FOLD_CONFIG = "t2s"
#: Traditional characters OpenCC's t2s keeps although its s2t writes them for a simplified one
#: (s2t 昵 -> 暱, t2s 暱 -> 暱): folded to that one, so 暱稱 meets 昵称. Pinned against the installed
#: tables by test_every_character_the_simplified_to_traditional_table_writes_folds_back_to_its_source.
_T2S_GAPS = str.maketrans({"暱": "昵", "緪": "縆"})
_T2S_GAP = re.compile("[暱緪]")   # one scan in C: most texts hold neither

log = logging.getLogger(__name__)
# free again in a forked child (child_lock): a warm-up thread loading jieba or a converter when a
# server forked its workers held them there for ever, and a worker's first Chinese text hung
_jieba_lock = child_lock(threading.Lock())
_jieba: Any = None
_jieba_failed = False
_t2s_lock = child_lock(threading.Lock())
_t2s: dict[str, Any] = {}   # OpenCC config name -> its converter


class _CacheWrites:
    """jieba's cache-writing locks (``jieba.DICT_WRITING``, one per dictionary, held while a thread
    writes the cache: the first run on a machine). In a forked child (:mod:`hermes_core.forked`)
    the entries go: no thread of the child writes, and one held there hung its first Chinese
    text; jieba then builds the dictionary as on a first run."""

    def __init__(self, writes: dict[str, Any]) -> None:
        self.writes = writes

    def renew_after_fork(self) -> None:
        self.writes.clear()


_cache_writes: _CacheWrites | None = None   # kept here: the registry holds it weakly


def is_cjk(ch: str) -> bool:
    return bool(_CJK_CHAR.match(ch))


def cjk_chars(text: str) -> list[str]:
    """The CJK characters of ``text``, in order: one scan in C (a Python test per character cost
    seconds over a 20,000-skill catalog's descriptions on every index refresh)."""
    return _CJK_CHAR.findall(text)


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def cjk_ratio(text: str) -> float:
    """Share of letters (of any script) that are CJK; 0 for text without letters.

    Every script counts, so Russian, Greek, Arabic or accented text with one Chinese character reads
    as mostly not Chinese; Japanese kana are letters but not CJK ideographs.
    """
    cjk = len(_CJK_CHAR.findall(text))
    letters = len(_LETTER.findall(text))   # one scan in C, not a Python loop a char
    return cjk / letters if letters else 0.0


def is_spaced_word_char(ch: str) -> bool:
    """Whether ``ch`` continues a word of a script written with spaces (see ``SPACED_WORD_CHAR``):
    a trigger or synonym ending in one needs a boundary there, so ``кот`` is not found in
    ``который`` nor ``git`` in ``digit``, while CJK text (no spaces) needs none."""
    return _SPACED_WORD.match(ch) is not None


def untrusted_folder(link: os.stat_result, target: os.stat_result, me: int) -> str | None:
    """Why a cache folder (``lstat`` and ``stat`` of its path) is not safe for user ``me``, or
    None. jieba unmarshals the dictionary it finds there, and the default folder has a name anyone
    can guess in a shared /tmp: one another user made first, or planted as a symlink, would hand
    them our tokeniser (a poisoned dictionary splits an injection phrase so no rule sees it)."""
    for st in (link, target):
        if st.st_uid not in (me, 0):   # root may write anywhere already
            return f"owned by uid {st.st_uid}"
    if not stat.S_ISDIR(target.st_mode):
        return "not a folder"
    if target.st_mode & 0o022:
        return "writable by others"
    return None


def jieba_cache_dir() -> str | None:
    """Where jieba keeps its 9 MB dictionary cache: ``HERMES_JIEBA_CACHE`` or a dir of ours.

    A folder that cannot be made or written (a path that is a file) or that is not safe
    (:func:`untrusted_folder`) costs the cache, never tokenisation: a private folder made for this
    process, removed at exit, takes its place (not None: jieba's own ``/tmp/jieba.cache`` can be
    planted by anyone too); None only when no folder can be made at all.
    """
    from hermes_core.config import jieba_cache_dir_setting

    path = jieba_cache_dir_setting()
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        getuid = getattr(os, "getuid", None)   # Windows: the temp dir is the user's, no modes
        why = (None if getuid is None
               else untrusted_folder(os.lstat(path), os.stat(path), getuid()))
        if why is None and not os.access(path, os.W_OK | os.X_OK):
            why = "not writable"
    except OSError as e:
        why = f"{e.strerror or e}"
    if why is None:
        return path
    try:
        private = tempfile.mkdtemp(prefix="hermes-core-jieba-")
    except OSError as e:   # a read-only temp dir: jieba's own place, where it cannot write either
        log.warning("jieba cache folder %s unusable (%s), no private one (%s)", path, why,
                    e.strerror or e)
        return None
    atexit.register(shutil.rmtree, private, True)
    log.warning("jieba cache folder %s unusable (%s); using %s for this run", path, why, private)
    return private


def _load_jieba() -> Any:
    """Import and initialise jieba once, quietly, with its cache in our dir; None if missing."""
    global _jieba, _jieba_failed, _cache_writes
    if _jieba is not None or _jieba_failed:
        return _jieba
    with _jieba_lock:
        if _jieba is not None or _jieba_failed:
            return _jieba
        from hermes_core.config import jieba_disabled

        if jieba_disabled():
            _jieba_failed = True
            return None
        try:
            import jieba
        except ImportError:
            _jieba_failed = True
            return None
        jieba.setLogLevel(logging.WARNING)
        logging.getLogger("jieba").setLevel(logging.WARNING)
        jieba.dt.tmp_dir = jieba_cache_dir()
        child_lock(jieba.dt.lock)   # held across its initialise: the same hang, one lock further
        _cache_writes = _CacheWrites(jieba.DICT_WRITING)
        renew_in_child(_cache_writes)
        jieba.initialize()
        _jieba = jieba
        return _jieba


def jieba_available() -> bool:
    return _load_jieba() is not None


def cjk_words(run: str) -> tuple[str, ...]:
    """jieba's plain segmentation of ``run`` (each word once, in order; ``cut_for_search`` also
    yields the parts of long words); without jieba, pairs of characters from the end, so the
    last item is still the run's last two characters."""
    jb = _load_jieba()
    if jb is None:
        return tuple(run[max(0, i - 2):i] for i in range(len(run), 0, -2))[::-1]
    return tuple(t for t in jb.cut(run) if t.strip())


def opencc_converter(config: str = HAN_FOLD_CONFIG) -> Any:
    """OpenCC's converter for ``config``, built once a process (its dictionaries load in ~7 ms):
    the Han fold's (``HAN_FOLD_CONFIG``), and the regional wordings a synonym is indexed in."""
    found = _t2s.get(config)
    if found is None:
        with _t2s_lock:
            found = _t2s.get(config)
            if found is None:
                import opencc

                found = _t2s[config] = opencc.OpenCC(config)
    return found


@lru_cache(maxsize=1)
def library_versions() -> str:
    """The installed OpenCC and jieba releases (``importlib.metadata``), ``-`` for one missing.

    Their tables decide tokens as much as our code does: a release that changes a t2s entry or a
    jieba dictionary word must re-derive stored tokens and indexes, not reuse them. Read once a
    process (a package is not upgraded under a running one)."""
    from importlib import metadata

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    return f"opencc-{installed('opencc')}+jieba-{installed('jieba')}"


def tokenizer_key() -> str:
    """What every stored token, index and calibration is keyed by: ``TOKENIZER_VERSION``, the fold's
    OpenCC config and the libraries' versions (:func:`library_versions`), so a change to any of them
    re-derives what was stored, while the same ones reuse it on every open. Read when called, so a
    test may change any part."""
    return f"{TOKENIZER_VERSION}+{HAN_FOLD_CONFIG}+{library_versions()}"


def to_simplified(text: str) -> str:
    """``text`` with its Han runs in simplified characters (OpenCC t2s, phrase-aware: 頭髮 -> 头发,
    乾燥 -> 干燥, 乾隆 kept; 暱 -> 昵, which t2s lacks): the match key that makes traditional and
    simplified spellings meet.

    Only runs of Han characters are handed to OpenCC, so Latin, kana, Hangul and punctuation come
    back as they were. Japanese kanji are Han too: a shinjitai form t2s has no entry for (読, 駅)
    is kept, one shared with traditional Chinese (電) folds, the same way on both sides of a match.
    Text without Han characters is returned as the same object, with no conversion.
    """
    if text.isascii() or _CJK_CHAR.search(text) is None:
        return text
    convert = opencc_converter().convert      # looked up once a text, not once a run
    folded = _CJK_RUN.sub(lambda m: str(convert(m.group())), text)
    return folded.translate(_T2S_GAPS) if _T2S_GAP.search(folded) else folded


def cjk_tagged(run: str) -> tuple[tuple[str, str], ...]:
    """jieba's words of ``run`` with their part-of-speech tags (``jieba.posseg``: "v" a verb, "n"
    a noun, "p" a preposition ...); empty without jieba."""
    jb = _load_jieba()
    if jb is None:
        return ()
    import jieba.posseg

    return tuple((w.word, w.flag) for w in jieba.posseg.cut(run) if w.word.strip())


def split_identifier(word: str) -> list[str]:
    """``queryViolation`` -> [query, violation]; ``HTTPServer2`` -> [http, server, 2];
    ``naïveBayes`` -> [naïve, bayes]. Lower-cased, accents kept (text for a reader or an embedder)."""
    parts = _CAMEL.findall(word)
    return [p.lower() for p in parts if p]


def normalize(text: str, *, fold: bool = True) -> str:
    """NFKC, case-folded, Latin letters without their accents, Han in simplified characters:
    ``Größe`` -> ``grosse``, ``Crème`` -> ``creme``, ``ёлка`` stays ``ёлка``, ``數據`` -> ``数据``.
    What tokens are made of, and what a token is looked for in (BM25's verbatim match, triggers,
    synonyms), so both sides of every match agree. ``fold=False`` keeps Han as written (a trigger
    is also looked for as written: the fold of a character alone can differ from its fold in a
    phrase, 乾 -> 干 but 乾隆 kept).

    Only marks on a Latin base letter go: they are spelling variants users drop when typing (and
    FTS5's ``remove_diacritics`` drops them too); in Cyrillic or Greek a mark can make another letter.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii():
        return text
    text = _SELECTORS.sub("", text)
    folded = unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))
    return to_simplified(folded) if fold else folded


_normalize_word = lru_cache(maxsize=65536)(normalize)   # tokens repeat; whole texts are not cached


@lru_cache(maxsize=8192)
def _segment_cjk(run: str, fold: bool = True) -> tuple[str, ...]:
    """``run``'s words, in simplified characters; ``fold=False``: in the run's own characters (words
    to show), cut where its simplified spelling is cut (jieba's dictionary is simplified), or as
    written where t2s rewrote a phrase to another length."""
    simple = to_simplified(run)
    direct = fold or simple is run or len(simple) != len(run)   # else: cut simple, show run
    if direct and not fold:
        simple = run
    jb = _load_jieba()
    if jb is None:
        src = simple if fold else run
        grams = [src[i:i + 2] for i in range(len(src) - 1)]
        return tuple(list(src) + grams) if len(src) > 1 else (src,)
    if direct:
        return tuple(t for t in jb.cut_for_search(simple) if t.strip())
    return tuple(run[a:b] for w, a, b in jb.tokenize(simple, mode="search") if w.strip())


def tokenize(text: str, *, split_camel: bool = True, fold: bool = True,
             keep_whole: bool = False) -> list[str]:
    """Tokens of mixed text, in order, each :func:`normalize`-d; CJK segmented, identifiers split.

    Dotted, hyphenated, snake_case and camelCase names break into their words, so
    ``Navigation.TrafficViolations.queryViolation`` yields navigation, traffic, violations, query,
    violation. ``fold=False`` only lower-cases (Größe -> größe) and keeps Chinese in its own script
    (數據庫 stays): words to show, not to match.
    ``keep_whole`` also yields a word that split into parts as written (PostgreSQL: postgre, sql,
    postgresql), for an index that a word's prefix is looked up in.
    """
    if not text:
        return []
    return _tokens(unicodedata.normalize("NFKC", text), split_camel, fold, keep_whole)


def _tokens(text: str, split_camel: bool, fold: bool, keep_whole: bool) -> list[str]:
    """:func:`tokenize` of ``text`` already in NFKC."""
    norm = _normalize_word if fold else str.lower
    out: list[str] = []
    if not text.isascii():
        # a variation selector ended a CJK run (葛󠄀城 was 葛, 城; 葛城 one word): it only says
        # which glyph to draw, as a presentation selector does for an emoji (one scan in C)
        text = _SELECTORS.sub("", text)
    for m in _SEGMENTS.finditer(text):
        cjk, word = m.group(1), m.group(2)
        if cjk:
            out.extend(_segment_cjk(cjk, fold))
        elif word:
            # the scan's word characters include ZWJ, selectors, marks and connectors (‿), which
            # belong to the character before them: a run or a part split off starts at its first
            # letter or digit (✅️done is done, a‍b is a, b), and one of only those is no word
            whole = word.isalnum()      # C's test: a run of letters and digits needs no other
            if not whole:
                word = _word_head_off(word)     # no selector is left (🅿️ is 🅿, 🈁️ ココ)
                if not word:
                    continue
            if split_camel:
                parts = split_identifier(word)
                if not whole:
                    parts = [h for h in map(_word_head_off, parts) if h]
                out.extend(norm(w) for w in parts)
                if keep_whole and len(parts) > 1:
                    out.append(norm(word))
            else:
                out.append(norm(word))
    return out


#: Bump whenever ``segment_for_index`` can index other tokens than before (beyond a
#: ``TOKENIZER_VERSION`` change). 2: an identifier split into parts is also indexed whole.
#: 3: symbols are indexed as terms (:func:`symbol_terms`). 4: an emoji sequence (a grapheme
#: cluster) is one term, and a run of punctuation is a term in a text with words too.
#: 5: a keycap is a term; a toned or gendered emoji is indexed by its base's term too.
#: 6: a profession is indexed by its object, a subdivision flag by 🏴, a cluster's term is cut to
#: ``MAX_CLUSTER_POINTS`` and bases no longer crowd a text's own emoji out of its terms.
#: 7: a ZWJ sequence Unicode lists is indexed by its emoji parts (🐻‍❄️ by ❄ and 🐻), a direction
#: variant by what faces (🏃‍➡️ by 🏃), and no ZWJ or selector is a word.
#: 8: a family, couple or flag is indexed by the parts its name says (👩 finds 👩‍👩‍👧, 🌈 🏳️‍🌈).
#: 9: a flag by what is on it (☠ finds 🏴‍☠️), a group by each person in it and a link its name
#: says in the plural (🧑 and 🤝 find 🧑‍🤝‍🧑).
#: 10: a group of one code point by its mixed-tone sequences' parts (👨 finds 👬), such a sequence
#: by that code point (👬 finds 👨🏻‍🤝‍👨🏿), an emoji filed as a math sign or punctuation (↔ ◼ 〰)
#: is a term. A store recording the emoji digest under the installed release takes it from the
#: file, so a parts table change under the same release needs this bump to re-index.
#: 11: a gender variant's group by its mixed-tone sequence's people (👨 finds 👯‍♂️), that
#: sequence by it and its group (👯‍♂️ and 👯 find 👨🏻‍🐰‍👨🏿); a form only of a whole name.
#: 12: a group of one code point by the people of its listed gendered forms (👨 finds 👪), those
#: by it (👪 finds 👨‍👩‍👧); an emoji NFKC reads as one letter (ℹ Ⓜ 🈶) is a term.
SEGMENT_VERSION = 12

#: What a symbol's term starts with: letters and a hex number, which unicode61 keeps whole and
#: no word the tokenizer makes is (its words are split from their digits; an identifier kept
#: whole that spells one is left out by :func:`segment_for_index`). The code points of a
#: sequence are joined by ``x`` (no hex digit): ``zsym1f468x200dx1f469``.
SYMBOL_MARK = "zsym"
#: Distinct symbols a text yields terms for at most (a pasted megabyte of punctuation: bounded).
MAX_SYMBOL_TERMS = 64
#: Code points of an emoji cluster kept in its term: an emoji and 100,000 skin tones or combining
#: marks is one grapheme cluster, and was a 600 KB term. Unicode's longest sequences are 10 (a
#: kiss with two skin tones, 9 without its selector) and 11 (a family of four, each toned, which
#: Unicode does not list but a keyboard can type): 16 keeps every one whole with room to spare,
#: and a term at most 115 characters. A longer cluster is no emoji anyone searches for by hand:
#: its first 16 are its term, so the same pasted text still finds it.
MAX_CLUSTER_POINTS = 16
#: Marks of a punctuation run kept in its term (after repeats are folded): ``?!?!...`` pasted a
#: megabyte long is one term of this many marks, not a megabyte-long term.
MAX_RUN_MARKS = 8
# An emoji with what joins it (ZWJ, skin tone, flag pair, keycap): one grapheme cluster from a
# pictograph, ``regex``'s \X; or a run of other punctuation and symbols (of two marks at least in
# a text with words: a lone full stop is not even matched, so prose costs one scan in C).
# A pictograph is a symbol (So) or what Unicode calls one (Extended_Pictographic: ↔ ◼ ⤴ are math
# signs, 〰 〽 punctuation, each an emoji; → and ↑ are neither, so an arrow in prose is no term).
# One character class (V1 set difference), not a lookahead a mark: a 10 MB run raised MemoryError.
# Flags are paired here, left to right from a run's start as \X pairs them: \X counts the run
# before each one (a 120,000-character run of flags took 12 s).
_FLAG = "[\U0001F1E6-\U0001F1FF]{2}"
# A keycap (1️⃣ #️⃣ *️⃣): a digit, # or * and the enclosing keycap, its selector optional (1⃣ is
# one too); a digit starts it, so it is no pictograph cluster. Read after NFKC (１⃣ 𝟏⃣ ¹⃣ are 1⃣),
# and taken out before the scan below: a mark before # or * (：#️⃣) would take it into a run.
_KEYCAPS = regex.compile("[0-9#*]\ufe0f?\u20e3")
_PICTOGRAPH = r"[\p{So}\p{Extended_Pictographic}]"
_SYMBOL = regex.compile(f"(?V1){_FLAG}|(?={_PICTOGRAPH})\\X|([[\\p{{P}}\\p{{S}}]--{_PICTOGRAPH}]+)")
_SYMBOL_OR_RUN = regex.compile(
    f"(?V1){_FLAG}|(?={_PICTOGRAPH})\\X|([[\\p{{P}}\\p{{S}}]--{_PICTOGRAPH}]{{2,}})")
# Whether a text with words has any symbol term: one scan of a plain class (5 us a summary),
# where the patterns above, tried at every character, cost ten times that.
# An emoji NFKC rewrites (ℹ Ⓜ 🈶 ™ ‼): :func:`_letter_emoji` keeps those it reads as a letter.
_FOLDING_PICTOGRAPH = regex.compile(r"(?V1)[\p{Extended_Pictographic}&&\P{Decomposition_Type=None}]")
_ANY_SYMBOL_OR_RUN = regex.compile(f"{_PICTOGRAPH}|[\\p{{P}}\\p{{S}}]{{2}}")   # and a keycap's U+20E3
# What makes an emoji a variant of another: a skin tone, or a gender sign or hair style joined
# by ZWJ (after the presentation selectors are dropped). Taken off for the base's index terms.
_TONES = "\U0001F3FB-\U0001F3FF"                    # a character class's ranges: skin tones,
_SIGNS = "\u2640\u2642\U0001F9B0\U0001F9B1\U0001F9B2\U0001F9B3"   # gender signs, hair styles
_TONE = regex.compile(f"[{_TONES}]")
_GENDER_HAIR = regex.compile(f"\u200d[{_SIGNS}]")
# A role (Unicode's profession sequences: 👩‍💻 🧑‍🚀 👨🏾‍🍳): a person, toned or not, ZWJ and one
# object; its object is indexed too. No person is an object: 👨‍👦 is a family, and two persons
# and a link (👩‍❤‍👨, 🧑‍🤝‍🧑) a couple; nor is a gender sign or a hair style (a variant:
# :data:`_GENDER_HAIR`).
_PERSONS = "\U0001F468\U0001F469\U0001F9D1"
_PEOPLE = f"{_PERSONS}\U0001F466\U0001F467\U0001F476\U0001F9D2"   # and boy, girl, baby, child
_ROLE = regex.compile(f"[{_PERSONS}][{_TONES}]?\u200d([^\u200d{_PEOPLE}{_SIGNS}])")
# A tag sequence (🏴󠁧󠁢󠁳󠁣󠁴󠁿: a base, tag letters, the cancel tag): shown as its base where the
# flag is unknown, so the base is indexed too.
_TAGS = regex.compile("[\U000E0020-\U000E007F]+")
# A direction variant (🏃‍➡️, 🧑‍🦯‍➡️: facing right): ZWJ and the arrow, taken off as a gender sign.
_ARROW = "\u27a1"
_DIRECTION = regex.compile(f"\u200d{_ARROW}")
# An emoji that takes a skin tone, alone or toned (👬, 👬🏽), or the family, the one group Unicode
# gives no tone: only such a one can be a group whose mixed-tone or gendered forms are listed
# sequences (``emoji_groups.toned_forms``, ``listed_forms``), so only it is looked up in the
# ``emoji`` data (imported then): indexing 🚀 or ✅ imports nothing. A release giving another
# untoned emoji parts fails test_every_single_emoji_with_parts_is_read_for_them.
_HAS_GROUP = regex.compile(f"\\N{{FAMILY}}|\\p{{Emoji_Modifier_Base}}[{_TONES}]?")
_FLAGS = "\U0001F3F3\U0001F3F4"          # white and black flag: a flag sequence is no sum of parts
_MODIFIERS = frozenset(_SIGNS + _ARROW)   # what makes a variant: no part of a sequence
# A word of the index or of a query has a letter or a digit: the word scan also reads a ZWJ or a
# presentation selector between two words as one (FTS5 drops it as a separator).
_WORDLIKE = regex.compile(r"[\p{L}\p{N}]")
# What a token starts at: a letter, a digit, or a symbol Unicode calls alphabetic (🅰 🅿 🅐, which
# NFKC keeps and the word scan reads as letters): the skill index's (BM25's) only emoji words.
# FTS5 reads no such word (its symbol term finds it), so :func:`is_word` leaves them out.
_WORD_HEAD = regex.compile(r"(?V1)^[^\p{L}\p{N}[\p{So}&&\p{Alphabetic}]]+")
_REPEATS = regex.compile(r"(.)\1+", regex.DOTALL)
_PRESENTATION = str.maketrans("", "", "\ufe0e\ufe0f")   # text / emoji style: the same symbol
# Every variation selector (a glyph's choice: 葛󠄀 a family's own 葛, ≩︀ a slanted ≩, ↩️ an emoji):
# no part of a word, dropped before words are read (symbol terms read their own text).
_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]+")
_SYMBOL_TERM = re.compile(f"{SYMBOL_MARK}[0-9a-fx]+")   # a symbol's term, as a word may spell it


def _symbol_term(chars: str) -> str:
    return SYMBOL_MARK + "x".join(f"{ord(c):x}" for c in chars)


def without_keycaps(text: str) -> str:
    """``text`` with its keycaps (1️⃣) read as a space: a query's words, so "1️⃣" is not
    searched as "1" (its symbol term is :func:`symbol_terms`'s). After NFKC, as the index reads
    a keycap: 𝟏⃣ is 1⃣ there, and kept its digit here before."""
    if "\u20e3" not in text:
        return text
    return str(_KEYCAPS.sub(" ", unicodedata.normalize("NFKC", text)))


def _word_head_off(word: str) -> str:
    """``word`` from its first letter or digit on (empty if it has none): what starts it
    otherwise belongs to the character before it (✅️done is U+FE0F done)."""
    return word if word[:1].isalnum() else str(_WORD_HEAD.sub("", word))   # C's test first


def is_word(token: str) -> bool:
    """Whether ``token`` has a letter or a digit, what FTS5 reads as a word: the word scan also
    reads a ZWJ, a selector, a mark or a connector as a word character ("部署🐻‍❄️完成" holds a
    lone U+200D and U+FE0F); :func:`tokenize` starts each token at its first letter or digit
    (or a symbol read as a letter, 🅿: a BM25 word, none of FTS5's)."""
    return token.isalnum() or _WORDLIKE.search(token) is not None    # C's test first: most are


@lru_cache(maxsize=1)
def emoji_release() -> str:
    """The installed ``emoji`` package's release (``-`` when missing), read from its metadata
    without importing it: what a store records :func:`emoji_data_digest` under, so an open under
    the same release needs neither the import nor the digest. Read once a process."""
    from importlib import metadata

    try:
        return metadata.version("emoji")
    except metadata.PackageNotFoundError:
        return "-"


@lru_cache(maxsize=1)
def emoji_data_digest() -> str:
    """A digest of what :func:`segment_for_index` reads from the ``emoji`` package's data (the
    parts table, :func:`_listed_parts`): the memory index is keyed on it (:func:`segment_key`),
    so a release that lists or names no sequence otherwise re-indexes nothing, and one that does
    re-indexes once. Imports ``emoji`` and builds the table (60-190 ms): once a process."""
    table = "\n".join(f"{k}\t{' '.join(v)}" for k, v in sorted(_listed_parts().items()))
    return hashlib.sha256(table.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_DIGEST = re.compile("[0-9a-f]{16}")     # :func:`emoji_data_digest`'s shape


def remembered_emoji_data(record: object) -> dict[str, str]:
    """The release -> digest a store recorded (``"2.14.0 bc0a5a38c4958ace"``, what
    :func:`emoji_data_record` made); nothing for a value of another shape (another tool's), nor
    under ``-``: no release names the data then (a process without the package and one carrying
    it without its metadata both read ``-``), so its digest is taken afresh each process."""
    release, _, digest = str(record or "").partition(" ")
    return {release: digest} if release != "-" and _DIGEST.fullmatch(digest) else {}


def emoji_data_record(remembered: Mapping[str, str]) -> str | None:
    """What a store records of the installed emoji data (release and digest), or None when
    ``remembered`` already holds the installed release (nothing to compute nor write), or when
    no release names what was read: under ``-``, or when the package read as installed gave no
    table (it failed to import). Recorded, such a digest would be taken from the file by a later
    process under that release that reads the data, and the re-index it needs skipped."""
    release = emoji_release()
    if release in remembered or release == "-" or not _listed_parts():
        return None
    return f"{release} {emoji_data_digest()}"


def segment_key(remembered: Mapping[str, str] | None = None) -> str:
    """What :func:`segment_for_index`'s terms depend on beyond :func:`tokenizer_key`: its own
    version and the emoji data it reads (:func:`emoji_data_digest`). ``remembered`` maps an
    ``emoji`` release to the digest a store recorded for it: under that release the digest is
    taken from it, and ``emoji`` is not imported."""
    digest = (remembered or {}).get(emoji_release()) or emoji_data_digest()
    return f"{SEGMENT_VERSION}+emoji-{digest}"


@lru_cache(maxsize=1)
def _listed_parts() -> dict[str, tuple[str, ...]]:
    """Each ZWJ sequence Unicode lists (the ``emoji`` package's data, UTS #51), without its
    selectors and skin tones, -> the emoji it joins that a search for one should find it by:
    🐻‍❄ -> 🐻, ❄; 🐈‍⬛ -> 🐈, ⬛; ❤‍🔥 -> ❤, 🔥. A group of people (a family, a couple, a
    kiss) is no sum of its parts: it has its people and the links its name says
    (:func:`.emoji_groups.named_parts`: 👨‍👩‍👧 "family: man, woman, girl" -> 👨 👩 👧; 🧑‍🤝‍🧑 "people
    holding hands" -> 🧑 🤝; a kiss -> 💋, not ❤); a flag has what is on it (🏳‍🌈 -> 🌈, not
    the white flag; 🏴‍☠ -> ☠). A group Unicode gives one code point (👬; two tones make it a
    sequence, 👨🏻‍🤝‍👨🏿: :func:`.emoji_groups.toned_forms`) has that sequence's parts (👨 🤝), and the
    sequence has the code point (👬 finds it); so has a gender variant's group (👯‍♂ "men with
    bunny ears": 👨, and 👨🏻‍🐰‍👨🏿 has 👯‍♂ and 👯), and the people of its listed gendered
    forms (:func:`.emoji_groups.listed_forms`: 👪 -> 👨 👩 👦 👧 🧑 🧒, each family has 👪). A
    profession's object is :data:`_ROLE`'s; a gender sign, hair style or direction is a variant
    (:func:`_bases`).
    Only listed sequences: a ZWJ chain anyone can type (🐻‍🔥) has no meaning to split. Empty
    without the package (:func:`emoji_data_digest` keys the index on this table)."""
    try:
        import emoji
    except ImportError:
        return {}
    from hermes_core.emoji_groups import parts_table

    return parts_table(emoji.EMOJI_DATA)


def _bases(cluster: str) -> list[str]:
    """The emoji ``cluster`` is a variant of: without its skin tones, without its gender and hair
    (ZWJ and the sign), without both; each distinct and not empty (👍🏽 -> 👍; 🏃🏽‍♀ -> 🏃‍♀,
    🏃🏽, 🏃). A family is none's: it is an emoji of its own, not a variant. A profession's
    object (👩‍💻 -> 💻, the tool that names it; not its person: 🧑‍🚀 is no 🧑) and a tag
    sequence's base (🏴󠁧󠁢󠁳󠁣󠁴󠁿 -> 🏴) are bases too, and so are a listed sequence's emoji parts
    (:func:`_listed_parts`: 🐻‍❄ -> 🐻, ❄; a group of one code point's too, 👬🏽 -> 👨, 🤝,
    looked up only for an emoji that takes a skin tone) and a direction variant's person
    (🧑‍🦯‍➡ -> 🧑‍🦯 and its bases)."""
    found: dict[str, None] = {}
    if "\u200d" in cluster or _HAS_GROUP.fullmatch(cluster):
        found.update(dict.fromkeys(_listed_parts().get(_TONE.sub("", cluster), ())))
        if _DIRECTION.search(cluster):
            facing = _DIRECTION.sub("", cluster)
            found[facing] = None
            found.update(dict.fromkeys(_bases(facing)))
    if _TONE.search(cluster) or _GENDER_HAIR.search(cluster):
        untoned = _TONE.sub("", cluster)
        found.update(dict.fromkeys(
            (untoned, _GENDER_HAIR.sub("", cluster), _GENDER_HAIR.sub("", untoned))))
    role = _ROLE.fullmatch(cluster)
    if role:
        found[role.group(1)] = None
    if _TAGS.search(cluster):
        found[_TAGS.sub("", cluster)] = None
    return [b for b in found if b and b != cluster]


def symbol_terms(text: str, *, bases: bool = False) -> list[str]:
    """Index terms for the symbols in ``text``, which FTS5's unicode61 drops as separators.

    An emoji is one term with what it is joined to (a grapheme cluster: 👨‍👩‍👧 is not 👨, 👍🏽
    not 👍, 🇫🇷 shares nothing with 🇷🇺), its presentation selector left out (❤️ is ❤; ↔️
    is ↔, an emoji Unicode files as a math sign, as 〰 〽 are punctuation). A run
    of two or more other marks is a term, repeats folded (``??`` and ``？？？`` meet, ``:-)``
    is not ``:-(``), cut to ``MAX_RUN_MARKS``; a lone mark only in a text with no word (``?``),
    else every sentence's full stop would be a term. A text of no word also has a term for each
    mark of its runs, so ``?`` finds ``?!``. After NFKC, as :func:`tokenize` reads, so fullwidth
    ``？`` is ``?``. A term is ``SYMBOL_MARK`` and the code points in hex: ASCII letters and
    digits, never FTS5 syntax, and no word's term (:func:`segment_for_index`). A keycap (1️⃣)
    is a term like an emoji. ``bases`` (what is indexed, not what is searched): a toned or
    gendered emoji also yields its base's terms (:func:`_bases`), so 👍 finds 👍🏽 while 👍🏽
    finds only its tone; those come after the text's own terms and are capped apart (at most
    ``MAX_SYMBOL_TERMS`` more), so bases crowd out no emoji of the text. A cluster's term keeps
    its first ``MAX_CLUSTER_POINTS`` code points. An emoji NFKC reads as one letter (ℹ Ⓜ 🈶) is a
    term too, read before the fold (:func:`_letter_emoji`)."""
    if not text:
        return []
    return _symbol_terms(unicodedata.normalize("NFKC", text), bases, _letter_emoji(text))


def _letter_emoji(text: str) -> list[str]:
    """Terms of the emoji in ``text`` (as written, before NFKC) that NFKC reads as one letter:
    ℹ "information" is i, Ⓜ "circled M" m, 🈶 有. A word, each was a stopword or any text's
    letter, so a search for ℹ️ had no term; the letter stays a word (:func:`tokenize`). Emoji
    only (Extended_Pictographic with a compatibility decomposition): Ａ 𝐀 ⓐ are letters."""
    if text.isascii():
        return []
    found = dict.fromkeys(_FOLDING_PICTOGRAPH.findall(text))
    return [_symbol_term(c) for c in found if len(f := unicodedata.normalize("NFKC", c)) == 1
            and f.isalpha()]


def _symbol_terms(text: str, bases: bool, letters: Sequence[str] = ()) -> list[str]:
    """:func:`symbol_terms` of ``text`` already in NFKC; ``letters``: its letter emoji's terms
    (:func:`_letter_emoji`, read before NFKC folded them)."""
    wordless = not _SEGMENTS.search(text)
    if not wordless and not (_ANY_SYMBOL_OR_RUN.search(text) or "\u20e3" in text):
        return list(letters[:MAX_SYMBOL_TERMS])
    seen: dict[str, None] = dict.fromkeys(letters[:MAX_SYMBOL_TERMS])
    if "\u20e3" in text:       # keycaps first, then read as spaces: no mark before one runs into it
        # twelve keycaps, each looked for with ``in`` (C's search): no string made a match
        seen.update((_symbol_term(c + "\u20e3"), None) for c in "0123456789#*"
                    if c + "\u20e3" in text or c + "\ufe0f\u20e3" in text)
        text = _KEYCAPS.sub(" ", text)
    met: set[str] = set()       # what was matched: a repeated emoji is read once (10 MB of them)
    based: dict[str, None] = {}     # base terms: apart, so they crowd out none of the text's own
    for m in (_SYMBOL if wordless else _SYMBOL_OR_RUN).finditer(text):
        if m.group() in met:
            continue
        met.add(m.group())
        run = m.group(1)
        if run is None:
            cluster = m.group().translate(_PRESENTATION)[:MAX_CLUSTER_POINTS]
            seen[_symbol_term(cluster)] = None
            if bases and len(based) < MAX_SYMBOL_TERMS:
                based.update((_symbol_term(b), None) for b in _bases(cluster))
        else:
            if wordless:
                seen.update((_symbol_term(c), None) for c in dict.fromkeys(run))
            if len(run) > 1:
                seen[_symbol_term(_REPEATS.sub(r"\1", run)[:MAX_RUN_MARKS])] = None
        if len(seen) >= MAX_SYMBOL_TERMS:
            break
    own = list(seen)[:MAX_SYMBOL_TERMS]
    return own + [b for b in based if b not in seen][:MAX_SYMBOL_TERMS]


def segment_for_index(text: str) -> str:
    """Space-joined tokens: what FTS5's unicode61 tokenizer indexes so Chinese terms match; a
    split identifier also whole, so "postgres" (a prefix query) finds "PostgreSQL"; the text's
    symbols as terms of their own (:func:`symbol_terms`). A word spelled like a symbol's term
    (``zsym1f680``, kept whole as an identifier) is indexed by its parts only: a 🚀 search must
    not find it. Both halves read the text's NFKC, taken once here (each public function takes its own)."""
    letters = _letter_emoji(text)
    text = unicodedata.normalize("NFKC", text)
    words = [t for t in _tokens(text, True, True, True)
             if not (t.startswith(SYMBOL_MARK) and _SYMBOL_TERM.fullmatch(t))]
    return " ".join([*words, *_symbol_terms(text, True, letters)])


def estimate_tokens(text: str) -> int:
    """A CJK-aware token estimate that needs no tokenizer download.

    Roughly one token per Han, kana or Hangul character, two per emoji and one per four other
    characters (:data:`_ONE_TOKEN_RUN`): close enough for budgets and routing thresholds, and
    stable (a pure function of the text). Remembered for texts
    up to ``_ESTIMATE_CACHE_CHARS``: every turn re-counts the same system prompt and history (7
    texts a turn, a regex scan each), and a bounded cache of bounded texts holds a few MB at most.
    """
    if not text:
        return 0
    if len(text) <= _ESTIMATE_CACHE_CHARS:
        return _estimate_cached(text)
    return _estimate(text)


_ESTIMATE_CACHE_CHARS = 16_384


def head_tokens(text: str, tokens: int) -> str:
    """The longest prefix of ``text`` whose :func:`estimate_tokens` is at most ``tokens``."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # estimate_tokens grows with the prefix: bisect the cut
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]

#: Runs of characters a BPE tokenizer spends about one token each on (measured against o200k_base
#: and cl100k_base): Han, kana and Hangul, CJK punctuation and full-width forms. Kana and Hangul
#: counted as Latin letters, four to a token, put Korean at a third and Japanese at half of what
#: cl100k counts. Not :data:`_CJK`, which decides word splitting and stays Han only. BMP only: a
#: class with astral ranges scans several times slower, and astral characters are counted apart.
_ONE_TOKEN_RUN = re.compile("[\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
                            "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")


def _estimate(text: str) -> int:
    if text.isascii():
        return (len(text) + 3) // 4
    one = sum(map(len, _ONE_TOKEN_RUN.findall(text)))
    # characters outside the BMP (emoji, rare Han) take four bytes in UTF-8 and one to three
    # tokens: two each; UTF-16 gives them two code units, which counts them without a scan
    astral = len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)
    return one + 2 * astral + (len(text) - one - astral + 3) // 4


_estimate_cached = lru_cache(maxsize=512)(_estimate)


# Function words that carry no topic: dropped by the synonym layer and the dense-layer gate features,
# never by ``tokenize`` itself (BM25's idf already discounts them and FTS5 wants every term).
_STOPWORD_TEXT = (
    "a an the and or but if then else of to in on at by for with from into onto about as "
    "is are was were be been being am do does did doing have has had having i me my mine "
    "we us our you your he him his she her it its they them their this that these those "
    "what which who whom whose when where why how can could would should will shall may "
    "might must not no nor so too very just also any some all each every both please let "
    "lets s t don doesn didn isn aren wasn weren won wouldn shouldn couldn there here "
    "than such own same other only up down out over under again further once more most "
    "few get got make made want like need know tell give show help find use using via per "
    "的 了 是 我 你 他 她 它 们 我们 你们 在 和 与 或 就 都 也 还 要 把 被 给 让 吗 呢 吧 "
    "啊 呀 一下 一个 这 那 这个 那个 帮 帮我 请 能 能不能 可以 怎么 什么 有 没有 看看 看 "
    "下 "
)
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def content_tokens(text: str) -> list[str]:
    """``tokenize`` minus :data:`STOPWORDS`: the words that say what a text is about."""
    return [t for t in tokenize(text) if t not in STOPWORDS]
