"""Tests of ``hermes_core/tokenize.py``: the terms emoji and punctuation are indexed by. Keycaps,
toned, gendered and ZWJ sequences, groups and flags found by the parts their names say, joiners
and selectors that are no word, emoji NFKC reads as letters."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import tokenize as tok
from hermes_core.tokenize import segment_for_index, symbol_terms, tokenize


def test_a_text_of_only_emoji_or_punctuation_is_indexed_by_its_symbols() -> None:
    """FTS5's unicode61 drops every symbol and punctuation mark, so "🚀🚀" or "？？？" was stored
    with no index term and found by no query; an emoji in a sentence is a term of its own too."""
    assert symbol_terms("🚀🚀") == symbol_terms("🚀") != []
    assert symbol_terms("？？？") == symbol_terms("???") != []       # NFKC: fullwidth is ASCII
    assert set(symbol_terms("🚀")) <= set(segment_for_index("🚀🚀").split())
    assert set(symbol_terms("？？？")) <= set(segment_for_index("？？？").split())
    assert set(symbol_terms("🚀")) <= set(segment_for_index("launch day 🚀 went fine").split())
    # punctuation in a text with words is no term (every sentence has a full stop)
    assert segment_for_index("deploy failed.") == "deploy failed"
    assert all(t.isascii() and t.isalnum() for t in symbol_terms("👨\u200d👩\u200d👧 🇫🇷 ©™ ?!…"))


def test_a_run_of_punctuation_in_a_text_with_words_is_a_term_a_lone_mark_is_not() -> None:
    """Only texts of no word had their punctuation indexed, so a search for "？？？" never found
    "why？？？". A run of two or more marks is one term, its repeats folded ("??" and "????"
    meet "???"); a lone full stop or comma, in every sentence, is still no term."""
    asked = set(symbol_terms("？？？"))
    assert asked & set(segment_for_index("why？？？").split())
    assert asked & set(segment_for_index("really?? ok").split())
    assert set(symbol_terms(":-)")) & set(segment_for_index("ship it :-) tomorrow").split())
    assert not set(symbol_terms(":-)")) & set(segment_for_index("ship it :-( tomorrow").split())
    assert segment_for_index("deploy failed, again.") == "deploy failed again"
    assert segment_for_index("why?") == "why"
    # a megabyte-long run is one bounded term; ten megabytes of marks alone raised MemoryError
    assert max(map(len, symbol_terms("x " + "?!" * 500_000))) < 80
    assert symbol_terms("?!" * 5_000_000) == symbol_terms("?!" * 4)   # its first 8 marks


def test_an_emoji_sequence_is_one_term_not_its_parts() -> None:
    """A family, a rainbow flag or a skin tone was indexed as the emoji it is joined from, so a
    search for the family found a summary with only the man, and 🇫🇷 met 🇷🇺 by their shared
    letter. A grapheme cluster (``regex``'s \\X) is one term; a lone emoji keeps its term."""
    family, man = "👨\u200d👩\u200d👧", "👨"
    pairs = [(family, man), ("🏳\ufe0f\u200d🌈", "🌈"), ("👍🏽", "👍"), ("🇫🇷", "🇷🇺")]
    for joined, part in pairs:
        assert not set(symbol_terms(joined)) & set(segment_for_index(f"we {part} met").split())
        if joined != "🇫🇷":   # a base, a member or an emblem is indexed too (161, 187): index-only
            continue
        assert not set(symbol_terms(joined)) & set(symbol_terms(part)), (joined, part)
        assert not set(symbol_terms(part)) & set(segment_for_index(f"we {joined} met").split())
        assert set(symbol_terms(joined)) <= set(segment_for_index(f"we {joined} met").split())
    assert symbol_terms("🇫🇷🇩🇪") == [*symbol_terms("🇫🇷"), *symbol_terms("🇩🇪")]   # paired in order
    assert symbol_terms("🚀") == ["zsym1f680"]                # as decision 143 indexed it
    assert symbol_terms("❤\ufe0f") == symbol_terms("❤")      # the emoji presentation selector


KEYCAPS = ("1\ufe0f\u20e3", "#\ufe0f\u20e3", "*\ufe0f\u20e3", "0\u20e3")


def test_a_keycap_is_one_symbol_term_in_prose_and_alone() -> None:
    """1️⃣ was no term: a digit starts it, so it was no pictograph cluster, and the query kept
    only its digit (found every summary with a "1"). Its term is the keycap's, the presentation
    selector dropped (1⃣ is 1️⃣); two keycaps share no term."""
    for cap in KEYCAPS:
        term = symbol_terms(cap)
        assert len(term) == 1, cap
        assert term == symbol_terms(f"step {cap} done"), cap
        assert set(term) <= set(segment_for_index(f"step {cap} done").split()), cap
    assert symbol_terms("1\ufe0f\u20e3") == symbol_terms("1\u20e3")
    assert not set(symbol_terms("1\ufe0f\u20e3")) & set(symbol_terms("2\ufe0f\u20e3"))
    assert symbol_terms("1\ufe0f\u20e32\ufe0f\u20e3") == [*symbol_terms("1\u20e3"), *symbol_terms("2\u20e3")]
    assert symbol_terms("step 1 done") == [] and symbol_terms("#1 done") == []


@pytest.mark.parametrize(("text", "wrong"), [
    ("标签：#\ufe0f\u20e3 完成", "zsym3ax23"), ("步骤（*\ufe0f\u20e3）重启", "zsym28x2a"),
    ("看**#\ufe0f\u20e3**", "zsym2ax23"), ("done?#\u20e3 next", "zsym3fx23")])
def test_a_keycap_after_a_punctuation_mark_is_still_its_own_term(text: str, wrong: str) -> None:
    """A mark before a # or * keycap (a Chinese colon or bracket, NFKC's ``:`` ``(``) was read
    as a run with the keycap's ``#``: "：#️⃣" indexed ``:#`` and no keycap, so #️⃣ did not
    find it. The keycap is its term, and the mark takes no part of it into a run."""
    cap = "#\u20e3" if "#" in text else "*\u20e3"
    assert set(symbol_terms(cap)) <= set(symbol_terms(text)), text
    assert set(symbol_terms(cap)) <= set(segment_for_index(text).split()), text
    assert wrong not in symbol_terms(text), text


def test_a_toned_or_gendered_emoji_is_indexed_by_its_base_too_the_query_is_its_cluster_only() -> None:
    """A search for the base emoji finds its skin-tone, gender and hair variants (as "run" finds
    "run" in a sentence); a search for one variant finds only it. Only those modifiers are taken
    off: a rainbow flag is not its white flag, an astronaut not a person."""
    variants = [("👍🏽", ["👍"]), ("🏃\u200d♀\ufe0f", ["🏃"]), ("👩\u200d🦰", ["👩"]),
                ("🏃🏽\u200d♀\ufe0f", ["🏃", "🏃🏽", "🏃\u200d♀"]),
                ("🧑🏿\u200d🚀", ["🧑\u200d🚀"]), ("👩🏽\u200d🤝\u200d👨🏿", ["👩\u200d🤝\u200d👨"])]
    for variant, bases in variants:
        indexed = set(segment_for_index(f"we {variant} met").split())
        for base in bases:
            assert set(symbol_terms(base)) <= indexed, (variant, base)
            assert not set(symbol_terms(variant)) & set(segment_for_index(f"we {base} met").split())
        assert len(symbol_terms(variant)) == 1          # the query: the variant's own term
    assert not set(symbol_terms("👍🏿")) & set(segment_for_index("we 👍🏽 met").split())
    for whole, part in [("🏳\ufe0f\u200d🌈", "🏳"), ("🧑\u200d🚀", "🧑")]:
        assert not set(symbol_terms(part)) & set(segment_for_index(f"we {whole} met").split())


def test_a_word_spelled_like_a_symbol_s_term_is_not_indexed_as_that_symbol() -> None:
    """An identifier is indexed whole too, so a summary that wrote ``zsym1f680`` (or planted it)
    was found by every search for 🚀; its parts are still indexed, so the text is findable."""
    for text in ("note zsym1f680", "zsym2764", "call zsym1F680 now", "ZSYM3F?"):
        terms = segment_for_index(text).split()
        assert not set(terms) & set(symbol_terms("🚀❤?")), text
        assert "zsym" in terms
    assert segment_for_index("zsymbolic zsymmetry").split()[-2:] == ["zsymbolic", "zsymmetry"]


@pytest.mark.parametrize("tail", ["\U0001F3FD", "\u0301", "\U000E0067", "\u200d🚀"])
def test_an_emoji_cluster_s_term_is_bounded_and_the_same_text_still_finds_it(tail: str) -> None:
    """An emoji and 100,000 skin tones, combining marks, tag letters or ZWJ links is one grapheme
    cluster: its term was 400-600 KB long. A term keeps the cluster's first
    ``MAX_CLUSTER_POINTS`` code points, so the same hostile text searched still finds it."""
    hostile = "👍" + tail * 100_000
    terms = symbol_terms(f"x {hostile}", bases=True)
    assert max(map(len, terms)) < 120
    assert set(symbol_terms(hostile)) <= set(segment_for_index(f"we {hostile} met").split())
    assert not set(symbol_terms(hostile)) & set(symbol_terms("👍" + tail))   # no ordinary one


@pytest.mark.parametrize("whole", [
    "🧑\U0001F3FB\u200d\u2764\ufe0f\u200d💋\u200d🧑\U0001F3FC",        # kiss, two tones: 10 points
    "👨\U0001F3FB\u200d👩\U0001F3FC\u200d👧\U0001F3FD\u200d👦\U0001F3FE",  # a toned family: 11
    "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"])   # Scotland: 7
def test_an_ordinary_emoji_sequence_is_kept_whole_under_the_bound(whole: str) -> None:
    assert symbol_terms(whole) == [tok._symbol_term(whole.translate(tok._PRESENTATION))]


PROFESSIONS = [("👩\u200d💻", "💻"), ("🧑\u200d🚀", "🚀"), ("👨\U0001F3FE\u200d🍳", "🍳"),
               ("🧑\u200d🦽", "🦽")]
SCOTLAND = "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
WALES = "🏴\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"


def test_an_object_finds_the_profession_made_of_it_the_profession_only_itself() -> None:
    """👩‍💻 is a person, ZWJ and an object (Unicode's "role" sequences): 💻 found no technologist.
    The object is indexed too; the query is the profession's own term, so 👩‍💻 finds neither
    a laptop nor 👨‍💻. Hair is no object."""
    for role, obj in PROFESSIONS:
        assert set(symbol_terms(obj)) <= set(segment_for_index(f"we {role} met").split()), role
        assert not set(symbol_terms(role)) & set(segment_for_index(f"we {obj} met").split())
        assert len(symbol_terms(role)) == 1
    assert not set(symbol_terms("👩\u200d💻")) & set(segment_for_index("we 👨\u200d💻 met").split())
    assert not set(symbol_terms("🦰")) & set(segment_for_index("we 👩\u200d🦰 met").split())


GROUPS_AND_FLAGS = [   # (sequence, the parts the emoji data names it by)
    ("👨\u200d👩\u200d👧", ["👨", "👩", "👧"]), ("👩\u200d👩\u200d👧\u200d👦", ["👩", "👧", "👦"]),
    ("👨\u200d👦", ["👨", "👦"]), ("🧑\u200d🧒", ["🧑", "🧒"]),
    ("👨\U0001F3FB\u200d👩\U0001F3FC\u200d👧\U0001F3FD", ["👩", "👧"]),   # a toned family
    ("👩\u200d\u2764\ufe0f\u200d👨", ["👩", "👨", "\u2764"]),             # a couple with heart
    ("👩\u200d\u2764\ufe0f\u200d💋\u200d👨", ["👩", "👨", "💋"]),          # a kiss
    ("🏳\ufe0f\u200d🌈", ["🌈"]), ("🏳\ufe0f\u200d\u26a7\ufe0f", ["\u26a7"])]


@pytest.mark.parametrize(("whole", "parts"), GROUPS_AND_FLAGS)
def test_a_family_couple_or_flag_is_found_by_the_parts_its_name_says_and_itself_only_by_itself(
        whole: str, parts: list[str]) -> None:
    """👩 found no 👩‍👩‍👧 and 🌈 no 🏳️‍🌈: a group of people or a flag had no parts (161).
    A part is indexed when the emoji data's name for the sequence says it (family: man, woman,
    girl; rainbow flag: rainbow; couple with heart: heart); the whole is searched as itself, so
    the family finds no lone 👩 nor another family."""
    indexed = set(segment_for_index(f"we {whole} met").split())
    for part in parts:
        assert set(symbol_terms(part)) <= indexed, (whole, part)
        assert not set(symbol_terms(whole)) & set(segment_for_index(f"we {part} met").split())
    assert len(symbol_terms(whole)) == 1
    assert not set(symbol_terms(whole)) & set(segment_for_index("we 👨\u200d👩\u200d👦 met").split())


@pytest.mark.parametrize(("whole", "part"), [
    ("🏳\ufe0f\u200d🌈", "🏳"), ("🏴\u200d\u2620\ufe0f", "🏴"),
    ("👨\u200d👩\u200d👧", "\u200d"), ("👩\u200d\u2764\ufe0f\u200d💋\u200d👨", "\u2764")])
def test_a_part_the_sequence_s_name_does_not_say_does_not_find_it(whole: str, part: str) -> None:
    """A rainbow flag is no white flag, a pirate flag no black one, a kiss no heart: only the
    parts the data names the sequence by, a flag's emblem and a group's people are indexed."""
    assert not set(symbol_terms(part)) & set(segment_for_index(f"we {whole} met").split())


def test_a_black_flag_finds_a_subdivision_flag_which_finds_only_itself() -> None:
    """🏴󠁧󠁢󠁳󠁣󠁴󠁿 is 🏴 and tag letters (a tag sequence; shown as 🏴 where the flag is unknown):
    🏴 found no Scottish flag. The base is indexed too; Scotland does not find Wales nor 🏴."""
    indexed = set(segment_for_index(f"go {SCOTLAND} team").split())
    assert set(symbol_terms("🏴")) <= indexed
    assert not set(symbol_terms(SCOTLAND)) & set(segment_for_index(f"go {WALES} team").split())
    assert not set(symbol_terms(SCOTLAND)) & set(segment_for_index("go 🏴 team").split())
    assert len(symbol_terms(SCOTLAND)) == 1


def test_base_terms_do_not_crowd_out_a_text_s_own_emoji() -> None:
    """A toned emoji's bases counted toward ``MAX_SYMBOL_TERMS``: a summary with 33 toned emoji
    indexed 32 of them. Each emoji of the text keeps its term, its bases capped apart."""
    bases = [*range(0x1F446, 0x1F451), *range(0x1F470, 0x1F479), *range(0x1F9D1, 0x1F9DE)]
    emoji = [chr(c) + "\U0001F3FD" for c in bases]         # 33 toned emoji, 66 terms with bases
    assert len(emoji) == 33
    indexed = set(segment_for_index("we " + " ".join(emoji) + " met").split())
    for e in emoji:
        assert set(symbol_terms(e)) <= indexed, e
        assert set(symbol_terms(e[0])) <= indexed, e
    assert len(symbol_terms(" ".join(emoji), bases=True)) <= 2 * tok.MAX_SYMBOL_TERMS


def _indexes(whole: str, part: str) -> bool:
    """Whether a search for ``part`` (its query term) finds a text holding ``whole``."""
    return set(symbol_terms(part)) <= set(segment_for_index(f"we {whole} met").split())


@pytest.mark.parametrize(("whole", "parts"), [
    ("🐻\u200d❄\ufe0f", ["🐻", "❄"]), ("🐈\u200d⬛", ["🐈", "⬛"]), ("❤\ufe0f\u200d🔥", ["❤", "🔥"]),
    ("🐕\u200d🦺", ["🐕", "🦺"]), ("😶\u200d🌫\ufe0f", ["😶", "🌫"]), ("🫱🏿\u200d🫲🏻", ["🫱", "🫲"]),
    ("🏃\u200d➡\ufe0f", ["🏃"]), ("🧑\u200d🦯\u200d➡\ufe0f", ["🧑\u200d🦯", "🦯"]),
    ("🏃🏽\u200d♀\ufe0f\u200d➡\ufe0f", ["🏃", "🏃🏽", "🏃\u200d♀", "🏃\u200d➡"])])
def test_a_listed_zwj_sequence_is_found_by_its_emoji_parts_and_the_whole_only_by_itself(
        whole: str, parts: list[str]) -> None:
    """❄ did not find 🐻‍❄️, 🐈 no 🐈‍⬛, 🔥 no ❤️‍🔥, 🏃 no 🏃‍➡️ (each an emoji of its own, whose
    parts were not indexed). A sequence Unicode lists (the ``emoji`` package's data) is indexed by
    each emoji it joins, a direction variant by what faces; the whole's query is its own term."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1
    assert not _indexes(whole, "➡")          # a direction, like a gender sign, is no part


def test_parts_a_group_or_flag_s_name_does_not_say_and_unlisted_chains_yield_no_part() -> None:
    """A family, couple or flag has only the parts its name says (a kiss no ❤, a pirate flag no
    🏴); a ZWJ chain Unicode does not list (typed, or planted) is no sequence with parts to find."""
    for whole, part in [("👩\u200d❤\ufe0f\u200d💋\u200d👨", "❤"), ("🏴\u200d☠\ufe0f", "🏴"),
                        ("🐻\u200d🔥", "🔥"), ("🔥\u200d🐻", "🐻")]:
        assert not _indexes(whole, part), (whole, part)


@pytest.mark.parametrize(("whole", "parts"), [
    ("🏴\u200d\u2620\ufe0f", ["\u2620"]),                       # pirate flag: skull and crossbones
    ("🧑\u200d🤝\u200d🧑", ["🧑", "🤝"]),                        # people holding hands: person, handshake
    ("👨\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", ["👨", "🤝"]),     # men holding hands
    ("👩\U0001F3FC\u200d🤝\u200d👩\U0001F3FE", ["👩", "🤝"]),     # women holding hands
    ("👩\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", ["👩", "👨", "🤝"])])
def test_a_flag_s_emblem_and_a_group_s_people_and_link_are_found_though_named_otherwise(
        whole: str, parts: list[str]) -> None:
    """The data names ☠ "skull and crossbones", not "pirate"; 🧑 "person", 👨 "man", not "people"
    or "men"; 🤝 "handshake", not "hands": a search for them found no pirate flag and no people
    holding hands. A flag is found by what is on it, a group by each person in it and by a link
    its name says in the plural (hands: handshake); the whole finds none of them."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)


def test_every_listed_zwj_sequence_stays_within_the_term_bounds() -> None:
    """Each fully-qualified ZWJ sequence of the ``emoji`` data: one query term, and its index
    terms are its own and at most one base per code point it holds."""
    import emoji

    for seq, data in emoji.EMOJI_DATA.items():
        if "\u200d" not in seq or data["status"] != emoji.STATUS["fully_qualified"]:
            continue
        assert len(symbol_terms(seq)) == 1, seq
        indexed = symbol_terms(seq, bases=True)
        assert indexed[0] == symbol_terms(seq)[0] and len(indexed) <= 1 + len(seq), seq


@pytest.mark.parametrize("text", ["部署🐻\u200d❄\ufe0f完成", "部署👩\u200d💻了", "deploy 🐈\u200d⬛ done",
                                  "部署\u200d完成", "步骤1\ufe0f\u20e3完成"])
def test_a_zwj_or_selector_beside_words_is_no_indexed_word(text: str) -> None:
    """The word scan read a ZWJ or a presentation selector between words as a word of its own
    ("部署🐻‍❄️完成" -> 部署, U+200D, U+FE0F, 完成): FTS5 drops it, but it was written into every
    index row and took a query's term slots. Every indexed word has a letter or a digit."""
    words = [t for t in segment_for_index(text).split() if not t.startswith(tok.SYMBOL_MARK)]
    assert words and all(any(c.isalnum() for c in w) for w in words), words


def test_a_text_to_index_is_normalised_once_for_its_words_and_its_symbols(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # tokenize and symbol_terms each took the text's NFKC: the second, on text already in NFKC,
    # CPython's quick check, a scan of the whole text that finds nothing to do
    text = "Ｄｅｐｌｏｙ ｆａｉｌｅｄ？？ 🚀 PostgreSQL 1️⃣ 部署完成"
    whole: list[str] = []
    real = unicodedata.normalize

    def counting(form: str, value: str) -> str:
        if form == "NFKC" and len(value) >= len(text) - 2:   # the whole text, not one word of it
            whole.append(value)
        return real(form, value)  # type: ignore[arg-type]

    monkeypatch.setattr(unicodedata, "normalize", counting)
    got = segment_for_index(text)
    assert len(whole) == 1
    monkeypatch.undo()
    words = [t for t in tokenize(text, keep_whole=True) if tok.is_word(t)]
    assert got == " ".join([*words, *symbol_terms(text, bases=True)])


_PIECES = [*"aZé ._-?？！!:)(\u200d\ufe0f\u20e31Ｄｆ部署完成數據🚀👍🏽🐻❄ﬁ㎏①",
           "zsym1f680", "PostgreSQL", "queryViolation", "🏴\U000e0067\U000e007f"]
_MIXED = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_MIXED)
def test_a_text_to_index_is_its_words_and_symbol_terms_each_read_as_written(text: str) -> None:
    """Normalising the text once for both halves gives what each public function gives by
    itself (NFKC is idempotent)."""
    words = [t for t in tokenize(text, keep_whole=True) if tok.is_word(t)
             and not (t.startswith(tok.SYMBOL_MARK) and tok._SYMBOL_TERM.fullmatch(t))]
    assert segment_for_index(text) == " ".join([*words, *symbol_terms(text, bases=True)])


_JOINED = st.lists(st.sampled_from([*"aZ部署1 -", "\u200d", "\u200c", "\ufe0f", "\u0301", "\u203f",
                                    "🐻", "ന്"]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_JOINED, st.booleans(), st.booleans())
def test_no_token_is_a_lone_joiner_selector_or_mark(text: str, fold: bool, keep_whole: bool) -> None:
    """The word scan reads a ZWJ, a selector, a combining mark or a connector (‿) as a word
    character, so one between two words, after an emoji or at a word's start was a token of its
    own ("a‍b" -> a, U+200D, b): a term that only texts holding one share, in every BM25 and
    routing vocabulary. Every token has a letter or a digit and starts with one (a mark belongs
    to the character before it: "🐻️a" is no U+FE0F a); one written inside a word keeps it."""
    tokens = tokenize(text, fold=fold, keep_whole=keep_whole)
    assert all(tok.is_word(t[0]) for t in tokens), tokens
    assert tokenize("a\u200db 部署\u200d完成") == ["a", "b", "部署", "完成"]
    assert tokenize("ന്\u200d") == ["ന്\u200d"]      # a chillu written with ZWJ: one word


@pytest.mark.parametrize(("text", "words"), [
    ("✅\ufe0fdone", ["done"]), ("⚠️warning", ["warning"]), ("❤️любовь", ["любовь"]),
    ("🐻\u200dनमस्ते", ["नमस्ते"]), ("🚀\ufe0fdeploy now", ["deploy", "now"]),
    ("部署\u0301done", ["部署", "done"])])
def test_an_emoji_s_selector_or_joiner_is_no_part_of_the_word_after_it(
        text: str, words: list[str]) -> None:
    """A mark, selector or joiner belongs to the character before it: after an emoji (✅️ is ✅
    and U+FE0F) it was read as the start of the next lower-case word ("✅️done" -> U+FE0F done),
    a term no search for "done" meets, in every BM25 and routing vocabulary. The word is its own
    (as FTS5 reads it), whole or split, with or without ``keep_whole``."""
    for keep_whole in (False, True):
        assert tokenize(text, keep_whole=keep_whole) == words, keep_whole
    assert tokenize(text, split_camel=False) == words
    assert tokenize("1\ufe0f\u20e3abc") == ["1", "abc"]     # a keycap's marks: none of abc's


@pytest.mark.parametrize("letter", ["🅰\ufe0f", "🅱", "🅾\ufe0f", "🅿\ufe0f", "🅐", "🆉"])
def test_an_enclosed_letter_emoji_is_still_a_token(letter: str) -> None:
    """🅰️ 🅱️ 🅾️ 🅿️ (and 🅐 .. 🆉) are symbols Unicode calls alphabetic: the word scan reads
    them as letters and NFKC keeps them, so they were the skill index's only emoji terms
    (BM25 reads no symbol terms); a token needs a letter or digit dropped them."""
    bare = letter.removesuffix("\ufe0f")
    assert tokenize(f"find {letter} parking") == ["find", bare, "parking"]
    assert tokenize(letter, split_camel=False) == [bare]


@pytest.mark.parametrize(("text", "token"), [
    ("🅿\ufe0f", "🅿"), ("🅿\ufe0e", "🅿"), ("🈁\ufe0f", "ココ"), ("🈂\ufe0f", "サ"), ("1\ufe0f", "1")])
def test_a_token_keeps_no_presentation_selector(text: str, token: str) -> None:
    """A selector says how to draw the character before it, text or emoji: 🅿️ was a token of
    its own beside 🅿 (and 🈁️ one beside ココ), so skill search met one spelling and not the
    other. Dropped as a token is read, as the memory index's symbol term drops it."""
    for fold in (True, False):
        assert tokenize(f"find {text} now", fold=fold) == ["find", token, "now"], fold


#: Chinese names as an ideographic variation sequence spells them (U+E0100.. after a Han
#: character: a registered glyph of 葛, 辻, 邊) or a standardised one (U+FE00, U+FE0F after it).
IVS_NAMES = [("葛\U000E0100城", "葛城"), ("辻\U000E0100本", "辻本"), ("邊\U000E0101志明", "邊志明"),
             ("王\ufe00小明", "王小明"), ("张\U000E0100伟", "张伟"), ("祇\ufe0f園", "祇園")]


@pytest.mark.parametrize(("written", "plain"), IVS_NAMES)
def test_a_variation_selector_after_a_han_character_breaks_no_word(written: str, plain: str) -> None:
    """A selector says which glyph of the character before it to draw (a family name's own
    form of 葛 or 辻): 葛󠄀城 was cut at the selector into 葛, 城 where 葛城 is one word, so a
    memory of the name written one way was not found by the other (the selector, no CJK
    character, ended the run jieba reads). Dropped as tokens are read, as a presentation
    selector is."""
    for fold in (True, False):
        assert tokenize(f"和{written}开会", fold=fold) == tokenize(f"和{plain}开会", fold=fold), fold
    assert segment_for_index(f"和{written}开会") == segment_for_index(f"和{plain}开会")
    assert tok.normalize(written) == tok.normalize(plain)


#: Groups Unicode gives one code point (its untoned form; a mixed-tone form is a ZWJ sequence
#: named as it is): the people and link those sequences are found by.
SINGLE_GROUPS = [
    ("👬", ["👨", "🤝"]),                       # men holding hands
    ("👭", ["👩", "🤝"]),                       # women holding hands
    ("👫", ["👩", "👨", "🤝"]),                 # woman and man holding hands
    ("👬\U0001F3FD", ["👨", "🤝", "👬"]),       # toned: one code point and a skin tone
    ("💏", ["🧑", "💋"]),                       # kiss: person, person (no ❤, as a kiss sequence)
    ("💑", ["🧑", "\u2764"]),                   # couple with heart: person, person
    ("🤝", ["🫱", "🫲"])]                       # handshake: its mixed-tone form is 🫱‍🫲


@pytest.mark.parametrize(("whole", "parts"), SINGLE_GROUPS)
def test_a_group_of_one_code_point_is_found_by_its_people_and_link_as_its_sequences_are(
        whole: str, parts: list[str]) -> None:
    """👨 found 👨🏻‍🤝‍👨🏿 (men holding hands with two skin tones, a ZWJ sequence) but not 👬,
    the same group untoned, one code point. The data names both alike: a single emoji whose name
    starts a sequence's Unicode lists only toned has that sequence's parts; the whole finds only
    itself (and its toned forms)."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1


@pytest.mark.parametrize(("toned", "single"), [
    ("👨\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", "👬"), ("👩\U0001F3FC\u200d🤝\u200d👨\U0001F3FE", "👫"),
    ("🧑\U0001F3FB\u200d\u2764\ufe0f\u200d💋\u200d🧑\U0001F3FF", "💏"),
    ("🫱\U0001F3FB\u200d🫲\U0001F3FF", "🤝")])
def test_a_mixed_tone_sequence_is_found_by_the_single_emoji_it_is_a_toned_form_of(
        toned: str, single: str) -> None:
    """👬 found 👬🏽 (a tone on it) but not 👨🏻‍🤝‍👨🏿, its form with two tones, which only a
    keyboard's tone picker writes: a search for the emoji found one toned form and not the other."""
    assert _indexes(toned, single)
    assert not _indexes(single, toned)


@pytest.mark.parametrize(("whole", "part"), [
    ("👬", "👩"), ("👭", "👨"), ("💏", "\u2764"), ("👪", "🤝"), ("👪", "\u2764"), ("🤝", "👨")])
def test_a_single_group_has_no_part_its_sequences_do_not(whole: str, part: str) -> None:
    """Men holding hands are no woman, a kiss no heart (as its sequences), a family no link."""
    assert not _indexes(whole, part)


#: Groups of one code point whose gendered forms Unicode lists as sequences named as the group
#: and then their people ("family: man, woman, girl" of 👪 "family"; "kiss: woman, man" of 💏).
LISTED_GROUPS = [
    ("👪", ["👨", "👩", "👦", "👧", "🧑", "🧒"]),
    ("💏", ["👩", "👨"]), ("💑", ["👩", "👨"])]


@pytest.mark.parametrize(("whole", "parts"), LISTED_GROUPS)
def test_a_group_of_one_code_point_is_found_by_the_people_of_its_listed_forms(
        whole: str, parts: list[str]) -> None:
    """👪 "family" had no parts (it takes no skin tone, so no two-tone sequence named it): 👨
    found 👨‍👩‍👧 but not 👪. Its forms are the listed families ("family: man, woman, girl"),
    whose people find it, as 👬's are its two-tone sequence's."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1


@pytest.mark.parametrize(("form", "single"), [
    ("👨\u200d👩\u200d👧", "👪"), ("👩\u200d👦\u200d👦", "👪"), ("🧑\u200d🧑\u200d🧒", "👪"),
    ("👨\u200d\u2764\ufe0f\u200d💋\u200d👨", "💏"), ("👩\u200d\u2764\ufe0f\u200d👨", "💑")])
def test_a_listed_form_of_a_group_is_found_by_the_group_s_single_emoji(
        form: str, single: str) -> None:
    """A search for 👪 found no family a keyboard spells with its people; nor the other way."""
    assert _indexes(form, single)
    assert not _indexes(single, form)


def test_every_single_emoji_with_parts_is_read_for_them() -> None:
    """Only an emoji that takes a skin tone, or the family (which Unicode gives none), has parts
    of its own: what the segmenter checks (a class of ``regex``'s) before it reads the ``emoji``
    data for a lone code point, so indexing 🚀 or ✅ imports nothing. A release giving another
    untoned emoji parts fails here, not silently."""
    singles = [k for k in tok._listed_parts() if len(k) == 1]
    assert {"👬", "👭", "👫", "💏", "💑", "🤝", "👪"} <= set(singles)
    assert all(tok._HAS_GROUP.fullmatch(k) for k in singles), singles


#: Emoji NFKC reads as one letter (ℹ "information" is i, Ⓜ "circled M" m, 🈶 有): as a word
#: each is a stopword or any text's letter.
LETTER_EMOJI = ["\u2139", "\u24c2", "\U0001F236", "\U0001F237"]


@pytest.mark.parametrize("symbol", LETTER_EMOJI)
def test_an_emoji_nfkc_reads_as_one_letter_is_a_term_of_its_own(symbol: str) -> None:
    """ℹ️ and Ⓜ️ were i and m after NFKC (both stopwords of a query), so no form of either
    was found, and 🈶 was 有: each is its own term, with or without its selector; the letter
    stays a word as before, and a text of the letter alone is not found by the emoji."""
    forms = [symbol, symbol + "\ufe0f"]
    for text in forms:
        for query in forms:
            assert symbol_terms(query) == symbol_terms(symbol) != [], (text, query)
            assert _indexes(text, query), (text, query)
    letter = unicodedata.normalize("NFKC", symbol)
    assert not _indexes(letter, symbol)
    assert tokenize(f"see {symbol} here")[1] == letter.casefold()


@pytest.mark.parametrize("text", ["Ａ", "𝐀", "ⓐ", "\u2122", "\u203c", "ﬁ"])
def test_a_letter_nfkc_folds_is_no_symbol_term(text: str) -> None:
    """Fullwidth, mathematical and circled letters (no emoji) and ™ (two letters, a word) keep
    folding to their letters only; ‼ stays the run of marks it was."""
    assert symbol_terms(f"see {text} here") == symbol_terms(f"see {unicodedata.normalize('NFKC', text)} here")


@pytest.mark.parametrize("symbol", ["↔", "↕", "◻", "◼", "◽", "◾", "⤴", "⤵", "〰", "〽"])
def test_an_emoji_unicode_files_as_a_math_sign_or_punctuation_is_a_term_in_either_presentation(
        symbol: str) -> None:
    """↔ ◼ ⤴ 〰 are emoji (Extended_Pictographic) that Unicode files as math signs or punctuation,
    not as symbols: in a text with words each was a lone mark, no term, and a query of one with a
    selector ("↔️") had no term at all. Each is an emoji's term, its selector left out."""
    forms = [symbol, symbol + "\ufe0f", symbol + "\ufe0e"]
    for text in forms:
        for query in forms:
            assert symbol_terms(query) == symbol_terms(symbol) != [], (text, query)
            assert _indexes(text, query), (text, query)
    assert symbol_terms("a → b") == [] == symbol_terms("x ↑ y")     # arrows that are no emoji


def test_indexing_an_emoji_that_takes_no_skin_tone_imports_no_emoji_data() -> None:
    """The ``emoji`` data (60-220 ms to import) is read for a ZWJ sequence or an emoji that
    takes a skin tone, what may have parts; a summary with 🚀 ✅ ↔️ reads none of it."""
    import subprocess
    import sys

    code = ("import sys\nfrom hermes_core.tokenize import segment_for_index\n"
            "segment_for_index('deploy 🚀 ✅ \\u2194\\ufe0f done')\nprint('emoji' in sys.modules)\n"
            "segment_for_index('we 👬 met')\nprint('emoji' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(tok.__file__).parents[1])})
    assert out.stdout.split() == ["False", "True"]


#: Groups Unicode gives a gender variant (👯‍♂️ "men with bunny ears", a ZWJ sequence of one
#: emoji and a sign) whose mixed-tone form is a sequence of two people (👨🏻‍🐰‍👨🏿, Emoji 17):
#: the same group, as 👬 and 👨🏻‍🤝‍👨🏿 are.
GENDERED_GROUPS = [
    ("👨\U0001F3FB\u200d🐰\u200d👨\U0001F3FF", "👯\u200d\u2642\ufe0f", "👨"),
    ("👩\U0001F3FC\u200d🐰\u200d👩\U0001F3FE", "👯\u200d\u2640\ufe0f", "👩"),
    ("👨\U0001F3FB\u200d\U0001FAEF\u200d👨\U0001F3FF", "🤼\u200d\u2642\ufe0f", "👨"),
    ("👩\U0001F3FD\u200d\U0001FAEF\u200d👩\U0001F3FB", "🤼\u200d\u2640\ufe0f", "👩")]


@pytest.mark.parametrize(("toned", "variant", "person"), GENDERED_GROUPS)
def test_a_gendered_group_and_its_mixed_tone_sequence_find_each_other(
        toned: str, variant: str, person: str) -> None:
    """👯 found 🧑🏻‍🐰‍🧑🏿 and 👯‍♂️, but neither 👯 nor 👯‍♂️ found 👨🏻‍🐰‍👨🏿 (men with bunny
    ears in two tones), and 👨 found that sequence but not 👯‍♂️: only a group of one code point
    was matched to its mixed-tone form, not one a gender sign makes."""
    base, sign = variant.split("\u200d")
    assert _indexes(toned, variant) and _indexes(toned, base), (toned, variant)
    assert _indexes(variant, person) and _indexes(f"{base}\U0001F3FD\u200d{sign}", person)
    assert not _indexes(variant, toned) and not _indexes(person, variant)

