"""Keep secrets out of every string that leaves the process: logs, errors, audit lines, CLI output.

Two nets: the exact secrets we hold (credential keys, whatever their format: a custom endpoint's
key has no recognisable prefix), and patterns of well-known key formats, for secrets we never held
(a body echoing a key, a key pasted into a message).

One :class:`Redactor` is built from the settings when they are loaded
(:meth:`hermes_core.config.Settings.redactor`). Building it also registers its secrets with this
module, so every writer that calls :func:`redact` (the logging filter on SDK debug lines, error
objects and their headers, sessions.db, transcripts, CLI output) scrubs them too, including writers
that were never handed the redactor.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping

from hermes_core.types import fingerprint

_KEY_PATTERNS = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}|xai-[A-Za-z0-9]{16,}"
    r"|gsk_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{20,}|(?<=Bearer )[A-Za-z0-9._\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,})")
# Configured secrets shorter than this are not registered process-wide: "test" or "abc1" would
# blank out ordinary words in every log line.
MIN_REGISTERED = 8
_KNOWN: set[str] = set()
_KNOWN_SORTED: tuple[str, ...] = ()
_LOCK = threading.Lock()


def register_secrets(secrets: Iterable[str]) -> None:
    """Make ``secrets`` known to every :func:`redact` call in this process."""
    global _KNOWN_SORTED
    fresh = {s.strip() for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_REGISTERED}
    if not fresh - _KNOWN:
        return
    with _LOCK:
        _KNOWN.update(fresh)
        _KNOWN_SORTED = tuple(sorted(_KNOWN, key=len, reverse=True))  # longest first: no partial leftovers


_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-./+=:]{20,}")


def looks_like_secret(value: str) -> bool:
    """Whether a string is shaped like a key: a known key format, or one long token mixing letters
    and digits (a custom endpoint's key has no prefix to recognise it by)."""
    text = value.strip()
    if _KEY_PATTERNS.search(text):
        return True
    if not _TOKEN_LIKE.fullmatch(text) or "://" in text or text.startswith(("/", "~", ".")):
        return False
    # a model id ("gpt-4o-mini-2024-07-18") is short words joined; a key has one long random run
    if (any(c.isupper() for c in text) and any(c.islower() for c in text)
            and any(c.isdigit() for c in text)):
        return True   # mixed case and digits: model ids and paths are lower case
    longest = max(re.split(r"[-_./+=:]", text), key=len)
    return (len(longest) >= 16 and any(c.isdigit() for c in longest)
            and any(c.isalpha() for c in longest) and len(set(longest)) >= 10)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets (``secrets`` and every registered one) by their fingerprint and
    key-shaped strings by ``[REDACTED]``."""
    if not isinstance(text, str):
        text = str(text)
    for s in (*secrets, *_KNOWN_SORTED):
        if s and len(s) >= 4 and s in text:
            text = text.replace(s, f"[{fingerprint(s)}]")
    return _KEY_PATTERNS.sub("[REDACTED]", text)


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key",
                             "cookie", "set-cookie", "openai-organization"})


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """Headers safe to keep on an error or print: credentials headers masked, every value scrubbed."""
    secrets = tuple(secrets)
    return {str(k): ("[REDACTED]" if str(k).lower() in _SECRET_HEADERS else redact(str(v), secrets))
            for k, v in headers.items()}


class Redactor:
    """The exact secrets of one configuration plus the key shapes; call it on any text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        clean = {s.strip() for s in secrets if isinstance(s, str) and len(s.strip()) >= 4}
        self.secrets: tuple[str, ...] = tuple(sorted(clean, key=len, reverse=True))
        register_secrets(self.secrets)

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return redact_headers(headers, self.secrets)

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self.secrets)

    def __repr__(self) -> str:
        return f"Redactor({len(self.secrets)} secret(s))"


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
    """A logging filter that redacts secrets and key-shaped strings from every record it sees, at
    every level (SDK and HTTP debug lines included), traceback text too."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        scrub = self.redactor or redact
        try:
            msg = record.getMessage()
        except Exception:  # a bad format string: keep the raw template, scrubbed
            msg = str(record.msg)
        clean = scrub(msg)
        if clean != msg or record.args:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[0] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = scrub(text), None
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True
