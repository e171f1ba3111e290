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
That close cannot checkpoint or remove ``-wal``: it needs an EXCLUSIVE lock, and the parent's
connection holds its SHARED lock (WAL mode keeps it while a connection is open); the POSIX locks
it releases are the child's, none. For that to hold, the parent must not close first (its close
may remove ``-wal``, leaving the child a stale one to checkpoint by another process's index):
each child says over a pipe when its stores are closed, and a store's close in the parent
(:func:`settle`, also when a store is collected unclosed) waits for every child forked before,
at most ``WAIT_S``. The fork and the parent's next use cost nothing more; decision 153 measured
the checkpoint and reopen the parent paid before.
A connection inherited in use (held past the wait, or in a transaction of the forking thread)
is kept here, never closed and never collected: its close would roll back in the shared
``-shm`` and could act as the last connection. A closed store is forgotten: it stays closed in
a child.
"""

from __future__ import annotations

import os
import select
import sqlite3
import threading
import time
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
_PIPE: list[int] = []               # read, write: the child says its stores are closed
_PENDING: list[int] = []            # read ends of children forked before, not yet heard from
_FORKING = threading.RLock()        # a store collected during a fork's hook settles in it


def watch(store: Forkable) -> None:
    """Give ``store`` new locks and connections in any child forked while it is alive; a store
    collected unclosed settles first, as its close would (:func:`settle`)."""
    _LIVE.add(store)
    weakref.finalize(store, settle)


def forget(store: Forkable) -> None:
    """``store`` is closing: a fork leaves it alone (closed in the child too), and children
    forked before have closed their copies of its connections first (:func:`settle`)."""
    _LIVE.discard(store)
    settle()


def quiesce(lock: Lock, timeout_s: float) -> list[Lock]:
    """In the parent before a fork: ``lock`` taken, waiting at most ``timeout_s`` (a store's busy
    timeout) or ``WAIT_S``; the locks taken (none: in use past the wait)."""
    return [lock] if lock.acquire(timeout=min(max(timeout_s, 0.0), WAIT_S)) else []


def inherited(conn: sqlite3.Connection | None, quiet: bool) -> list[object]:
    """In a forked child: ``conn``, inherited from the parent, closed if it was ``quiet`` (its
    lock taken over the fork) and in no transaction; else returned, to be kept."""
    if conn is None:
        return []
    if quiet and not conn.in_transaction:
        try:
            conn.close()
            return []
        except sqlite3.Error:
            pass
    return [conn]


def settle() -> None:
    """Before a store's connection closes in the parent: every child forked before has closed
    what it inherited (said on its pipe, or exited), waiting at most ``WAIT_S`` for all."""
    with _FORKING:
        _reap(WAIT_S)


def _reap(timeout_s: float) -> None:
    """Close the pipes of children that have answered, waiting at most ``timeout_s`` for all;
    those still silent past it are given up (as a store left open across a fork was)."""
    deadline = time.monotonic() + timeout_s
    while _PENDING:
        try:
            ready, _, _ = select.select(list(_PENDING), [], [],
                                        max(deadline - time.monotonic(), 0.0))
        except (OSError, ValueError):      # a descriptor closed under us: nothing to wait for
            ready = list(_PENDING)
        late = not ready and time.monotonic() >= deadline
        for fd in (list(_PENDING) if late and timeout_s else ready):
            _PENDING.remove(fd)
            os.close(fd)
        if late:
            return


def _before() -> None:
    _FORKING.acquire()                  # one fork at a time: one set of locks and one pipe
    _reap(0)                            # children already heard from: their pipes closed
    stores = list(_LIVE)
    if stores:
        _PIPE.extend(os.pipe())
    for store in stores:
        _TAKEN.extend(store.before_fork())


def _after_in_parent() -> None:
    try:
        if _PIPE:
            read, write = _PIPE
            os.close(write)
            _PENDING.append(read)       # waited for by the next close (settle), not here
    finally:
        _PIPE.clear()
        while _TAKEN:
            _TAKEN.pop().release()
        _FORKING.release()


def _in_child() -> None:
    global _FORKING
    _FORKING = threading.RLock()        # a store collected during a fork's hook settles in it
    _TAKEN.clear()                      # the parent's; every store gets new locks
    while _PENDING:                     # the parent's other children: not this one's to wait for
        os.close(_PENDING.pop())
    try:
        for store in list(_LIVE):
            INHERITED.extend(c for c in store.after_fork() if c is not None)
    finally:
        if _PIPE:
            read, write = _PIPE
            _PIPE.clear()
            os.close(read)
            try:
                os.write(write, b"1")
            finally:
                os.close(write)


os.register_at_fork(before=_before, after_in_parent=_after_in_parent, after_in_child=_in_child)
