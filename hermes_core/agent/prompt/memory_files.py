"""Add, replace and remove MEMORY.md / USER.md entries safely.

These two files are part of the cache-stable system prompt, so every write here must leave them
either fully old or fully new (never half-written), must not lose a concurrent writer's entry,
must not smuggle a prompt injection into the prompt, and must stay within a size cap so the
prefix does not grow without bound. Hence:

* **Entries** are separated by a line holding only ``§`` (the Hermes agent's format); a hand-written
  file without that delimiter is one entry.
* **File lock** (``filelock``, a hidden ``.MEMORY.md.lock`` beside the file) around
  read-modify-write, so two processes adding at once both land. A writer that takes no lock (the
  user's editor saving, ``echo >> MEMORY.md``) is caught by the file's stat: when it moved between
  our read and our rename (checked after the new file is synced, just before the rename), the
  edit is redone on that writer's version instead of written over it.
* **Atomic write** (:func:`~hermes_core.atomic_write.write_atomic`). A symlinked file
  (MEMORY.md kept in a dotfiles repo) is written at its target, so the link survives; the lock
  sits beside the target too, so two homes linking one file still serialise.
* **Injection scan** with the same patterns and settings as the prompt builder; a flagged entry is
  refused with an error naming the file and the reason.
* **No keys**: an entry holding a configured secret or a key-shaped string is refused; the file
  goes to every provider in every system prompt.
* **Size cap**: ``prompt.memory_char_limit`` for MEMORY.md, ``prompt.user_char_limit`` for USER.md.
* **Invalidation**: after a write, every live PromptBuilder watching the file is told, so its next
  turn re-reads exactly that file.
"""

from __future__ import annotations

import os
import re
import stat
from functools import partial
from pathlib import Path
from typing import Literal

from filelock import FileLock
from filelock import Timeout as LockTimeout

from hermes_core.agent.prompt.files import (
    Fingerprint,
    UndecodableText,
    decode_text,
    notify_file_changed,
    stat_fingerprint,
)
from hermes_core.atomic_write import write_atomic
from hermes_core.config import Settings
from hermes_core.errors import MemoryWriteError
from hermes_core.injection import scan_for_injection
from hermes_core.redact import clip

Target = Literal["memory", "user"]
ENTRY_DELIMITER = "\n§\n"
_SPLIT = re.compile(r"^[ \t]*§[ \t\r]*$", re.MULTILINE)
FILES: dict[str, str] = {"memory": "MEMORY.md", "user": "USER.md"}
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Reads of a file another writer (taking no lock) keeps moving before an edit gives up.
WRITE_RETRIES = 5


def _lf(text: str) -> str:
    """``text`` with CRLF and lone CR line ends as LF: the line breaks the prompt builder reads
    (``files.read_context_file``), so an entry here is an entry there."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_entries(text: str) -> tuple[str, ...]:
    """Entries of a memory file: blocks separated by ``§`` lines, stripped, empty ones dropped.

    CRLF (a Windows editor) and a lone CR (classic Mac, some exporters) become LF, as the prompt
    builder reads them: an entry spanning lines matches what a caller quotes, is not added twice,
    a rewrite does not leave the file with mixed line endings, and a CR-only file is its entries,
    not one entry a remove would take whole.
    """
    return tuple(e.strip() for e in _SPLIT.split(_lf(text)) if e.strip())


def render_entries(entries: tuple[str, ...]) -> str:
    return ENTRY_DELIMITER.join(entries) + "\n" if entries else ""


class MemoryStore:
    """Entry-level edits of ``HOME/MEMORY.md`` and ``HOME/USER.md``."""

    def __init__(self, home: Path, settings: Settings | None = None, *,
                 lock_timeout_s: float = 10.0) -> None:
        self.home = Path(home).expanduser()
        self.settings = settings or Settings(source=None)
        self.lock_timeout_s = lock_timeout_s

    def path(self, target: Target) -> Path:
        if target not in FILES:
            raise ValueError(f"unknown memory target {target!r}; use 'memory' or 'user'")
        return self.home / FILES[target]

    def limit(self, target: Target) -> int:
        p = self.settings.prompt
        return p.memory_char_limit if target == "memory" else p.user_char_limit

    # ------------------------------------------------------------------ reading

    def _read(self, path: Path) -> tuple[str, ...]:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode) and not path.is_dir():
                # reading a FIFO would block forever (the prompt builder skips it too)
                raise MemoryWriteError(path, "is not a regular file; refusing to edit it")
            raw = path.read_bytes()
        except FileNotFoundError:
            return ()
        except OSError as e:
            raise MemoryWriteError(path, f"cannot read ({e.strerror or e})") from None
        try:
            # the prompt builder's decoder: a file it reads (UTF-16 from PowerShell's ">") can be
            # edited, and is written back as UTF-8
            text = decode_text(raw)
        except UndecodableText as e:
            raise MemoryWriteError(path, f"{e}; refusing to edit it") from None
        return parse_entries(text)

    def entries(self, target: Target) -> tuple[str, ...]:
        """Current entries (empty when the file does not exist)."""
        return self._read(self.path(target))

    # ------------------------------------------------------------------ writing

    def _check_entry(self, path: Path, text: str, limit: int | None = None) -> str:
        """The entry as stored, or a :class:`MemoryWriteError`; ``limit``: the file's cap, which
        an added entry alone may not pass (known before the scan, which costs a second per
        200 KB)."""
        # a lone surrogate (half an emoji from a tool call's JSON) cannot be written as UTF-8;
        # a lone CR is a line break to the prompt builder, so a "§" between two is a delimiter
        entry = _lf(_SURROGATE.sub("\ufffd", text)).strip()
        if not entry:
            raise MemoryWriteError(path, "an entry cannot be empty")
        if _SPLIT.search(entry):
            raise MemoryWriteError(path, "an entry cannot contain a line holding only '§' "
                                   "(the entry delimiter)")
        if limit is not None and len(entry) > limit:
            raise MemoryWriteError(path, f"the entry alone is {len(entry)} characters, over the "
                                   f"{limit}-character limit; shorten it")
        if self.settings.redactor()(entry) != entry:
            # the file is in every system prompt, to every provider: never store a key there
            raise MemoryWriteError(path, "entry refused: it holds an API key or a configured "
                                   "secret; leave the key out")
        p = self.settings.prompt
        if p.injection_scan:
            # scanned as the prompt builder will read it back: as data (see ReadPolicy.data)
            finding = scan_for_injection(entry, p.injection_categories, data=True)
            if finding is not None:
                raise MemoryWriteError(path, f"entry refused: {finding.describe()} of the entry")
        return entry

    def _match(self, path: Path, entries: tuple[str, ...], old: str) -> int:
        needle = _lf(old).strip()   # the entries are read with LF line ends: so is the quote
        if not needle:
            raise MemoryWriteError(path, "the text identifying the entry cannot be empty")
        hits = [i for i, e in enumerate(entries) if needle in e]
        if not hits:
            raise MemoryWriteError(path, f"no entry contains {clip(needle, 60)!r}")
        # Identical copies (pasted twice by hand) cannot be told apart by any quote: take the first.
        if len({entries[i] for i in hits}) > 1:
            raise MemoryWriteError(path, f"{len(hits)} entries contain {clip(needle, 60)!r}; "
                                   "quote more of the one you mean")
        return hits[0]

    def _commit(self, target: Target, change: str, old: str | None = None,
                new: str | None = None) -> tuple[str, ...]:
        path = self.path(target)
        if new is not None:
            new = self._check_entry(path, new, self.limit(target) if change == "add" else None)
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            # os.replace on the link itself would swap the symlink for a regular file
            real = Path(os.path.realpath(path))
            lock = FileLock(str(real.with_name(f".{real.name}.lock")), timeout=self.lock_timeout_s)
            with lock:
                updated, wrote = self._redo_until_still(target, real, change, old, new)
        except LockTimeout:
            raise MemoryWriteError(path, f"could not lock it within {self.lock_timeout_s:g}s "
                                   "(another writer holds it)") from None
        except OSError as e:
            raise MemoryWriteError(path, f"write failed ({e.strerror or e}); file unchanged") from None
        if wrote:
            notify_file_changed(path)
        return updated

    def _redo_until_still(self, target: Target, real: Path, change: str, old: str | None,
                          new: str | None) -> tuple[tuple[str, ...], bool]:
        """Read, change and write the file (lock held), again from the top while another writer
        that took no lock moves it between our read and our rename; the entries, and whether
        the file was written (an add of an entry already there is not)."""
        path = self.path(target)
        for _attempt in range(WRITE_RETRIES):
            before = stat_fingerprint(real)
            entries = self._read(path)
            updated = self._changed(path, entries, change, old, new)
            if updated == entries:
                return entries, False
            body = render_entries(updated)
            limit = self.limit(target)
            if len(body) > limit and len(body) > len(render_entries(entries)):
                raise MemoryWriteError(path, f"would grow to {len(body)} characters, over the "
                                       f"{limit}-character limit; remove or shorten entries first")

            try:
                write_atomic(real, body.encode("utf-8"), mode=_kept_mode(real),
                             check=partial(_still, real, before))
            except _Moved:
                continue
            return updated, True
        raise MemoryWriteError(path, f"kept changing while being edited ({WRITE_RETRIES} tries): "
                               "another program is writing it; file left as that program wrote it")

    def _changed(self, path: Path, entries: tuple[str, ...], change: str, old: str | None,
                 new: str | None) -> tuple[str, ...]:
        """``entries`` after the change (the same tuple for an add of an entry already there)."""
        if change == "add":
            assert new is not None
            return entries if new in entries else (*entries, new)
        assert old is not None
        i = self._match(path, entries, old)
        rest = entries[:i] + entries[i + 1:]
        # a replace onto an entry that already exists elsewhere just drops this one
        kept = (new,) if change == "replace" and new and new not in rest else ()
        return entries[:i] + kept + entries[i + 1:]

    def add(self, target: Target, text: str) -> tuple[str, ...]:
        """Append an entry (a no-op when an identical entry exists); returns the new entries."""
        return self._commit(target, "add", new=text)

    def replace(self, target: Target, old: str, new: str) -> tuple[str, ...]:
        """Replace the one entry containing ``old`` by ``new``."""
        return self._commit(target, "replace", old=old, new=new)

    def remove(self, target: Target, old: str) -> tuple[str, ...]:
        """Remove the one entry containing ``old``."""
        return self._commit(target, "remove", old=old)


class _Moved(Exception):
    """Internal: another writer moved the file between our read and our rename."""


def _still(path: Path, before: Fingerprint | None) -> None:
    """Raise :class:`_Moved` when ``path``'s stat is no longer ``before``."""
    if stat_fingerprint(path) != before:
        raise _Moved


def _kept_mode(path: Path) -> int:
    """The file's permission bits, kept across a rewrite (a MEMORY.md made private stays so);
    0o644 for a new file."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o644
