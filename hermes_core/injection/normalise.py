"""Text views for the injection scan: what a model reads, with every disguise taken off.

An instruction can be disguised so that a pattern misses it while a model still reads it:
full-width or mathematical letters (NFKC folds them), Cyrillic or Greek look-alikes ("іgnоrе",
folded with the Unicode TR39 confusables data shipped by ``confusable-homoglyphs``), invisible
code points inside a word ("ig<ZWSP>nore", a Hangul filler; default-ignorable code points are
removed), a word or phrase split across lines, spaces or soft hyphens ("i g n o r e",
"ign-\\nore"), tag characters that spell ASCII invisibly, and base64. Each function returns a
view to match against; none of them changes what is put in the prompt.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt): rendered as nothing.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]+")
# Letters in scripts where a look-alike of a Latin letter is an ordinary letter of that script
# (CJK, kana, Hangul) are never folded: only Latin look-alikes from other alphabets are.
_NO_FOLD_FROM = 0x2E80


@lru_cache(maxsize=1)
def _confusable_map() -> dict[str, str]:
    """Non-ASCII letter -> the ASCII letter or digit it is confusable with (TR39 data)."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data = json.loads(raw)
    out: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii() or ord(char) >= _NO_FOLD_FROM:
            continue
        for entry in entries:
            c = entry.get("c", "") if isinstance(entry, dict) else ""
            if len(c) == 1 and c.isascii() and c.isalnum():
                out.setdefault(char, c)
                break
    return out


@lru_cache(maxsize=1)
def _confusable_tables() -> tuple[dict[int, str], dict[int, str]]:
    """(capital letters, everything else). Capitals are folded before lower-casing: Greek "Τ" is
    confusable with "T", while its lower case "τ" looks like no ASCII letter. TR39 gives "l" as
    the prototype of every I-like capital (I and l look alike); a capital is an "I"."""
    upper: dict[int, str] = {}
    other: dict[int, str] = {}
    for k, v in _confusable_map().items():
        if k.isupper():
            upper[ord(k)] = "I" if v == "l" else v
        else:
            other[ord(k)] = v.lower()
    return upper, other


def decode_tags(text: str) -> str:
    """Tag characters (U+E0020..E007E) spell ASCII invisibly: turn them into the text they hide."""
    return _TAG_TEXT.sub(lambda m: "".join(chr(ord(c) - 0xE0000) for c in m.group()), text)


def fold(text: str) -> str:
    """NFKC, hidden tag text revealed, default-ignorable code points removed, Latin look-alikes
    folded to ASCII, lower case. Line breaks are kept, so lines still map to the source."""
    text = unicodedata.normalize("NFKC", decode_tags(text))
    upper, other = _confusable_tables()
    return _IGNORABLE.sub("", text).translate(upper).casefold().translate(other)


# Apostrophes as typeset (U+2019, the modifier letter U+02BC, the prime and the full-width one):
# NFKC keeps them and TR39 folds only letters and digits, so "l’instruction", "j’entre" and
# "don’t" would reach the phrase rules spelled unlike the plain "'" they are written with.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "\uff07": "'"})


def apostrophes(folded: str) -> str:
    """Every apostrophe as the plain one. Applied to the phrase rules' views only: the learned
    scorer reads ``fold`` unchanged, as it was trained."""
    return folded.translate(_APOSTROPHES)


_HYPHEN_BREAK = re.compile(r"(\w)[-\u2010\u2011]\s*\n\s*(\w)")
_SPACES = re.compile(r"[ \t\r\f\v\n\u2028\u2029\x85\x1c-\x1e]+")
# "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e": at least four single letters with one separator.
_SPACED = re.compile(r"(?<![\w])(?:\w[ .\-_*·]){3,}\w(?![\w])")


def flat(folded: str) -> str:
    """The folded text as one line: a phrase broken across lines or by hyphenation is whole."""
    return _SPACES.sub(" ", _HYPHEN_BREAK.sub(r"\1\2", folded)).strip()


def despaced(flat_text: str) -> str:
    """Letters spelled out one by one are joined back into their word."""
    return _SPACED.sub(lambda m: re.sub(r"[ .\-_*·]", "", m.group()), flat_text)


_NOT_LETTER = re.compile(r"[\W_]+")


def compact(folded: str) -> str:
    """Letters only: no space, line break or punctuation can split a phrase here."""
    return _NOT_LETTER.sub("", folded)


_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")


# bytes spelled as bits ("01001001 01100111 ...") or as hex digits, at least a dozen bytes
_BITS = re.compile(r"(?<![01])(?:[01]{8}[ \t]?){12,}(?![01])")
_HEX = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?![0-9a-fA-F])")


def _as_text(raw: bytes) -> str | None:
    """Decoded bytes when they read as text (a sentence, not an image, a hash or a key). A few
    bytes that are not UTF-8 do not hide the rest: a blob garbled in a character or two (a copy,
    a machine translation, or on purpose) still says what it says; they count against it, so
    binary data, where most bytes are not text, stays out."""
    decoded = raw.decode("utf-8", errors="replace")
    if _reads_as_text(decoded, 8):
        return decoded
    # a character dropped from the blob shifts every byte after it: what came before still reads
    bad = _NOT_TEXT.search(decoded)
    head = decoded[:bad.start()] if bad else ""
    return head if _reads_as_text(head, _HEAD_MIN) else None


# U+FFFD stands for bytes that were not UTF-8; control characters other than line breaks and tabs
_NOT_TEXT = re.compile("[\ufffd\x00-\x08\x0b-\x1f\x7f]")
# A readable head must be this long: 24 bytes of random data are all printable ASCII about once
# in 10^10 blobs.
_HEAD_MIN = 24


def _reads_as_text(decoded: str, least: int) -> bool:
    printable = sum(1 for c in decoded if (c.isprintable() and c != "\ufffd") or c in "\n\t")
    return len(decoded) >= least and printable >= 0.95 * len(decoded) and " " in decoded


def decoded_blobs(text: str, limit: int = 20) -> list[str]:
    """Text hidden in base64 blobs (standard or URL-safe), in bits or in hex digits; binary data
    (images, hashes) is not text and is left out."""
    out: list[str] = []
    for m in _B64.finditer(text):
        blob = m.group()
        if len(out) >= limit:
            break
        if not any(c.isdigit() or c in "+/=" for c in blob) and blob.isalpha() and blob.islower():
            continue  # a long lower-case word, not a blob
        # a blob cut one character past a whole group decodes without that character
        core = blob.rstrip("=")
        core = core[:-1] if len(core) % 4 == 1 else core
        padded = core + "=" * (-len(core) % 4)
        try:
            raw = (base64.urlsafe_b64decode(padded) if ("-" in blob or "_" in blob)
                   else base64.b64decode(padded, validate=True))
        except (binascii.Error, ValueError):
            continue
        decoded = _as_text(raw)
        if decoded is not None:
            out.append(decoded)
    if "0" in text and "1" in text:
        for m in _BITS.finditer(text):
            bits = re.sub(r"\s", "", m.group())
            decoded = _as_text(int(bits, 2).to_bytes(len(bits) // 8, "big"))
            if decoded is not None and len(out) < limit:
                out.append(decoded)
    for m in _HEX.finditer(text):
        decoded = _as_text(bytes.fromhex(m.group()))
        if decoded is not None and len(out) < limit and decoded not in out:
            out.append(decoded)
    return out


# Arabic short vowels, Quranic marks and the tatweel are written or left out at will; the alef
# with hamza or madda, the alef maqsura and the ta marbuta are spelled either way in everyday text.
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_LETTERS = str.maketrans({"\u0623": "\u0627", "\u0625": "\u0627", "\u0622": "\u0627",
                                 "\u0671": "\u0627", "\u0649": "\u064a",
                                 "\u0629": "\u0647"})
_CYRILLIC = re.compile("[\u0400-\u04ff]")
_CYRILLIC_WORD = re.compile(r"\w*[\u0400-\u04ff]\w*")


@lru_cache(maxsize=1)
def _to_cyrillic() -> dict[int, str]:
    """ASCII letter -> the lower-case Cyrillic letter TR39 says it is confusable with (the inverse of
    the fold, read from the same data): "иrнoрируй" typed with Latin o and r is "игнорируй"."""
    out: dict[int, str] = {}
    for char, latin in _confusable_map().items():
        if "\u0430" <= char <= "\u044f" and latin.isalpha():
            out.setdefault(ord(latin.lower()), char)
    return out


def unfolded(text: str) -> str:
    """The view for alphabets the confusables fold would garble (Cyrillic, Arabic) and for Hangul:
    NFKC, hidden tag text revealed, default-ignorable code points removed, lower case, one line,
    but no letter turned into a Latin look-alike. Inside a word that holds a Cyrillic letter a
    Latin look-alike goes the other way ("игнoрируй" with a Latin "o"), and Arabic is read without
    its optional marks."""
    text = _IGNORABLE.sub("", unicodedata.normalize("NFKC", decode_tags(text))).casefold()
    if _CYRILLIC.search(text):
        to_cyrillic = _to_cyrillic()
        text = _CYRILLIC_WORD.sub(lambda m: m.group().translate(to_cyrillic), text)
    return flat(apostrophes(_ARABIC_MARKS.sub("", text).translate(_ARABIC_LETTERS)))
