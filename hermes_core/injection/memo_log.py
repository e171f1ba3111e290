"""Clean scan verdicts kept in the home, so a restart does not scan again a text it found clean.

Why: a home of 2,000 skills with retrieval off shows every description on its first turn, and
scanning them costs about a second (~0.5 ms each, the rules mostly: the learned scorer's verdicts
are already kept in the home, ``verdicts.py``). The memory memo (``memo.py``) saves that second
on every later turn but not at the next start, which pays it again for the same texts. This log
keeps, per text found clean, what the memo keeps in memory: its paragraph count.

What is stored (``HOME/cache/injection/<name>.log``): a header line naming the format and the
scanner's version, with a CRC, then one line per clean text: a 128-bit BLAKE2b hash of (the
scanner's version, the learned model's fingerprint for the categories, the memo's key: the
text's digest, its name, categories, first line and whether it is data), the paragraph count,
and a CRC of both. Never the text; the file is this user's alone (0600; one another user owns,
or others may write, is not read: its lines could list any text as clean). The scanner's
version is :func:`~hermes_core.injection.scanner_id.scan_fingerprint`, what the scan consults
(its files and models, the Python version, the libraries' presence and releases,
``HERMES_DISABLE_JIEBA``): after an upgrade, an edited rule or a flipped switch the file is
started again, and a line another version's process appends after that matches no key of this
one, so no verdict of another scanner is ever reused. A text with a finding is not kept: it is
rare (none of the 5,554 descriptions the repository ships), and scanned again it gives its
notice as the scan words it now; nor is one the learned model did not judge (``memo``: its load
failed, or e5 left stand-in scores).

As ``verdicts.log``: appended one ``write`` at a time on an ``O_APPEND`` descriptor (two
processes on one home interleave whole lines); rewritten atomically with the most recent
entries when damaged, another version's, or past twice its cap. It is a cache: an unreadable or
damaged file (a torn line, flipped bytes, a FIFO or a folder in its place, one grown past four
times its cap) is said once and costs a scan, never the turn; an append the disk cut short makes
the next write a rewrite, and a rewrite that failed is not tried again until the next attach.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from hermes_core.atomic_write import UntrustedFile, make_folders, read_cache, write_atomic
from hermes_core.forked import child_lock
from hermes_core.injection.scanner_id import scan_fingerprint

log = logging.getLogger(__name__)

MAGIC = "hermes-clean-scans"
FORMAT = 1
DISK_CAP = 16_384   # clean texts kept in the file after a rewrite (about 750 kB, twice that at most)
KEY_HEX = 32
#: the logs' mode: a file its group or others may write is not read (``atomic_write.not_private``)
PRIVATE = 0o600
_Head = TypeVar("_Head")


#: the scanner's version a file is written by: everything the scan consults (``scanner_id``)
scanner_code = scan_fingerprint


@lru_cache(maxsize=8)
def _model_salt(categories: tuple[str, ...]) -> bytes:
    """The learned model's fingerprint for these categories ("none" when they leave it out or it
    is missing): its verdict is part of the scan's, and a new model must not reuse the old one's."""
    from hermes_core.injection.scan import SEMANTIC, SEMANTIC_DATA
    from hermes_core.injection.verdicts import shipped_model

    if "learned" not in categories:
        return b"none"
    model = shipped_model(SEMANTIC in categories, SEMANTIC_DATA in categories)
    return (model.fingerprint if model is not None else "none").encode()


def _line(key: str, paragraphs: int) -> str:
    body = f"{key} {paragraphs}"
    return f"{body} {zlib.crc32(body.encode()):08x}\n"


def _header(version: str) -> str:
    body = f"{MAGIC} {FORMAT} {version}"
    return f"{body} {zlib.crc32(body.encode()):08x}\n"


def _parse_header(line: str) -> str | None:
    parts = line.split(" ")
    if len(parts) != 4 or parts[0] != MAGIC or parts[1] != str(FORMAT):
        return None
    try:
        ok = int(parts[3], 16) == zlib.crc32(" ".join(parts[:3]).encode())
    except ValueError:
        return None
    return parts[2] if ok else None


def _paragraphs(key: str, rest: str) -> int | None:
    count, sep, crc = rest.partition(" ")
    try:
        if not sep or int(crc, 16) != zlib.crc32(f"{key} {count}".encode()):
            return None
        n = int(count)
    except ValueError:
        return None
    return n if n >= 0 else None


@dataclass(frozen=True, slots=True)
class LogLines:
    """A cache log's lines after its header, as :meth:`HomeLog._lines` split them."""
    entries: dict[str, str]   # key -> the rest of its line, as filed (checked when asked for)
    count: int                # whole lines read
    torn: bool                # the last line has no newline: a crash mid-append, or another
                              # process's append read half-way; appending after it glues two


class ShortWrite(OSError):
    """An append the disk cut short: part of a line is in the file (:func:`append_log`)."""


def append_log(path: Path, payload: bytes) -> bool:
    """Append whole lines in one ``write`` on an ``O_APPEND`` descriptor (two processes on one
    home interleave whole lines); False when the file is gone since it was read (a cleaned cache
    folder) or is no regular file now (a FIFO put in its place: opened non-blocking, so one with
    no reader is refused at once instead of holding the turn until one comes): the caller writes
    it whole, replacing it. OSError when it cannot be written, a short write too (a disk filled
    mid-line: the half line is in the file, and the caller rewrites it before appending again,
    which would glue the next line to it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return False
    except OSError as e:
        if e.errno == errno.ENXIO:   # a FIFO nobody reads
            return False
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        written = os.write(fd, payload)
    finally:
        os.close(fd)
    if written != len(payload):
        raise ShortWrite(errno.ENOSPC, f"wrote {written} of {len(payload)} bytes", str(path))
    return True


class HomeLog:
    """What the home's two scan logs share (``verdicts.log``, and this module's): reading the file
    once, a header checked by the subclass, a damaged file said once per file attached (then at
    debug level) and started again at the next write. A subclass sets the attributes below and
    holds ``_lock`` around these calls."""

    what = "scan cache"                 # how a warning names the file
    again = "texts are scanned again"   # what a damaged file costs
    logger = log
    key_hex = KEY_HEX
    disk_cap: int                       # lines kept at a rewrite (the writers keep under twice)
    _path: Path | None
    _loaded: bool
    _warned: bool
    _needs_rewrite: bool

    @property
    def max_bytes(self) -> int:
        """The largest file read: four times the cap's lines (a line is under 80 bytes). The
        writers rewrite it past twice the cap; one grown far past that by something else was read
        whole at every start (a million lines, 5.5 s) and, every text asked for being in it,
        never rewritten: it is now unreadable, so the scan it costs rewrites it to the cap."""
        return 4 * self.disk_cap * 80 + 4096

    def _warn(self, message: str, *args: object) -> None:
        self.logger.log(logging.DEBUG if self._warned else logging.WARNING, message, *args)
        self._warned = True

    def _read(self, parse_header: Callable[[str], _Head | None]) -> tuple[_Head, list[str]] | None:
        """The file's header as ``parse_header`` reads it, and its lines; None when there is no
        file, or it is unreadable (a FIFO in its place is not opened) or has no valid header:
        both are said once and mean the file is written whole next time. Read once an attach: None
        again after that."""
        if self._loaded or self._path is None:
            return None
        self._loaded = True
        try:
            lines = read_cache(self._path, self.max_bytes, private=True,
                               appended=True).decode("utf-8").split("\n")
        except FileNotFoundError:
            return None
        except UntrustedFile as e:   # its lines may list any hostile text as clean: none is read
            self._warn(f"{self.what} %s is not this user's alone (%s); {self.again} and it is "
                       "replaced", self._path, e.strerror)
            self._needs_rewrite = True
            return None
        except (OSError, UnicodeDecodeError) as e:
            self._warn(f"{self.what} %s is unreadable (%s); {self.again}", self._path,
                       getattr(e, "strerror", None) or type(e).__name__)
            self._needs_rewrite = True
            return None
        head = parse_header(lines[0])
        if head is None:
            if lines != [""]:   # an empty file (a crash before its first write) is said nowhere
                self._warn(f"{self.what} %s is damaged (no valid header); {self.again}",
                           self._path)
            self._needs_rewrite = True
            return None
        return head, lines

    def _lines(self, lines: list[str]) -> LogLines:
        """The entries after the header: one split per line, so a start reads thousands at that
        cost (each line's CRC is checked when its key is asked for). A torn last line or a line
        that is not a key and the rest (said once) start the file again at the next write."""
        body = lines[1:]
        entries: dict[str, str] = {}
        bad = 0
        for raw in body[:-1]:
            key, sep, rest = raw.partition(" ")
            if len(key) != self.key_hex or not sep:
                bad += 1
                continue
            entries[key] = rest
        got = LogLines(entries, max(len(body) - 1, 0), bool(body) and body[-1] != "")
        self._needs_rewrite = got.torn or bad > 0
        if bad:
            self._warn(f"{self.what} %s is damaged (%d unreadable line(s) skipped); it will be "
                       "rewritten", self._path, bad)
        return got


class CleanLog(HomeLog):
    """The clean verdicts of one memo, in one file of the attached folder. Thread-safe; the file
    is read on the first lookup after :meth:`attach`, never at attach time. A subclass may file
    its header otherwise (``header``, ``parse_header``: the context files' parts)."""

    what = "scan cache"
    header: Callable[[str], str] = staticmethod(_header)
    parse_header: Callable[[str], str | None] = staticmethod(_parse_header)

    def __init__(self, file_name: str, disk_cap: int = DISK_CAP) -> None:
        self.file_name = file_name
        self.disk_cap = disk_cap
        # free in a forked child: held across the file's read and appends, one a thread held at the
        # fork hung the child's first prompt
        self._lock = child_lock(threading.Lock())
        self._path: Path | None = None
        self._entries: OrderedDict[str, str] = OrderedDict()   # key -> "count crc", as filed
        self._loaded = False
        self._version: str | None = None   # the scanner version the file on disk was written by
        self._lines_in_file = 0
        self._needs_rewrite = False
        self._warned = False
        # a rewrite failed (a read-only home, a full disk, a folder in the file's place): not
        # tried again until the next attach, since each try reads the whole file first; the
        # verdicts found are kept in memory
        self._cannot_rewrite = False

    @property
    def path(self) -> Path | None:
        return self._path

    def attach(self, directory: str | os.PathLike[str] | None) -> None:
        """Keep the verdicts in ``directory`` (made on the first write); None: in memory only."""
        path = Path(directory) / self.file_name if directory is not None else None
        with self._lock:
            if path == self._path:
                return
            self._path, self._loaded, self._version = path, False, None
            self._entries.clear()
            self._lines_in_file, self._needs_rewrite = 0, False
            # said once per file attached, a failed rewrite tried again: as a new process would
            self._warned = self._cannot_rewrite = False

    @staticmethod
    def key(digest: bytes, name: str, categories: tuple[str, ...], first_line: int,
            data: bool) -> str:
        """The hash a clean text is filed under (the text itself is never stored). The scanner's
        version salts it, as the header names it: a process of another version (an older release
        still running after an upgrade, ``HERMES_DISABLE_JIEBA`` flipped) that read the file under
        its own header appends after this one rewrote it, and its lines must match nothing here."""
        h = hashlib.blake2b(scanner_code().encode("ascii"), digest_size=KEY_HEX // 2)
        h.update(_model_salt(categories))
        h.update(f"\x00{name}\x00{chr(31).join(categories)}\x00{first_line}\x00{int(data)}\x00"
                 .encode("utf-8", "surrogatepass"))
        h.update(digest)
        return h.hexdigest()

    def known(self, keys: Sequence[str]) -> dict[str, int]:
        """The paragraph counts of the keys filed as clean (none when no folder is attached)."""
        if self._path is None:
            return {}
        version = scanner_code()
        out: dict[str, int] = {}
        with self._lock:
            self._load(version)
            for k in keys:
                raw = self._entries.get(k)
                if raw is None:
                    continue
                n = _paragraphs(k, raw)
                if n is None:
                    self._warn(f"{self.what} %s is damaged (an unreadable line skipped); it "
                               "will be rewritten", self._path)
                    del self._entries[k]
                    self._needs_rewrite = True
                    continue
                self._entries.move_to_end(k)
                out[k] = n
        return out

    def add(self, clean: Sequence[tuple[str, int]]) -> None:
        """File texts just found clean (key, paragraph count); a failure costs only the cache."""
        if self._path is None or not clean:
            return
        version = scanner_code()
        with self._lock:
            self._load(version)
            fresh = [(k, n) for k, n in clean if k not in self._entries]
            for k, n in fresh:
                self._entries[k] = _line(k, n).split(" ", 1)[1].rstrip("\n")
            if (fresh or self._needs_rewrite) and not self._cannot_rewrite:
                self._write(version, fresh)

    # ------------------------------------------------------------------ the file
    def _load(self, version: str) -> None:
        got = self._read(self.parse_header)
        if got is None:
            return
        self._version, lines = got
        if self._version != version:   # another scanner's verdicts: none applies
            self._needs_rewrite = True
            return
        read = self._lines(lines)
        self._entries.update(read.entries)
        self._lines_in_file = read.count

    def _write(self, version: str, fresh: list[tuple[str, int]]) -> None:
        assert self._path is not None
        if (self._version != version or self._needs_rewrite
                or self._lines_in_file + len(fresh) > 2 * self.disk_cap):
            self._rewrite(version)
            return
        try:
            if not append_log(self._path, "".join(_line(k, n) for k, n in fresh).encode()):
                self._rewrite(version)
                return
            self._lines_in_file += len(fresh)
        except OSError as e:
            # after a short write a half line is there: the next write replaces the file
            self._needs_rewrite = self._needs_rewrite or isinstance(e, ShortWrite)
            self._warn(f"{self.what}: cannot write %s: %s (kept in memory only)", self._path,
                       e.strerror or e)

    def _merge_file(self, version: str) -> None:
        """Keep the entries another process filed since this one read the file (a second chat
        in this home), behind this one's: a rewrite from memory alone dropped them. A read of a
        file at most twice the cap, on a rewrite only."""
        self._loaded = False
        got = self._read(self.parse_header)
        if got is None or got[0] != version:
            return
        theirs = [(k, rest) for k, rest in self._lines(got[1]).entries.items()
                  if k not in self._entries]
        mine = list(self._entries.items())
        self._entries.clear()
        self._entries.update(theirs)
        self._entries.update(mine)

    def _rewrite(self, version: str) -> None:
        assert self._path is not None
        self._merge_file(version)
        while len(self._entries) > self.disk_cap:   # the least recently asked for go
            self._entries.popitem(last=False)
        lines = "".join(f"{k} {rest}\n" for k, rest in self._entries.items())
        # no home (said at debug): tried again at the next filing, since a first chat makes its
        # home later on (its first write), and a home missing costs no read of the file
        if not make_folders(self._path, 2, self.what, logger=self.logger):
            return
        try:
            write_atomic(self._path, (self.header(version) + lines).encode(), mode=PRIVATE,
                         durable=False)
        except OSError as e:   # once said (a folder in its place was said unreadable already)
            self._warn(f"{self.what}: cannot write %s: %s (kept in memory only)", self._path,
                       e.strerror or e)
            self._cannot_rewrite = True
            return
        self._version, self._lines_in_file, self._needs_rewrite = version, len(self._entries), False


#: The skill descriptions' clean verdicts (``retrieval.result.DESCRIPTION_VERDICTS``), kept in the
#: home that ``verdicts.use_home_cache`` attaches with the learned scorer's.
DESCRIPTIONS = CleanLog("descriptions.log")
