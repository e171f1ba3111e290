"""A catalog's document and part vectors in one file, so a restarted dense index does not read
one file per vector.

The embedding cache keeps a vector per file (``EmbeddingCache``: safe to share, any text's
vector found by its hash). A new process's first build looked every skill's document and every
part text up there: at 20,000 skills about 45,000 files opened, their ``.npy`` headers parsed
and their contents checked, 12 of a 20 s first refresh (profiled, nothing to embed). The index
now also writes what it built (the ``parts`` rows: each skill's document vector then its part
rows, the skills' document keys and part-list keys) to ``snapshots/<model>.npz`` in the same
folder, and a new index's first build takes a skill's vectors from it when that skill's keys
are there (the same keys it keeps them by in memory, so an edited skill is simply not found and
is looked up file by file as before).

The file is sealed (``gate_store``: a digest over every array and the header): its rows become
the ranking matrix, so a torn, flipped or foreign file is ignored with one warning and the
vector files serve. It is rewritten whole, so only after a build that looked up or embedded
:data:`MIN_NEW` skills or more since it was read or written (a first build, a large change).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hermes_core.forked import child_lock
from hermes_core.retrieval import cache_sweep
from hermes_core.retrieval.gate_store import blob_text, read_checked, text_blob, write_sealed

LAYOUT = 1
WHAT = "embedding snapshot"
MIN_NEW = 64   # skills looked up or embedded since the last read or write before it is written


def snapshot_path(cache_dir: str | os.PathLike[str], model_id: str) -> Path:
    return Path(cache_dir) / "snapshots" / f"{cache_sweep.model_name(model_id)}.npz"


@dataclass(frozen=True)
class Snapshot:
    """What a build kept, by key: a document key's vector and a part-list key's rows."""

    docs: dict[str, np.ndarray]
    parts: dict[str, np.ndarray]


def save_snapshot(path: Path, model_id: str, doc_keys: Sequence[str], parts_keys: Sequence[str],
                  rows: np.ndarray, starts: np.ndarray) -> bool:
    """Write one index's ``rows`` (skill ``i``'s document vector at ``starts[i]``, its part rows
    up to the next start) with its skills' keys; False when the disk refused."""
    arrays = {"doc_keys": text_blob("\n".join(doc_keys)), "parts_keys": text_blob("\n".join(parts_keys)),
              "rows": np.ascontiguousarray(rows, dtype=np.float32),
              "starts": np.asarray(starts, dtype=np.int64)}
    return write_sealed(path, LAYOUT, {"model": model_id}, arrays, WHAT)


def load_snapshot(path: Path, model_id: str) -> Snapshot | None:
    """The vectors saved at ``path`` for ``model_id``; None when there is no usable file (a
    damaged one is said in the log once, by ``gate_store.read_checked``)."""
    return read_checked(path, LAYOUT, WHAT, again="reading the vector files",
                        ours=lambda h: h.get("model") == model_id, decode=lambda _, a: _snapshot(a))


def _snapshot(a: dict[str, np.ndarray]) -> Snapshot:
    rows, starts = a["rows"], a["starts"]
    docs, parts = _keys(a["doc_keys"]), _keys(a["parts_keys"])
    if rows.dtype != np.float32 or rows.ndim != 2 or not rows.shape[1] or starts.dtype != np.int64:
        raise TypeError("rows")
    if len(docs) != len(starts) or len(parts) != len(starts):
        raise ValueError("keys and skills of different counts")
    ends = np.append(starts[1:], len(rows))
    if len(starts) and (starts[0] != 0 or (ends <= starts).any() or ends[-1] != len(rows)):
        raise ValueError("row starts out of order")
    if not np.isfinite(rows).all():
        raise ValueError("a vector that is not finite")
    # copies: a view would keep the whole file's rows alive while any one skill kept its vectors
    return Snapshot({k: rows[s].copy() for k, s in zip(docs, starts.tolist(), strict=True)},
                    {k: rows[s + 1:e].copy()
                     for k, s, e in zip(parts, starts.tolist(), ends.tolist(), strict=True)})


def _keys(blob: np.ndarray) -> list[str]:
    text = blob_text(blob)
    return text.split("\n") if text else []


class VectorSnapshot:
    """One dense index's link with its snapshot file: :meth:`take` reads the file once (the
    index's first build) and hands its vectors out by key; :meth:`save` writes the index's rows
    when ``min_new`` skills or more were looked up or embedded since the file was read or
    written. No cache folder: both do nothing."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None, model_id: str,
                 min_new: int = MIN_NEW) -> None:
        self.path = None if cache_dir is None else snapshot_path(cache_dir, model_id)
        self.model_id = model_id
        self.min_new = min_new
        self._read = False
        self._new = 0
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self._lock = child_lock(threading.Lock())

    def take(self) -> Snapshot:
        """The file's vectors on the first call, nothing after (they are then in memory)."""
        with self._lock:
            if self._read or self.path is None:
                return Snapshot({}, {})
            self._read = True
            cache_sweep.touch(self.path, time.time())   # in use: no sweep takes it (cache_upkeep)
            return load_snapshot(self.path, self.model_id) or Snapshot({}, {})

    def save(self, new: int, doc_keys: Sequence[str], parts_keys: Sequence[str], rows: np.ndarray,
             starts: np.ndarray) -> None:
        """Count ``new`` skills looked up or embedded; write the rows once enough were."""
        with self._lock:
            self._new += new
            if self.path is None or self._new < self.min_new or not len(rows):
                return
            self._new = 0
            save_snapshot(self.path, self.model_id, doc_keys, parts_keys, rows, starts)
