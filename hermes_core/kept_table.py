"""A small JSON table the home keeps beside its data for every process on that home (what
deployments answered as, each model's billed-token ratio), changed by one read-merge-write under a
lock file beside it.

Why one helper: each store merged its news into the file as it stood, but only one of them held a
lock while doing so; the other's read-merge-write could interleave with a second process's and the
last rename won, the other's entry lost for good. Both now go through :func:`update`:

* **one lock file beside the table** (``.NAME.lock``, ``filelock``: ``flock`` on Unix, so a holder
  killed with ``kill -9`` frees it at once), held for a read, a merge and a rename: milliseconds;
* **never a wait on an event loop**: a thread running an event loop (an async turn recording its
  reply) tries the lock once; another process holding it costs this write, and the caller keeps
  its news for its next one. Elsewhere a writer waits up to :data:`LOCK_WAIT` (the holder is
  another process's rename); :func:`lock_wait` decides;
* **never in the way**: a lock that cannot be taken (busy, a folder, a read-only home) or a write
  the disk refuses writes nothing, said once per table and folder (a busy lock at debug level):
  the caller keeps what it knows in memory. The home itself is never created;
* **a newer version's table is left as it is** (:class:`Newer`), never replaced by this one's;
* **news a busy lock kept out is written at exit**: a store that has some says so
  (:func:`pending`), and at interpreter exit each is asked to write it, waiting at most
  :data:`EXIT_WAIT` in all and never raising: a process that stopped before its next write lost
  it. A forked child leaves the news it inherited to its parent at its exit;
* **the lock lets in whoever may replace the table**: its mode gives write to the group (others)
  when the folder does, not sticky (:func:`lock_mode`; one made before is given them by its
  owner); made with the umask's, a home shared by one group refused the lock to all but the user
  who made it, who could all rename the table.
"""

from __future__ import annotations

import atexit
import logging
import os
import stat
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from filelock import FileLock
from filelock import Timeout as LockTimeout

from hermes_core.atomic_write import UMASK, make_folders, read_kept, refused, write_cache
from hermes_core.event_loop import on_event_loop  # where no call may wait on a lock

T = TypeVar("T")

#: Seconds a writer off the event loop waits for another's read, merge and rename (milliseconds).
LOCK_WAIT = 0.5
#: Seconds the flush at interpreter exit waits, for all the stores with news kept out together.
EXIT_WAIT = 1.0

log = logging.getLogger("hermes_core.kept_table")


def lock_wait(on_loop: bool, wait: float = LOCK_WAIT) -> float:
    """Seconds to wait for the lock: none on an event loop (one try; the write comes later),
    ``wait`` elsewhere."""
    return 0.0 if on_loop else wait


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file beside ``path``: hidden, named after it."""
    p = Path(path)
    return p.with_name(f".{p.name}.lock")


def lock_mode(folder_mode: int, umask: int = UMASK) -> int:
    """The lock file's permission bits, in a folder of ``folder_mode``: a plain file's under
    ``umask``, with write for the group and for others where the folder gives it to them (they
    may replace the table by a rename, so the lock grants them nothing more; without it they
    could not open the lock and never wrote). A sticky folder lets no one else replace the table:
    the umask's mode only."""
    mode = 0o666 & ~umask
    if not folder_mode & stat.S_ISVTX:
        if folder_mode & stat.S_IWGRP:
            mode |= 0o060
        if folder_mode & stat.S_IWOTH:
            mode |= 0o006
    return mode


class Newer(ValueError):
    """A table written by a newer hermes_core (a version this one does not know): read as nothing
    and never written over, so the newer process's entries stay and two versions on one home do
    not replace each other's file at every write. A parser raises it."""


@dataclass(frozen=True)
class Update(Generic[T]):
    """What :func:`update` did: ``table`` the table written (None: not written); ``busy`` when it
    was not because another writer held the lock (worth trying again at the next occasion; a
    refusing disk or a newer version's file is not)."""
    table: T | None
    busy: bool = False


def update(path: str | os.PathLike[str], max_bytes: int, parse: Callable[[Any], T],
           merge: Callable[[T | None], T], dump: Callable[[T], bytes], what: str, *,
           logger: logging.Logger, warn: Callable[[str], object] | None = None,
           wait: float | None = None) -> Update[T]:
    """Merge into the table at ``path`` under its lock: read it (``read_kept`` with ``parse``,
    ``warn``; None when absent or not ours), ``merge`` it with the caller's news, write ``dump`` of
    the result (atomically, no fsync: a cache). Not written: the lock busy or refused, the disk
    refusing, the file a newer version's (``parse`` raising :class:`Newer`; see the module doc).
    ``wait``: seconds for the lock, by default :func:`lock_wait` of :func:`on_event_loop`. Makes
    the table's folder, never more."""
    if not make_folders(path, 1, what, logger=logger):
        return Update(None)
    seconds = lock_wait(on_event_loop()) if wait is None else wait
    newer: list[Newer] = []

    def ours(data: Any) -> T:
        try:
            return parse(data)
        except Newer as e:
            newer.append(e)
            raise

    try:
        mode = lock_mode(os.stat(Path(path).parent).st_mode)
        with FileLock(lock_path(path), timeout=seconds, blocking=seconds > 0, mode=mode):
            if mode != 0o666 & ~UMASK:
                _grant(lock_path(path), mode)
            kept = read_kept(path, max_bytes, ours, warn)
            if newer:
                logger.debug("%s: %s is a newer version's (%s); left as it is", what, path,
                             newer[0])
                return Update(None)
            table = merge(kept)
            if not write_cache(path, dump(table), what, logger=logger, durable=False):
                return Update(None)
    except LockTimeout:   # another writer holds it: this write comes later
        logger.debug("%s: %s is busy; written later", what, lock_path(path))
        return Update(None, busy=True)
    except OSError as e:   # the lock file cannot be opened (a folder, refused, read-only)
        refused(what, lock_path(path), e, logger)
        return Update(None)
    return Update(table)


def _grant(lock: Path, mode: int) -> None:
    """Add ``mode``'s bits to a lock file made without them (by a release before
    :func:`lock_mode`: FileLock gives a mode only to the file it makes, so a group's home kept
    refusing the group for good). Only its owner can; never through a link (another user of the
    folder may have planted one at another file of ours), never raises."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        now = os.fstat(fd)
        if (stat.S_ISREG(now.st_mode) and now.st_mode & mode != mode
                and now.st_uid == os.geteuid()):
            os.fchmod(fd, stat.S_IMODE(now.st_mode) | mode)
    except OSError as e:
        log.debug("%s: its mode is left as it is (%s)", lock, e)
    finally:
        os.close(fd)


class Pending(Protocol):
    """A store holding news a busy lock kept out of its table."""

    def flush_pending(self, wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Write what is held, waiting at most ``wait`` seconds by ``clock`` for all its locks
        together."""


_pending: weakref.WeakSet[Pending] = weakref.WeakSet()
_pending_lock = threading.Lock()
_at_exit = False


def pending(store: Pending) -> None:
    """``store`` holds news a busy lock kept out: it is asked to write it at interpreter exit
    (held weakly: a store dropped before then takes its news with it, as before)."""
    global _at_exit
    with _pending_lock:
        _pending.add(store)
        if not _at_exit:
            _at_exit = True
            atexit.register(flush_pending)


def _forget_in_child() -> None:
    """In a forked child: the stores noted are the parent's, their news the parent's to write (the
    child's copy, written at its exit, replaced what the parent wrote since); the lock is new (one
    another thread held at the fork stayed held, and the child's exit waited on it forever). A
    store the child itself finds busy is noted again."""
    global _pending, _pending_lock
    _pending, _pending_lock = weakref.WeakSet(), threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def flush_pending(wait: float = EXIT_WAIT, clock: Callable[[], float] = time.monotonic) -> None:
    """Ask each store with news kept out to write it, ``wait`` seconds in all by ``clock`` (each
    store is given what is left, for all its waits together; a lock still busy then keeps it out
    for good: a cache, learned again); never raises: it runs at exit."""
    with _pending_lock:
        stores = list(_pending)
        _pending.clear()
    end = clock() + wait
    for store in stores:
        left = end - clock()
        if left <= 0:
            log.debug("kept tables: the exit's wait is spent; %d stores' news left out",
                      len(stores))
            return
        try:
            store.flush_pending(left, clock)
        except Exception as e:   # at exit nobody can act on it: said, not raised
            log.debug("kept tables: a store's news was not written at exit (%s)", e)
