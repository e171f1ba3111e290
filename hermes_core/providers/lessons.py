"""What a model refused, kept in the home: the next process does not pay the 400 again.

The adapters learn from a 400 that a model refuses an optional field, a stream or budgeted
thinking (:mod:`.refused`, the Anthropic adapter). Kept per process only, every new process (each
``hermes-core chat``, each worker) sent the refused request once more and paid a failed round
trip before its first answer. The lessons are saved in ``HOME/learned_refusals.json``:

* **small and capped**: at most :data:`MAX_LESSONS`, the oldest dropped first; a lesson is its
  provider's name, the model, what was refused and when;
* **versioned**: a file of another version is ignored (said once), never half-read;
* **expiring**: a lesson older than :data:`TTL_S` is dropped, so a provider that lifts a
  restriction (a model that learns to stream for an organisation once it is verified) gets the
  field again; learning it again renews it;
* **never in the way**: a corrupt, foreign or unreadable file is ignored with one warning naming
  it; a home that cannot be written keeps the lesson for the process, as before. Each lesson is
  merged into the file as it stands (two processes learning at once keep both).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_core.atomic_write import read_kept, write_atomic
from hermes_core.forked import child_lock

log = logging.getLogger(__name__)

FILE_NAME = "learned_refusals.json"
VERSION = 1
MAX_LESSONS = 200
TTL_S = 7 * 86_400.0
#: 200 lessons are ~25 KB; a bigger file is not ours to read
_MAX_BYTES = 1_000_000

#: (provider, model, what) -> when it was learned (wall time)
Lessons = dict[tuple[str, str, str], float]


class RefusalMemory:
    """The home's file of lessons; ``path`` None keeps them in memory only."""

    def __init__(self, path: str | Path | None, *, clock: Callable[[], float] = time.time,
                 ttl_s: float = TTL_S, cap: int = MAX_LESSONS) -> None:
        self.path = Path(path) if path is not None else None
        self.clock, self.ttl_s, self.cap = clock, ttl_s, cap
        self._lessons: Lessons | None = None   # read on first use
        # held across the file's read and write, so free again in a forked child (one a thread
        # of the parent held hung the child's first lesson); the lessons in memory are kept:
        # each is in the file already, or was being written by the parent
        self._lock = child_lock(threading.Lock())
        self._said: set[str] = set()   # what was warned about once

    def lessons(self, provider: str) -> list[tuple[str, str]]:
        """``(model, what)`` of each unexpired lesson of ``provider``, oldest first."""
        with self._lock:
            if self._lessons is None:
                self._lessons = self._read()
            live = self._live(self._lessons)
        return [(model, what) for (p, model, what), _ in sorted(live.items(), key=_by_time)
                if p == provider]

    def remember(self, provider: str, model: str, what: str) -> None:
        """Keep a lesson (renewed if known) in memory and in the file as it now stands."""
        with self._lock:
            now = self.clock()
            mine = self._lessons if self._lessons is not None else {}
            mine[(provider, model, what)] = now
            merged = {**self._read(quiet=True), **mine} if self.path is not None else mine
            kept = dict(sorted(self._live(merged).items(), key=_by_time)[-self.cap:])
            self._lessons = kept
            if self.path is not None:
                self._write(kept)

    def _live(self, lessons: Lessons) -> Lessons:
        oldest = self.clock() - self.ttl_s
        return {k: at for k, at in lessons.items() if at > oldest}

    def _warn(self, what: str, *args: object) -> None:
        if what not in self._said:
            self._said.add(what)
            log.warning(what, *args)

    def _read(self, *, quiet: bool = False) -> Lessons:
        if self.path is None:
            return {}
        lessons = read_kept(self.path, _MAX_BYTES, _parse, None if quiet else self._unreadable)
        return lessons if lessons is not None else {}

    def _unreadable(self, reason: str) -> None:
        self._warn("%s: %s; learned refusals ignored (version %d expected), and the file "
                   "replaced when the next refusal is learned", self.path, reason, VERSION)

    def _write(self, lessons: Lessons) -> None:
        assert self.path is not None
        body = {"version": VERSION, "lessons": [
            {"provider": p, "model": m, "what": w, "at": round(at, 3)}
            for (p, m, w), at in lessons.items()]}
        try:
            write_atomic(self.path, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"),
                         durable=False)
        except OSError as e:
            self._warn("cannot write %s (%s); learned refusals are kept for this process only",
                       self.path, e.strerror or e)


def _by_time(item: tuple[tuple[str, str, str], float]) -> float:
    return item[1]


def _parse(data: Any) -> Lessons:
    """The lessons of a file's JSON; ValueError/TypeError/KeyError when it is not one of ours."""
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError(f"version {data.get('version') if isinstance(data, dict) else None!r}")
    out: Lessons = {}
    for item in data["lessons"]:
        provider, model, what, at = item["provider"], item["model"], item["what"], item["at"]
        if (type(provider) is not str or type(model) is not str or type(what) is not str
                or type(at) not in (int, float) or not math.isfinite(at)):
            raise ValueError("a lesson of another shape")
        out[(provider, model, what)] = float(at)
    return out
