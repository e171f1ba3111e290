"""The encoding of a context file that is not UTF-8 and has no byte-order mark, guessed.

A Chinese Windows saves Notepad files in GBK (code page 936), and PowerShell 5's ``Out-File``
can leave UTF-16 without a mark; the prompt builder skipped both, and the user's notes left
every prompt. :mod:`charset_normalizer` (a maintained detector) ranks the encodings whose
decoding reads least like noise ("chaos"); this module decides which of its candidates to
trust, because on a short file its ranking is close to a coin toss:

* **Only where a guess can be right.** Bytes holding NUL bytes are only tried as UTF-16/32;
  bytes without are only tried as the double-byte CJK code pages (GB18030, Big5, Shift-JIS,
  EUC-JP, Korean cp949). A single-byte code page (cp1252, cp1251, ...) is never guessed: every
  byte sequence is valid in each of them, and "Ich heiße" read as cp1250 or "café" as
  Thai puts wrong letters in every prompt without a trace.
* **GB18030 within a margin.** GBK bytes also decode cleanly as cp949 or EUC-JP, and on a line
  such as "我叫李明。" the detector ranks those first with the same (zero) chaos. GB18030 is
  taken when its chaos is within :data:`GB18030_MARGIN` of the best candidate's: Korean and
  Japanese files measured 0.109-0.138 above their own encoding, GBK lines 0-0.037.
* **Text, not noise.** The whole file must decode strictly in the chosen encoding (the detector
  reads samples), and hold no C0 control character but tab, line and page breaks: bytes
  ``00 01 02`` read as UTF-16 are a binary file, not the characters U+0100 U+0200; so is UTF-16
  without a line break. Read in a CJK code page, at least half the characters past ASCII must
  be in its common part (:data:`_COMMON`: GB2312 and GBK's first rows of traditional
  characters; Big5's symbols and frequent characters; JIS symbols, kana and level-1 kanji;
  KS X 1001), the set nearly all of a real file is written in: a Latin-1 accent followed by a
  letter is a valid pair in each, and a short German note ("über", "Käse") read as "黚er",
  "K鋝e", "K酲e" is none. (A file of only rarer characters is skipped, as before.)

The caller says which encoding it assumed, in a line naming the file: a guess can be wrong.
"""

from __future__ import annotations

import contextlib
import functools
import re

#: Tried when the bytes hold NUL bytes (ASCII text in UTF-16/32 is half NULs).
WIDE_CODECS = ("utf_16_le", "utf_16_be", "utf_32_le", "utf_32_be")
#: Tried otherwise: the double-byte code pages of Chinese, Japanese and Korean Windows / Unix.
CJK_CODECS = ("gb18030", "big5", "cp932", "euc_jp", "cp949")
#: How much more chaos than the detector's best GB18030 may have and still be taken (see above).
GB18030_MARGIN = 0.05

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")

#: How a codec is named to people.
_SHOWN = {"utf_16_le": "UTF-16 LE", "utf_16_be": "UTF-16 BE", "utf_32_le": "UTF-32 LE",
          "utf_32_be": "UTF-32 BE", "gb18030": "GB18030", "big5": "Big5",
          "cp932": "Shift-JIS (cp932)", "euc_jp": "EUC-JP", "cp949": "Korean (cp949)"}


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
#: Per CJK codec, the lead and trail bytes of the characters nearly all of its text is written
#: in; a Latin-1 accent and the letter after it fall outside (the trail byte is ASCII, or the
#: lead is past the frequent rows).
_COMMON: dict[str, tuple[tuple[range, range], ...]] = {
    "gb18030": ((range(0xA1, 0xF8), _HIGH),                                   # GB2312
                (range(0x81, 0xA1), range(0x40, 0xFF))),   # GBK/3: traditional characters
    "big5": ((range(0xA1, 0xC6), range(0x40, 0x7F)), (range(0xA1, 0xC6), _HIGH),
             (range(0xC6, 0xC7), range(0x40, 0x7F))),
    "cp932": ((range(0x81, 0x99), range(0x40, 0xFD)),),   # symbols, kana, level-1 kanji
    "euc_jp": ((range(0xA1, 0xD0), _HIGH),),
    "cp949": ((range(0xA1, 0xFF), _HIGH),),                                    # KS X 1001
}


@functools.cache
def _common(codec: str) -> re.Pattern[str]:
    """The common characters of ``codec`` (:data:`_COMMON`), as one character class."""
    chars = []
    for leads, trails in _COMMON[codec]:
        for lead in leads:
            for trail in trails:
                with contextlib.suppress(UnicodeDecodeError):
                    chars.append(bytes((lead, trail)).decode(codec))
    return re.compile("[" + re.escape("".join(chars)) + "]")


def _mostly_common(text: str, codec: str) -> bool:
    """At least half of ``text``'s characters past ASCII are common in ``codec``."""
    wide = len(text) - len(text.encode("ascii", "ignore"))
    return 2 * _common(codec).subn("", text)[1] >= wide


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
    return codec not in WIDE_CODECS or "\n" in text or "\r" in text


def guess_decode(raw: bytes) -> tuple[str, str] | None:
    """``(text, codec)`` for bytes that are not UTF-8, or None when no encoding fits them."""
    for codec in candidates(raw):
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        if is_text(text, codec):
            return text, codec
    return None
