"""argparse value types shared by the command groups."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A whole number >= 1: counts where 0 would silently mean "the default" and -1 would slice."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value
