"""Write a file so that readers see the old one or the new one, never a mix: the one way the
package replaces a file (caches, MEMORY.md, transcripts, a route classifier).

* **A temp file of its own** beside the target (``tempfile.mkstemp`` in the same folder): two
  threads of one process share a pid, so a pid-named temp let one thread rename the other's
  half-written file into place, or find its own temp already gone (``FileNotFoundError``).
  The same folder keeps ``os.replace`` a rename on one filesystem.
* **fsync the file, then the folder** where the platform allows it: without the first, a crash
  right after the rename can leave an empty file under the final name (delayed allocation); without
  the second, the rename itself may not survive.
* **No temp left behind**: any failure (disk full, permission, an exception from the caller's
  writer, Ctrl-C) removes the temp file; the old file is untouched.

:func:`write_atomic` raises ``OSError`` (a user's file must not fail silently);
:func:`write_cache` is for what can be computed again: a read-only or full disk costs "not
cached", said once per cache in the log, and never an exception out of a turn.
:func:`read_cache` is the matching reader: a cache path turned into a FIFO, a device or a
huge file is refused with ``OSError`` (so recomputed) instead of blocking or filling memory.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from hermes_core.forked import child_lock

log = logging.getLogger(__name__)

T = TypeVar("T")

#: What a writer puts in the file: the bytes themselves, or a function writing to the open file
#: (``np.save``, ``np.savez``: large arrays are not copied into one bytes object first).
Content = bytes | Callable[[BinaryIO], object]

_warned: set[str] = set()
# free in a forked child (one a thread held at the fork hung the child's first use)
_warned_lock = child_lock(threading.Lock())


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable; a no-op where folders cannot be opened (Windows) or
    synced (some network filesystems): the file's own fsync already happened."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], content: Content, *, mode: int | None = None,
                 durable: bool = True, check: Callable[[], object] | None = None) -> None:
    """Replace ``path`` by ``content`` atomically (see the module docstring); creates the folder.

    ``mode``: the new file's permission bits (default 0o666 less the umask's, like a plain
    ``open``; ``mkstemp`` alone would make it 0o600). ``durable=False`` skips both fsyncs: for a
    cache of many small files, each checked when read (a vector per skill), where a sync costs
    more than the file (about 14 ms against 0.6 ms on this project's disk) and a file lost to a
    crash is only computed again. ``check`` is called last before the rename: what it raises
    leaves the old file in place (a caller that read the file makes sure no other writer moved it
    meanwhile, as late as it can). Raises ``OSError``, leaving no temp file and the old file as
    it was."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(content, bytes):
                f.write(content)
            else:
                content(f)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~UMASK)
        if check is not None:
            check()
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _sync_folder(p.parent)


def make_folders(path: str | os.PathLike[str], folders: int, what: str, *,
                 logger: logging.Logger = log) -> bool:
    """Make at most ``folders`` missing folders above the file ``path`` (a home's ``cache/`` and
    its sub-folder), never more: a home that is not there stays so, said at debug level only.
    For a writer that needs the folder before :func:`write_cache` (a lock file beside the file)."""
    made = Path(path).parents[:folders]
    try:
        for folder in reversed(made):
            folder.mkdir(exist_ok=True)
    except OSError as e:
        logger.debug("%s: cannot make %s (%s)", what, folder, e.strerror or e)
        return False
    return True


def write_cache(path: str | os.PathLike[str], content: Content, what: str, *,
                logger: logging.Logger = log, durable: bool = True, folders: int = 0) -> bool:
    """:func:`write_atomic` for a cache: True when written; False when the disk refused (read-only,
    full, a file where the folder should be), logged to ``logger`` as a warning the first time for
    ``what`` (e.g. "lexicon cache") in that folder and at debug level after, since a cache that
    cannot be written fails the same way for every entry. ``folders``: how many of the folders
    above the file to make when missing (a home's ``cache/`` and its sub-folder), never more: a
    home that is not there stays so, which is said at debug level only."""
    if not make_folders(path, folders, what, logger=logger):
        return False
    try:
        write_atomic(path, content, durable=durable)
    except OSError as e:
        refused(what, path, e, logger)
        return False
    return True


def refused(what: str, path: str | os.PathLike[str], error: OSError,
            logger: logging.Logger = log) -> None:
    """Say that the disk refused ``path`` (the file or its lock file) for ``what``: a warning the
    first time for ``what`` in that folder, at debug level after (it fails the same way again)."""
    key = f"{what}\x00{Path(path).parent}"
    with _warned_lock:
        first = key not in _warned
        _warned.add(key)
    logger.log(logging.WARNING if first else logging.DEBUG,
               "%s: cannot write %s (%s); kept in memory only, computed again next time",
               what, path, error.strerror or error)


#: No cache file the package writes comes near this (the CC-CEDICT lexicon, the largest, is ~10 MB).
MAX_CACHE_BYTES = 256_000_000


class UntrustedFile(OSError):
    """A file that others than this user (and root) may have written: see :func:`not_private`."""


def not_private(st: os.stat_result) -> str | None:
    """Why a file this user's process trusts to spare it work (a scan verdict: a line there lets
    a text skip the injection scan) may hold someone else's lines, or None: owned by another user
    than this one or root, or writable by its group or others. Windows has no such modes: None."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:
        return None
    if st.st_uid not in (geteuid(), 0):
        return f"owned by uid {st.st_uid}"
    if st.st_mode & 0o022:
        return f"writable by {'others' if st.st_mode & 0o002 else 'its group'}"
    return None


def read_cache(path: str | os.PathLike[str], max_bytes: int = MAX_CACHE_BYTES, *,
               private: bool = False, appended: bool = False) -> bytes:
    """A cache file's bytes. ``OSError`` (``FileNotFoundError`` when absent) for anything a reader
    should recompute rather than read: opened non-blocking, so a FIFO with no writer does not hang
    the turn; not a regular file (a FIFO, ``/dev/zero``); over ``max_bytes``; grown since its size
    was read (written in place, never one of ours). One byte past the size is asked for, not past
    the limit: a read sets aside what it is asked for before reading. ``private``: also
    :class:`UntrustedFile` for a file someone else may have written (:func:`not_private`, checked
    on the descriptor read, so a file swapped in after the check is not the one read).
    ``appended``: a log other processes append whole lines to in place (the home's scan logs, one
    ``write`` a filing): grown since the stat, it is read up to the last line end within its size
    then, the rest being a filing under way that the next read finds."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if private and (why := not_private(st)) is not None:
            raise UntrustedFile(errno.EPERM, why, str(path))
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{st.st_size} bytes (limit {max_bytes})", str(path))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(st.st_size + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > st.st_size and appended:   # another process filed meanwhile
        return data[:data.rfind(b"\n", 0, st.st_size) + 1]
    if len(data) > st.st_size:   # grew after the stat
        raise OSError(errno.EFBIG, f"grew past {st.st_size} bytes while read", str(path))
    return data


def read_kept(path: str | os.PathLike[str], max_bytes: int, parse: Callable[[Any], T],
              warn: Callable[[str], object] | None) -> T | None:
    """A small JSON file the package keeps in the home (learned refusals, what deployments
    answered as), parsed by ``parse``: None when absent; None too when it cannot be read (a FIFO,
    a folder, too big, refused) or is not one of ours (``parse`` raising ValueError, TypeError or
    KeyError, bytes that are not UTF-8 JSON), with ``warn`` told why (the caller names the file
    and what is lost). Nothing it finds there raises: such a file is never in the way."""
    try:
        raw = read_cache(path, max_bytes)
    except FileNotFoundError:
        return None
    except OSError as e:
        reason = f"cannot be read ({e.strerror or e})"
    else:
        try:
            return parse(json.loads(raw.decode("utf-8")))
        except (ValueError, TypeError, KeyError, RecursionError) as e:
            reason = f"not a file of ours ({str(e)[:80] or type(e).__name__})"
    if warn is not None:
        warn(reason)
    return None


def _read_umask() -> int:
    """The process's umask, read once when the module is imported (a process does not change its
    umask while it writes files). Linux states it in ``/proc/self/status``; elsewhere it is read by
    setting it and putting it back, which for that instant would give a file another thread
    creates the wrong mode, so that is the fallback only."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


#: The process's umask (see :func:`_read_umask`): a plain new file's mode is ``0o666 & ~UMASK``.
UMASK = _read_umask()
