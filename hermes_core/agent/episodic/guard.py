"""The injection guard of recalled sessions: each summary sentence by sentence, each tag alone.

Why a module of its own: a recall at production size brings sessions this process has not
scanned yet, and the learned scorer costs ~2 ms a call whatever it scores, so scanning each
summary and each tag on its own cost ~70 ms a turn on a 20,000-session archive with verdicts not
cached. :class:`RecallGuard` remembers each text's result (the same past sessions come back turn
after turn) and scans everything a recall brings that it has not seen in one
:func:`~hermes_core.injection.scan.guard_many` batch: one learned call a turn. Each text is still
judged on its own, so a result is the same as a scan of it alone; results are kept by the text
itself, so a session recorded again with other words is judged on those words.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from hermes_core.forked import child_lock
from hermes_core.injection import GuardedText, guard_many
from hermes_core.types import MemoryFragment

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")

#: Results kept per process (summaries and tags together), least recently used dropped first.
MEMO_SIZE = 4096


def _sentences(summary: str) -> str:
    """A stored summary is one paragraph; one hostile sentence quoted in a chat must not cost
    the whole session, so each sentence is a paragraph of its own for the guard."""
    return "\n\n".join(x for x in _SENTENCE_END.split(summary) if x.strip())


class RecallGuard:
    """Remembered guards of recalled summaries and tags for one set of injection categories.
    Thread-safe: the memo is read and written under a lock; scanning happens outside it."""

    def __init__(self, categories: Sequence[str], size: int = MEMO_SIZE) -> None:
        self.categories = tuple(categories)
        self.size = size
        self._memo: OrderedDict[tuple[str, str], GuardedText] = OrderedDict()
        # free in a forked child (one a thread held at the fork hung the child's first use)
        self._lock = child_lock(threading.Lock())

    def guards(self, fragments: Sequence[MemoryFragment]
               ) -> list[tuple[GuardedText, tuple[GuardedText, ...]]]:
        """Per fragment, the guard of its summary and of each tag; texts not seen before are
        scanned in one batch."""
        keys = [(("summary", f.summary), *(("tag", t) for t in f.tags)) for f in fragments]
        with self._lock:
            known = {k: g for ks in keys for k in ks if (g := self._get(k)) is not None}
        todo = list(dict.fromkeys(k for ks in keys for k in ks if k not in known))
        if todo:
            texts = [_sentences(text) if kind == "summary" else text for kind, text in todo]
            fresh = guard_many(texts, name="a past session", categories=self.categories, data=True)
            fresh = [_joined(g) if kind == "summary" else g
                     for (kind, _t), g in zip(todo, fresh, strict=True)]
            with self._lock:
                for k, g in zip(todo, fresh, strict=True):
                    self._put(k, g)
            known.update(zip(todo, fresh, strict=True))
        return [(known[ks[0]], tuple(known[k] for k in ks[1:])) for ks in keys]

    def _get(self, key: tuple[str, str]) -> GuardedText | None:
        got = self._memo.get(key)
        if got is not None:
            self._memo.move_to_end(key)
        return got

    def _put(self, key: tuple[str, str], guarded: GuardedText) -> None:
        self._memo[key] = guarded
        self._memo.move_to_end(key)
        while len(self._memo) > self.size:
            self._memo.popitem(last=False)


def _joined(guarded: GuardedText) -> GuardedText:
    """The guard of a summary split into sentences, its sentences joined back into one line."""
    return replace(guarded, text=" ".join(guarded.text.split("\n\n")))
