"""Strict JSONL reading for labelled files (eval queries, routing examples).

One reader so every such file fails the same way: a ConfigError naming the file and the line, for
bad UTF-8, invalid JSON, or JSON Python cannot hold (a 5,000-digit number, nesting past the stack).
Lines are cut at ``\\n`` only: ``str.splitlines()`` also cuts at U+2028, NEL and form feed, which a
JSON string may legally contain. A leading BOM (Windows editors) is dropped.

Only a regular file is opened (a FIFO would block the read forever, ``/dev/zero`` never ends), the
file is read at most ``MAX_FILE_BYTES`` deep, and a line over ``MAX_LINE_BYTES`` is refused before
it is parsed: no labelled query or example is a megabyte long, and one such line would otherwise
be tokenised whole by every layer that reads it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError

MAX_FILE_BYTES = 64_000_000   # labelled sets measured so far are a few MB (MetaTool: 0.5 MB)
MAX_LINE_BYTES = 1_000_000    # as a SKILL.md file


def read_jsonl(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of ``path``; ``what`` names the file's
    role in the error when it cannot be read at all."""
    p = Path(path)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"is a directory, not a JSONL {what}", file=str(p))
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"not a regular file (a pipe or device?), not a JSONL {what}",
                              file=str(p))
        if st.st_size > MAX_FILE_BYTES:
            raise ConfigError(f"too large ({st.st_size} bytes; limit {MAX_FILE_BYTES})", file=str(p))
        with open(p, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1).removeprefix(b"\xef\xbb\xbf")
    except OSError as e:
        raise ConfigError(f"cannot read {what}: {e.strerror or e}", file=str(p)) from None
    if len(raw) > MAX_FILE_BYTES:   # grew after the stat
        raise ConfigError(f"too large (over {MAX_FILE_BYTES} bytes)", file=str(p))
    try:   # line ends as a text file reads them: \r\n and a lone \r (old Mac files) are \n
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as e:   # the line, or a bad byte in a large file is a search
        head = raw[:e.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        raise ConfigError("not valid UTF-8", file=str(p), line=head.count(b"\n") + 1) from None
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES // 4 and len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise ConfigError(f"line is over {MAX_LINE_BYTES} bytes; no labelled line needs that",
                              file=str(p), line=n)
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"not valid JSON ({e.msg})", file=str(p), line=n) from None
        except (ValueError, RecursionError):
            raise ConfigError("unreadable JSON (a number too long or nesting too deep)",
                              file=str(p), line=n) from None
