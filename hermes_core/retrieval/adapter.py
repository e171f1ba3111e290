"""A learned query adapter for one embedding model: ``q' = normalise(q + (q B^T) A^T)``.

MiniLM was trained on general sentence pairs, not on "a request -> the tool that serves it". A
low-rank residual map of the query vector, fitted on other people's public tool-use data
(``tests/data/adapter/``: Gorilla's BFCL and APIBench, ToolAlpaca; never a catalog this project
is measured on), moves a request towards the descriptions of tools that serve it on catalogs it
never saw. Only queries move: skill documents keep their vectors (and their on-disk cache), so a
wrapped embedder's document ``cache_id`` is the model's own, while everything derived from query
vectors (the calibration, its cached reference vectors, persisted query vectors, the usage index)
is keyed by ``query_cache_id``, which carries the weights' fingerprint: changed weights are never
served a stale calibration.

The weights are keyed by the model id they were fitted for; any other model is left alone. A
missing or unreadable weights file logs a warning and leaves the plain model in place.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core.npz import read_npz

log = logging.getLogger(__name__)

#: the shipped weights (see ``ADAPTER_LICENSE.md`` beside them for provenance and licences)
DEFAULT_WEIGHTS = Path(__file__).with_name("data") / "query_adapter.npz"


@dataclass(frozen=True, slots=True, eq=False)
class QueryAdapter:
    """Low-rank residual map for the query vectors of ``model_id`` (``a``: d x r, ``b``: r x d)."""

    model_id: str
    a: np.ndarray
    b: np.ndarray
    fingerprint: str

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Adapted, L2-normalised float32 vectors (one vector or a batch of rows)."""
        v = np.asarray(vectors, dtype=np.float32)
        out = v + (v @ self.b.T) @ self.a.T
        n = np.linalg.norm(out, axis=-1, keepdims=True)
        return np.asarray(out / np.maximum(n, 1e-12), dtype=np.float32)


def fingerprint(model_id: str, a: np.ndarray, b: np.ndarray) -> str:
    """Names exactly these weights for this model (any changed value gives another)."""
    h = hashlib.sha256(model_id.encode())
    for m in (a, b):
        arr = np.ascontiguousarray(m, dtype=np.float32)
        h.update(str(arr.shape).encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def load_adapter(path: str | os.PathLike[str] | None = None) -> QueryAdapter | None:
    """The adapter stored at ``path`` (default: the shipped one), or None with a warning when the
    file is missing or is not a well-formed, finite pair of matching matrices."""
    p = Path(path) if path is not None else DEFAULT_WEIGHTS
    try:
        z = read_npz(p)
        model_id = str(z["model_id"][()])
        a = np.asarray(z["a"], dtype=np.float32)
        b = np.asarray(z["b"], dtype=np.float32)
    except Exception as exc:   # missing, torn, a pickle, wrong keys: the plain model serves
        log.warning("query adapter %s unusable (%s); using the plain embedding model", p,
                    type(exc).__name__)
        return None
    if (a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or a.shape[0] != b.shape[1]
            or not (np.isfinite(a).all() and np.isfinite(b).all())):
        log.warning("query adapter %s malformed (shapes %s, %s); using the plain embedding model",
                    p, a.shape, b.shape)
        return None
    return QueryAdapter(model_id, a, b, fingerprint(model_id, a, b))


class AdaptedEmbedder:
    """An embedder whose query vectors go through a :class:`QueryAdapter`; documents unchanged.

    ``model_id`` stays the model's (the gate's per-model rules key on it) and so does ``cache_id``
    (document vectors are the model's own); ``query_cache_id`` adds the adapter's fingerprint.
    """

    def __init__(self, inner: Any, adapter: QueryAdapter) -> None:
        self.inner = inner
        self.adapter = adapter
        self.model_id: str = inner.model_id
        self.cache_id: str = getattr(inner, "cache_id", None) or inner.model_id
        self.query_cache_id = f"{self.cache_id}+adapter:{adapter.fingerprint}"
        self.imports_torch = bool(getattr(inner, "imports_torch", False))
        self.multilingual = bool(getattr(inner, "multilingual", False))

    @property
    def _model(self) -> Any:
        """The wrapped model once loaded (``DenseIndex.model_loaded`` reads it)."""
        return getattr(self.inner, "_model", True)

    def load(self) -> Any:
        return self.inner.load()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out: np.ndarray = self.inner.embed_documents(texts)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.adapter.apply(self.inner.embed_query(text))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        batch = getattr(self.inner, "embed_queries", None)
        vecs = (batch(list(texts)) if callable(batch)
                else np.vstack([self.inner.embed_query(t) for t in texts]))
        return self.adapter.apply(vecs)

    def covers(self, text: str) -> bool:
        return bool(self.inner.covers(text))


def adapt(embedder: Any, path: str | os.PathLike[str] | None = None) -> Any:
    """``embedder`` wrapped in the adapter fitted for its model, or unchanged (no adapter for its
    model id, or the weights file is missing or corrupt)."""
    adapter = load_adapter(path)
    if adapter is None or adapter.model_id != embedder.model_id:
        return embedder
    return AdaptedEmbedder(embedder, adapter)
