"""Scan verdicts remembered by a digest of the text, for texts that come back unchanged.

Why one memo: the parts of a context file read again unchanged (a touch, a sync tool's rewrite,
a re-read in its write's tick) and the skill descriptions a hint shows turn after turn are the
same texts scanned again, and a scan is most of their cost (about 1.4 s for a 20,000-token file
head, ~0.5 ms a description). Both want the same thing: the guard of a text seen before, without
keeping the text alive. A key is a digest of the text with everything the verdict depends on
(name, categories, first line, data), and a clean text is kept as its paragraph count alone: a
remembered part can be most of a 2 MB file, so holding the text itself kept every part whole for
the life of the process. A text with a blocked paragraph keeps its guarded text (short notices
and the text around them). With a ``log`` (``memo_log``) the clean verdicts outlive the process:
a text the memory does not hold is looked up in the home's file before it is scanned.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

from hermes_core.forked import child_lock
from hermes_core.injection import verdicts
from hermes_core.injection.memo_log import CleanLog
from hermes_core.injection.scan import GuardedText, guard_many

_Key = tuple[bytes, str, tuple[str, ...], int, bool]


class GuardMemo:
    """:func:`~hermes_core.injection.scan.guard_many`, remembered for the ``size`` most recently
    used texts. Thread-safe: the memo is read and written under a lock, scanning happens outside
    it; the texts not seen before are scanned in one batch (the learned scorer costs mostly per
    call). ``log``: where clean verdicts are kept across restarts (the home it is attached to)."""

    def __init__(self, size: int, log: CleanLog | None = None) -> None:
        self.size = size
        self.log = log
        self._known: OrderedDict[_Key, GuardedText | int] = OrderedDict()
        # free in a forked child (one a thread held at the fork hung the child's first scan)
        self._lock = child_lock(threading.Lock())

    def guard(self, texts: Sequence[str], *, name: str, categories: tuple[str, ...],
              first_line: int = 1, data: bool = False) -> list[GuardedText]:
        keys = [(hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest(),
                 name, categories, first_line, data) for t in texts]
        held: dict[_Key, GuardedText | int] = {}
        with self._lock:
            for k in keys:
                got = self._known.get(k)
                if got is not None:
                    held[k] = got
                    self._known.move_to_end(k)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in held}
        filed: dict[_Key, str] = {}
        if missing and self.log is not None and self.log.path is not None:
            filed = {k: self.log.key(*k) for k in missing}
            found = self.log.known(list(filed.values()))
            kept_before = {k: found[f] for k, f in filed.items() if f in found}
            self._keep(kept_before)
            held.update(kept_before)
            missing = {k: t for k, t in missing.items() if k not in kept_before}
        if missing:
            unjudged = verdicts.STORE.unjudged
            fresh = guard_many(list(missing.values()), name=name, categories=categories,
                               first_line=first_line, data=data)
            kept = {k: (g if g.findings else g.paragraphs)
                    for k, g in zip(missing, fresh, strict=True)}
            # a text the learned model could not judge (not loaded, e5 stand-ins) passed on the
            # rules alone: kept for this process, not filed for the next, whose model may work
            if filed and self.log is not None and verdicts.STORE.unjudged == unjudged:
                self.log.add([(filed[k], v) for k, v in kept.items() if isinstance(v, int)])
            self._keep(kept)
            held.update(zip(missing, fresh, strict=True))
        return [g if isinstance(g := held[k], GuardedText) else GuardedText(t, (), g)
                for k, t in zip(keys, texts, strict=True)]

    def _keep(self, kept: Mapping[_Key, GuardedText | int]) -> None:
        if not kept:
            return
        with self._lock:
            self._known.update(kept)
            for k in kept:
                self._known.move_to_end(k)
            while len(self._known) > self.size:
                self._known.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()
