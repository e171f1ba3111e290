"""What the last read of a JSONL catalog made of each line, so the next read parses only new lines.

A refresh re-reads the whole catalog file: which lines changed can only be known by reading it
(one file, one ``stat``). Parsing and validating every line was most of that (0.5-1 s of a
one-skill edit at 20,000 skills); looking its bytes up is not. A line's meaning depends on its bytes
alone, except for two things a memo by bytes must put back:

* *Where it is.* A skill's ``path`` names its line (``catalog.jsonl:12``), and a line added or
  deleted above moves every later one. A line's skill is the same object as last time when the
  line did not move, and a copy at its new place when it did (``Skill.at``).
* *What its parse warns.* An over-long name or description is kept with a warning naming the line.
  Those warnings are logged *once per change*: when a line is read at a place for the first time
  (a fresh read, a new or edited line, or one that moved, whose warning names another line); an
  unchanged line in its place says nothing again. A refresh after a one-skill edit then warns about
  that skill, not again about every long description of the catalog, as the skipped-file issues
  are already warned about once (``load_catalog``'s ``warned``). The texts are a fresh read's.

The memo holds the last read of each file only (the bytes of its lines and what they parsed to),
so it is bounded by the file; it lives in memory, one per retriever.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hermes_core.forked import child_lock
from hermes_core.types import Skill


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """One line's meaning apart from its place: a skill (whose path names where it was last read),
    or why the line is skipped, or nothing (a blank line); and the warnings its parse gave,
    without the place (``'description' is 1100 characters (limit 1024); kept ...``)."""

    skill: Skill | None = None
    reason: str | None = None
    notes: tuple[str, ...] = ()


BLANK = ParsedLine()


@dataclass(frozen=True, slots=True)
class LastRead:
    """A file as last read: its lines' bytes in order, and what each distinct line parsed to."""

    lines: tuple[bytes, ...] = ()
    parsed: dict[bytes, ParsedLine] = field(default_factory=dict)

    def same_place(self, lineno: int, line: bytes) -> bool:
        """Whether line ``lineno`` (from 1) held exactly ``line`` in the last read."""
        return lineno <= len(self.lines) and self.lines[lineno - 1] == line


#: the saved parse of each of a file's lines (its path, its lines now) that a last process kept
Recall = Callable[[str, Sequence[bytes]], dict[bytes, ParsedLine]]


class CatalogMemo:
    """The last read of each JSONL catalog file, by its path as configured.

    ``lock`` is held for a whole read of a file, so two refreshes at once (a turn's and the
    background check's) neither parse twice nor both warn about the same change. ``recall`` (the
    parses a last process saved, ``catalog_store``) answers a file's first read: its lines are
    parsed already, but have no place (their warnings are logged as on a fresh read).
    """

    def __init__(self, recall: Recall | None = None) -> None:
        self._files: dict[str, LastRead] = {}
        self._recall = recall
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self.lock = child_lock(threading.Lock())

    def last(self, path: str, lines: Sequence[bytes] = ()) -> LastRead:
        """The last read of ``path``; before any, what ``recall`` knows of ``lines`` (its lines now)."""
        known = self._files.get(path)
        if known is not None:
            return known
        return LastRead((), self._recall(path, lines)) if self._recall is not None else LastRead()

    def reads(self) -> list[tuple[str, LastRead]]:
        """Each file's last read, by path."""
        with self.lock:
            return list(self._files.items())

    def keep(self, path: str, read: LastRead) -> None:
        self._files[path] = read

    def forget(self, path: str) -> None:
        """A file that could not be read: its next read starts afresh (and warns afresh)."""
        self._files.pop(path, None)
