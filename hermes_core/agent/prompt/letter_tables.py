"""Which language's letters a single-byte reading is written in: charset-normalizer's
per-language letter tables (the 26 most frequent letters of each language it knows), and the
evidence drawn from them that decides between the Western (cp1252) and Central European
(cp1250) readings of the same bytes.

:mod:`~hermes_core.agent.prompt.guess_encoding` walks the candidate codecs and judges whether a
reading is text at all; this module weighs readings that all are: each letter's rank in the
languages a page writes (:func:`letter_score`), whether one language could have written a word
or a line (:func:`one_language_writes`, :func:`one_table_writes`), and the letters that tell a
Central European line from a Western one where both pages decode it (:func:`best_single`). The
tables come from the detector, the letters from the codecs; nothing here is a word list.
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: A run of letters (a word, digits and underscores apart).
LETTERS = re.compile(r"[^\W\d_]+")
#: The pages of the first two guessed: where two readings fit equally well, one in these is
#: taken only when it is the one (their rule before the other two were guessed).
_FIRST_PAGES = ("cp1252", "cp1251")


@functools.cache
def page_letters(codec: str) -> frozenset[str]:
    """The letters past ASCII single-byte ``codec`` writes, small and capital (from the codec)."""
    decoded = bytes(range(0x80, 0x100)).decode(codec, errors="ignore")
    return frozenset(c for c in decoded if c.isalpha())


@functools.cache
def central_letters() -> tuple[frozenset[str], frozenset[str]]:
    """Small letters cp1250 writes that cp1252 cannot: (those its languages' tables list: ł, ą,
    ę, ć, č, ě, ř; the others whose byte cp1252 reads as a superscript or fraction: Slovak ľ is
    "¾"). No Western reading holds one inside a word, so none competes. Not ő, ű (cp1252's õ,
    û, a Western reading competes), ż ("¿qué"), nor a byte cp1252 lacks (ť: Big5 "行" is "Ťs")."""
    ranks = letter_ranks("cp1250")

    def number_in_cp1252(letter: str) -> bool:
        western = letter.encode("cp1250").decode("cp1252", errors="replace")
        return unicodedata.category(western) == "No"
    own = [c for c in page_letters("cp1250") - page_letters("cp1252") if c.islower()]
    return (frozenset(c for c in own if c in ranks),
            frozenset(c for c in own if c not in ranks and number_in_cp1252(c)))


#: Hungarian's ő (cp1252's õ) before anything but an e: Portuguese writes õ only in "ões"
#: and "õe" ("ações", "põe").
_O_DOUBLE_ACUTE = re.compile(r"[őŐ](?![eE])")


@functools.cache
def _not_beside_tilde_o() -> frozenset[str]:
    """Small letters both Latin pages write alike that a cp1252 language's table lists and no
    table listing õ (Estonian's) does: é, á, í, ó, ...; beside an õ they are not Estonian."""
    tilde = [table for table in table_sets("cp1252") if "õ" in table]
    return frozenset(c for c in page_letters("cp1252") & page_letters("cp1250")
                     if c.islower() and c.encode("cp1252") == c.encode("cp1250")
                     and c in letter_ranks("cp1252") and not any(c in t for t in tilde))


#: Letters French, the one cp1252 language writing û (cp1250's ű), never writes: beside one,
#: the û is Hungarian's ű ("mûvelet után" is "művelet után"; French "sûr, créé" keeps it).
_NOT_BESIDE_U_CIRCUMFLEX = frozenset("áíóúö")


#: ő ending a word: cp1252's õ ends no Portuguese word (õe, ões) and no Estonian one (none of
#: the 2,990 õ of the Estonian gettext catalogues in /usr/share/locale does).
_FINAL_O_DOUBLE_ACUTE = re.compile(r"(?<=[^\W\d_])[őŐ](?![^\W\d_])")


def hungarian(central: str) -> bool:
    """The cp1250 reading ``central`` holds ő not before an e (:data:`_O_DOUBLE_ACUTE`) and a
    letter no Estonian writes (:func:`_not_beside_tilde_o`), or ő ending a word
    (:data:`_FINAL_O_DOUBLE_ACUTE`: "Felsõ"): cp1252's õ there is neither Portuguese nor
    Estonian, so the line is Hungarian ("Idõzítõ" is "Időzítő"). Likewise ű beside a letter
    French does not write (:data:`_NOT_BESIDE_U_CIRCUMFLEX`)."""
    lowered = central.lower()
    return ((_O_DOUBLE_ACUTE.search(central) is not None
             and (not _not_beside_tilde_o().isdisjoint(lowered)
                  or _FINAL_O_DOUBLE_ACUTE.search(central) is not None))
            or ("ű" in lowered and not _NOT_BESIDE_U_CIRCUMFLEX.isdisjoint(lowered)))


@functools.cache
def _untabled_before_ascii() -> re.Pattern[str]:
    """cp1250's own letters no table lists (:func:`central_letters`) before an ASCII letter."""
    untabled = "".join(sorted(central_letters()[1]))
    return re.compile(f"[{untabled}](?=[A-Za-z])" if untabled else "(?!)")


def untabled_central_in_a_word(lowered: str) -> bool:
    """One of cp1250's own letters that no table lists (ľ) has an ASCII letter after it and an
    ASCII letter or a word's start before it, as Slovak writes it ("veľmi", "ľudia"); bytes of
    CJK characters put it beside other high bytes or at a word's end ("CHECKĽ°" for "CHECK式",
    "=Ľü" for GBK "=键"). A regular expression finds the few candidates (a long Western text
    read as cp1250 has none), the letter before each is looked at here."""
    return any(i == 0 or not lowered[i - 1].isalpha() or lowered[i - 1].isascii()
               for i in (m.start() for m in _untabled_before_ascii().finditer(lowered)))


@functools.cache
def only_central() -> frozenset[str]:
    """Letters cp1252 and cp1250 write with the same byte that only cp1250's languages' tables
    list (š, ž, ý): a line holding one is Central European, read in cp1250 throughout."""
    same = {c for c in page_letters("cp1252") & page_letters("cp1250")
            if c.encode("cp1252") == c.encode("cp1250")}
    return frozenset(c for c in same if c in letter_ranks("cp1250")
                     and c not in letter_ranks("cp1252"))


@functools.cache
def tables(codec: str) -> tuple[tuple[str, ...], ...]:
    """The most frequent letters, most frequent first, of each language ``codec`` writes
    (charset-normalizer's per-language tables; a language is written in the page when all its
    listed letters are)."""
    from charset_normalizer.constant import FREQUENCIES

    found = []
    for letters in FREQUENCIES.values():
        try:
            "".join(letters).encode(codec)
        except UnicodeEncodeError:
            continue
        found.append(tuple(letters))
    return tuple(found)


@functools.cache
def table_sets(codec: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(letters) for letters in tables(codec))


def one_language_writes(text: str, codec: str) -> bool:
    """Each word of ``text`` holding a letter past ASCII has its letters in one language's table
    among those ``codec`` writes, letters no table lists aside: Russian "Офис" (ф aside) is;
    GBK "螨虫" read as cp1251 "тэіж" mixes Ukrainian і with letters Ukrainian's table lacks
    (ж)."""
    tables, listed = table_sets(codec), letter_ranks(codec).keys()
    for word in LETTERS.findall(text.lower()):
        if word.isascii():
            continue
        letters = listed & set(word)   # a letter no table lists (ф, ś, ľ) tells no language
        if not any(letters <= table for table in tables):
            return False
    return True


def one_table_writes(text: str, codec: str) -> bool:
    """Every letter past ASCII of ``text`` that a table lists is in one table among those
    ``codec`` writes: one language could have written the whole line (Catalan "memòria
    intermèdia" in cp1252: Italian's è, ò; Croatian "moguće proračun" in cp1250: its č, ć).
    It does not tell a page: both readings may pass (ň, in no table, leaves "memňria intermčdia"
    Croatian's č), or only the wrong one fails ("moguæe proraèun" mixes Danish æ, French è)."""
    letters = letter_ranks(codec).keys() & {c for c in set(text.lower()) if not c.isascii()}
    return any(letters <= table for table in table_sets(codec))


@functools.cache
def letter_ranks(codec: str) -> dict[str, int]:
    """Each letter's best rank among the most frequent letters of the languages ``codec``
    writes (:func:`tables`)."""
    ranks: dict[str, int] = {}
    for letters in tables(codec):
        for rank, letter in enumerate(letters):
            ranks[letter] = min(rank, ranks.get(letter, rank))
    return ranks


#: The rank given a letter in none of the tables (they list 26 letters a language).
_UNLISTED = 26
#: How much lower a reading's mean rank must be to win: the tables rank a language's accents
#: near their end, a rank or two apart ("très": è is 21st in cp1252's languages, its cp1250
#: reading's č 20th), so only a clear difference counts (Greek read as cp1251 is about 4 worse).
RANK_MARGIN = 3.0


def letter_score(text: str, codec: str) -> tuple[float, float]:
    """How ``text``'s letters past ASCII sit in the languages ``codec`` writes: the share of
    them in no language's table, and their mean rank. Czech's "ě" is listed, cp1252's "ì" for
    the same byte is not; Greek read as cp1251 is Russian's rarer letters ("Гейб упх")."""
    ranks = letter_ranks(codec)
    letters = [ranks.get(c, _UNLISTED) for c in text.lower() if c.isalpha() and not c.isascii()]
    if not letters:
        return 1.0, float(_UNLISTED)
    return letters.count(_UNLISTED) / len(letters), sum(letters) / len(letters)


def beats(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[0] or (a[0] == b[0] and a[1] + RANK_MARGIN < b[1])


#: A grave i, o or u before a letter: cp1252's languages write them at a word's end (Italian
#: così, però, più); inside a word the byte is Czech's ě, ň or ů ("Dìkuji" is "Děkuji").
_INNER_GRAVE = re.compile(r"[ìòùÌÒÙ](?=[^\W\d_])")


#: Czech's ř (Nordic ø, a vowel, in cp1252) before a consonant but n: Czech writes it before a
#: vowel, last or in "vnitřní", Norwegian and Faroese their ø there ("kafébesøk", "frásøgn").
_R_BEFORE_CONSONANT = re.compile(r"ř(?=[b-df-hj-mp-tv-xz])")


def no_western_language(western: str, central: str) -> bool:
    """One cp1250 language's table holds every listed letter of the cp1250 reading, while the
    cp1252 reading mixes languages: in a word whose cp1250 reading holds one of cp1250's own
    listed letters (Spanish í, French è, Danish ø in "klíè", "pøebyteèná" are Czech "klíč",
    "přebytečná"), or across the line when the cp1250 reading holds two ("moguæe ... proraèun",
    Danish æ, French è, is Croatian "moguće ... proračun"). The 26-letter tables leave letters
    out, so a word mixing them without such a letter is no evidence (Portuguese "configurações"
    is "configuraçőes", Catalan "començà" "començŕ"); nor is one own letter across words
    (Catalan "dependències ... índex" is Slovak č, í; Danish "højst én" Czech ř, é), nor two
    of which none follows a vowel: French è and Danish æ follow consonants ("crème ... æg" is
    "crčme ... ćg"), Croatian's č and ć vowels too ("točke", "Mogućnosti")."""
    own = central_letters()[0] & set(central.lower())
    if not own or not one_table_writes(central, "cp1250"):
        return False
    # each distinct word once; one byte a character, so its cp1250 reading is its bytes again
    words = {w for w in LETTERS.findall(western) if not w.isascii()}
    if any(not own.isdisjoint(_R_BEFORE_CONSONANT.sub("", w.encode("cp1252").decode("cp1250")
                                                      .lower()))
           and not one_table_writes(w, "cp1252") for w in words):
        return True
    lowered = central.lower()
    return (len(own) >= 2 and not one_table_writes(western, "cp1252")
            and any(f"{vowel}{letter}" in lowered for vowel in "aeiou" for letter in own))


#: A cp1250 letter standing where its cp1252 byte's letter stands in no Western word, beside
#: ASCII letters (a CJK character's bytes put it beside high bytes): Romanian ş before a letter
#: but after n or a digit (cp1252's ordinal "º", written after a digit or n: "nºs", "1ºs",
#: "5ºano"; "Fiºier"), ă before a consonant (its "ã", which Portuguese writes last, before o,
#: e, a final s, and before the "-zinha", "-zeira" of a diminutive and the "-mente" of an
#: adverb: "irmãzinha", "cristãmente"; "gãsit"), Slovene and Croatian č before a vowel after
#: a, e, i, o, y, a vowel's acute or opening a word (French and Italian è stand before a consonant or last,
#: Catalan's also in "-èix-"; Occitan and Catalan write it before a vowel after a consonant or
#: u: "vidèo", "tablèu", "dempuèi", "fèiem"; "raèunalo", "mogoèe"), ć after a vowel and
#: before one or last (Danish and Icelandic æ, a vowel, meets one only across a compound's
#: seam, on one side: "uændret", "gagnsæi"; "moguæe", Polish "czekaæ"), Polish ń ending a word
#: after e or u (Spanish ñ stands before a vowel, Breton's nasal ñ ends its words after a or
#: i: "bremañ", "Digeriñ"; "Usuñ", "ustawieñ"), Polish Ł opening a word before a vowel (the
#: pound sign "£", written before digits or a unit: "£5", "£m", "£bn"; "£otewski").
_WHERE_NO_WESTERN_LETTER_STANDS = re.compile(   # each alternative opens with its letter: one scan
    r"[şŞ](?<![nN0-9].)(?=[a-zA-Z])"
    r"|[ăĂ](?=[b-df-hj-np-rt-zB-DF-HJ-NP-RT-Z]|[sS][a-zA-Z])(?!(?i:zinh|zeir|mente))"
    r"|[čČ](?<![^\W\d_aeioyAEIOYáéíóúýÁÉÍÓÚÝ].)(?=[aeouAEOU]|[iI](?![xX]))"
    r"|[ćĆ](?<=[aeiouAEIOU].)(?=[aeiouAEIOU]|(?![^\W\d_]))"
    r"|[ńŃ](?<=[eEuU].)(?![^\W\d_])|Ł(?<![^\W\d_].)(?=[aeouyąęó])")


def where_no_western_letter_stands(central: str) -> bool:
    """The cp1250 reading ``central`` holds one of its letters where the same byte's cp1252
    letter stands in no Western language's words (:data:`_WHERE_NO_WESTERN_LETTER_STANDS`):
    the evidence of a line with one of its page's own letters, which the 26-letter tables
    cannot give ("proraèunska" is each letter French; "Fişier": Romanian's ş no table lists)."""
    return _WHERE_NO_WESTERN_LETTER_STANDS.search(central) is not None


def icelandic(western: str) -> frozenset[str]:
    """ý beside æ, ð or þ (cp1250's ć, đ, ţ: no ý-writing language's) is Icelandic's."""
    return frozenset("ý") if not frozenset("æðþ").isdisjoint(western.lower()) else frozenset()


def best_single(fitting: dict[str, str]) -> tuple[str, str] | None:
    """Of several fitting single-byte readings, the one that plainly reads as its page.

    Two Latin readings: the tables cannot tell them apart (Polish "ę" and Portuguese "ê" are
    one byte, each listed for neither language or both), so cp1252's is kept unless it has a
    grave i/o/u inside a word (:data:`_INNER_GRAVE`). Otherwise the reading whose letters are
    plainly the more frequent in its page's languages (fewer unlisted, else a lower mean rank
    by :data:`RANK_MARGIN`: :func:`letter_score`: Greek against its cp1251 reading); else the
    one reading in cp1252 / cp1251 if there is exactly one (the rule before cp1250 and cp1253
    were guessed), else none."""
    western = [text for text, codec in fitting.items() if codec == "cp1252"]
    eastern = [text for text, codec in fitting.items() if codec == "cp1250"]
    if western and eastern:
        graves = {m.group().lower() for m in _INNER_GRAVE.finditer(western[0])}
        central = ((graves and not (graves <= letter_ranks("cp1252").keys()
                                    and one_table_writes(western[0], "cp1252")))
                   or not (only_central() - icelandic(western[0])).isdisjoint(
                       western[0].lower())
                   or hungarian(eastern[0]) or no_western_language(western[0], eastern[0])
                   or where_no_western_letter_stands(eastern[0]))
        drop = "cp1252" if central else "cp1250"
        fitting = {text: codec for text, codec in fitting.items() if codec != drop}
    if len(fitting) == 1:
        return next(iter(fitting.items()))
    scores = {text: letter_score(text, codec) for text, codec in fitting.items()}
    for text, score in scores.items():
        if all(beats(score, other) for t, other in scores.items() if t != text):
            return text, fitting[text]
    first = [(text, codec) for text, codec in fitting.items() if codec in _FIRST_PAGES]
    return first[0] if len(first) == 1 else None
