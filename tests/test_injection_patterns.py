"""Tests of ``hermes_core/injection_patterns.py``: the literal heads that decide which phrase
patterns run (``hermes_core/injection_gate.py``) must never skip one of these patterns that would
have matched."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hermes_core.injection import split_paragraphs
from hermes_core.injection_gate import GatedPattern, heads
from hermes_core.injection_hijack import DATA_ONLY, EVERYWHERE
from hermes_core.injection_normalise import despaced, flat, fold
from hermes_core.injection_patterns import COMBINED, LANGUAGES, PERSONA_TRAITS

CORPUS = Path(__file__).parent / "data" / "injection" / "corpus.jsonl"


def _views() -> list[str]:
    out = []
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            for par in split_paragraphs(json.loads(line)["text"]):
                folded = fold(par.text)
                out += [folded, flat(folded), despaced(flat(folded))]
    return out


def test_a_pattern_that_matches_always_has_one_of_its_heads_in_the_text() -> None:
    views = _views()
    patterns = [p for table in LANGUAGES.values() for pats in table.values() for p in pats]
    patterns += list(PERSONA_TRAITS.values())
    matched = 0
    for pattern in patterns:
        h = heads(pattern.pattern)
        for view in views:
            if pattern.search(view):
                matched += 1
                assert h is None or any(x in view for x in h), (pattern.pattern, view)
    assert matched > 200


def test_gated_pattern_finds_what_the_whole_alternation_finds() -> None:
    gated = [g for table in COMBINED.values() for g in table.values()]
    gated += list(EVERYWHERE.values()) + list(DATA_ONLY.values())
    long_views = [v * (1 + GatedPattern.SHORT // max(1, len(v))) for v in _views()[::3]]
    for g in gated:
        whole = re.compile(g.pattern, re.MULTILINE)
        for view in long_views:
            m, w = g.search(view), whole.search(view)
            assert (m is None) == (w is None), (g.pattern[:80], view[:80])
            if m is not None and w is not None:
                assert m.start() == w.start()
