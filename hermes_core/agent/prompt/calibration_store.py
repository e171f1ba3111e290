"""The billed-token ratio of each model, kept in the home so a new process counts as the last one did.

Why: a model without an OpenAI encoding is counted in ``o200k_base`` scaled by what its provider
billed over our count of the same request (:mod:`.token_count`). That ratio lived in the
:class:`~.compaction.HistoryCompactor` only, so a new process (a restart, a web server that makes
an Agent per request) counted its first turn unscaled: an Anthropic chat ~1.1-1.3x smaller than
the old process had counted it, so the new process sent the whole history on a turn the old one
had folded, and its folds fell turns away from the ones the provider had cached.

One small JSON file, ``HOME/cache/calibration.json``: ``{"format": 1, "ratios": {model: ratio}}``,
read once per store (the first time a ratio is asked for), replaced atomically when a ratio
changes, at most :data:`MAX_MODELS` models (the least recently billed dropped first). It is a
cache: a file that is unreadable, damaged or of another shape costs one warning naming it and an
uncalibrated first turn, as before; a ratio outside :data:`~.token_count.RATIO_BOUNDS` or of the
wrong type is ignored on its own. Processes on one home write the whole table each: the last
writer's table wins, which loses at worst another process's newest ratio of another model.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from hermes_core.agent.prompt.token_count import RATIO_BOUNDS
from hermes_core.atomic_write import read_kept, write_cache

log = logging.getLogger("hermes_core.compaction")

#: Models kept; a home serves a handful.
MAX_MODELS = 64
#: The file holds at most MAX_MODELS short entries: a larger one is not ours.
MAX_BYTES = 64_000
#: A model name longer than this is not kept (it would crowd the file out).
MAX_NAME = 200
FORMAT = 1


def usable(ratio: object) -> bool:
    """A ratio worth keeping: a finite float or int (not a bool) within the bounds."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return False
    low, high = RATIO_BOUNDS
    return low <= ratio <= high


class CalibrationStore:
    """Ratios by model in one file (see the module doc). ``read_only``: never written (a preview)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._ratios: dict[str, float] | None = None

    def get(self, model: str) -> float | None:
        """The last ratio billed for ``model`` in this home, or None."""
        return self._table().get(model)

    def put(self, model: str, ratio: float) -> bool:
        """Keep ``ratio`` for ``model``; True when the file was written."""
        table = self._table()
        if self.read_only or not model or len(model) > MAX_NAME or not usable(ratio):
            return False
        if table.get(model) == ratio:
            return False
        table.pop(model, None)
        table[model] = float(ratio)   # the newest last
        while len(table) > MAX_MODELS:
            del table[next(iter(table))]
        data = json.dumps({"format": FORMAT, "ratios": table}, ensure_ascii=False)
        return write_cache(self.path, data.encode("utf-8"), "token calibration", logger=log,
                           durable=False, folders=1)

    def _table(self) -> dict[str, float]:
        if self._ratios is None:
            self._ratios = self._read()
        return self._ratios

    def _read(self) -> dict[str, float]:
        table = read_kept(self.path, MAX_BYTES, _parse, self._unreadable)
        return table if table is not None else {}

    def _unreadable(self, reason: str) -> None:
        log.warning("token calibration %s ignored: %s; the first request is counted "
                    "uncalibrated", self.path, reason)


def _parse(data: Any) -> dict[str, float]:
    """The usable ratios of a file's JSON, at most MAX_MODELS (the newest); ValueError when it is
    not a calibration of this format (a ratio of the wrong kind is left out on its own)."""
    ratios = data.get("ratios") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or type(data.get("format")) is not int
            or data["format"] != FORMAT or not isinstance(ratios, dict)):
        raise ValueError(f"not a calibration of format {FORMAT}")
    kept = {m: float(r) for m, r in ratios.items()
            if isinstance(m, str) and len(m) <= MAX_NAME and usable(r)}
    return dict(list(kept.items())[-MAX_MODELS:])
