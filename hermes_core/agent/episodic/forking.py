"""A store inherited by a forked child: the child gets connections and locks of its own.

Why: SQLite forbids using a connection in a process ``fork()`` made from the one that opened it:
the child's copy believes it holds the parent's locks (POSIX locks are not inherited) and sees
the parent's transaction as its own, and a thread lock another thread of the parent held at the
fork stays held in the child forever. A worker pool forked from a process that had recalled a
memory (multiprocessing's default on Linux) hung on the lock, or failed its first write with
"cannot start a transaction within a transaction", or could write beside the parent's lock.

So, in a child (``os.register_at_fork``), every store alive at the fork drops what it inherited:
new thread locks, no connection (the next use opens one; :class:`~.store.SessionStore` and
:class:`~.upkeep.Upkeep` do). The inherited connections are kept here, never closed and never
collected: closing them from the child would run SQLite's close on the parent's file handles and
locks (a connection that believes it is the last one checkpoints and may remove ``-wal``).
"""

from __future__ import annotations

import os
import weakref
from typing import Protocol


class Forkable(Protocol):
    """What a store does in a child it was inherited by (runs in the child, one thread)."""

    def after_fork(self) -> list[object]:
        """Drop locks and connections; return the connections, to be kept (never closed)."""
        ...


_LIVE: weakref.WeakSet[Forkable] = weakref.WeakSet()
#: Connections inherited from the parent: referenced so the garbage collector never closes one.
INHERITED: list[object] = []


def watch(store: Forkable) -> None:
    """Give ``store`` new locks and connections in any child forked while it is alive."""
    _LIVE.add(store)


def _in_child() -> None:
    for store in list(_LIVE):
        INHERITED.extend(c for c in store.after_fork() if c is not None)


os.register_at_fork(after_in_child=_in_child)
