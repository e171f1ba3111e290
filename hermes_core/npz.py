"""Reading an ``.npz`` archive of ours, or one ``.npy`` array: under the AST guard, no pickles.

``np.load`` of an archive parses nothing yet; each array's ``.npy`` header is parsed with
``ast.literal_eval`` when the array is taken out. Those reads happen on warm-up threads (the query
adapter, the injection scorers, the retrieval caches), so every one must run under
:func:`~hermes_core.ast_guard.holding_ast` (CPython gh-106905). Reading the whole archive in one
guarded block, here, keeps callers from taking an array out after the block ends. A single
``.npy`` (the embedding cache's vectors) has its header parsed inside ``np.load``; the same call
on an archive opens it instead, so :func:`read_npy` refuses that (a stray file under the name).
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from hermes_core.ast_guard import holding_ast


def read_npz(source: str | os.PathLike[str] | bytes) -> dict[str, np.ndarray[Any, Any]]:
    """Every array of the archive at ``source`` (a path, or the archive's bytes), by name.

    Raises as opening or reading it does (``OSError``, ``KeyError``, ``zipfile.BadZipFile``, ...);
    a pickled array (``allow_pickle=False``) or a file holding one bare array instead of an
    archive is a ``ValueError``."""
    opened = io.BytesIO(source) if isinstance(source, bytes) else source
    with holding_ast():
        loaded = np.load(opened, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError(f"{_named(source)} is not an .npz archive (one bare array)")
        with loaded as z:
            return {name: z[name] for name in z.files}


def read_npy(source: str | os.PathLike[str] | bytes) -> np.ndarray[Any, Any]:
    """The one array of the ``.npy`` file at ``source`` (a path, or the file's bytes).

    Raises as opening or reading it does; a pickled array, or an ``.npz`` archive where one array
    belongs, is a ``ValueError`` (the archive closed unread). So is a header holding a backslash
    (a flipped byte in a cache file): numpy's ``ast.literal_eval`` would print Python's "invalid
    escape sequence" warning for it before refusing it, so it is refused unparsed."""
    if b"\\" in _header(source):
        raise ValueError(f"{_named(source)} is damaged: its .npy header holds a backslash, "
                         "which no header numpy writes has")
    opened = io.BytesIO(source) if isinstance(source, bytes) else source
    with holding_ast():
        loaded = np.load(opened, allow_pickle=False)
    if not isinstance(loaded, np.ndarray):
        loaded.close()
        raise ValueError(f"{_named(source)} is an .npz archive, not one .npy array")
    return loaded


_MAGIC = b"\x93NUMPY"
_HEAD = 12 + 10_000   # magic, version and length, then numpy's largest header read by default


def _header(source: str | os.PathLike[str] | bytes) -> bytes:
    """The header text of the ``.npy`` at ``source`` (empty when it starts as no ``.npy`` does)."""
    if isinstance(source, bytes):
        head = source[:_HEAD]
    else:
        with open(source, "rb") as f:
            head = f.read(_HEAD)
    if not head.startswith(_MAGIC) or len(head) < 10:
        return b""
    start = 10 if head[6] == 1 else 12   # version 1 counts the header in two bytes, later in four
    return head[start:start + int.from_bytes(head[8:start], "little")]


def _named(source: str | os.PathLike[str] | bytes) -> str:
    return "the bytes given" if isinstance(source, bytes) else os.fspath(source)
