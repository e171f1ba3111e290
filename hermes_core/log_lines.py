"""One log record, one line: the values a record quotes are escaped where they could end a line.

A log message quotes what the library read or was sent: a tool's arguments (the model wrote
them), a file's name, a provider's error text. A newline in such a value starts what any reader
(a terminal, ``grep``, a log shipper splitting on ``str.splitlines``) takes for a record of its
own: ``x\\nWARNING hermes_core.agent: ...`` forges a warning. Every character that ends a line
somewhere (``\\n``, ``\\r``, VT, FF, the file/group/record separators, NEL, U+2028, U+2029) and
every other control character (ESC starts a terminal sequence) is shown as its escape; tab and
printable text (Chinese too) are kept. A traceback keeps its own lines (frames, the joints of a
chain); only each exception's message in it, a value, is made one line.
"""

from __future__ import annotations

import re
import traceback
from types import TracebackType

#: C0 controls but tab, DEL, C1 controls (NEL among them), and the Unicode line and paragraph
#: separators.
_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r"}

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def one_line(text: str) -> str:
    """``text`` with each line-ending or control character shown as its escape (``\\n``,
    ``\\x1b``, ``\\u2028``); returned as it is when it holds none (the common case, one scan)."""
    return _BREAKS.sub(_escape, text) if _BREAKS.search(text) else text


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions a traceback of it shows (its cause, or its context)."""
    out: list[BaseException] = []
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        out.append(e)
        e = e.__cause__ if e.__cause__ is not None else (
            None if e.__suppress_context__ else e.__context__)
    return out


def traceback_text(exc_info: ExcInfo) -> str:
    """The standard traceback of ``exc_info`` (no trailing newline), each exception's own
    message in it made one line (see :func:`messages_one_line`)."""
    text = "".join(traceback.format_exception(*exc_info)).rstrip("\n")
    return messages_one_line(text, exc_info[1])


def messages_one_line(text: str, exc: BaseException) -> str:
    """``text``, a traceback of ``exc``, with each exception's message in it made one line: the
    frames and the chain's joints keep their lines, a message quoting a value cannot begin a
    line that looks like another record."""
    for e in _chain(exc):
        said = "".join(traceback.format_exception_only(type(e), e)).rstrip("\n")
        shown = one_line(said)
        if shown != said:
            text = text.replace(said, shown)
    return text
