"""Keep secrets out of every string that leaves the process: logs, errors, audit lines, CLI output.

Two nets: the exact secrets we hold (credential keys), and patterns of well-known key formats, for
secrets we never held (a body echoing a key, a key pasted into a message).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from hermes_core.types import fingerprint

_KEY_PATTERNS = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}|xai-[A-Za-z0-9]{16,}"
    r"|gsk_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{20,}|(?<=Bearer )[A-Za-z0-9._\-]{16,})")


_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-./+=:]{20,}")


def looks_like_secret(value: str) -> bool:
    """Whether a string is shaped like a key: a known key format, or one long token mixing letters
    and digits (a custom endpoint's key has no prefix to recognise it by)."""
    text = value.strip()
    if _KEY_PATTERNS.search(text):
        return True
    if not _TOKEN_LIKE.fullmatch(text) or "://" in text or text.startswith(("/", "~", ".")):
        return False
    return (any(c.isdigit() for c in text) and any(c.isalpha() for c in text)
            and len(set(text)) >= 10)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets by their fingerprint and key-shaped strings by ``[REDACTED]``."""
    for s in secrets:
        if s and len(s) >= 4 and s in text:
            text = text.replace(s, f"[{fingerprint(s)}]")
    return _KEY_PATTERNS.sub("[REDACTED]", text)


class StreamRedactor:
    """Redacts text that arrives in pieces: a key split across two pieces is still caught.

    Keys contain no whitespace, so everything up to the last whitespace seen can be redacted and
    released; the tail waits for the next piece (or ``flush``).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(secrets)
        self._pending = ""

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        cut = max(text.rfind(c) for c in " \t\n\r")
        if cut < 0:
            self._pending = text
            return ""
        self._pending = text[cut + 1:]
        return redact(text[: cut + 1], self._secrets)

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return redact(text, self._secrets) if text else ""


class RedactingFilter(logging.Filter):
    """A logging filter that redacts key-shaped strings from every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = redact(msg)
        if clean != msg:
            record.msg, record.args = clean, ()
        return True
