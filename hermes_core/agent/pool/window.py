"""A key's sliding window of requests with running token totals (split from :mod:`.state`).

The window is what the RPM/TPM checks of the in-memory backend (and the Redis backend's local
fallback) read on every acquire, inside the pool lock: see :class:`SlidingWindow`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate
from operator import itemgetter
from typing import overload

_tokens_of = itemgetter(1)


class SlidingWindow(Sequence[tuple[float, int]]):
    """A key's ``(time, tokens)`` requests in the sliding window, oldest first, with running
    totals: the tokens in the window and the time a request of ``need`` tokens fits are O(1) and
    O(log n), where summing the window cost O(n) inside the pool lock on every acquire.

    Entries live in a list read from ``_head`` (pruning moves the head; the list is compacted when
    half of it is dead), each with the cumulative token count up to it. A removal (a request
    that ended, near the newest end) leaves the counts after it stale, to be redone in C by the
    next reader of token totals (``_settle``): only a key with ``max_tpm`` reads them per
    request, and shifting them in Python on every removal cost 60 us a request at 64 in flight.
    """

    __slots__ = ("_cum", "_head", "_items", "_total", "_valid")

    def __init__(self) -> None:
        self._items: list[tuple[float, int]] = []
        self._cum: list[int] = []       # tokens appended up to and including each entry
        self._head = 0
        self._total = 0                 # tokens in the list (== _cum[-1] once settled)
        self._valid = 0                 # _cum is right below this index

    def append(self, entry: tuple[float, int]) -> None:
        self._total += entry[1]
        self._items.append(entry)
        self._cum.append(self._total)
        if self._valid == len(self._items) - 1:
            self._valid += 1

    def prune(self, cutoff: float) -> None:
        """Drop entries at or before ``cutoff``."""
        items, head = self._items, self._head
        while head < len(items) and items[head][0] <= cutoff:
            head += 1
        if head > 64 and head * 2 > len(items):
            del items[:head]
            del self._cum[:head]
            self._valid = max(0, self._valid - head)
            head = 0
        self._head = head

    def _settle(self) -> None:
        """Redo the running totals a removal left stale (from ``_valid`` on)."""
        v, items = self._valid, self._items
        if v >= len(items):
            return
        tail = list(map(_tokens_of, items[v:]))
        sums = accumulate(tail, initial=self._total - sum(tail))
        next(sums)
        self._cum[v:] = sums
        self._valid = len(items)

    @property
    def used(self) -> int:
        """Tokens in the window."""
        if self._head >= len(self._items):
            return 0
        self._settle()
        return self._total - self._cum[self._head] + self._items[self._head][1]

    def tokens_free_at(self, limit: int, need: int, window_s: float) -> float | None:
        """As :func:`tokens_free_at`: the expiry of the oldest entry whose leaving makes room."""
        used = self.used
        if used + need <= limit or self._head >= len(self._items):
            return None
        # leaving entries head..i frees cum[i] - cum[head-1] tokens; find the first i with enough
        before = self._cum[self._head] - self._items[self._head][1]
        target = before + used + need - limit
        i = bisect_left(self._cum, target, self._head)
        return self._items[min(i, len(self._items) - 1)][0] + window_s

    def remove(self, entry: tuple[float, int]) -> None:
        """Drop one entry (a request that ended: it is re-stamped, or refused and leaves).

        Equal entries are interchangeable (the window is a multiset of ``(time, tokens)``), so
        any equal one may go. Entries are appended in time order, so it is found by bisection
        (a linear search when a clock that stepped back left them out of order)."""
        items, head = self._items, self._head
        i = bisect_left(items, entry, head)
        if i >= len(items) or items[i] != entry:
            try:
                i = items.index(entry, head)
            except ValueError:
                raise ValueError("entry not in the window") from None
        del items[i]
        del self._cum[i]
        self._total -= entry[1]
        if entry[1]:
            self._valid = min(self._valid, i)
        elif self._valid > i:
            self._valid -= 1

    def __len__(self) -> int:
        return len(self._items) - self._head

    @overload
    def __getitem__(self, i: int) -> tuple[float, int]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[float, int]]: ...

    def __getitem__(self, i: int | slice) -> tuple[float, int] | Sequence[tuple[float, int]]:
        if isinstance(i, slice):
            return self._items[self._head:][i]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("window index out of range")
        return self._items[self._head + (i if i >= 0 else n + i)]

    def __bool__(self) -> bool:
        return self._head < len(self._items)
