"""Fixtures of the routing tests."""

from __future__ import annotations

import re
from collections.abc import Callable
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

import pytest

CpuOf = Callable[[Callable[[str], object], str, int], float]
"""A read of a text, a unit to repeat, the characters to repeat it to: the least CPU seconds."""


def _first(items: Any, ignore_case: bool) -> tuple[set[str] | None, bool]:
    """The letters a parsed pattern can start a match with (None: any) and whether it can match
    empty. Zero-width looks are stepped over, so the set is a superset of the true one."""
    letters: set[str] = set()
    for op, av in items:
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue
        if op is sre.LITERAL:
            got: set[str] | None = {chr(av)}
            nullable = False
        elif op is sre.IN:
            got = set()
            for kind, value in av:
                if kind is sre.LITERAL:
                    got.add(chr(value))
                elif kind is sre.RANGE:
                    got.update(chr(c) for c in range(value[0], value[1] + 1))
                else:   # a negation or a category: any letter
                    got = None
                    break
            nullable = False
        elif op is sre.SUBPATTERN:
            _, add, drop, sub = av
            case = (ignore_case or bool(add & re.IGNORECASE)) and not drop & re.IGNORECASE
            got, nullable = _first(sub, case)   # folds its own letters
        elif op is sre.BRANCH:
            got, nullable = set(), False
            for sub in av[1]:
                one, empty = _first(sub, ignore_case)
                got = None if got is None or one is None else got | one
                nullable = nullable or empty
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, _, sub = av
            got, empty = _first(sub, ignore_case)
            nullable = low == 0 or empty
        else:
            return None, False
        if got is None:
            return None, False
        if ignore_case and op in (sre.LITERAL, sre.IN):
            got = got | {c.swapcase() for c in got}
        letters |= got
        if not nullable:
            return letters, False
    return letters, True


@pytest.fixture
def first_letters() -> Callable[[str, int], set[str] | None]:
    """The letters ``pattern`` (compiled with ``flags``) can start a match with, read from the
    standard library's own parse of it, or None when it can start with any: a hand-kept
    first-letter look is compared with it, so a word added to the pattern cannot be left out."""
    def first(pattern: str, flags: int = 0) -> set[str] | None:
        letters, _ = _first(_parser.parse(pattern, flags), bool(flags & re.IGNORECASE))
        return letters
    return first


@pytest.fixture(scope="module")
def tier_of() -> Callable[..., str]:
    """The slot the default rules send a text to ("code", "default" or "fast"), with a code model
    configured or (``code_model=False``) without one."""
    from ..conftest import routed_by

    slots = {"default_model": "gpt-4o", "fast_model": "gpt-4o-mini", "code_model": "gpt-4.1"}
    with_code = routed_by(**slots)
    without_code = routed_by(**{k: v for k, v in slots.items() if k != "code_model"})
    names = {model: slot.removesuffix("_model") for slot, model in slots.items()}

    def tier(text: str, *, code_model: bool = True) -> str:
        return names[(with_code if code_model else without_code).select(text).model]
    return tier


@pytest.fixture
def cpu_of() -> CpuOf:
    """The least CPU time of two reads of ``unit`` repeated to ``chars`` characters and an x: a
    pattern that backtracks shows as a read of four times the text costing far more than four
    times the time (the tests allow eight, plus 50 ms of scheduler noise)."""
    import time

    def cpu(read: Callable[[str], object], unit: str, chars: int) -> float:
        text = (unit * (chars // len(unit) + 1))[:chars] + "x"
        best = float("inf")
        for _ in range(2):
            start = time.process_time()
            read(text)
            best = min(best, time.process_time() - start)
        return best
    return cpu
