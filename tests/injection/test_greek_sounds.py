"""English spelled in Greek letters by sound, searched for a word the rules read."""

from __future__ import annotations

import pytest

from hermes_core.injection.greek_sounds import bare, known_readings, letter_ways

KNOWN = frozenset({"instructions", "request", "with", "new", "the", "de", "rules", "you", "send", "sent"})
BEGINNINGS = frozenset(w[:i] for w in KNOWN for i in range(1, len(w) + 1))
# each letter's own readings as the scan gives them (shape, capital's shape, sound), for the
# letters these words use
LETTERS = letter_ways({"ι": ("i",), "ν": ("v", "n"), "σ": ("o", "s"), "τ": ("t",), "ρ": ("p", "r"),
           "ο": ("o",), "υ": ("u", "y"), "κ": ("k",), "ε": ("e",), "β": ("b", "v"), "δ": ("d",),
           "λ": ("l",), "θ": ("th",)})


def _read(word: str, most: int = 2) -> tuple[str, ...]:
    return known_readings(bare(word), LETTERS, KNOWN, BEGINNINGS, 256, most)


@pytest.mark.parametrize(("word", "reading"), [
    ("ινστρουκτιονς", "instructions"),   # κ for c, ου for u
    ("ινστρούκτιονς", "instructions"),   # accents change nothing
    ("ρεκβεστ", "request"),              # κβ for qu
    ("ρεκυεστ", "request"),              # κυ for qu
    ("ρεκουεστ", "request"),             # κ and ου
    ("βιδ", "with"),                     # β for w, δ for th
    ("νιου", "new"),                     # ου for w
    ("ιου", "you"),                      # ι for y
    ("ρουλς", "rules"),                  # the silent e before a final ς
])
def test_a_letter_greek_lacks_is_read_from_the_letters_that_sound_like_it(word: str, reading: str) -> None:
    assert reading in _read(word)


def test_a_word_with_two_known_readings_gives_both_shape_first() -> None:
    assert _read("δε") == ("de", "the")
    assert _read("σεντ") == ("sent", "send")
    assert _read("δε", most=1) == ("de",)


def test_the_search_stops_at_its_branch_budget() -> None:
    # every letter of this word has several readings; a budget of 3 branches reaches no end
    assert known_readings("ινστρουκτιονς", LETTERS, KNOWN, BEGINNINGS, 3) == ()
    assert known_readings("καλημερα", LETTERS, KNOWN, BEGINNINGS, 256) == ()


SPOKEN = frozenset({"what", "show", "mode", "ignore", "password", "command", "error", "address",
                    "above", "say", "instructions"})
SPOKEN_BEGINNINGS = frozenset(w[:i] for w in SPOKEN for i in range(1, len(w) + 1))
SPOKEN_LETTERS = letter_ways({"ι": ("i",), "γ": ("g", "y"), "ν": ("v", "n"), "ο": ("o",), "ρ": ("p", "r"),
                              "σ": ("o", "s"), "τ": ("t",), "μ": ("u", "m"), "π": ("p",), "α": ("a",),
                              "κ": ("k",), "ε": ("e",), "β": ("b", "v"), "υ": ("u", "y"), "ω": ("w", "o")})


@pytest.mark.parametrize(("word", "reading"), [
    ("ουατ", "what"),              # wh, which sounds as the w Greek writes ου or β for
    ("βατ", "what"),
    ("σόου", "show"),              # σ for sh (Greek has no sh), οου for a long o
    ("μόουντ", "mode"),            # a silent final e the Greek spelling leaves out
    ("ιγνόρ", "ignore"),
    ("πάσουορντ", "password"),     # one letter for a doubled consonant: σ ss, μ mm, ρ rr, ντ dd
    ("κομάντ", "command"),
    ("έρορ", "error"),
    ("αντρές", "address"),
    ("αμπάβ", "above"),            # α for the o of "above"
    ("σέι", "say"),                # ει for a long a
    ("ινστράκσονς", "instructions"),   # σον for -tion
])
def test_english_the_tables_could_not_spell_is_read(word: str, reading: str) -> None:
    # each of these read as no word: "ουατ" was "out" at best, "σόου" "suo"
    assert reading in known_readings(bare(word), SPOKEN_LETTERS, SPOKEN, SPOKEN_BEGINNINGS, 256, 4)
