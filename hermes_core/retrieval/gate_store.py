"""A cache file whose contents are checked before they are trusted: arrays and a JSON header,
sealed by a digest over both (``gate_state`` keeps the dense gate's update state in one).

A calibration read from its cache is checked by shape and finiteness, and a wrong one costs a
mis-set threshold at worst. The update state is different: it is the *input* of every later
update, so a flipped bit in a kept maximum or a skill id would be carried into each calibration
after it, silently. Hence a SHA-256 over every array (name, dtype, shape, bytes) and the header,
stored beside them and compared on read; a file of another layout version, torn, truncated,
flipped, of another program or not a regular file reads as None with one warning, and the
caller computes the state again. Written through the package's one atomic cache writer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.npz import read_npz

log = logging.getLogger(__name__)

T = TypeVar("T")
#: what a decoder raises for contents that passed the digest yet do not add up (a writer with a
#: bug, another program): the file is ignored with one warning, never trusted
INCONSISTENT: tuple[type[Exception], ...] = (KeyError, ValueError, TypeError, IndexError, UnicodeDecodeError)


def text_blob(text: str) -> np.ndarray:
    """``text`` as a 1-d uint8 array of its UTF-8 bytes, to be stored in a sealed file (a numpy
    string array holds four bytes a character)."""
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def blob_text(blob: np.ndarray) -> str:
    """The text :func:`text_blob` stored; TypeError for an array of another kind."""
    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise TypeError("text blob")
    return blob.tobytes().decode("utf-8", "surrogatepass")


def texts_blob(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as one :func:`text_blob` and each one's length in characters (a separator
    could occur in a value; a length cannot mislead)."""
    return text_blob("".join(values)), np.asarray([len(v) for v in values], dtype=np.int64)


def blob_texts(blob: np.ndarray, lengths: np.ndarray) -> list[str]:
    """The values :func:`texts_blob` stored; ValueError when the lengths do not cover the text."""
    text = blob_text(blob)
    if (lengths.ndim != 1 or lengths.dtype != np.int64 or (lengths < 0).any()
            or int(lengths.sum()) != len(text)):
        raise ValueError("text lengths do not add up")
    ends = np.cumsum(lengths).tolist()
    return [text[a:b] for a, b in zip([0, *ends][:len(ends)], ends, strict=True)]


def _digest(header: str, arrays: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256(header.encode("utf-8", "surrogatepass"))
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\x00{name}\x00{a.dtype.str}\x00{a.shape}\x00".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write_sealed(path: Path, version: int, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                 what: str) -> bool:
    """Write ``arrays`` and ``header`` (JSON-able) as one file at ``path`` (atomic replace); a
    disk that refuses costs only the cache (said once in the log), never an exception. Not
    synced: it is written on every catalog change, and what a crash could leave (an empty or torn
    file under the name) fails its digest and is computed again."""
    text = json.dumps({**header, "version": version}, ensure_ascii=False)
    payload: dict[str, Any] = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    # as UTF-8 bytes: a numpy string array holds four bytes a character
    payload.update(header=text_blob(text), digest=np.asarray(_digest(text, payload)))
    return write_cache(path, lambda f: np.savez(f, **payload), what, logger=log, durable=False)


def read_sealed(path: Path, version: int, what: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The header and arrays written at ``path`` by :func:`write_sealed` under ``version``; None
    when there is no file, and None with a warning when it is unreadable, of another version or
    does not match its digest."""
    if not os.path.lexists(path):
        return None
    try:
        data = read_cache(path)   # a FIFO: not read
        z = read_npz(data)
        text, digest = blob_text(z["header"]), str(z["digest"][()])
        arrays = {name: v for name, v in z.items() if name not in ("header", "digest")}
        header = json.loads(text)
        if not isinstance(header, dict):
            raise TypeError("header")
    except Exception as e:   # torn, flipped, foreign: computed again, never fatal
        log.warning("%s %s is unreadable (%s); computing it again", what, path, type(e).__name__)
        return None
    if header.get("version") != version:
        log.warning("%s %s is of another version (%r, this one reads %d); computing it again",
                    what, path, header.get("version"), version)
        return None
    if _digest(text, arrays) != digest:
        log.warning("%s %s does not match its digest (changed on disk); computing it again", what, path)
        return None
    return header, arrays


def read_checked(path: Path, version: int, what: str, *, ours: Callable[[Mapping[str, Any]], bool],
                 decode: Callable[[Mapping[str, Any], dict[str, np.ndarray]], T], again: str) -> T | None:
    """What ``decode`` makes of the file :func:`write_sealed` left at ``path``, or None: no file;
    one unreadable, of another ``version`` or not matching its digest (one warning, from
    :func:`read_sealed`); one whose header is not ``ours`` (another catalog, key or program's
    code: an upgrade or another home's, not damage, so said at debug level only); one whose
    arrays ``decode`` finds inconsistent (one warning naming the file and ending with ``again``,
    what the caller does instead). The one gate every sealed cache's reader goes through, so
    none of them trusts a file the others would refuse."""
    read = read_sealed(path, version, what)
    if read is None:
        return None
    header, arrays = read
    if not ours(header):
        log.debug("%s %s was made for another catalog or by other code; %s", what, path, again)
        return None
    try:
        return decode(header, arrays)
    except INCONSISTENT as e:
        log.warning("%s %s is inconsistent (%s); %s", what, path, e, again)
        return None
