"""What a text looks like, for telling a disguise from the text it imitates.

Kept apart from the injection scan's views (``injection/normalise.py``, which reads these) so
that what only needs to compare two short names, the skill catalog setting aside a name that
looks like another's, does not import the scan's rule tables (seconds on a first catalog load).
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt): rendered as nothing.
IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
# Letters in scripts where a look-alike of a Latin letter is an ordinary letter of that script
# (CJK, kana, Hangul) are never folded: only Latin look-alikes from other alphabets are.
NO_FOLD_FROM = 0x2E80


@lru_cache(maxsize=1)
def confusable_map() -> dict[str, str]:
    """Non-ASCII letter -> the ASCII letter or digit it is confusable with (TR39 data)."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data = json.loads(raw)
    out: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii() or ord(char) >= NO_FOLD_FROM:
            continue
        for entry in entries:
            c = entry.get("c", "") if isinstance(entry, dict) else ""
            if len(c) == 1 and c.isascii() and c.isalnum():
                out.setdefault(char, c)
                break
    return out


def name_key(name: str) -> str:
    """What a short name looks like: NFKC (full-width and mathematical letters), invisible code
    points dropped (a zero-width joiner, a variation selector, a Hangul filler), each Latin
    look-alike of another alphabet as its Latin letter (TR39: Cyrillic е, Greek ο), lower case.
    The TR39 table is read only for a name with a letter it could fold (not for Chinese)."""
    if name.isascii():
        return name.casefold()
    text = IGNORABLE.sub("", unicodedata.normalize("NFKC", name))
    if all(c.isascii() or ord(c) >= NO_FOLD_FROM for c in text):
        return text.casefold()
    table = confusable_map()
    latin = "".join(table.get(c, c) for c in text).casefold()
    return "".join(table.get(c, c) for c in latin)


def one_alphabet(name: str) -> str | None:
    """The one alphabet other than Latin that every letter of ``name`` is written in, as typed
    (None for a Latin name, a mix, or one that NFKC or an invisible code point changes). Two such
    names of one alphabet differ in letters of it (Greek Γ and Υ, Mongolian у and ү), as
    ``deploy`` and ``dep1oy`` do in ASCII: a disguise mixes alphabets or imitates a Latin name,
    and TR39 folds Γ and Υ to one Latin letter, which set a Greek user's second skill aside."""
    if name.isascii() or IGNORABLE.search(name) or unicodedata.normalize("NFKC", name) != name:
        return None
    alphabets = {unicodedata.name(c, "?").split(" ", 1)[0] for c in name if c.isalpha()}
    return alphabets.pop() if len(alphabets) == 1 and "LATIN" not in alphabets else None
