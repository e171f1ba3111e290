"""Tests of ``hermes_core/injection/gate.py``: the literals a phrase pattern requires."""

from __future__ import annotations

import pytest

from hermes_core.injection.gate import _group_end, _split_top, heads


@pytest.mark.parametrize(("pattern", "expected"), [
    (r"\b(?:ignore|disregard)\s+(?:all\s+)?previous", {"previous"}),       # the longest required literal
    (r"(?:\ball\s*|\b)(?:previous|prior)\s+x", {"previous", "prior"}),      # an optional group is skipped
    (r"instructions?", {"instruction"}),           # an optional letter ends the head
    (r"\bnew\s+system\s+prompt|\bsafe\s+mode", {"system", "safe"}),    # the first of equals
    (r"a\u201cb", {"a\u201cb"}),
    (r"(?:忽略|无视)[^。\n]{0,4}?(?:之前|以上)", {"忽略", "无视"}),
])
def test_heads_are_the_literals_every_match_contains(pattern: str, expected: set[str]) -> None:
    assert heads(pattern) == expected


@pytest.mark.parametrize("pattern", [r"[a-z]+x?", r"\w+\s+\d", r"(?:a|[bc])d?"])
def test_a_pattern_without_a_required_literal_has_no_heads(pattern: str) -> None:
    assert heads(pattern) is None


@pytest.mark.parametrize(("pattern", "parts"), [
    (r"a|b", ["a", "b"]),
    (r"(?:a|b)|c", ["(?:a|b)", "c"]),                 # a bar inside a group does not split
    (r"[|]x|y", ["[|]x", "y"]),                       # nor one inside a class
    (r"[]|]x|y", ["[]|]x", "y"]),                     # a leading "]" is a member of the class
    (r"[^]|]x|y", ["[^]|]x", "y"]),
    (r"a\|b|c", [r"a\|b", "c"]),                      # nor an escaped one
    (r"\(a|b\)", [r"\(a", r"b\)"]),                   # escaped parentheses open no group
    (r"[(]a|b", ["[(]a", "b"]),                       # nor does one in a class
    (r"[\]|]a|b", [r"[\]|]a", "b"]),                  # an escaped "]" does not close the class
])
def test_top_level_alternatives_split_only_at_bars_outside_groups_and_classes(
        pattern: str, parts: list[str]) -> None:
    assert _split_top(pattern) == parts


@pytest.mark.parametrize(("pattern", "start", "end"), [
    (r"(ab)c", 0, 4),
    (r"x(?:a(b)c)d", 1, 10),                          # nested groups close with the outer one
    (r"(a\)b)c", 0, 6),                               # an escaped ")" does not close it
    (r"(a[)]b)c", 0, 7),                              # nor does one in a class
    (r"([]()]b)c", 0, 8),
])
def test_a_group_ends_after_its_own_closing_parenthesis(pattern: str, start: int, end: int) -> None:
    assert _group_end(pattern, start) == end


def test_an_unclosed_group_is_an_error() -> None:
    with pytest.raises(ValueError):
        _group_end("(ab", 0)
