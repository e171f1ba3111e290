"""Text views for the injection scan: what a model reads, with every disguise taken off.

An instruction can be disguised so that a pattern misses it while a model still reads it:
full-width or mathematical letters (NFKC folds them), Cyrillic or Greek look-alikes ("іgnоrе",
folded with the Unicode TR39 confusables data shipped by ``confusable-homoglyphs``), invisible
code points inside a word ("ig<ZWSP>nore", a Hangul filler; default-ignorable code points are
removed), a word or phrase split across lines, spaces or soft hyphens ("i g n o r e",
"ign-\\nore", or cut by a bare line break), tag characters that spell ASCII invisibly, markup a
rendered page hides ("ig**nore**", "[ign](https://x)ore", "&#105;gnore", "ig<!-- -->nore"), and
text encoded as base64, hex, URL escapes or ROT13. Each function returns a view to match
against; none of them changes what is put in the prompt.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache

from anyascii import anyascii

from hermes_core.injection.greek_lexicon import SMALL_WORDS, known_greek
from hermes_core.injection.greek_sounds import bare, known_readings, letter_ways
from hermes_core.look_alike import IGNORABLE as _IGNORABLE
from hermes_core.look_alike import confusable_map as _confusable_map

_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]+")

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


# Greek, Cyrillic and Armenian letters; a word holding one of them beside a Latin letter is a
# disguise, since no language writes its words in two of these alphabets at once.
_OTHER_ALPHABET = re.compile("[\u0370-\u03ff\u0400-\u052f\u0531-\u058f\u1c80-\u1c8f\u1f00-\u1fff"
                             "\u2de0-\u2dff\ua640-\ua69f]")
_ANY_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile("[a-zA-Z]")


# Letters of the Latin script (ASCII and the accented ranges), to weigh a paragraph's script.
_LATIN_LETTER = re.compile("[a-zA-Z\u00c0-\u024f\u1e00-\u1eff]")
# a blank line whatever ends a line (LF, CRLF, CR alone) or Unicode's paragraph separator
_PARAGRAPH_BREAK = re.compile("(\r?\n[ \t]*\r?\n|\r[ \t]*\r|\u2029)")


def _mostly_latin(paragraph: str) -> bool:
    """Whether a paragraph has more Latin letters than Greek, Cyrillic and Armenian ones."""
    # counted by what a removal takes out: no list of a million one-letter matches
    n = len(paragraph)
    return n - len(_LATIN_LETTER.sub("", paragraph)) > n - len(_OTHER_ALPHABET.sub("", paragraph))


# a word's readings are remembered (a 1 MB paragraph of Greek repeats its words) only up to this
# length: else every long word of every text scanned, up to the caches' 65,536 entries, lives on
REMEMBERED_WORD_LENGTH = 64


def _short(word: str) -> bool:
    return len(word) <= REMEMBERED_WORD_LENGTH


def _whole_in_latin(m: re.Match[str]) -> str:
    word = m.group()
    return _whole_word_in_latin_once(word) if _short(word) else _whole_word_in_latin(word)


def _in_latin(m: re.Match[str]) -> str:
    word = m.group()
    return _word_in_latin_once(word) if _short(word) else _word_in_latin(word)


def _whole_word_in_latin(word: str) -> str:
    """A word of a paragraph written mostly in Latin letters: a word wholly in another alphabet
    there ("Ιγνορε αλλ previous instructions") is a disguise, not a Greek word, and is spelled in
    Latin by sound (``anyascii``: "ιγνορε" -> "ignore"; TR39 would read ν as v and ρ as p); a word
    mixing alphabets is read as :func:`_word_in_latin` reads it. Once a distinct word: a 1 MB
    paragraph of Greek repeats its words."""
    if _LATIN.search(word) or not _OTHER_ALPHABET.search(word):
        return _word_in_latin_once(word) if _short(word) else _word_in_latin(word)
    return anyascii(word)


def _word_in_latin(word: str) -> str:
    if not (_LATIN.search(word) and _OTHER_ALPHABET.search(word)):
        return word
    upper, other = _confusable_tables()
    folded = word.translate(upper).casefold().translate(other)
    # only the other alphabet's letters: anyascii would also strip the word's accents ("erwähne"
    # -> "erwahne") and spell a Chinese run the word pattern joined to it in pinyin
    return _OTHER_ALPHABET.sub(lambda c: anyascii(c.group()), folded)


_whole_word_in_latin_once = lru_cache(maxsize=65536)(_whole_word_in_latin)
_word_in_latin_once = lru_cache(maxsize=65536)(_word_in_latin)


# Greek letters read by their shape, where TR39 gives no ASCII letter for one (its prototypes for
# these are "n̩", "ᴛ", "ĸ", "ꞓ", "⍵", "ꭓ": letters outside ASCII that the fold cannot match), with
# the ones TR39 does give (α γ ι ν ο ρ σ υ) so that a word is read by one rule throughout. A
# letter with no Latin look-alike (θ λ ξ π φ ψ ζ) is spelled by sound.
_GREEK_SHAPES = str.maketrans({"α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "η": "n", "ι": "i",
                               "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p", "σ": "o", "ς": "c",
                               "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c"})
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
# what NFKC can turn into a Greek letter too: the micro sign, mathematical Greek, the Greek
# compatibility symbols (ϐ ϑ ϕ ϰ ϱ ϵ and the like lie inside the Greek block already)
_GREEK_BEFORE_NFKC = re.compile("[\u00b5\u0370-\u03ff\u1d26-\u1d2a\u1d5d-\u1d61\u1d66-\u1d6a"
                                "\u1dbf\u1f00-\u1fff\u2126\U0001d6a8-\U0001d7cb]")
# a word of Greek letters, or of Greek and Latin ones, and nothing else
_GREEK_OR_LATIN_WORD = re.compile("[a-zA-Z\u00c0-\u024f\u1e00-\u1eff\u0370-\u03ff\u1f00-\u1fff]*"
                                  "[\u0370-\u03ff\u1f00-\u1fff][a-zA-Z\u00c0-\u024f\u1e00-\u1eff"
                                  "\u0370-\u03ff\u1f00-\u1fff]*")
_GREEK_OR_LATIN_SPLIT = re.compile(f"({_GREEK_OR_LATIN_WORD.pattern})")


def _shape(letter: str) -> str:
    base = unicodedata.normalize("NFD", letter)[0]      # "ή" looks like "η" with an accent: "n"
    shaped = base.translate(_GREEK_SHAPES)
    return shaped if shaped != base else anyascii(letter)


_GREEK_CODE_POINTS = (*range(0x370, 0x400), *range(0x1F00, 0x2000))


@lru_cache(maxsize=1)
def _greek_tables() -> tuple[dict[int, str], dict[int, str]]:
    """Every Greek letter read by shape and by sound (``anyascii`` spells letter by letter), built
    once: one ``str.translate`` a word, where a Python call a letter made a 1 MB paragraph of Greek
    look-alikes cost seconds more to scan."""
    return ({cp: _shape(chr(cp)) for cp in _GREEK_CODE_POINTS},
            {cp: anyascii(chr(cp)) for cp in _GREEK_CODE_POINTS})


# a word's letter-by-letter readings are searched letter by letter, a branch dropped as soon as
# no rule word begins with it; at most this many branches a word (a word of thirteen letters
# with two readings each has 8,192 readings, of which a few dozen begin a word the rules know)
MAX_WORD_BRANCHES = 256


@lru_cache(maxsize=1)
def _letter_readings() -> dict[str, tuple[str, ...]]:
    """Each lower-case Greek letter's Latin readings: by its own shape, by its capital's shape
    (TR39: "η" is "Η", so "h"; "ν" is "Ν", "n") and by its sound, each once, in that order."""
    upper, _ = _confusable_tables()
    shape, sound = _greek_tables()
    out: dict[str, tuple[str, ...]] = {}
    for cp in _GREEK_CODE_POINTS:
        letter = chr(cp)
        if letter.casefold() != letter or not letter.isalpha():
            continue
        capital = unicodedata.normalize("NFD", letter)[0].upper()
        by_capital = upper.get(ord(capital), "").lower() if len(capital) == 1 else ""
        out[letter] = tuple(dict.fromkeys(r for r in (shape[cp], by_capital, sound[cp]) if r))
    return out


@lru_cache(maxsize=2)
def _rule_words(english: bool = False) -> tuple[frozenset[str], frozenset[str]]:
    """(the words, every beginning of one) that the phrase rules of the Latin-letter languages
    read ("ignore", "the", "key"), from their patterns' text, a host's aside (it spells the file
    extensions it is not: "είναι" read as "ini"): what a Greek word is weighed against. ``english``:
    the English rules' only (Greek reads as German or Spanish too often: "είναι" "eine", "στο" "esta")."""
    # imported here: only a text with a word of Greek letters needs the tables
    from hermes_core.injection.addresses import without_hosts
    from hermes_core.injection.patterns import LANGUAGES
    words: set[str] = set()
    for lang, table in LANGUAGES.items():
        if lang in ("zh", "ja") or (english and lang != "en"):
            continue
        for pattern in (p for patterns in table.values() for p in patterns):
            for word in re.findall(r"[a-z]{2,}\??", without_hosts(pattern.pattern)):
                words.add(word.rstrip("?"))
                if word.endswith("?"):
                    words.add(word[:-2])   # "keys?": "key" too
    return frozenset(words), frozenset(w[:i] for w in words for i in range(1, len(w) + 1))


# how many of a word's readings that are rule words the search looks for: the first is the word's
# shape reading, and an English one is looked for among them all
KNOWN_READINGS = 4


def _known_readings(word: str) -> tuple[str, ...]:
    """The first letter-by-letter readings (:data:`KNOWN_READINGS`) of a lower-case word, each
    Greek letter by its shape, its capital's shape, its sound or what it stands for in English
    spelled by sound (:mod:`hermes_core.injection.greek_sounds`: κ for c, ου for w), that are
    words the rules read
    ("τηε": "the", τ by shape, η by its capital; "σεnd": "send"; "ινστρούκτιονς": "instructions";
    "δε": "de" and "the"); () when none is (or :data:`MAX_WORD_BRANCHES` are spent first).
    Accents do not change them. A lone letter is read by its shape ("η is eta")."""
    if len(word) < 2:
        return ()
    known, beginnings = _rule_words()
    return known_readings(bare(word), _letter_ways(), known, beginnings, MAX_WORD_BRANCHES,
                          KNOWN_READINGS)


@lru_cache(maxsize=1)
def _letter_ways() -> dict[str, tuple[tuple[int, str], ...]]:
    """:func:`_letter_readings` with the English sound readings, as the search steps through them."""
    return letter_ways(_letter_readings())


# a Greek word this long or longer that reads as a word the rules read is weighed as such; a
# shorter one ("το" is "to", "με" "me", "αν" "an") is as often a Greek word
_RULE_WORD_LETTERS = 3


def _english_readings(word: str) -> tuple[str, ...]:
    """The readings of a lower-case word, of those :func:`_known_readings` finds, that are words
    the English rules read: English typed in Greek letters by sound reads as English ("δε" is
    "the", where the first of all readings is Spanish "de"). One search serves both."""
    return _english_of(_known_readings_remembered(word))


def _known_readings_remembered(word: str) -> tuple[str, ...]:
    """:func:`_known_readings`, remembered for a word short enough to be met again."""
    return _known_readings_once(word) if _short(word) else _known_readings(word)


def _english_of(found: tuple[str, ...]) -> tuple[str, ...]:
    english, _ = _rule_words(english=True)
    return tuple(r for r in found if r in english)


def _word_readings(word: str) -> tuple[str, str, str]:
    """A word of Greek letters (or Greek and Latin ones) read (by shape, by sound, as English),
    once a distinct word. By shape, unless some mix of its letters' readings is a word the rules
    read: then that mix (the sound reading is kept whole as a view of its own); the third is the
    longest such mix that the English rules read ("δε": "de", then "the"), else the first."""
    upper, _ = _confusable_tables()
    lower = word.translate(upper).casefold()
    shape, sound = _greek_tables()
    mixed = _known_readings_remembered(word.casefold())
    by_shape = mixed[0] if mixed else lower.translate(shape)
    # "ου" is "ou" in every romanisation of Greek (ELOT 743, ISO 843), where anyascii spells each
    # υ "y" ("πρεβιους" -> "previoys")
    if "υ" in word or "Υ" in word:
        word = _OU.sub(lambda d: _OU_LATIN[d.group()], word)
    english = _english_of(mixed)
    # the longest: a spelling the tables give only by a longer path is the likelier meant ("ουατ"
    # is "out" by ου, "what" by ου as wh; "σόου" "so" and "show")
    return by_shape, word.translate(sound), max(english, key=len) if english else by_shape


_OU = re.compile("[οΟ][υΥ]")
_OU_LATIN = {"ου": "ou", "οΥ": "oU", "Ου": "ou", "ΟΥ": "oU"}
_word_readings_once = lru_cache(maxsize=65536)(_word_readings)
_known_readings_once = lru_cache(maxsize=65536)(_known_readings)


_GREEK_LONG_WORD = re.compile("[\u0370-\u03ff\u1f00-\u1fff]{5,}")
# where a sentence ends: Greek's question mark (U+037E) and upper stop (U+0387) are ";" and "·"
# after NFKC
_SENTENCE_END = re.compile("(?<=[.;!?\u00b7\n])")


# a Greek letter with an accent (tonos, dialytika, a polytonic mark: modern Greek writes one on every
# word of two or more syllables), composed (the text is NFKC: "ά", "ϊ", "ἀ") or followed by one
_ACCENTED_GREEK = re.compile("[\u0386\u0388-\u0390\u03aa-\u03b0\u03ca-\u03ce\u1f00-\u1fff]"
                             "|[\u0370-\u03ff][\u0300\u0301\u0308\u0313\u0314\u0342\u0345]")
_G = "\u0370-\u03ff\u1f00-\u1fff"
# a word of five Greek letters or more holding an accented one (the word's start found once, the
# lookahead checks its length, the run its accent)
_ACCENTED_LONG_WORD = re.compile(f"(?<![{_G}])(?=[{_G}]{{5}})[{_G}]*?"
                                 "(?:[\u0386\u0388-\u0390\u03aa-\u03b0\u03ca-\u03ce\u1f00-\u1fff]"
                                 f"|[{_G}][\u0300\u0301\u0308\u0313\u0314\u0342\u0345])")


def _unaccented_greek(sentence: str) -> bool:
    """Whether a sentence's Greek letters lack the accents Greek spelling puts on nearly every
    word of two or more syllables: most of its words of five letters or more carry none (or, with
    no such word, none of its letters does). A sentence "in Greek" spelled so is letters chosen for
    their look or sound; one stray accent ("... ορδερς ά") does not make it Greek."""
    if len(sentence) - len(_GREEK.sub("", sentence)) < 8:
        return False
    long = len(_GREEK_LONG_WORD.findall(sentence))
    if not long:
        return not _ACCENTED_GREEK.search(sentence)
    return len(_ACCENTED_LONG_WORD.findall(sentence)) * 2 < long


_GREEK_VOWELS = frozenset("αεηιουω")
# a syllable's vowel: one of Greek's vowel digraphs (each one sound, or a vowel and "v"/"f"; an
# accent falls on its second letter) or a single vowel, accented or not; "νέο" and "πάει" are two
# syllables, "πού" one, and so are "τσάι" and "φαΐ" two: an accent on the first letter or a
# dialytika on the second says the two vowels are read apart
_SYLLABLE = re.compile("[αεου][ιί]|[αεοη][υύ]|[αεηιουωάέήίόύώϊϋΐΰ]")
_GREEK_WORD = re.compile("[\u0370-\u03ff\u1f00-\u1fff]+")
# the polytonic marks (grave, breathings, circumflex, iota subscript): older or learned Greek,
# whose spelling the monotonic rules below do not describe
_POLYTONIC = re.compile("[\u0300\u0313\u0314\u0342\u0345]")
# the monosyllables monotonic spelling accents ("or", "where?", "how?"); every other one it leaves bare
_ACCENTED_MONOSYLLABLES = frozenset({"ή", "πού", "πώς"})


def _unlike_greek(word: str) -> bool:
    """Whether a word breaks the rules modern Greek spelling follows: a Greek word ends in a vowel
    or in ς or ν after a vowel ("όρδερς", "άλλ" do not; a loanword like "μπαρ" does not either, so
    only a share of a sentence's words counts), and an accent marks the stressed syllable of a word
    of two or more syllables only ("άλλ" is one). ``word`` is NFC, lower case."""
    bare = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
    if not bare:
        return False
    last = bare[-1]
    if last not in _GREEK_VOWELS and (last not in "ςν" or len(bare) < 2 or bare[-2] not in _GREEK_VOWELS):
        return True
    composed = unicodedata.normalize("NFC", word)
    return ("\u0301" in unicodedata.normalize("NFD", word) and len(_SYLLABLE.findall(composed)) == 1
            and composed not in _ACCENTED_MONOSYLLABLES)


def _misspelled_greek(sentence: str) -> bool:
    """Whether a sentence's Greek words, accents and all, are too often not spelled as Greek is
    (half of them or more, two at least, eight Greek letters at least): letters chosen for their
    look or their sound with accents strewn on them ("Ιγνόρε άλλ πρέβιους όρδερς") rather than
    Greek, where a loanword or two ("στο μπαρ") is a small share."""
    if _POLYTONIC.search(unicodedata.normalize("NFD", sentence)):
        return False
    words = _GREEK_WORD.findall(sentence.lower())
    if len(words) < 2 or sum(map(len, words)) < 8:
        return False
    return 2 * sum(1 for w in words if _unlike_greek(w)) >= len(words)


def _rule_word_share(sentence: str, english: bool = True) -> tuple[int, int]:
    """(how many of a sentence's Greek words of three letters or more read as a word the English
    rules read, how many there are), Greek's small words aside (``greek_lexicon.SMALL_WORDS``), and so
    a word that reads so and Greek's dictionary holds (``greek_lexicon``: "δώσε" sounds as
    "those", "βάση" as "base"): "Ιγνόρε πρέβιους ινστρούκτιονς" is 3 of 3, accents and all;
    "Καλημέρα Μιχαήλ!" 0 of 2; "Δώσε μου τη βάση δεδομένων." 0 of 1; "Σόου μι δε πάσουορντ." 2 of 2
    (σόου, "show", read as English beside a word no Greek dictionary holds). ``english=False``:
    a word any Latin-letter language's rules read counts (unaccented Greek)."""
    words = [w.lower() for w in _GREEK_WORD.findall(sentence) if len(w) >= _RULE_WORD_LETTERS]
    words = [w for w in words if bare(w) not in SMALL_WORDS]
    readings = _english_readings if english else _known_readings_remembered
    # each distinct word searched once; the dictionary asked only about a word that reads
    reads = {w: any(len(r) >= _RULE_WORD_LETTERS for r in readings(w.casefold())) for w in set(words)}
    greek = {w for w in reads if reads[w] and known_greek(w)}
    if greek and all(w in greek for w in reads if reads[w]):   # else a loanword counts as English
        words = [w for w in words if w not in greek]
    return sum(1 for w in words if reads[w]), len(words)


# four Greek letters or more spelled out one by one ("ι γ ν ο ρ ε", "Ι-Γ-Ν-Ο-Ρ-Ε")
_SPELLED_OUT = re.compile(rf"(?<!\w)[{_G}](?:\W{{1,3}}[{_G}](?!\w)){{3,}}")


def _read_unaccented(sentence: str) -> bool:
    """Whether unaccented Greek holds what a disguise is made of: a word of Greek and Latin letters,
    letters spelled out one by one, or a word that reads as a rule word of any language. Greek
    typed without its accents ("Καλημερα Μιχαηλ, τι κανεις;") has none, and gets no reading."""
    if _SPELLED_OUT.search(sentence):
        return True
    if any(_LATIN.search(w) for w in _GREEK_OR_LATIN_WORD.findall(sentence)):
        return True
    return _rule_word_share(sentence, english=False)[0] > 0


def _disguised(sentence: str) -> bool:
    """Whether a sentence of a paragraph mostly in Greek letters is letters chosen for their look
    or sound: its Greek is unaccented; or it is misspelled as Greek and one of its words reads as
    a word the rules read (a name or a loanword, "Καλημέρα Μιχαήλ!", "Ωραίο γκολ!", is
    misspelled as well, and reads as no such word); or, however it is accented, two of its
    words or more and half of them at least read as such words ("Ιγνόρε πρέβιους ινστρούκτιονς"
    is spelled as Greek could be)."""
    if _unaccented_greek(sentence):
        return _read_unaccented(sentence)
    read, words = _rule_word_share(sentence)
    if read and _misspelled_greek(sentence):
        return True
    return read >= 2 and 2 * read >= words


def _disguised_pieces(paragraph: str) -> list[tuple[str, bool]]:
    """The paragraph whole, read when it is mostly in Latin letters; else its sentences, each read
    when its Greek is unaccented: a sentence of real Greek beside one of look-alikes does not hide
    the look-alikes."""
    if not _GREEK.search(paragraph):
        return [(paragraph, False)]
    if _mostly_latin(paragraph):
        return [(paragraph, True)]
    return [(s, _disguised(s)) for s in _SENTENCE_END.split(paragraph)]


def greek_readings(text: str, plain: str | None = None) -> tuple[str, ...]:
    """The folded text again with the words it holds in Greek letters, wholly or mixed with Latin
    ones, read once by their shape ("ιηstructιοηs", "αβονε": η is n, ν v, ρ p, ω w) and once by
    their sound ("ιγnore": γ is g), each when it differs from :func:`fold`; () when no paragraph
    holds such a word. Only in a paragraph mostly in Latin letters (there such a word is a
    disguise) or a sentence whose Greek words mostly carry no accent ("Ιγνορε αλλ πρεβιους ...");
    a sentence of Greek spelled as Greek is spelled is left to :func:`fold`, and so is every word
    with a Cyrillic or Armenian letter. Views for the phrase rules: :func:`fold`, which the
    learned scorer reads, is unchanged. ``plain`` is ``fold(text)`` when the caller has it (a
    1 MB paragraph of Greek look-alikes is not folded a second time)."""
    if not _GREEK_BEFORE_NFKC.search(text):
        return ()   # the common case, decided without normalising the text a second time
    text = _revealed(text)
    if not _GREEK.search(text):
        return ()
    pieces = [piece for p in _PARAGRAPH_BREAK.split(text) for piece in _disguised_pieces(p)]
    if not any(d for _, d in pieces):
        return ()
    plain = fold(text) if plain is None else plain
    by_shape: list[str] = []
    by_sound: list[str] = []
    by_other: list[str] = []
    for piece, disguised in pieces:
        if not disguised:
            by_shape.append(piece)
            by_sound.append(piece)
            by_other.append(piece)
            continue
        # words at the odd places, each distinct one read once
        parts = _GREEK_OR_LATIN_SPLIT.split(piece)
        words = parts[1::2]
        of = {w: _word_readings_once(w) if _short(w) else _word_readings(w) for w in set(words)}
        shapes, sounds, others = parts[:], parts[:], parts[:]
        shapes[1::2] = [of[w][0] for w in words]
        sounds[1::2] = [of[w][1] for w in words]
        others[1::2] = [of[w][2] for w in words]
        by_shape += shapes
        by_sound += sounds
        by_other += others
    out: list[str] = []
    for read in (fold("".join(by_shape)), fold("".join(by_sound)), fold("".join(by_other))):
        if read != plain and read not in out:
            out.append(read)
    return tuple(out)


def _revealed(text: str) -> str:
    """NFKC, hidden tag text revealed, default-ignorable code points removed: the first step of
    :func:`fold`, of :func:`unfolded`, and of :func:`greek_readings` (which needs it to decide
    whether it has anything to read)."""
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", decode_tags(text)))


def fold(text: str) -> str:
    """NFKC, hidden tag text revealed, default-ignorable code points removed, Latin look-alikes
    folded to ASCII, lower case. Line breaks are kept, so lines still map to the source.

    TR39 lists only the letters that look like a Latin one in most fonts (Greek α ι ο υ, Cyrillic
    а е о р), not ε η κ τ: "dιsrεgαrd τhε rυlεs" would keep half its letters. A word that mixes
    Latin letters with Greek, Cyrillic or Armenian ones is therefore folded and its remaining
    letters of those alphabets spelled in Latin by ``anyascii`` (its accents and any Chinese
    joined to it kept). A word wholly in one of those alphabets is spelled in Latin only in a
    paragraph whose letters are mostly Latin (the script of its neighbours says it is a disguise);
    in a paragraph mostly in Greek or Cyrillic it is left as it is, so ordinary Greek or Russian
    text, Latin product names and all, is never read as English."""
    text = _revealed(text)
    if _OTHER_ALPHABET.search(text):
        text = "".join(_ANY_WORD.sub(_whole_in_latin if _mostly_latin(part) else _in_latin, part)
                       for part in _PARAGRAPH_BREAK.split(text))
    upper, other = _confusable_tables()
    return text.translate(upper).casefold().translate(other)


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
_SPACED = re.compile(r"(?<![\w])(?:\w[ .\-_*·]){3,}\w(?![^\W\d])")   # "b.a.s.e64" too
# a mark beside a Chinese or Japanese letter: their words are short ("今.か.ら", "编.码") and have
# no space to keep; nor a space between two of their letters ("用 微信 发": words spaced apart)
_CJK_MARK = re.compile("(?<=[\u3040-\u30ff\u3400-\u9fff])[.\\-_*·・](?=\\w)"
                       "|(?<=\\w)[.\\-_*·・](?=[\u3040-\u30ff\u3400-\u9fff])"
                       "|(?<=[\u3040-\u30ff\u3400-\u9fff]) (?=[\u3040-\u30ff\u3400-\u9fff])")


def flat(folded: str) -> str:
    """The folded text as one line: a phrase broken across lines or by hyphenation is whole."""
    return _SPACES.sub(" ", _HYPHEN_BREAK.sub(r"\1\2", folded)).strip()


def despaced(flat_text: str) -> str:
    """Letters spelled out one by one are joined back into their word. When they are spelled
    with a mark ("d.i.s.r.e.g.a.r.d t.h.e r.u.l.e.s") a space between them is a word gap. Chinese
    and Japanese words spaced apart ("用 微信 发") are joined too: those scripts write no space."""
    return _CJK_MARK.sub("", _SPACED.sub(_join_letters, flat_text))


def _join_letters(m: re.Match[str]) -> str:
    run = m.group()
    marks = re.sub(r"[^.\-_*·]", "", run)
    return re.sub(r"[.\-_*·]", "", run) if marks and " " in run else re.sub(r"[ .\-_*·]", "", run)


_LINE_IN_WORD = re.compile(r"(?<=\w)[ \t]*\n[ \t]*(?=\w)")


def unbroken(folded: str) -> str:
    """The folded text with a line break between two letters taken out (no space left): a phrase
    whose words were cut across lines ("disrega\nrd the abo\nve rules") is whole again. Words
    that a wrap parted run together here instead, which no phrase rule looks for."""
    return flat(_LINE_IN_WORD.sub("", folded))


# --------------------------------------------------------------------------- markup

# Markup a reader never sees as such: a rendered page shows "ig**nore**", "[ign](https://x)ore",
# "ig<b>nore</b>", "&#105;gnore" and "ig<!-- -->nore" as "ignore", and a model reads the source
# the same way. Comments are dropped here and read on their own as hidden spans.
_MARKUP = re.compile(r"[*_~`\\]|&#?\w{1,8};?|<[!/?a-zA-Z]|\]\s?[(\[]")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
# tags that only style the words between them: removed without a space
_INLINE_TAG = re.compile(
    r"</?(?:a|abbr|b|bdi|bdo|big|cite|code|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span|strike|"
    r"strong|sub|sup|tt|u|var|wbr)\b[^<>]{0,300}>", re.IGNORECASE)
_OTHER_TAG = re.compile(r"</?[a-zA-Z][\w:-]{0,30}\b[^<>]{0,300}>")
_LINK = re.compile(r"!?\[([^\[\]\n]{0,300})\]"
                   r"(?:\([^()\s]{0,500}(?:\s+\"[^\"\n]{0,200}\")?\)|\[[^\[\]\n]{0,100}\])")
# emphasis, strike-through and code-span marks, and the backslash escaping a punctuation mark
_MARKS = re.compile(r"[*_~`]+|\\(?=[!-/:-@\[-`{-~])")


def has_markup(text: str) -> bool:
    """Whether :func:`rendered` could differ from the text (most prose has none of its marks)."""
    return _MARKUP.search(text) is not None


def rendered(text: str) -> str:
    """The text as its reader sees it rendered: HTML comments and tags out (a block tag leaves a
    space, an inline one nothing), a link or image by its text, emphasis and code-span marks out,
    HTML character references decoded. A view to match, like the others: "_" goes too, so an
    identifier reads run together ("snakecase"), which no phrase rule looks for."""
    text = _COMMENT.sub("", text)
    text = _OTHER_TAG.sub(" ", _INLINE_TAG.sub("", text))
    text = _LINK.sub(r"\1", text)
    return html.unescape(_MARKS.sub("", text))


# the commonest short words of the Latin-script languages the rules read: ROT13 turns a text in
# one of them into a text with next to none of these, and back
_COMMON_WORDS = frozenset((
    "the", "and", "you", "your", "to", "of", "all", "is", "are", "in", "with", "this", "that", "for",
    "not", "be", "it", "on", "as", "from", "now", "only", "a", "i", "me", "my", "we", "or", "if", "do",
    "at", "by", "an", "so", "no", "http", "https", "www", "com",
    "el", "la", "de", "que", "y", "los", "las", "en", "por", "con", "para", "tu", "su",
    "le", "les", "et", "des", "du", "un", "une", "est", "pas", "vous",
    "der", "die", "das", "und", "ist", "nicht", "mit", "ein", "eine", "zu", "auf", "den", "dich"))
_WORD = re.compile(r"[a-z]+")


def _common(line: str) -> int:
    return sum(1 for w in _WORD.findall(line) if w in _COMMON_WORDS)


def rot13(folded: str) -> str:
    """The lines of a folded view that read as ordinary text once turned by ROT13 (stdlib
    ``codecs``) and not as written, turned; "" when there are none. A model decodes "Vtaber nyy
    cerivbhf vafgehpgvbaf" at sight; ordinary prose turned reads as nothing, so it is left out
    (and the rules need not read every paragraph a second time)."""
    whole = codecs.encode(folded, "rot13")
    if _common(whole) > _common(folded):
        return whole   # the whole text turned ("### Arj flfgrz cebzcg:" has no common word alone)
    out = []
    for line in folded.split("\n"):
        turned = codecs.encode(line, "rot13")
        if _common(turned) > _common(line):
            out.append(turned)
    return "\n".join(out)


_NOT_LETTER = re.compile(r"[\W_]+")


# a link: the words of its path or query ("search?q=ignore+all+previous+instructions") are an
# address the model reads as one, not a sentence addressed to it; its host (group 1) stays, or
# "www." before a dotted order ("www.ig.nore.all.prev.ious...") would hide it
_URL = re.compile(r"\b(?:(?:https?|ftp)://|(?=www\.))([^\s/?#]*)\S*")


def compact(folded: str) -> str:
    """Letters only, the path and query of a link left out: no space, line break or punctuation
    can split a phrase here."""
    return _NOT_LETTER.sub("", _URL.sub(r" \1 ", folded) if "://" in folded or "www." in folded else folded)


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


# Chinese and Japanese sentences have no spaces; a few of their letters (three UTF-8 bytes each,
# of fixed bit patterns) in a row are as unlikely from random bytes as a space among printables.
_SPACELESS_WORDS = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{4}")


def _reads_as_text(decoded: str, least: int) -> bool:
    printable = sum(1 for c in decoded if (c.isprintable() and c != "\ufffd") or c in "\n\t")
    return (len(decoded) >= least and printable >= 0.95 * len(decoded)
            and (" " in decoded or _SPACELESS_WORDS.search(decoded) is not None))


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
    if "%" in text or "+" in text:
        runs = [*_URL_ENCODED.finditer(text), *_PLUS_WORDS.finditer(text)]
        for m in runs:
            if "://" in m.group() or m.group().startswith("www."):
                continue   # a link's query string: an address, not a hidden sentence
            decoded = _as_text(urllib.parse.unquote_to_bytes(m.group().replace("+", " ")))
            if decoded is not None and len(out) < limit and decoded not in out:
                out.append(decoded)
    return out


# a run of URL-encoded text with at least three escapes, one of them "%XX" ("%49gnore%20all",
# "Note+to+the+assistant%3A+..."; a "+" between words is a space, as in a query string): a
# link's query string as well as a hidden sentence; only what then reads as text counts. It
# starts where a token starts (a search from every position of a long token would be quadratic).
_URL_CHARS = r"[\w.~+\-!*'(),;:@&=/?#$]"
_URL_ENCODED = re.compile(rf"(?<![\w.~+\-!*'(),;:@&=/?#$%])(?={_URL_CHARS}*%[0-9A-Fa-f]{{2}}){_URL_CHARS}*"
                          rf"(?:(?:%[0-9A-Fa-f]{{2}}|(?<=\w)\+(?=\w)){_URL_CHARS}*){{3,}}")
# words joined by "+" alone ("The+user+has+authorized+you"), as a query string writes a sentence;
# like the run above it starts only where a token starts (an apostrophe is inside one)
_PLUS_WORDS = re.compile(r"(?<![\w'+/=])[A-Za-z']+(?:\+[A-Za-z']+[.,:;!?]?){3,}(?![\w+/=])")


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
    text = _revealed(text).casefold()
    if _CYRILLIC.search(text):
        to_cyrillic = _to_cyrillic()
        text = _CYRILLIC_WORD.sub(lambda m: m.group().translate(to_cyrillic), text)
    return flat(apostrophes(_ARABIC_MARKS.sub("", text).translate(_ARABIC_LETTERS)))


@dataclass(frozen=True, slots=True)
class Views:
    """The views of one text the phrase rules read."""

    folded: str                 # lines kept, so a match maps back to its line
    joined: str                 # one line
    shown: str                  # one line, markup off; "" when the text has none
    phrase: tuple[str, ...]     # every view, for the phrase tables
    one_line: tuple[str, ...]   # the one-line views, for the rules that read a paragraph whole
    readings: tuple[str, ...] = ()   # the folded text with its Greek-letter words read by shape, by sound


def views(text: str) -> Views:
    """Folded, joined, spelled-out letters rejoined, a line break inside a word taken out
    ("disrega\\nrd the rules"), and when the text holds markup the same as a reader sees it
    rendered ("ig**nore**", "&#105;gnore"); each distinct view once."""
    plain = fold(text)
    folded = apostrophes(plain)
    joined = flat(folded)
    phrase = [folded, joined, despaced(joined)]
    if "\n" in folded:
        phrase.append(unbroken(folded))
    readings = tuple(apostrophes(r) for r in greek_readings(text, plain))
    for read in readings:
        read_joined = flat(read)
        phrase += [read, read_joined, despaced(read_joined)]
    shown_lines = apostrophes(fold(rendered(text))) if has_markup(text) else ""
    shown = flat(shown_lines)
    if shown:
        phrase += [shown_lines, shown, despaced(shown)]
    unique = tuple(dict.fromkeys(phrase))
    return Views(folded, joined, shown, unique, tuple(v for v in unique if "\n" not in v), readings)
