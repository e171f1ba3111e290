"""Tests of ``hermes_core/injection_gate.py``: the literals a phrase pattern requires."""

from __future__ import annotations

import pytest

from hermes_core.injection_gate import heads


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
