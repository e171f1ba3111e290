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


def replace_unencodable(stream: object) -> None:
    """Let ``stream`` print characters its encoding lacks as "?" (a Latin-1 terminal, cp1252 when
    redirected on Windows) instead of failing with UnicodeEncodeError: a Chinese reply must not
    end a turn or a search in a traceback."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # pragma: no cover - not a reconfigurable text stream
            pass
