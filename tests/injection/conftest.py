"""Shared checks for the injection tests: a text scanned in both places a text reaches the scan
(an instruction, ``data=False``, and a tool's result, ``data=True``) with every rule but the
learned scorer's."""

from __future__ import annotations

from pathlib import Path

import pytest
import simplemma.strategies.dictionaries.dictionary_factory as factory

from hermes_core.injection import INJECTION_CATEGORIES, greek_lexicon, guard_text, scan_for_injection

#: The labelled texts the scan is tuned and checked on (built by build_corpus.py beside it).
CORPUS = Path(__file__).parents[1] / "data" / "injection" / "corpus.jsonl"
RULES = tuple(c for c in INJECTION_CATEGORIES if c != "learned")


def assert_passes_in_both(text: str) -> None:
    """Nothing is found in ``text``, as an instruction or as data."""
    assert scan_for_injection(text, RULES) is None
    assert scan_for_injection(text, RULES, data=True) is None


def assert_blocked_in_both(text: str, category: str = "secret-exfiltration") -> None:
    """``text`` is found as ``category`` as an instruction, and found as data."""
    found = scan_for_injection(text, RULES)
    assert found is not None and found.category == category
    assert scan_for_injection(text, RULES, data=True) is not None


def blocked_where_guarded(text: str, location: str,
                          categories: tuple[str, ...] = INJECTION_CATEGORIES) -> bool:
    """``text`` is refused as the file at ``location`` ("memory", "context", "skill") is guarded:
    a memory file's text read as data, the others as instructions."""
    name = {"memory": "MEMORY.md", "context": "HERMES.md", "skill": "SKILL.md"}[location]
    return bool(guard_text(text, name=name, categories=categories, data=location == "memory").findings)


def assert_read_everywhere(text: str, *, blocked: bool) -> None:
    """``text`` is blocked (or passes) through the public scan, as an instruction and as data, and
    as a context file and a recalled memory are guarded, by the rules alone: a rule that holds in
    one place an attacker can reach holds in all of them."""
    if blocked:
        assert_blocked_in_both(text)
    else:
        assert_passes_in_both(text)
    for location in ("context", "memory"):
        assert blocked_where_guarded(text, location, RULES) is blocked, location


@pytest.fixture
def dictionary_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The languages whose simplemma dictionary is read from disk from now on, in order: the
    caches that keep a read dictionary (simplemma's, ``greek_lexicon``'s) start empty."""
    reads: list[str] = []
    load = factory._load_dictionary_from_disk

    def counted(lang: str) -> object:
        reads.append(lang)
        return load(lang)

    monkeypatch.setattr(factory, "_load_dictionary_from_disk", counted)
    factory.DEFAULT_DICTIONARY_FACTORY._get_dictionary.cache_clear()
    greek_lexicon._known.cache_clear()
    return reads
