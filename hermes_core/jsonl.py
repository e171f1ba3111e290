"""Strict JSONL reading for labelled files (eval queries, routing examples).

One reader so every such file fails the same way: a ConfigError naming the file and the line, for
bad UTF-8, invalid JSON, or JSON Python cannot hold (a 5,000-digit number, nesting past the stack).
Lines are cut at ``\\n`` only: ``str.splitlines()`` also cuts at U+2028, NEL and form feed, which a
JSON string may legally contain. A leading BOM (Windows editors) is dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError


def read_jsonl(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of ``path``; ``what`` names the file's
    role in the error when it cannot be read at all."""
    p = Path(path)
    try:
        raw = p.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as e:
        raise ConfigError(f"cannot read {what}: {e.strerror or e}", file=str(p)) from None
    try:   # line ends as a text file reads them: \r\n and a lone \r (old Mac files) are \n
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:   # the line, or a bad byte in a large file is a search
        head = raw[:e.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        raise ConfigError("not valid UTF-8", file=str(p), line=head.count(b"\n") + 1) from None
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"not valid JSON ({e.msg})", file=str(p), line=n) from None
        except (ValueError, RecursionError):
            raise ConfigError("unreadable JSON (a number too long or nesting too deep)",
                              file=str(p), line=n) from None
