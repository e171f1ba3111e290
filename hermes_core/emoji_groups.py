"""What a search for an emoji finds a listed emoji sequence by, read from the ``emoji`` package's
data (UTS #51's sequences and their CLDR names): the parts table :mod:`hermes_core.tokenize`
indexes a sequence's parts and a group's people by (``_listed_parts``, keyed into the memory
index by its digest). Pure functions of the data handed in: the import of ``emoji`` (100-300 ms)
and the cache stay with the tokenizer, which reads this only when an emoji may have parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.tokenize import _FLAGS, _GENDER_HAIR, _MODIFIERS, _PEOPLE, _PRESENTATION, _TONE


def parts_table(data: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Each ZWJ sequence ``data`` lists, without its selectors and skin tones, -> the emoji a
    search should find it by, and each group of one code point -> its forms' people
    (``tokenize._listed_parts`` says which)."""
    table: dict[str, tuple[str, ...]] = {}
    for seq, about in data.items():
        if "\u200d" not in seq:
            continue
        key = _TONE.sub("", seq.translate(_PRESENTATION))
        parts = key.split("\u200d")
        people = sum(p in _PEOPLE for p in parts)
        if parts[0] in _FLAGS:    # what is on the flag: 🌈, ⚧, ☠ (named "skull and crossbones")
            own = tuple(dict.fromkeys(p for p in parts[1:] if p and p not in _MODIFIERS))
        elif people > 1:
            own = named_parts(data, about, parts)
        elif people:
            continue            # a role or a person's variant: the tokenizer's ``_ROLE``, ``_bases``
        else:
            own = tuple(dict.fromkeys(p for p in parts if p and p not in _MODIFIERS))
            if len(own) < 2:
                continue        # one emoji and its modifiers: a variant, :func:`.tokenize._bases`
        if own:
            table[key] = tuple(dict.fromkeys((*table.get(key, ()), *own)))
    for key, single in (*toned_forms(data).items(), *listed_forms(data).items()):
        table[single] = tuple(dict.fromkeys((*table.get(single, ()), *table.get(key, ()))))
        # a gender variant's group too (👯‍♂ -> 👯): 👯 finds 👯‍♂️, so its two-tone form
        table[key] = tuple(dict.fromkeys((*table.get(key, ()), single,
                                          _GENDER_HAIR.sub("", single))))
    return table


def toned_forms(data: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each sequence Unicode lists only toned (👨🏻‍🤝‍👨🏿 "men holding hands: light skin tone,
    dark skin tone"; untoned, 👨‍🤝‍👨, is not listed), without its tones -> the emoji it is a
    mixed-tone form of: the untoned one whose whole name starts the sequence's, the rest of it
    only the sequence's own people and tones (👬 "men holding hands"; 💏 "kiss" for "kiss:
    person, person"; 🤝 "handshake" for 🫱🏻‍🫲🏿; 👯‍♂ "men with bunny ears", a gender variant,
    for 👨🏻‍🐰‍👨🏿). Unicode gives such a group one emoji untoned or in one tone, a sequence in
    two: both are the same group. A name that merely starts with another emoji's ("man juggling
    with man" and 👨 "man") is no form of it: the rest names no person or tone of its own."""
    listed = {seq.translate(_PRESENTATION) for seq in data}
    named: dict[str, str] = {}
    for seq, about in data.items():
        plain = seq.translate(_PRESENTATION)
        if not _TONE.search(plain):
            named.setdefault(about.get("en", "").strip(":"), plain)
    forms: dict[str, str] = {}
    for seq, about in data.items():
        key = _TONE.sub("", seq.translate(_PRESENTATION))
        if "\u200d" not in seq or key in listed or key in forms:
            continue
        own = {w for c in dict.fromkeys(seq) if c in _PEOPLE or _TONE.fullmatch(c)
               for n in _names(data.get(c, {})) for w in n.split("_")}
        if single := _form_of(about, named, own):
            forms[key] = single
    return forms


def listed_forms(data: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each listed sequence of people named as an emoji of one code point and then only its own
    people (👨‍👩‍👧 "family: man, woman, girl" of 👪 "family"; 👩‍❤‍💋‍👨 "kiss: woman, man" of
    💏 "kiss") -> that emoji: its gendered forms, which a keyboard spells with their people. 👪
    takes no skin tone, so no two-tone sequence (:func:`toned_forms`) gave it people. Only a
    name starting with one code point's: "family: man, boy, boy" is no form of 👨‍👦 "family:
    man, boy", a longer family, nor a toned role of its untoned self."""
    named: dict[str, str] = {}
    for seq, about in data.items():
        plain = seq.translate(_PRESENTATION)
        if len(plain) == 1:
            named.setdefault(about.get("en", "").strip(":"), plain)
    forms: dict[str, str] = {}
    for seq, about in data.items():
        key = seq.translate(_PRESENTATION)
        if "\u200d" not in key or _TONE.search(key) or sum(p in _PEOPLE for p in key) < 2:
            continue
        own = {w for c in dict.fromkeys(key) if c in _PEOPLE
               for n in _names(data.get(c, {})) for w in n.split("_")}
        if single := _form_of(about, named, own):
            forms[key] = single
    return forms


def _form_of(about: Mapping[str, Any], named: Mapping[str, str], own: set[str]) -> str | None:
    """The emoji of ``named`` (CLDR name -> emoji) whose whole name starts the sequence's name
    (``about``) and is followed only by ``own`` words (its people's, its tones'), longest first:
    the one rule :func:`toned_forms` and :func:`listed_forms` share."""
    words = about.get("en", "").strip(":").split("_")
    return next((named[name] for n in range(len(words) - 1, 0, -1)
                 if (name := "_".join(words[:n])) in named and set(words[n:]) <= own), None)


def _names(about: Mapping[str, Any]) -> list[str]:
    """An emoji's English CLDR name and its aliases, as the ``emoji`` package spells them
    (``:red_heart:``, ``:heart:``), without their colons."""
    return [n.strip(":") for n in (about.get("en", ""), *about.get("alias", ())) if n]


def named_parts(data: Mapping[str, Mapping[str, Any]], about: Mapping[str, Any],
                 parts: Sequence[str]) -> tuple[str, ...]:
    """The parts of a group of people: each person in it (a name may say them in the plural:
    "people", "men holding hands"), and a link whose name (or alias) starts with a word of the
    group's name, or with a plural's stem ("hands": 🤝 "handshake"). "family: man, woman, girl"
    names 👨 👩 👧; "couple with heart: woman, man" names ❤ (alias "heart"); "kiss: woman, man"
    names 💋 ("kiss mark"), not ❤ ("red heart"). Decided by the data, so a release naming a
    sequence otherwise re-keys the index (:func:`emoji_data_digest`)."""
    said = {w for n in _names(about) for w in n.split("_")}
    stems = tuple(w[:-1] for w in said if len(w) > 3 and w.endswith("s") and not w.endswith("ss"))
    found: dict[str, None] = {}
    for part in parts:
        if not part or part in _MODIFIERS or part in found:
            continue
        if part in _PEOPLE:
            found[part] = None
            continue
        known = data.get(part) or data.get(part + "\ufe0f")
        firsts = [n.split("_")[0] for n in _names(known)] if known else []
        if any(w in said or w.startswith(stems) for w in firsts):
            found[part] = None
    return tuple(found)
