"""The encoding of a context file that is not UTF-8 and has no byte-order mark, guessed.

A Chinese Windows saves Notepad files in GBK (code page 936), and PowerShell 5's ``Out-File``
can leave UTF-16 without a mark; the prompt builder skipped both, and the user's notes left
every prompt. :mod:`charset_normalizer` (a maintained detector) ranks the encodings whose
decoding reads least like noise ("chaos"); this module decides which of its candidates to
trust, because on a short file its ranking is close to a coin toss:

* **Only where a guess can be right.** Bytes holding NUL bytes are only tried as UTF-16/32;
  bytes without are tried as the double-byte CJK code pages (GB18030, Big5, Shift-JIS,
  EUC-JP, Korean cp949), and when none of those fits (or a Greek reading shows its accents),
  as the Western European, Cyrillic, Central European and Greek Windows code pages (cp1252,
  cp1251, cp1250, cp1253). Every byte string is valid in each single-byte page, so one is
  taken only on strong evidence (:func:`single_byte_fits`, :func:`_enough`): its reading looks
  like its script's text ("café" as cp1251 is "cafй", a word mixing scripts; Russian as cp1252
  is "Ïðèâåò", a Latin text made of accents), the file is not mostly valid UTF-8 sequences (a
  UTF-8 note with one stray byte would read "cafÃ©"), and the reading has its page's letters
  to go on. Where several fit, :func:`~.letter_tables.best_single` weighs them by charset-normalizer's
  per-language letter frequencies; two Latin readings ("naïve" / "naďve", Portuguese "ê" /
  Polish "ę") keep cp1252's unless it has a grave i/o/u inside a word ("Dìkuji"; not when one
  cp1252 language's table lists its graves and its other letters: Catalan "memòria"), a letter
  both pages write alike that only cp1250's languages' tables list (š, ž, ý: "Poèítaè je
  vypnutý" is Slovak; not ý beside Icelandic's æ, ð, þ), Hungarian's ő where cp1252's õ is
  neither Portuguese nor Estonian or ű beside a letter French lacks (:func:`~.letter_tables.hungarian`), or a
  cp1252 reading mixing Western languages' letters where one cp1250 language writes the line
  ("klíè" is Czech "klíč": :func:`~.letter_tables.no_western_language`). The detector lists a page only below
  its chaos threshold; a line it refuses everywhere for its accented words ("déjà", "côté",
  "Työpöytä") is listed again above it and read as cp1252 when cp1250 cannot be meant and, in
  ten words or fewer, a word mixes ASCII and accented letters (:func:`_western_past_threshold`).
* **GB18030 within a margin.** GBK bytes also decode cleanly as cp949 or EUC-JP, and on a line
  such as "我叫李明。" the detector ranks those first with the same (zero) chaos. GB18030 is
  taken when its chaos is within :data:`GB18030_MARGIN` of the best candidate's: Korean and
  Japanese files measured 0.109-0.138 above their own encoding, GBK lines 0-0.037.
* **Text, not noise.** The whole file must decode strictly in the chosen encoding (the detector
  reads samples), and hold no C0 control character but tab, line and page breaks: bytes
  ``00 01 02`` read as UTF-16 are a binary file, not the characters U+0100 U+0200; so is UTF-16
  without a line break. Read in a CJK code page, at least half the characters past ASCII must
  be in its common part (:data:`_COMMON`: GB2312's symbols and level-1 hanzi and GBK's first
  rows of traditional characters; Big5's symbols and frequent characters; JIS symbols, kana and
  level-1 kanji; KS X 1001's symbols and Hangul), the set nearly all of a real file is written
  in. GB2312's level 2 and KS X 1001's Hanja are left out: a short Russian word's cp1251
  bytes pair up there ("Москва" as "填耜忄"; level 1 is the 3,755 frequent hanzi). A reading
  of at most three such characters must be all common ("Ёлка" is two Big5 characters, one
  frequent). A Latin-1 accent followed by a letter is a valid pair in each, and a short German
  note ("über", "Käse") read as "黚er", "K鋝e", "K酲e" is none (it is read as the cp1252 it
  is). A GB18030 reading of only rarer characters (GBK/4: most traditional ones, "們說話") is
  taken last, when no single-byte reading fits (one past the detector's threshold too, when
  its Han touch ASCII letters: "m滗ritt" is Finnish "määritt") and every character past ASCII
  is a Han character or CJK punctuation. A CJK reading each of whose characters ends in an
  ASCII byte gives way to a fitting cp1252 / cp1251 one: a curly quote or dash before a letter
  is a GBK/3 pair ("Don’t" as "Don抰"), "°C" a frequent Big5 one. To a cp1250 one only when
  the CJK reading has as many ASCII letters as wide characters or more (Polish "Wśród
  właśnie" is "W渞骴 w砤渘ie", 4 and 4; Big5 "增加" is "ĽWĄ["). Hanzi alone whose short single-
  byte reading is no one language's (:func:`~.letter_tables.one_language_writes`: "螨虫" as "тэіж") stay GBK.
* **Kana mean Japanese.** EUC-JP's kana rows are GB2312's too, so a Japanese note also reads
  cleanly as GB18030 with wrong kanji ("元気" as "傅丹"), or as cp949 Hangul jamo. A GB18030
  reading holding kana, or a cp949 one holding jamo, gives way to EUC-JP when that reads the
  whole file. Kanji without kana stay GB18030 (warned): the detector's chaos and language
  (coherence) are the same for both readings of a short line, so nothing tells them apart.
  Likewise a GB18030 reading gives way to Shift-JIS when it has no GB2312 character and half
  the cp932 reading is kana ("ソフト" is GBK/3's "僜僼僩"), and to cp949 when that reading is
  all Hangul that reads as Korean (:func:`_other_script_instead`).

The caller says which encoding it assumed, in a line naming the file: a guess can be wrong.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import itertools
import re
import unicodedata
from collections import Counter

from hermes_core.agent.prompt.letter_tables import (
    LETTERS,
    best_single,
    central_letters,
    hungarian,
    letter_score,
    one_language_writes,
    untabled_central_in_a_word,
    where_no_western_letter_stands,
)

#: Tried when the bytes hold NUL bytes (ASCII text in UTF-16/32 is half NULs).
WIDE_CODECS = ("utf_16_le", "utf_16_be", "utf_32_le", "utf_32_be")
#: Tried otherwise: the double-byte code pages of Chinese, Japanese and Korean Windows / Unix.
CJK_CODECS = ("gb18030", "big5", "cp932", "euc_jp", "cp949")
#: Tried when no double-byte reading fits: Western European, Cyrillic, Central European and
#: Greek Windows (a Greek line also when a double-byte one fits: see :func:`_greek_shown`).
SINGLE_BYTE_CODECS = ("cp1252", "cp1251", "cp1250", "cp1253")
#: How much more chaos than the detector's best GB18030 may have and still be taken (see above).
GB18030_MARGIN = 0.05
#: Past this many words charset-normalizer counts each word of four letters or more half
#: accented as noise: two such ("déjà", "côté") put an ordinary French line past its default
#: threshold in every single-byte page, and the file was skipped.
FEW_WORDS = 10
#: The chaos up to which single-byte pages refused at the default are listed again (see
#: :func:`_western_past_threshold`).
LONG_LINE_CHAOS = 1.0

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")

#: How a codec is named to people.
_SHOWN = {"utf_16_le": "UTF-16 LE", "utf_16_be": "UTF-16 BE", "utf_32_le": "UTF-32 LE",
          "utf_32_be": "UTF-32 BE", "gb18030": "GB18030", "big5": "Big5",
          "cp932": "Shift-JIS (cp932)", "euc_jp": "EUC-JP", "cp949": "Korean (cp949)",
          "cp1252": "CP1252 (Western European)", "cp1251": "CP1251 (Cyrillic)",
          "cp1250": "CP1250 (Central European)", "cp1253": "CP1253 (Greek)"}


def shown(codec: str) -> str:
    """The name people know ``codec`` by."""
    return _SHOWN.get(codec, codec.upper())


def candidates(sample: bytes) -> tuple[str, ...]:
    """The codecs worth trying on ``sample``, most likely first (possibly none)."""
    from charset_normalizer import from_bytes  # 50 ms to import: only for a non-UTF-8 file

    pool = WIDE_CODECS if b"\x00" in sample else CJK_CODECS
    matches = list(from_bytes(sample, cp_isolation=list(pool)))
    ranked = [m.encoding for m in matches if m.encoding in pool]
    if not ranked:
        return ()
    best = matches[0].chaos
    if any(m.encoding == "gb18030" and m.chaos <= best + GB18030_MARGIN for m in matches):
        ranked.remove("gb18030")
        ranked.insert(0, "gb18030")
    return tuple(dict.fromkeys(ranked))


_HIGH = range(0xA1, 0xFF)
#: GB2312's symbols and frequent hanzi (level 1): what a GBK file is nearly all written in, and
#: what Shift-JIS kana never read as in GB18030 (their lead bytes 0x82/0x83 are GBK/3's).
_GB2312 = ((range(0xA1, 0xAA), _HIGH), (range(0xB0, 0xD8), _HIGH))
#: Per CJK codec, the lead and trail bytes of the characters nearly all of its text is written
#: in; a Latin-1 accent and the letter after it fall outside (the trail byte is ASCII, or the
#: lead is past the frequent rows).
_COMMON: dict[str, tuple[tuple[range, range], ...]] = {
    "gb18030": (*_GB2312, (range(0x81, 0xA1), range(0x40, 0xFF))),   # GBK/3: traditional
    "big5": ((range(0xA1, 0xC6), range(0x40, 0x7F)), (range(0xA1, 0xC6), _HIGH),
             (range(0xC6, 0xC7), range(0x40, 0x7F))),
    "cp932": ((range(0x81, 0x99), range(0x40, 0xFD)),),   # symbols, kana, level-1 kanji
    "euc_jp": ((range(0xA1, 0xD0), _HIGH),),
    "cp949": ((range(0xA1, 0xAD), _HIGH), (range(0xB0, 0xC9), _HIGH)),   # KS X 1001 Hangul
}


@functools.cache
def _pattern(codec: str, rows: tuple[tuple[range, range], ...]) -> re.Pattern[str]:
    """The characters of ``rows`` (lead and trail bytes) in ``codec``, as one character class."""
    chars = []
    for leads, trails in rows:
        for lead in leads:
            for trail in trails:
                with contextlib.suppress(UnicodeDecodeError):
                    chars.append(bytes((lead, trail)).decode(codec))
    return re.compile("[" + re.escape("".join(chars)) + "]")


def _common(codec: str) -> re.Pattern[str]:
    """The common characters of ``codec`` (:data:`_COMMON`), as one character class."""
    return _pattern(codec, _COMMON[codec])


def _wide(text: str) -> int:
    """How many of ``text``'s characters are past ASCII."""
    return len(text) - len(text.encode("ascii", "ignore"))


#: A reading with at most this many characters past ASCII must have only common ones: half of
#: two is one, and a four-letter Russian word's cp1251 bytes are two Big5 characters, one common.
SHORT_READING = 3


def _mostly_common(text: str, codec: str) -> bool:
    """At least half of ``text``'s characters past ASCII are common in ``codec`` (all of them in
    a reading of at most :data:`SHORT_READING` such characters)."""
    wide = _wide(text)
    common = _common(codec).subn("", text)[1]
    return common == wide if wide <= SHORT_READING else 2 * common >= wide


def is_text(text: str, codec: str) -> bool:
    """No C0 control character but tab, line feed, vertical tab, form feed and carriage return;
    and, read as UTF-16/32, a line break: the bytes ``00 01 02`` are the characters U+0100 and
    U+0200 to UTF-16 LE, and a binary file's NUL bytes make it a candidate, while a text file
    saved that way has lines. In a CJK code page, mostly its common characters (see the
    module's docstring)."""
    if _CONTROL.search(text) is not None:
        return False
    if codec in _COMMON and not _mostly_common(text, codec):
        return False
    if codec in SINGLE_BYTE_CODECS and not single_byte_fits(text, codec):
        return False
    return codec not in WIDE_CODECS or "\n" in text or "\r" in text


#: A Cyrillic reading needs this many Cyrillic letters ("Мир"; "été" is "йтй" in cp1251,
#: which the vowel share refuses).
MIN_CYRILLIC = 3
#: And this share of them vowels: Russian has about 0.42, KOI8-R text read as cp1251 about a
#: quarter (its vowels land on consonants: "привет мир" is "РТЙЧЕФ НЙТ").
MIN_VOWEL_SHARE = 0.3
#: A Greek reading needs this many Greek letters.
MIN_GREEK = 4

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_CYRILLIC_WORD = re.compile(r"[\u0400-\u04ff]{2}")
_CYRILLIC_VOWEL = re.compile(r"[аеёиоуыэюяіїєАЕЁИОУЫЭЮЯІЇЄ]")   # Russian's and Ukrainian's
_GREEK = re.compile(r"[\u0370-\u03ff]")
#: Modern Greek's accented vowels: monotonic spelling puts one on every word of two syllables
#: or more, and none on a word in capitals.
_TONOS_LETTERS = "άέήίόύώΐΰΆΈΉΊΌΎΏ"
_TONOS = re.compile(f"[{_TONOS_LETTERS}]")
#: Those whose accent is a tonos alone, not a diaeresis with it (ΐ, ΰ: a handful of words; GBK
#: "社里" read as Greek is "Ιηΐο"): the accent a Greek reading's evidence word must carry.
_TONOS_ALONE = frozenset(c for c in _TONOS_LETTERS
                         if len(unicodedata.normalize("NFD", c)) == 2)
#: A final sigma before a letter: no Greek word has one inside it.
_INNER_FINAL_SIGMA = re.compile(r"ς(?=[^\W\d_])")
#: A symbol past ASCII (not an apostrophe) between two letters: in a Cyrillic, Greek or Central
#: European reading, a byte of a double-byte character ("鸱吻" as "р·ОЗ", "不谙" as "І»ЪП",
#: Big5 "德頓語" as "Ľwąy»y"), not text. (cp1252's curly quotes do sit there: "“Hi”There".)
_SYMBOL_IN_WORD = re.compile(r"(?<=[^\W\d_])[^\w\s\x00-\x7f’](?=[^\W\d_])")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
#: Letters no Polish or Czech word opens with (Slovak "ňou" does with ň): a Big5 character
#: whose lead byte is A5 or B9 reads as one before its trail ("且" is "ĄB", "達" is "ąF").
_NEVER_FIRST = frozenset("ąęěĄĘĚ")
#: A mark no one writes alone (caron, breve, ogonek, acute, diaeresis, cedilla, dot above, the
#: currency sign) anywhere, or a section, copyright, pilcrow, middle dot or a guillemet's wrong
#: side touching a letter: in a cp1250 reading, the bytes of GBK or Big5 punctuation and
#: characters ("。" is A1 A3, "ˇŁ"; "設定" is "ł]©w").
_MARK_BY_LETTER = re.compile(r"[ˇ˘˛˝´¨¸˙¤]|[§©¶·¦](?=[^\W\d_])|(?<=[^\W\d_])[§©¶·¦]"
                             r"|(?<=[^\W\d_])«|»(?=[^\W\d_])")
#: A sign no one writes before a letter (currency, florin, yen, broken bar, section, pilcrow):
#: in a cp1252 reading, the lead byte of a Big5 or Shift-JIS character whose trail is ASCII
#: ("大小" is "¤j¤p", "越南" "¶V«n", katakana "パス" "ƒpƒX"). Before a digit or a space they
#: are text ("¥100", "§ 3"); where they are rare in a text of more than :data:`FEW_WORDS`
#: words, a Western text's own ("¶suivant" in a French line; see :func:`single_byte_fits`).
_SIGN_BEFORE_LETTER = re.compile(r"[¤ƒ¥¦§¶](?=[^\W\d_])")
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
                            rb"|[\xf0-\xf4][\x80-\xbf]{3}")
_HAN_OR_PUNCT = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                           r"\uff00-\uffef\u2018-\u201d\u2026]")
#: A Han character touching an ASCII letter: in a reading of rare hanzi, the bytes of a Latin
#: word's accented letters ("määrittämätön" is "m滗ritt鋗鋞鰊"), not a Chinese line ("粗體(_B)").
_HAN_IN_A_WORD = re.compile(r"[A-Za-z][\u3400-\u9fff]|[\u3400-\u9fff][A-Za-z]")
_KANA = re.compile(r"[\u3041-\u30ff]")
#: A byte past ASCII not followed by an ASCII trail byte: where none is, every double-byte
#: character of a CJK reading ends in ASCII, as a cp1252 "’s" or "°C" does and Chinese text
#: (GB2312's two high bytes, Big5's half of high trails) almost never does.
_HIGH_WITHOUT_ASCII_TRAIL = re.compile(rb"[\x80-\xff](?![\x40-\x7e])")
#: French spacing inside guillemets (a no-break space after « and before »): the bytes AB A0
#: and A0 BB are a GBK/4 and a GBK/3 character ("«\xa0%s\xa0»" is "珷%s牷"), no Chinese line's,
#: so they do not keep the single-byte readings from being weighed.
_SPACED_GUILLEMETS = re.compile(rb"\xab\xa0|\xa0\xbb")
_JAMO = re.compile(r"[\u3131-\u318e]")
#: What EUC-JP's kana rows read as in another CJK code page.
_KANA_AS = {"gb18030": _KANA, "cp949": _JAMO}


def single_byte_fits(text: str, codec: str) -> bool:
    """``text`` reads as the script of ``codec`` writes: no control character; no word mixing
    Cyrillic or Greek with other letters; in cp1251 / cp1253, a capital only as a word's first
    letter or all capitals ("КблзмЭсб" is Greek read as cp1251, "ΏΖΧΘΒε" GBK read as Greek); outside
    cp1252, no symbol past ASCII between two letters; in cp1253, no final sigma inside a word
    and at most one accent a word (monotonic spelling); in cp1252, no more letters past ASCII
    than ASCII letters (French or German text is mostly ASCII; Russian read as cp1252 is all
    accents) and no sign before a letter (:data:`_SIGN_BEFORE_LETTER`: Big5 and Shift-JIS
    lead bytes) unless, past :data:`FEW_WORDS` words, accented letters outnumber them or
    they are fewer than one in ten words; in cp1250, at most two for each ASCII one (Czech
    and Polish are denser: "Zażółć gęślą jaźń"), no word of four letters or more without an
    ASCII one, none opening with ą/ę/ě, no capital after a small accented letter, no lone mark
    and no symbol touching a letter (:data:`_MARK_BY_LETTER`: Big5 and GBK bytes); in both
    Latin pages, no superscript inside a word and no capital past ASCII after a small letter."""
    if _CONTROL.search(text) is not None:
        return False
    past = 0
    # each distinct word judged once (a long file says the same words again and again)
    for word, times in Counter(LETTERS.findall(text)).items():
        if word.isascii():
            continue
        for script in (_CYRILLIC, _GREEK):
            if len(script.findall(word)) not in (0, len(word)):
                return False
        if codec in ("cp1251", "cp1253") and not word.isupper() and any(
                c.isupper() for c in word[1:]):
            return False   # a capital only first, or all capitals ("КблзмЭсб", "ΏΖΧΘΒε")
        if codec in ("cp1252", "cp1250") and (
                not word.isalpha() or any(a.islower() and b.isupper() and not b.isascii()
                                          for a, b in itertools.pairwise(word))):
            return False   # "s¹", "ódŸ", "CafĂ": Polish or a cut UTF-8 byte, not Latin text
        if codec == "cp1250" and len(word) >= 4 and not _ASCII_LETTER.search(word):
            return False   # "Ńęđčďňű": Russian; Czech and Polish words hold ASCII letters
        if codec == "cp1250" and (word[0] in _NEVER_FIRST or any(
                a.islower() and not a.isascii() and b.isupper() for a, b in itertools.pairwise(word))):
            return False   # Big5 "且" as "ĄB", "達" as "ąF", "被" as "łQ": a lead, its trail
        if codec == "cp1253" and (_INNER_FINAL_SIGMA.search(word) is not None
                                  or len(_TONOS.findall(word)) > 1):
            return False
        past += times * (len(word) - len(_ASCII_LETTER.findall(word)))
    if codec != "cp1252" and _SYMBOL_IN_WORD.search(text) is not None:
        return False
    if codec in ("cp1250", "cp1251") and _MARK_BY_LETTER.search(text) is not None:
        return False   # GBK "。" as "ˇŁ", Big5 "設定" as "ł]©w", "东加语" as "ŞFĄ[»y", "洛矶" as "Вен¶"
    if codec == "cp1252":
        # past FEW_WORDS words the signs are the text's own where they are rare: outnumbered
        # by accented letters (not the florin, a letter itself) or fewer than one in FEW_WORDS
        # words ("¶suivant" in a French file, "See §A.1" in an English one); a short line's
        # accents beside them are the same CJK bytes ("長度" is "éL¶È"), and Shift-JIS lines
        # put one before nearly every word ("ƒpƒX")
        signs = len(_SIGN_BEFORE_LETTER.findall(text))
        words = len(text.split()) if signs else 0
        return (past <= len(_ASCII_LETTER.findall(text))
                and (signs == 0 or (words > FEW_WORDS
                                    and (signs < past - text.count("ƒ")
                                         or signs * FEW_WORDS < words))))
    if codec == "cp1250":
        return past <= 2 * len(_ASCII_LETTER.findall(text))
    return True


def _cyrillic_enough(text: str) -> bool:
    """A cp1251 reading with :data:`MIN_CYRILLIC` Cyrillic letters, :data:`MIN_VOWEL_SHARE`
    of them vowels, and a Cyrillic word of two letters or more where it has Latin letters:
    Russian's one-letter words ("и", "в") stand among longer ones, while cp1252's "è" read as
    "и" between Latin words ("il file и vuoto") is an Italian line, however often it says "è";
    a line without a Latin letter is not Italian ("А и Б")."""
    letters = len(_CYRILLIC.findall(text))
    return (letters >= MIN_CYRILLIC
            and len(_CYRILLIC_VOWEL.findall(text)) >= MIN_VOWEL_SHARE * letters
            and (_CYRILLIC_WORD.search(text) is not None or _ASCII_LETTER.search(text) is None))


def _enough(text: str, codec: str) -> bool:
    """A reading has its own page's evidence: in cp1251, Cyrillic letters and vowels
    (:func:`_cyrillic_enough`); in cp1253, :data:`MIN_GREEK` Greek letters, a word of four or
    more, not in capitals, with its accent (KOI8-R read as cp1253 is "ΪΑΝΕΤΛΙ: ΛΥΠΙΤΨ"), and
    Greek's frequent letters (:data:`GREEK_MAX_RANK`);
    in cp1250, a letter it writes that cp1252 cannot (ł, ą, ę, č, ě, ř, and Slovak ľ, which no
    frequency table lists, inside a word: :func:`~.letter_tables.central_letters`): else the text is cp1252's
    ("été") or a stray byte ("CafĂ" is a cut UTF-8 "é")."""
    if codec == "cp1251":
        return _cyrillic_enough(text)
    if codec == "cp1253":
        return (len(_GREEK.findall(text)) >= MIN_GREEK and any(
            len(w) >= 4 and _GREEK.match(w) and not w.isupper()
            and any(c in _TONOS_ALONE for c in w) for w in LETTERS.findall(text))
            and letter_score(text, "cp1253")[1] <= GREEK_MAX_RANK)
    if codec == "cp1250":
        lowered = text.lower()
        return (not central_letters()[0].isdisjoint(lowered)
                or untabled_central_in_a_word(lowered) or hungarian(text)
                or where_no_western_letter_stands(text))
    return True




def _cut_utf8(raw: bytes) -> bool:
    """``raw`` is valid UTF-8 but for a last character cut short, with UTF-8's evidence: two
    bytes or more of that character, or a whole character past ASCII before it (one lead byte
    alone at the end is also a cp1252 "é")."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(raw, final=False)
    except UnicodeDecodeError:
        return False
    pending = decoder.getstate()[0]
    return bool(pending) and (len(pending) >= 2 or not text.isascii())


def _mostly_utf8(raw: bytes) -> bool:
    """At least half of the bytes past ASCII form valid UTF-8 sequences: a UTF-8 file with a
    stray byte, not a code page."""
    high = len(raw) - len(raw.translate(None, bytes(range(0x80, 0x100))))
    return 2 * sum(len(m) for m in _UTF8_SEQUENCE.findall(raw)) >= high


def _decoded(raw: bytes, codec: str, partial: bool) -> str | None:
    try:
        if partial:
            return codecs.getincrementaldecoder(codec)().decode(raw, final=False)
        return raw.decode(codec)
    except UnicodeDecodeError:
        return None


def _single_byte(raw: bytes, sample: bytes, partial: bool,
                 chaos: float = 0.2) -> tuple[str, str] | None:
    """The one single-byte reading with strong evidence (see :func:`single_byte_fits`), among
    the pages the detector lists below ``chaos`` (its default 0.2)."""
    from charset_normalizer import from_bytes

    if _mostly_utf8(sample):
        return None
    fitting: dict[str, str] = {}   # each reading that fits, and the first page it fits in
    for match in from_bytes(sample, cp_isolation=list(SINGLE_BYTE_CODECS), threshold=chaos):
        if match.encoding not in SINGLE_BYTE_CODECS:
            continue
        text = _decoded(raw, match.encoding, partial)
        if text is None:
            continue
        # the detector lists one page for equal readings (curly quotes are the same bytes in
        # both): the text is what is judged, in each page that gives it
        for codec in SINGLE_BYTE_CODECS:
            if ((codec == match.encoding or _decoded(raw, codec, partial) == text)
                    and single_byte_fits(text, codec) and _enough(text, codec)):
                fitting.setdefault(text, codec)
    if not fitting:
        # the detector lists no page for a file of punctuation ("“”…": its chaos is high); one
        # whose high bytes are the same characters in both pages is no guess at all
        text = _decoded(raw, "cp1252", partial)
        if (text is not None and text == _decoded(raw, "cp1251", partial)
                and single_byte_fits(text, "cp1252")):
            return text, "cp1252"
    return best_single(fitting)


def _latin_word(word: str) -> bool:
    """``word`` mixes ASCII letters with others, in three letters or more, capitalised, small
    or in capitals, as Latin text writes it ("Työpöytä", "días"); not "ÄäYy" (Russian "ДдYy"
    in cp1251), "Žg" (cp932 "使") or "òà" (Ukrainian "та")."""
    return (len(word) >= 3 and not word.isascii() and _ASCII_LETTER.search(word) is not None
            and (word[1:].islower() or word.isupper()))


#: Slovak's ŕ sits between consonants ("vŕba"); cp1252's à, its byte, ends words ("déjà", "à").
_FINAL_R_ACUTE = re.compile(r"ŕ(?![^\W\d_])")
#: ¿ opening a question that a "?" closes: Spanish's; cp1250 reads its byte as ż, which no
#: Polish word puts before a question mark's clause without a letter before it ("%s ¿qué?").
_SPANISH_QUESTION = re.compile(r"(?<![^\W\d_])¿(?=[^?]*\?)")


def _western_past_threshold(raw: bytes, sample: bytes,
                            partial: bool) -> tuple[str, str] | None:
    """A cp1252 reading that the detector's default refused in every page, listed again up to
    :data:`LONG_LINE_CHAOS`, when the Central European page cannot be meant: it reads the same
    text (ä, ö, é, ß) but for ¿ opening a question (:data:`_SPANISH_QUESTION`), or its reading
    ends a word with ŕ. Else a Hungarian or Polish line without cp1250's evidence letters
    would be read as cp1252 ("első" as "elsõ"). A line of at most :data:`FEW_WORDS` words also
    needs a Latin word (:func:`_latin_word`): without one the accents are another script's
    bytes (Bulgarian "на" is "íà", cp1250 "íŕ")."""
    # what could be taken is known before the listing: skip it when that cannot be (a KOI8-R
    # file's cp1252 reading is all accents), so a skipped long file is listed once, not twice
    western, central = _decoded(raw, "cp1252", partial), _decoded(raw, "cp1250", partial)
    if (western is None or not single_byte_fits(western, "cp1252")
            or (central != western
                and (central is None or _FINAL_R_ACUTE.search(central) is None)
                and _SPANISH_QUESTION.sub("ż", western) != central)):
        return None
    if len(sample.split()) <= FEW_WORDS and not any(map(_latin_word, LETTERS.findall(western))):
        return None
    single = _single_byte(raw, sample, partial, LONG_LINE_CHAOS)
    return single if single is not None and single == (western, "cp1252") else None


def _japanese_instead(raw: bytes, text: str, codec: str, partial: bool) -> tuple[str, str] | None:
    """EUC-JP's reading, when ``text`` holds what its kana become in ``codec``."""
    kana_as = _KANA_AS.get(codec)
    if kana_as is None or kana_as.search(text) is None:
        return None
    japanese = _decoded(raw, "euc_jp", partial)
    if japanese is None or _KANA.search(japanese) is None or not is_text(japanese, "euc_jp"):
        return None
    return japanese, "euc_jp"


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
#: Korean's most frequent syllables: particles, verb endings and the commonest stems. A Korean
#: line is largely made of them; a GB2312 line read as cp949 lands on the 2,350 syllables of
#: KS X 1001 about evenly (its leads 0xB0-0xC8 are Hangul there, one for one).
_FREQUENT_HANGUL = frozenset(
    "이가은는을를에의와과도로으서고다요니까지하한해했합습있없것수그저나우리사자기시세어아게"
    "대들내면만보주되된적인일전정장상국문안님께네오좀더잘")
#: What a Korean line ends in: a verb ending or a particle ("老客户" as "일와빵" does not).
_KOREAN_ENDING = frozenset("다요니까죠는은을를이가에의로도와과고서야지네")
#: Hiragana and katakana letters, not the marks between (a lone "゜" is GBK's "並" in cp932).
_KANA_LETTER = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
#: A Shift-JIS reading must have this many of them before it is preferred to GB18030's.
MIN_KANA = 2
#: A cp949 reading must have this many different syllables before it is preferred to
#: GB18030's ("等等等" is "된된된").
MIN_HANGUL = 3


def _mostly_frequent(frequent: int, syllables: int) -> bool:
    """More than half the syllables frequent, and all of them in a line of :data:`MIN_HANGUL`:
    there one rare syllable is a third of the evidence, and GBK words land on two frequent
    ones and a rare one ("老搭档" as "일댈도", "淋巴瘤" as "줌것지")."""
    if syllables <= MIN_HANGUL:
        return frequent == syllables
    return 2 * frequent > syllables


def _in_gb2312(text: str) -> bool:
    """``text`` holds a GB2312 symbol or level-1 hanzi."""
    return _pattern("gb18030", _GB2312).search(text) is not None


def _other_script_instead(raw: bytes, text: str, codec: str,
                          partial: bool) -> tuple[str, str] | None:
    """Shift-JIS's or cp949's reading of bytes taken as GB18030, when it shows its script.

    Shift-JIS: half or more of its characters past ASCII are kana letters, at least
    :data:`MIN_KANA` of them, and the GB18030 reading has no GB2312 character (Shift-JIS
    kana are GBK/3's rare hanzi: "ソフト" as "僜僼僩").
    cp949: every character past ASCII a Hangul syllable, at least :data:`MIN_HANGUL` different
    ones, more than half of them among Korean's most frequent (all, in a line of three), the
    last an ending or particle (GB2312's frequent hanzi are KS X 1001's Hangul byte for byte: "안녕하세요" as
    "救崇窍技夸", so only the syllables tell)."""
    if codec != "gb18030":
        return None
    japanese = _decoded(raw, "cp932", partial)
    if (japanese is not None and not _in_gb2312(text) and is_text(japanese, "cp932")
            and (kana := len(_KANA_LETTER.findall(japanese))) >= MIN_KANA
            and 2 * kana >= _wide(japanese)):
        return japanese, "cp932"
    korean = _decoded(raw, "cp949", partial)
    if korean is None or not is_text(korean, "cp949"):
        return None
    syllables = _HANGUL.findall(korean)
    if (len(set(syllables)) >= MIN_HANGUL and len(syllables) == _wide(korean)
            and _mostly_frequent(sum(s in _FREQUENT_HANGUL for s in syllables), len(syllables))
            and syllables[-1] in _KOREAN_ENDING):
        return korean, "cp949"
    return None


#: A double-byte reading gives way to a Greek one only when the Greek letters' mean rank in
#: Greek's frequency table is at most this (of 26): "Καλημέρα" is 8.6; two-hanzi GBK words
#: that read as cased, accented Greek 13-16 ("薯蓣" as "Κνέχ" 13.75).
GREEK_MAX_RANK = 12.0


def _greek_shown(raw: bytes, partial: bool) -> bool:
    """The cp1253 reading of ``raw`` is Greek by :func:`_enough`'s evidence: a double-byte
    reading gives way to it (Greek's letters are all high bytes, so "Καλημέρα" is also GB18030
    "梳腌燧襻")."""
    greek = _decoded(raw, "cp1253", partial)
    return greek is not None and single_byte_fits(greek, "cp1253") and _enough(greek, "cp1253")


#: A single-byte reading of at most this many letters is weighed against a line of hanzi alone
#: (two double-byte characters are four bytes); a longer one reads as its script plainly.
SHORT_LETTERS = 4


def guess_decode(raw: bytes, *, partial: bool = False) -> tuple[str, str] | None:
    """``(text, codec)`` for bytes that are not UTF-8, or None when no encoding fits them.

    ``partial``: ``raw`` is the head of a larger file and may end mid-character; the detector
    is shown it up to its last whole line (or code unit), and the text is decoded once, here.
    """
    wide = b"\x00" in raw
    if not partial and not wide and _cut_utf8(raw):
        return None
    sample = raw
    if partial:
        sample = (raw[:len(raw) - len(raw) % 4] if wide
                  else raw[:raw.rfind(b"\n") + 1] or raw)
    rare: tuple[str, str] | None = None
    for codec in candidates(sample):
        text = _decoded(raw, codec, partial)
        if text is None:
            continue
        if is_text(text, codec):
            if (not wide and (_HIGH_WITHOUT_ASCII_TRAIL.search(_SPACED_GUILLEMETS.sub(b"", raw))
                              is None
                              or _greek_shown(raw, partial))
                    and (single := _single_byte(raw, sample, partial)) is not None
                    and (single[1] != "cp1250"
                         or len(_ASCII_LETTER.findall(text)) >= _wide(text))):
                return single
            return (_japanese_instead(raw, text, codec, partial)
                    or _other_script_instead(raw, text, codec, partial) or (text, codec))
        if (rare is None and codec == "gb18030" and _CONTROL.search(text) is None
                and _HAN_OR_PUNCT.subn("", text)[1] == _wide(text)):
            rare = text, codec
    if wide:
        return None
    single = _single_byte(raw, sample, partial)
    if single is None and (rare is None or _HAN_IN_A_WORD.search(rare[0]) is not None):
        single = _western_past_threshold(raw, sample, partial)
    if (single is not None and rare is not None and _ASCII_LETTER.search(rare[0]) is None
            and sum(map(len, LETTERS.findall(single[0]))) <= SHORT_LETTERS
            and not one_language_writes(*single)):
        return rare   # a line of hanzi alone, read as no one language's letters ("тэіж")
    return single or rare
