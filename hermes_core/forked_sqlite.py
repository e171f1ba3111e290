"""A store inherited by a forked child: the child gets connections and locks of its own.

Why: SQLite forbids using a connection in a process ``fork()`` made from the one that opened it:
the child's copy believes it holds the parent's locks (POSIX locks are not inherited) and sees
the parent's transaction as its own, and a thread lock another thread of the parent held at the
fork stays held in the child forever. A worker pool forked from a process that had recalled a
memory (multiprocessing's default on Linux) hung on the lock, or failed its first write with
"cannot start a transaction within a transaction", or could write beside the parent's lock.

A new connection in the child is not enough: SQLite keeps a process's locks on a file in memory,
shared by its connections, and the child inherits that memory, so its new connection believed
it held the parent's SHARED lock and took none: the parent's close then saw no other user,
checkpointed and removed ``-wal`` under the child, whose later writes were lost.

So (``os.register_at_fork``): just before a fork every open store waits (at most ``WAIT_S`` or
its busy timeout) for other threads to finish with it, and keeps its connections. In the child,
every store gets new thread locks and closes what it inherited idle, which releases the child's
copy of SQLite's lock memory, so the connection the child opens next takes locks of its own.
Kept instead (never closed), the inherited connection would keep that memory, and the child's
new one would take no lock: the parent's close removed ``-wal`` under it (decision 143).
That close must never checkpoint or remove ``-wal``: it tries for an EXCLUSIVE lock first, and
won it whenever no other process held the file at that moment (the parent closed before a
stopped or slow child got to it); it then checkpointed its stale ``-wal`` and removed the
``-wal`` another process had made since, with that process's unsaved writes. So the child
closes under :func:`guard`: a read lock on the file's pending byte, of the Linux kind that
belongs to an open file rather than to a process (``F_OFD_SETLK``), which conflicts with the
child's own POSIX lock request: the EXCLUSIVE lock is refused, the close checkpoints nothing
and removes nothing. The parent waits for no child. Where that lock does not exist (not Linux)
the inherited connection is kept, as before decision 153.
A connection inherited in use (held past the wait, or in a transaction of the forking thread)
is kept here, never closed and never collected: its close would roll back in the shared
``-shm`` and could act as the last connection. A closed store is forgotten: it stays closed in
a child.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import sqlite3
import struct
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: Seconds a fork waits at most for another thread to finish with a store (or its upkeep batch)
#: before the store is left open across it, as it was before this wait existed.
WAIT_S = 10.0
#: Where SQLite takes its PENDING lock in every database file (the lock-byte page's first byte,
#: fixed by the file format: https://www.sqlite.org/fileformat2.html#the_lock_byte_page).
PENDING_BYTE = 0x40000000


class Lock(Protocol):
    """A thread lock (``threading.Lock`` or ``RLock``)."""

    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...

    def release(self) -> None: ...


class Forkable(Protocol):
    """What a store does around a fork (:func:`_before` in the parent, :func:`_in_child`)."""

    def before_fork(self) -> list[Lock]:
        """In the parent: wait for other threads' use to end; the locks taken."""
        ...

    def after_fork(self) -> list[object]:
        """New locks; the connections closed (:func:`inherited`), those in use returned, to be
        kept (never closed)."""
        ...


_LIVE: weakref.WeakSet[Forkable] = weakref.WeakSet()
#: Connections inherited from the parent: referenced so the garbage collector never closes one.
INHERITED: list[object] = []
_TAKEN: list[Lock] = []             # held by the forking thread over a fork
_FORKING = threading.Lock()         # one fork's hooks at a time: one set of locks taken


def watch(store: Forkable) -> None:
    """Give ``store`` new locks and connections in any child forked while it is alive."""
    _LIVE.add(store)


def forget(store: Forkable) -> None:
    """``store`` is closing: a fork leaves it alone (closed in the child too)."""
    _LIVE.discard(store)


def quiesce(lock: Lock, timeout_s: float) -> list[Lock]:
    """In the parent before a fork: ``lock`` taken, waiting at most ``timeout_s`` (a store's busy
    timeout) or ``WAIT_S``; the locks taken (none: in use past the wait)."""
    return [lock] if lock.acquire(timeout=min(max(timeout_s, 0.0), WAIT_S)) else []


#: Linux's ``struct flock64`` (what ``F_OFD_SETLK`` reads; ``struct flock`` on 64-bit), uapi
#: ``asm-generic/fcntl.h``, which x86-64 and arm64 use with no ``__ARCH_FLOCK64_PAD``: each
#: member's ``struct`` code and alignment (0: the offsets', the ABI's, below).
_FLOCK_FIELDS = (("h", 2), ("h", 2), ("q", 0), ("q", 0), ("i", 4))


@dataclass(frozen=True, slots=True)
class FlockLayout:
    """Where ``l_type``, ``l_whence``, ``l_start``, ``l_len`` and ``l_pid`` sit, and the size."""

    offsets: tuple[int, ...]
    size: int


def flock_layout(int64_align: int) -> FlockLayout:
    """``struct flock64`` laid out by C's rules (each member at the next multiple of its
    alignment, the size a multiple of the largest) for an ABI that aligns a 64-bit integer to
    ``int64_align``: 8 on x86-64, arm64 and 32-bit ARM (32 bytes), 4 on i386 (24). Computed, not
    taken from the running machine only, so every ABI's layout is checked on any of them (a
    layout packed by hand was right on one of them only)."""
    at, offsets, widest = 0, [], 1
    for code, align in _FLOCK_FIELDS:
        align = align or int64_align
        at = -(-at // align) * align
        offsets.append(at)
        at += struct.calcsize("=" + code)
        widest = max(widest, align)
    return FlockLayout(tuple(offsets), -(-at // widest) * widest)


#: This platform's: ctypes knows the alignment its C compiler gives a 64-bit integer.
FLOCK_LAYOUT = flock_layout(ctypes.alignment(ctypes.c_int64))


def flock_bytes(kind: int, start: int, length: int, layout: FlockLayout = FLOCK_LAYOUT) -> bytes:
    """The ``struct flock`` of a lock of ``kind`` (``fcntl.F_RDLCK`` ...) on ``length`` bytes
    from ``start`` (from the file's beginning), for ``fcntl.fcntl``; padding zero."""
    out = bytearray(layout.size)
    for (code, _), at, value in zip(_FLOCK_FIELDS, layout.offsets,
                                       (kind, os.SEEK_SET, start, length, 0), strict=True):
        struct.pack_into("=" + code, out, at, value)
    return bytes(out)


def guard(path: Path) -> int | None:
    """In a forked child: a descriptor holding an open-file read lock on ``path``'s pending byte
    (closing it releases the lock), so a connection closed meanwhile cannot take EXCLUSIVE:
    no checkpoint, no ``-wal`` removed; None where there is no such lock or no such file, or
    when another process held the byte past ``WAIT_S`` (the connection is then kept unclosed)."""
    setlk = getattr(fcntl, "F_OFD_SETLK", None)
    if setlk is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    lock = flock_bytes(fcntl.F_RDLCK, PENDING_BYTE, 1)
    deadline = time.monotonic() + WAIT_S
    while True:   # held by another process while it closes (its checkpoint), or in EXCLUSIVE mode
        try:
            fcntl.fcntl(fd, setlk, lock)
            return fd
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                os.close(fd)
                return None
        time.sleep(0.01)


def inherited(conn: sqlite3.Connection | None, quiet: bool, path: Path) -> list[object]:
    """In a forked child: ``conn``, inherited from the parent, closed under :func:`guard` if it
    was ``quiet`` (its lock taken over the fork) and in no transaction; else returned, to be
    kept."""
    if conn is None:
        return []
    if quiet and not conn.in_transaction:
        held = guard(path)
        if held is not None:
            try:
                conn.close()
                return []
            except sqlite3.Error:
                pass
            finally:
                os.close(held)
    return [conn]


def _before() -> None:
    _FORKING.acquire()
    for store in list(_LIVE):
        _TAKEN.extend(store.before_fork())


def _after_in_parent() -> None:
    try:
        while _TAKEN:
            _TAKEN.pop().release()
    finally:
        _FORKING.release()


def _in_child() -> None:
    global _FORKING
    _FORKING = threading.Lock()
    _TAKEN.clear()                      # the parent's; every store gets new locks
    for store in list(_LIVE):
        INHERITED.extend(c for c in store.after_fork() if c is not None)


os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_in_child)
