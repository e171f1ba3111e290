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

So (``os.register_at_fork``), just before a fork every open store waits (at most ``WAIT_S`` or
its busy timeout) for other threads to finish with it and closes its connections, which its next
use reopens: the child inherits no SQLite state of the file. In the child, every store drops
what it inherited: new thread locks, no connection (the next use opens one;
:class:`~.store.SessionStore` and :class:`~.upkeep.Upkeep` do). A connection the parent could not
close (held past the wait, or in a transaction of the forking thread) is kept here, never closed
and never collected: closing it from the child would run SQLite's close on the parent's file
handles and locks (a connection that believes it is the last one checkpoints and may remove
``-wal``). A closed store is forgotten: it stays closed in a child.
"""

from __future__ import annotations

import os
import sqlite3
import weakref
from typing import Protocol

#: Seconds a fork waits at most for another thread to finish with a store (or its upkeep batch)
#: before the store is left open across it, as it was before this wait existed.
WAIT_S = 10.0


class Lock(Protocol):
    """A thread lock (``threading.Lock`` or ``RLock``)."""

    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...

    def release(self) -> None: ...


class Forkable(Protocol):
    """What a store does around a fork (:func:`_before` in the parent, :func:`_in_child`)."""

    def before_fork(self) -> list[Lock]:
        """In the parent: close the connections unless in use past the wait; the locks taken."""
        ...

    def after_fork(self) -> list[object]:
        """Drop locks and connections; return the connections, to be kept (never closed)."""
        ...


_LIVE: weakref.WeakSet[Forkable] = weakref.WeakSet()
#: Connections inherited from the parent: referenced so the garbage collector never closes one.
INHERITED: list[object] = []
_TAKEN: list[Lock] = []             # held by the forking thread over a fork


def watch(store: Forkable) -> None:
    """Give ``store`` new locks and connections in any child forked while it is alive."""
    _LIVE.add(store)


def forget(store: Forkable) -> None:
    """``store`` was closed: a fork leaves it alone (closed in the child too)."""
    _LIVE.discard(store)


def quiesce(lock: Lock, conn: sqlite3.Connection | None,
            timeout_s: float) -> tuple[list[Lock], sqlite3.Connection | None]:
    """In the parent before a fork: ``lock`` taken (waiting at most ``timeout_s``, a store's busy
    timeout, or ``WAIT_S``) and ``conn`` closed unless in a transaction (the forking thread's
    own); the locks taken and the connection left open (None: closed, the next use opens one)."""
    if not lock.acquire(timeout=min(max(timeout_s, 0.0), WAIT_S)):
        return [], conn
    try:                 # the lock is released after the fork whatever happens here
        if conn is not None and not conn.in_transaction:
            conn.close()
            conn = None
    except sqlite3.Error:
        pass
    return [lock], conn


def _before() -> None:
    for store in list(_LIVE):
        _TAKEN.extend(store.before_fork())


def _after_in_parent() -> None:
    while _TAKEN:
        _TAKEN.pop().release()


def _in_child() -> None:
    _TAKEN.clear()                      # the parent's; every store gets new locks
    for store in list(_LIVE):
        INHERITED.extend(c for c in store.after_fork() if c is not None)


os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_in_child)
