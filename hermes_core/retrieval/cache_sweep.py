"""Removing a cache folder's files that no process has used for a long time.

Some caches keep one file per *key* rather than one file per folder: the catalog cache keeps a
file per catalog path (``catalog_store``: ~2.5x the catalog's size), so a catalog no longer
configured left its file behind for good. Which files are still wanted cannot be told from one
process: several processes (one home, or homes sharing a cache folder) may each serve another
catalog. So a file's modification time is its last use: a reader marks the file it is about to
read (:func:`touch`), a writer's atomic replace marks it too, and a sweep removes only files of
the cache's own naming that are not among the sweeping process's own and were not used for
:data:`MAX_IDLE_DAYS`. A leftover temporary file of a writer that crashed goes the same way.
A name is not proof: a cache folder may be the user's own (a project folder given as the cache),
where ``catalogs/`` or ``calibration/`` can hold their arrays named by a hash. So a file is
removed only when its contents show the cache's writer made it (:func:`npz_holding`: the arrays
that writer always stores, read from the zip's directory, not its data).

Removing is safe against a concurrent reader by construction: a cache file is never changed in
place (written whole under a temporary name, then renamed), so a reader that opened it before
the unlink reads it whole (POSIX keeps an open file's data), and one that comes after finds no
file and computes the result again, as for a first start. The worst a race costs (a process
that marks its file between the sweep's check and its unlink) is that computation, never a
wrong or mixed read. Where an open file cannot be removed (Windows) the unlink fails and the
file is kept.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import zipfile
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

#: a model's files are filed under the first hex digits of the SHA-256 of its id: the vector
#: snapshot (``vector_store.snapshot_path``) and the per-vector folder (``dense.EmbeddingCache``)
#: write it, ``cache_upkeep`` sweeps by it; one place, so neither can change alone
MODEL_DIGITS = 16
MODEL_NAME = rf"[0-9a-f]{{{MODEL_DIGITS}}}"


def model_name(model_id: str) -> str:
    """What a model's cache files are named by (see :data:`MODEL_DIGITS`)."""
    return hashlib.sha256(model_id.encode()).hexdigest()[:MODEL_DIGITS]


#: a file unused this long, and of no catalog the sweeping process serves, is removed
MAX_IDLE_DAYS = 30.0
DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class CacheFile:
    """One file of a cache folder, by name, with the time it was last used (written or marked)."""

    name: str
    used: float


def stale(files: Iterable[CacheFile], keep: Collection[str], owned: Callable[[str], bool], now: float,
          max_idle_days: float = MAX_IDLE_DAYS) -> list[str]:
    """The names among ``files`` to remove: the cache's own (``owned``), not in ``keep`` (the
    sweeping process's), and unused for more than ``max_idle_days`` before ``now``."""
    cutoff = now - max_idle_days * DAY_SECONDS
    return sorted(f.name for f in files if owned(f.name) and f.name not in keep and f.used < cutoff)


def touch(path: Path, now: float) -> None:
    """Mark ``path`` as used at ``now`` (before reading it), so no sweep takes it as idle; a
    missing file or a folder that refuses is no error (the read that follows will tell). Only
    a file's owner may set an explicit time: a user sharing the folder who may write the file
    sets the current time instead, so another user's sweep does not take it as idle."""
    try:
        os.utime(path, (now, now), follow_symlinks=False)
    except PermissionError:
        try:
            os.utime(path, None, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass
    except (OSError, NotImplementedError):   # absent, read-only, or no lutimes on this system
        pass


def sweep(folder: Path, keep: Collection[str], owned: Callable[[str], bool], now: float,
          max_idle_days: float = MAX_IDLE_DAYS, *, made: Callable[[Path], bool]) -> list[str]:
    """Remove the files of ``folder`` that :func:`stale` names and ``made`` says the cache's
    writer made (regular files only, never one behind a link); the names removed. A file used
    again since it was listed is kept; a file that cannot be removed (gone, in use, read-only
    folder) is skipped without a word."""
    try:
        with os.scandir(folder) as it:
            files = [CacheFile(e.name, e.stat(follow_symlinks=False).st_mtime) for e in it
                     if e.is_file(follow_symlinks=False)]
    except OSError:   # no folder yet, or unreadable: nothing to sweep
        return []
    removed: list[str] = []
    for name in stale(files, keep, owned, now, max_idle_days):
        path = folder / name
        try:
            st = os.lstat(path)   # used again since it was listed: kept
            if not stat.S_ISREG(st.st_mode) or not stale([CacheFile(name, st.st_mtime)], keep, owned,
                                                          now, max_idle_days) or not made(path):
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(name)
    if removed:
        log.info("removed %d cache file(s) of %s unused for %g days or more", len(removed), folder,
                 max_idle_days)
    return removed


def named(pattern: str) -> Callable[[str], bool]:
    """``owned`` for :func:`stale`: a file named by ``pattern`` (a full match), or a temporary
    file ``atomic_write`` made for one (``.<name>.<random>.tmp``)."""
    own = re.compile(pattern)
    temp = re.compile(rf"\.(?:{pattern})\.[^/]+\.tmp")
    return lambda name: bool(own.fullmatch(name) or temp.fullmatch(name))


def npz_holding(*arrays: str) -> Callable[[Path], bool]:
    """``made`` for :func:`sweep`: an ``.npz`` that holds every one of ``arrays`` (what the
    cache's writer always stores: a sealed file's ``header`` and ``digest``), told from the zip's
    directory alone; or a temporary file (named so by :func:`named`), which a crash left
    unfinished and so without a directory. A file that cannot be read is not the cache's, nor is
    one that became a link (whose target would vouch for it) or a FIFO (opened without blocking)
    since it was listed."""
    want = {f"{a}.npy" for a in arrays}

    def holds(f: BinaryIO) -> bool:
        try:
            with zipfile.ZipFile(f) as z:
                return want <= set(z.namelist())
        except (OSError, zipfile.BadZipFile, ValueError):
            return False

    return _temporary_or(holds)


def _temporary_or(test: Callable[[BinaryIO], bool]) -> Callable[[Path], bool]:
    """``made`` for :func:`sweep`: a temporary file (a crashed writer's), or a regular file,
    opened without following a link or blocking on a FIFO, that passes ``test``."""
    def made(path: Path) -> bool:
        if path.name.endswith(".tmp"):
            return True
        fd = _open_regular(path)
        if fd is None:
            return False
        with open(fd, "rb") as f:
            return test(f)

    return made


def _open_regular(path: Path) -> int | None:
    """A descriptor of ``path`` when it is a regular file, opened without following a link (whose
    target would vouch for it) or blocking on a FIFO; None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def starting_with(pattern: bytes) -> Callable[[Path], bool]:
    """``made`` for :func:`sweep`: a regular file whose first bytes match ``pattern`` (what the
    cache's writer always writes first: an ``.npy`` header of a float32 vector, a JSON record's
    first keys); or a temporary file (named so by :func:`named`), which a crash left unfinished."""
    want = re.compile(pattern, re.DOTALL)

    def starts(f: BinaryIO) -> bool:
        try:
            return want.match(f.read(4096)) is not None
        except OSError:
            return False

    return _temporary_or(starts)

