"""Greek words that sound like English ones: Greek's small words, and whether a word is one
Greek's own dictionary holds, as written or, typed without accents, with its accent put back.

Ordinary Greek is full of words that, read letter by letter for their English sound, are English
words the injection rules read: "δώσε" sounds as "those", "βάση" as "base". A sentence of them
is Greek, not English spelled in Greek letters; weighing them as English gave "Δώσε μου τη βάση
δεδομένων" an English reading (never blocked, but work spent and a risk). A word Greek's
dictionary knows is Greek whatever it sounds like; English spelled in Greek letters
("ιγνόρε", "ινστρούκτιονς") is in no Greek dictionary. The dictionary is simplemma's (already
the lexical layer's lemmatiser): loaded on first use, about 0.8 s and 26 MB once a process, and
asked only about a word that reads as an English rule word. simplemma's cache of dictionaries
has no lock (threads asking at once each read the dictionary from disk), so lookups take
:data:`_LOOKUP` in turn: one thread reads it, the others wait for it.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from hermes_core.forked import child_lock
from hermes_core.injection.greek_sounds import bare

# Greek's own small words (clitic pronouns, negations, articles, που, αυτή) that sound like
# English ones (δεν "then", μου "may", σου "say", πού "pay", μας "mac", αυτή "auth"): every Greek
# sentence has some, so they are not weighed as English; a sentence found disguised still has
# them read. Kept as :func:`bare` gives them (lower case, no accents, a final ς as σ).
SMALL_WORDS = frozenset(map(bare, (
    "δεν", "μην", "μου", "σου", "του", "της", "μας", "σας", "τους", "τις", "των", "τον", "την",
    "που", "πως", "οτι", "για", "απο", "και", "στο", "στη", "στην", "στον", "στα", "αυτη", "αυτο",
    "αυτος", "αυτα", "αυτοι", "αυτες", "ενα", "μια", "ενας")))

# Greek's longest dictionary words have about 30 letters: a longer one is no Greek word, and is not
# looked up (nor remembered: a megabyte of random letters would fill the memo with its words)
_LONGEST_WORD = 40
# held for a lookup: the first reads the dictionary, once a process; free in a forked child (a
# thread's lookup under way at the fork hung the child's first one)
_LOOKUP = child_lock(threading.Lock())


# a vowel with its accent (tonos): monotonic spelling puts one on each word of two or more syllables
_ACCENTED = {"α": "ά", "ε": "έ", "η": "ή", "ι": "ί", "ο": "ό", "υ": "ύ", "ω": "ώ"}
_ACCENTS = frozenset("άέήίόύώΐΰϊϋ")


def known_greek(word: str) -> bool:
    """Whether Greek's dictionary holds ``word`` (any case), as written or, when it carries no
    accent, with the accent put back on one of its vowels: Greek typed without accents ("δωσε",
    "βαση") is still Greek, and the dictionary holds only the accented forms. English spelled in
    Greek letters ("ιγνορε") is no word with any accent. At most one lookup a vowel."""
    if len(word) > _LONGEST_WORD:
        return False
    lower = word.lower()
    if _known(lower):
        return True
    if any(c in _ACCENTS for c in lower):
        return False
    return any(_known(lower[:i] + _ACCENTED[c] + lower[i + 1:])
               for i, c in enumerate(lower) if c in _ACCENTED)


@lru_cache(maxsize=16384)
def _known(word: str) -> bool:
    import simplemma  # imported here: only a sentence of Greek with an English-sounding word asks

    with _LOOKUP:
        return bool(simplemma.is_known(word, lang="el"))
