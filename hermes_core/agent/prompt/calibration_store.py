"""The billed-token ratio of each model, kept in the home so a new process counts as the last one did.

Why: a model without an OpenAI encoding is counted in ``o200k_base`` scaled by what its provider
billed over our count of the same request (:mod:`.token_count`). That ratio lived in the
:class:`~.compaction.HistoryCompactor` only, so a new process (a restart, a web server that makes
an Agent per request) counted its first turn unscaled: an Anthropic chat ~1.1-1.3x smaller than
the old process had counted it, so the new process sent the whole history on a turn the old one
had folded, and its folds fell turns away from the ones the provider had cached.

One small JSON file, ``HOME/cache/calibration.json``: ``{"format": 1, "ratios": {model: ratio}}``,
read once per store (the first time a ratio is asked for), at most :data:`MAX_MODELS` models (the
least recently billed dropped first). It is a cache: a file that is unreadable, damaged or of
another shape costs one warning naming it and an uncalibrated first turn, as before (a newer
version's format is never written over: its ratios are that version's); a ratio
outside :data:`~.token_count.RATIO_BOUNDS` or of the wrong type is ignored on its own.

When it is written: each request's ratio differs from the last in the third digit, so writing
every change replaced the file on nearly every billed turn. A model new to the file, or a ratio
moved by more than :data:`TOLERANCE` from the one the file holds, is written at once; a smaller
drift at most once per :data:`WRITE_INTERVAL` seconds (the store's clock), the newest ratio
counted with in memory meanwhile. So the file is always within the tolerance of this process's
newest ratio of each model it wrote (a failed write aside), whenever the process stops.

Processes on one home: a write re-reads the file and puts only this store's unwritten ratios
into it, under a lock file beside it (:func:`hermes_core.kept_table.update`, the served-as file's
too), so another process's models and newer ratios are kept; the table read back becomes this
store's. A busy lock keeps the ratios unwritten for the next write that is due, or the
process's exit (:func:`hermes_core.kept_table.pending`).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_core import kept_table
from hermes_core.agent.prompt.token_count import RATIO_BOUNDS
from hermes_core.atomic_write import read_kept

log = logging.getLogger("hermes_core.compaction")

#: Models kept; a home serves a handful.
MAX_MODELS = 64
#: The file holds at most MAX_MODELS entries: a larger one is not ours. Room for the largest the
#: store writes, each name MAX_NAME characters of six-byte escapes (~79 KB).
MAX_BYTES = 128_000
#: A model name longer than this is not kept (it would crowd the file out).
MAX_NAME = 200
FORMAT = 1
WHAT = "token calibration"
#: A ratio this close to the file's (relative) is not worth a write of its own: counts move by
#: the same share, well inside the budget's safety margin.
TOLERANCE = 0.02
#: Seconds between writes of drift within the tolerance.
WRITE_INTERVAL = 300.0


def usable(ratio: object) -> bool:
    """A ratio worth keeping: a finite float or int (not a bool) within the bounds."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return False
    low, high = RATIO_BOUNDS
    return low <= ratio <= high


def drifted(kept: float, ratio: float, tolerance: float = TOLERANCE) -> bool:
    """Whether ``ratio`` moved more than ``tolerance`` (relative) from ``kept``."""
    return abs(ratio / kept - 1.0) > tolerance


def write_due(kept: float | None, ratio: float, since_write: float | None, *,
              tolerance: float = TOLERANCE, interval: float = WRITE_INTERVAL) -> bool:
    """Whether ``ratio`` is to be written now, the file holding ``kept`` for its model (None: not
    there) and the last write ``since_write`` seconds ago (None: none by this store)."""
    if kept is None or drifted(kept, ratio, tolerance):
        return True
    return ratio != kept and (since_write is None or since_write >= interval)


class CalibrationStore:
    """Ratios by model in one file (see the module doc). ``read_only``: never written (a preview).
    ``clock``: monotonic seconds, for the interval between writes of a small drift."""

    def __init__(self, path: Path, *, read_only: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.clock = clock
        self._ratios: dict[str, float] | None = None   # the newest known, this store's put in
        self._kept: dict[str, float] = {}              # what the file held when last read or written
        self._unwritten: dict[str, float] = {}
        self._wrote: float | None = None
        self._warned = False

    def get(self, model: str) -> float | None:
        """The last ratio billed for ``model`` in this home, or None."""
        return self._table().get(model)

    def steady(self, model: str, newest: float) -> float:
        """The ratio to count ``model`` with, this process's newest bill of it being ``newest``:
        the file's while ``newest`` is within :data:`TOLERANCE` of it, so this process counts as a
        new one reading the file does (a small drift is written once per interval, and a count
        2% apart could fold a turn apart); ``newest`` once past it, or when the file has none
        (then the write is due, or failed)."""
        self._table()
        kept = self._kept.get(model)
        return newest if kept is None or drifted(kept, newest) else kept

    def put(self, model: str, ratio: float) -> bool:
        """Keep ``ratio`` for ``model``; True when the file was written."""
        table = self._table()
        if self.read_only or not _keepable(model) or not usable(ratio):
            return False
        if table.get(model) == ratio:
            return False
        table.pop(model, None)
        table[model] = float(ratio)   # the newest last
        while len(table) > MAX_MODELS:
            del table[next(iter(table))]
        self._unwritten.pop(model, None)
        self._unwritten[model] = float(ratio)
        now = self.clock()
        if not write_due(self._kept.get(model), ratio,
                         None if self._wrote is None else now - self._wrote):
            return False
        self._wrote = now
        return self._write()

    def flush_pending(self, wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Write the ratios a busy lock kept out, waiting at most ``wait`` seconds (at exit; one
        wait, for the file's lock, so ``clock`` is not needed)."""
        if self._unwritten and not self.read_only:
            self._write(wait)

    def _write(self, wait: float | None = None) -> bool:
        """Merge this store's unwritten ratios into the file as it is now, under its lock (waiting
        ``wait`` seconds for it; by default as :func:`kept_table.update` decides)."""
        def merge(kept: dict[str, float] | None) -> dict[str, float]:
            table = kept if kept is not None else {}
            for model, ratio in self._unwritten.items():
                table.pop(model, None)
                table[model] = ratio
            return dict(list(table.items())[-MAX_MODELS:])

        done = kept_table.update(self.path, MAX_BYTES, _parse, merge, _dump, WHAT, logger=log,
                                 warn=self._unreadable, wait=wait)
        if done.busy:   # at the next write that is due, or at exit
            kept_table.pending(self)
        table = done.table
        if table is None:   # the home refuses, another writer holds the lock, a newer version's
            return False    # file: kept unwritten, counted with
        self._ratios, self._kept, self._unwritten = table, dict(table), {}
        return True

    def _table(self) -> dict[str, float]:
        if self._ratios is None:
            self._ratios = self._read()
            self._kept = dict(self._ratios)
        return self._ratios

    def _read(self) -> dict[str, float]:
        table = read_kept(self.path, MAX_BYTES, _parse, self._unreadable)
        return table if table is not None else {}

    def _unreadable(self, reason: str) -> None:
        if not self._warned:   # once per store: a write reads it again
            self._warned = True
            log.warning("token calibration %s ignored: %s; the first request is counted "
                        "uncalibrated", self.path, reason)


def _keepable(model: str) -> bool:
    """A name the file can hold: not empty, not too long, text UTF-8 can write (a name read with
    surrogateescape from bytes that are no UTF-8 is not)."""
    if not model or len(model) > MAX_NAME:
        return False
    try:
        model.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _dump(table: dict[str, float]) -> bytes:
    return json.dumps({"format": FORMAT, "ratios": table}, ensure_ascii=False).encode("utf-8")


def _parse(data: Any) -> dict[str, float]:
    """The usable ratios of a file's JSON, at most MAX_MODELS (the newest); ValueError when it is
    not a calibration of this format (a ratio of the wrong kind is left out on its own)."""
    ratios = data.get("ratios") if isinstance(data, dict) else None
    form = data.get("format") if isinstance(data, dict) else None
    if type(form) is int and form > FORMAT:
        raise kept_table.Newer(f"format {form}, written by a newer hermes_core; left as it is")
    if (not isinstance(data, dict) or type(data.get("format")) is not int
            or data["format"] != FORMAT or not isinstance(ratios, dict)):
        raise ValueError(f"not a calibration of format {FORMAT}")
    kept = {m: float(r) for m, r in ratios.items()
            if isinstance(m, str) and len(m) <= MAX_NAME and usable(r)}
    return dict(list(kept.items())[-MAX_MODELS:])
