"""English spelled in Greek letters by its sound, and the search for a word the rules read.

Greek has no letter for c, q or w, so one who spells an English order in Greek letters picks one
for its sound: κ for c ("ινστρουκτιονς"), κβ or κυ for qu ("ρεκβεστ"), ου or β for w
("ουατ"), δ or θ for th, ντ for nd, μπ for b. A letter-by-letter romanisation (``anyascii``, ELOT
743) never writes c, q or w, so the phrase rules never met such a word. These tables add the
readings such a spelling means, beside a letter's shape and its Greek sound
(:func:`hermes_core.injection.normalise._letter_readings`), and :func:`known_readings` searches
the mixes of them for words the rules read. Pure data and pure functions: the tables of letters
and of rule words are handed in.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Set

# a lower-case, unaccented Greek letter -> what else it stands for in English spelled by sound
EXTRA_LETTER_READINGS: Mapping[str, tuple[str, ...]] = {
    "β": ("w", "wh"),       # "βατ": what (Greek β is v, the nearest sound to w; wh sounds as w)
    "δ": ("th",),           # "δε": the (δ is the voiced th)
    "α": ("u", "o"),        # "ινστρακσιονς": the u of "instructions"; "αμπάβ": above
    "ε": ("a",),            # "σεντ" for "sent", "ενι" for "any"
    "ζ": ("s",),            # "πλιζ": please
    "η": ("e",),            # the Erasmian reading, "ρηκουεστ"
    # the sound /i/, which English writes y, e, ee, ea or ey: "ιου": you, "πρίβιους": previous,
    # "κιπ": keep, "ριβίλ": reveal, "κιζ": keys
    "ι": ("e", "y", "ee", "ea", "ey"),
    "κ": ("c", "q", "ck"),  # "ινστρουκτιονς": instructions
    "ο": ("a", "u", "ou"),  # "ολ": all, "γιορ": your
    "λ": ("ll",),           # "ολ": all
    # a doubled English consonant is one sound, one Greek letter: "κομαντ" command, "έρορ" error
    "μ": ("mm",),
    "ν": ("nn",),
    "π": ("pp",),
    "τ": ("tt",),
    "ρ": ("re", "rr"),      # "αρ": are, "μπιφορ": before
    # "σιτι": city; "ρουλς": rules, a silent e before it (a word is read case-folded: a final ς
    # is σ); sh, which Greek has no letter for ("σόου": show); "πάσουορντ": password
    "σ": ("c", "z", "es", "sh", "ss"),
    "ξ": ("ct",),           # "ινστρούξιονς"
    "υ": ("u", "i", "y"),   # κυ for qu, υ as i in Greek
    "φ": ("ph",),
    "χ": ("h", "k", "ch"),  # "χου": who
    "ω": ("o",),
}

# two or three Greek letters read as one English sound
DIGRAPH_READINGS: Mapping[str, tuple[str, ...]] = {
    "ου": ("u", "w", "oo", "ou", "o", "wh"),   # "ουατ": what, "ρουλς": rules
    "οου": ("o", "ow", "oa"),                  # "σόου": show, "μόουντ": mode
    "κβ": ("qu", "kw"),                  # "ρεκβεστ": request
    "κυ": ("qu",),
    "κς": ("x",),
    "κσ": ("x", "ct"),                   # "ινστρακσιονς": instructions
    "σι": ("ti",),                       # -tion
    "σον": ("tion",),                    # "ινστράκσονς": instructions
    "γι": ("y",),                        # "γιου": you, "γιορ": your
    "γκ": ("g", "nk"),
    "γγ": ("ng",),
    "μπ": ("b", "mb"),
    "ντ": ("d", "nd", "dd"),             # "σεντ": send, "αντρές": address
    "τζ": ("j", "g"),
    "τσ": ("ch",),
    "αι": ("e", "ai", "i"),
    "ει": ("i", "ei", "ee", "ey", "a", "ai", "ay", "ea"),   # "σέι": say, "ντέιταμπεϊς": database
    "οι": ("oi", "oy"),
    "αου": ("ow", "ou"),
    "γου": ("w",),
}
_LONGEST_DIGRAPH = max(map(len, DIGRAPH_READINGS))


def bare(word: str) -> str:
    """A lower-case word without its accents: the readings are the same with or without them."""
    decomposed = unicodedata.normalize("NFD", word.casefold())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


_DIGRAPH_FIRST = frozenset(d[0] for d in DIGRAPH_READINGS)


def letter_ways(letters: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[tuple[int, str], ...]]:
    """Each letter's ways on for :func:`known_readings` ((1, a reading), its own readings then
    :data:`EXTRA_LETTER_READINGS`, each once), reversed: pushed on a stack, a letter's own readings
    (its shape first) are tried first. Built once by the caller, not once a branch."""
    out: dict[str, tuple[tuple[int, str], ...]] = {}
    for letter in {*letters, *EXTRA_LETTER_READINGS}:
        readings = (*letters.get(letter, (letter,)), *EXTRA_LETTER_READINGS.get(letter, ()))
        out[letter] = tuple(reversed([(1, r) for r in dict.fromkeys(readings)]))
    return out


Ways = Mapping[str, tuple[tuple[int, str], ...]]


def _ways_on(word: str, i: int, ways: Ways) -> tuple[tuple[int, str], ...]:
    """How the search may read on from position ``i``: the letter's ways, and before them on the
    stack (so tried after them) the digraphs that begin there."""
    letter = word[i]
    single = ways.get(letter) or ((1, letter),)
    if letter not in _DIGRAPH_FIRST:
        return single
    digraphs = [(size, r) for size in range(2, min(_LONGEST_DIGRAPH, len(word) - i) + 1)
                for r in DIGRAPH_READINGS.get(word[i:i + size], ())]
    return (*reversed(digraphs), *single)


def known_readings(word: str, letters: Ways, known: Set[str],
                   beginnings: Set[str], budget: int, most: int = 2) -> tuple[str, ...]:
    """The first ``most`` readings of ``word`` (lower case, no accents) that are words in
    ``known``, in the order found (a word may read as two: "δε" is Spanish "de" by shape and
    "the" by sound; "σεντ" is "sent" and "send"): each letter read by ``letters`` (built by
    :func:`letter_ways`: its own readings, then :data:`EXTRA_LETTER_READINGS`), or two or three
    letters at once by :data:`DIGRAPH_READINGS`. Searched depth first, a branch dropped as soon
    as it begins no known word (``beginnings``); at most ``budget`` branches, so a long word costs
    no more than the caller allows. A word may end in a silent e its Greek spelling leaves out
    ("ιγνόρ": ignore, "μόουντ": mode). () when no reading is known."""
    # each position's ways on, worked out when the search first reaches it (most words are given
    # up after a letter or two), not once a branch
    ways: dict[int, tuple[tuple[int, str], ...]] = {}
    found: list[str] = []
    seen: set[tuple[int, str]] = set()   # a branch reached twice ("ου" whole or letter by letter) once
    stack: list[tuple[int, str]] = [(0, "")]
    end = len(word)
    while stack and budget > 0:
        i, head = stack.pop()
        budget -= 1
        if i == end:
            found += [r for r in (head, head + "e") if r in known and r not in found]
            if len(found) >= most:
                del found[most:]
                break
            continue
        here = ways.get(i)
        if here is None:
            here = ways[i] = _ways_on(word, i, letters)
        for size, r in here:
            branch = (i + size, head + r)
            if branch[1] in beginnings and branch not in seen:
                seen.add(branch)
                stack.append(branch)
    return tuple(found)
