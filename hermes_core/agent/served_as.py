"""Which model a name asked for answered as, remembered for the agent's life and kept in the home.

An Azure deployment is asked for by the name its owner gave it ("prod-chat"); only its answers say
which model runs behind it ("gpt-4o-2024-08-06"), and only that model has a price. A failed attempt
brings no answer to say so: priced by the name asked for, a timed-out call whose prompt was billed
was "no price for prod-chat", its tokens in no total. What an earlier reply of the same provider
and name said is the best knowledge there is (a deployment is rarely moved to another model), so
replies teach it here and every turn of the agent prices failed attempts through it. A name never
answered for stays itself: priced if ``llm.prices`` names it, else reported unpriced.

Kept per process only, a restart (or a web server's Agent per request) priced its first failed
attempt unpriced again until a reply came. So what is learned is also kept in
``HOME/cache/served_as.json``, read once, on first use:

* **small and bounded**: the names learned last, at most :data:`LIMIT` of them, each name at most
  :data:`MAX_NAME` characters (a server's text: a hostile one does not fill the disk);
* **written only when something new is learned** (a reply that says what is known writes
  nothing; a name answered as several models in turn, a router's, writes each pair once per
  process), atomically, merged into the file as it stands under its lock
  (:func:`hermes_core.kept_table.update`): two processes learning at once keep both, the latest of
  one name wins; an entry a busy lock kept out is written at the next reply, or at exit; a newer
  version's file is left as it is;
* **no secret in it**: an entry any of whose names the redactor would change (a proxy echoing the
  key as the model) is known to this process and never written;
* **never in the way**: a damaged, foreign or unreadable file is ignored with one warning naming
  it, and replaced at the next thing learned; a home that refuses the write keeps what is learned
  for the process, as before.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hermes_core import kept_table
from hermes_core.atomic_write import read_kept
from hermes_core.forked import renew_in_child

log = logging.getLogger("hermes_core.served_as")

FILE_NAME = "served_as.json"
VERSION = 1
#: Distinct (provider, name) pairs kept; the oldest learned is forgotten first past it.
LIMIT = 256
#: A provider's or model's name longer than this is not kept in the file (none is near it).
MAX_NAME = 200
#: 256 entries of three names are far below this; a bigger file is not ours to read.
_MAX_BYTES = 1_000_000

Served = dict[tuple[str, str], str]
K = TypeVar("K")
V = TypeVar("V")


class ServedAs:
    """(provider, model asked for) -> the model its latest reply said answered.

    ``path`` None keeps it in memory only; ``scrub`` is the agent's redactor (an entry it would
    change is not written)."""

    def __init__(self, path: str | Path | None = None, limit: int = LIMIT, *,
                 scrub: Callable[[str], str] = str) -> None:
        self.path = Path(path) if path is not None else None
        self._limit = limit
        self._scrub = scrub
        self._seen: Served | None = None   # read from the file on first use
        # (provider, asked for, answered as) this process wrote: a router's alternating answers
        # are each new against the latest, and would rewrite the file on every reply
        self._written: dict[tuple[str, str, str], None] = {}
        # learned and keepable, not in the file: tried again at the next reply while the lock is
        # busy (a refusing home or a newer version's file: known to the process only, as before)
        self._unwritten: Served = {}
        self._lock = threading.Lock()
        self._warned = False
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): a lock of its own (held across the
        file's update, so one a thread of the parent held hung the child's first reply), and
        none of the entries a busy lock kept out of the file: they are the parent's to write,
        and the child's copy, written at its next reply, put back what the parent had learned
        since (as :mod:`hermes_core.kept_table` forgets them for the exit's flush)."""
        self._lock = threading.Lock()
        self._unwritten = {}

    def learn(self, provider: str, requested: str, answered: str) -> None:
        """A reply of ``provider`` to ``requested`` named ``answered`` as the model."""
        key = (provider, requested)
        with self._lock:
            seen = self._known()
            # nothing said (a reply naming no model), or nothing new: nothing to write
            if answered and seen.get(key, requested) != answered:
                _put(seen, key, answered, self._limit)
                entry = (provider, requested, answered)
                if (self.path is not None and entry not in self._written
                        and self._keepable(key, answered)):
                    _put(self._written, entry, None, self._limit)
                    _put(self._unwritten, key, answered, self._limit)
            if self._unwritten:   # new, or kept out by a busy lock at an earlier reply
                self._write()

    def get(self, provider: str, requested: str) -> str:
        """The model ``requested`` of ``provider`` last answered as; itself when never heard."""
        with self._lock:
            return self._known().get((provider, requested), requested)

    def _known(self) -> Served:
        if self._seen is None:
            self._seen = self._read()
        return self._seen

    def _keepable(self, key: tuple[str, str], answered: str) -> bool:
        return all(len(name) <= MAX_NAME and self._scrub(name) == name
                   for name in (*key, answered))

    def _warn(self, what: str, *args: object) -> None:
        if not self._warned:
            self._warned = True
            log.warning(what, *args)

    def _read(self) -> Served:
        if self.path is None:
            return {}
        served = read_kept(self.path, _MAX_BYTES, lambda data: _parse(data, self._limit),
                           self._unreadable)
        return served if served is not None else {}

    def _unreadable(self, reason: str) -> None:
        self._warn("%s: %s; what deployments answered as is ignored (version %d expected)",
                   self.path, reason, VERSION)

    def flush_pending(self, wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Write the entries a busy lock kept out, waiting at most ``wait`` seconds in all by
        ``clock``: for the store's own lock (at exit, a thread that died holding it must not hold
        the exit), then what is left for the file's (given ``wait`` each, the two took twice it)."""
        end = clock() + wait
        if not self._lock.acquire(timeout=wait):
            return
        try:
            if self._unwritten:
                self._write(max(0.0, end - clock()))   # 0: one try, no wait
        finally:
            self._lock.release()

    def _write(self, wait: float | None = None) -> None:
        """Merge the entries not yet written into the file as it is now, under its lock (waiting
        ``wait`` seconds for it; by default as :func:`kept_table.update` decides)."""
        assert self.path is not None

        def merge(kept: Served | None) -> Served:
            table = kept if kept is not None else {}
            for key, answered in self._unwritten.items():
                _put(table, key, answered, self._limit)
            return table

        done = kept_table.update(self.path, _MAX_BYTES, lambda data: _parse(data, self._limit),
                                 merge, self._dump, "served-as file", logger=log, wait=wait)
        if not done.busy:   # written, or the home will not take it: known to this process
            self._unwritten.clear()
        else:   # at the next reply, or at exit
            kept_table.pending(self)

    def _dump(self, served: Served) -> bytes:
        body = {"version": VERSION,
                "served_as": [[p, requested, answered] for (p, requested), answered in served.items()
                              if self._keepable((p, requested), answered)]}
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _put(table: dict[K, V], key: K, value: V, limit: int) -> None:
    """``key`` learned last (re-inserted: the most recently learned goes last), ``table`` cut to
    its ``limit`` newest."""
    table.pop(key, None)
    table[key] = value
    while len(table) > limit:
        del table[next(iter(table))]


def _parse(data: Any, limit: int) -> Served:
    """The entries of a file's JSON, oldest first; ValueError/TypeError/KeyError when it is not
    one of ours."""
    version = data.get("version") if isinstance(data, dict) else None
    if type(version) is int and version > VERSION:
        raise kept_table.Newer(f"version {version}, written by a newer hermes_core; left as it is")
    if version != VERSION:
        raise ValueError(f"version {version!r}")
    out: Served = {}
    for item in data["served_as"]:
        if (not isinstance(item, list) or len(item) != 3
                or not all(type(name) is str and len(name) <= MAX_NAME for name in item)):
            raise ValueError("an entry of another shape")
        _put(out, (item[0], item[1]), item[2], limit)
    return out
