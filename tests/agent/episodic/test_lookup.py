"""Tests of ``hermes_core/agent/episodic/lookup.py``: what a typed-back session id may name."""

from __future__ import annotations

import pytest

from hermes_core.agent.episodic.lookup import IdLookup, readings


@pytest.mark.parametrize(("typed", "names"), [
    ("s1  [db, ops]", "s1"),
    ("  s1 ", "s1"),
    ("  3.894e-06      0.0d  s1  [db, ops]", "s1"),
    ("     24.57      1.0d  会话 1", "会话 1"),
    ("chat\\x1b7", "chat\x1b7"),
])
def test_what_memory_search_printed_reads_as_the_id_in_it(typed: str, names: str) -> None:
    assert names in readings(typed)


def test_the_text_as_typed_is_read_first() -> None:
    got = readings(" s1  [db] ")
    assert got[0] == " s1  [db] " and "s1" in got
    assert readings("   ") == ()


def test_only_one_id_is_unique() -> None:
    assert IdLookup("s", ("s1",)).unique == "s1"
    assert IdLookup("s", ("s1", "s2"), by_prefix=True).unique is None
    assert IdLookup("s").unique is None
