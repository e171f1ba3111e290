"""The emoji data's groups and forms (``emoji_groups``): crafted data for rules the installed
release cannot show, the installed release for what it lists. What a search finds through
them is pinned in test_tokenize.py."""

from __future__ import annotations

import pytest

from hermes_core.emoji_groups import listed_forms, toned_forms
from hermes_core.tokenize import _TONE


def _data(**names: str) -> dict[str, dict[str, str]]:
    """An ``emoji.EMOJI_DATA`` of the given emoji -> CLDR names (the tones and people included)."""
    tones = {"\U0001F3FB": "light_skin_tone", "\U0001F3FF": "dark_skin_tone",
             "👨": "man", "👩": "woman", "🧑": "person"}
    return {k: {"en": f":{v}:"} for k, v in {**tones, **names}.items()}


@pytest.mark.parametrize(("seq", "name", "expected"), [
    # the name of a group and then only its people and tones: its mixed-tone form
    ("👨🏻\u200d🤝\u200d👨🏿", "men_holding_hands_light_skin_tone_dark_skin_tone", "👬"),
    ("🧑🏻\u200d❤\u200d💋\u200d🧑🏿", "kiss_person_person_light_skin_tone_dark_skin_tone", "💏"),
    # a name that merely starts with another emoji's: no form of it
    ("👨🏻\u200d🤹\u200d👨🏿", "man_juggling_with_man_light_skin_tone_dark_skin_tone", None),
    ("🧑🏻\u200d🤝\u200d🧑🏿", "person_holding_hands_light_skin_tone_dark_skin_tone", None),
    ("🧑🏻\u200d💋\u200d🧑🏿", "kiss_on_cheek_person_person_light_skin_tone_dark_skin_tone", None)])
def test_a_toned_sequence_is_a_form_only_of_the_emoji_its_whole_name_is(
        seq: str, name: str, expected: str | None) -> None:
    """The name was matched to any emoji named by its first words, down to one: a release listing
    a toned-only "man juggling with man" would have made it a form of 👨 (man), and every 👨 a
    search for a juggler found. Only a name that is an emoji's and then the sequence's own
    people and tones is a toned form of it."""
    data = _data(**{"👬": "men_holding_hands", "💏": "kiss", "🤝": "handshake", "🤹": "juggling",
                    "💋": "kiss_mark", "\u2764": "red_heart"}, **{seq: name})
    assert toned_forms(data).get(_TONE.sub("", seq)) == expected


def test_a_listed_form_is_only_of_a_single_code_point() -> None:
    """"family: man, boy, boy" is no form of 👨‍👦 "family: man, boy" (a longer name that
    starts with it), nor "man artist: light skin tone" of 👨‍🎨 (a tone variant): only of the one
    code point its name starts with."""
    import emoji

    forms = listed_forms(emoji.EMOJI_DATA)
    assert forms and all(len(single) == 1 for single in forms.values()), forms
    assert set(forms.values()) == {"👪", "💏", "💑"}
