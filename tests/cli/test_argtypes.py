"""Tests of ``hermes_core/cli/argtypes.py``: the value types of the command-line options."""

from __future__ import annotations

import argparse

import pytest

from hermes_core.cli.argtypes import non_negative_int, positive_int, whole_number


@pytest.mark.parametrize("parse", [positive_int, non_negative_int, whole_number])
def test_a_number_of_thousands_of_digits_is_too_large_not_a_non_number(parse) -> None:
    """int() refuses over 4,300 digits with a ValueError: the option then said "not a whole
    number" (it is one) and echoed all 5,000 digits back."""
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse("9" * 5000)
    message = str(info.value)
    assert "too large" in message and "5000 digits" in message and len(message) < 80


@pytest.mark.parametrize("parse", [positive_int, non_negative_int, whole_number])
def test_a_long_non_number_is_shown_by_its_head(parse) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse("x" * 5000)
    message = str(info.value)
    assert "not a whole number" in message and len(message) < 80


def test_the_bounds_of_each_kind() -> None:
    assert (positive_int("1"), non_negative_int("0"), whole_number("-3")) == (1, 0, -3)
    for parse, text in ((positive_int, "0"), (non_negative_int, "-1")):
        with pytest.raises(argparse.ArgumentTypeError, match="must be at least"):
            parse(text)
