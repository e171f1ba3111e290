"""The dense gate's calibration, kept up to date through catalog edits at a cost per changed skill.

A full calibration (``calibration.calibrate_dense``) scores every reference request and every
pseudo-query against every skill: on a 20,000-skill catalog that was most of what a one-skill edit
cost. What one changed skill really moves:

* its own statistics (``ColumnStats``) and every reference request's leave-one-out z on it: one
  column, which depends on that skill's vectors alone;
* each row's best z and top cosine: a maximum over the skills. Each row (a reference request or a
  pseudo-query) keeps its ``TOP`` largest values with the skills that gave them; a changed or
  deleted skill leaves the row's list, a new one enters it when it beats the list's smallest
  value, and a row whose list ran empty is scored against every skill again;
* each row's mean cosine over the catalog: the row's vector times the sum of the skills' vectors;
* the pseudo-queries: the sample is chosen by name hash (``calibration.pseudo_sample``), so only
  an edited, added or newly sampled skill brings rows to score whole;
* the fixed rule's scale, the thresholds and the report: recomputed from those rows
  (``calibration.finish_dense``), which is what the full calibration does too.

The result equals a full calibration of the new catalog up to the order of floating-point sums
(pinned by a hypothesis test over edit / add / delete sequences). The kept state lives in memory
(:class:`GateMemo`, one a retriever) and in the cache folder beside the calibrations, one file per
model and set of catalog sources (``lineage``), replaced by each calibration: a restarted process
reads it when its first change comes (not before: a restart with no change reads only the
calibration), so that change is an update too. The file is the input of every update after it,
so it is sealed by a digest and checked whole before use (``gate_store``); one that fails any
check is ignored with a warning, and the calibration is computed whole, as without it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hermes_core.retrieval import cache_sweep
from hermes_core.retrieval.calibration import (
    LANGS,
    ColumnStats,
    DenseCalibration,
    cache_path,
    cached_query_vectors,
    catalog_key,
    column_stats,
    finish_dense,
    gate_requests,
    load,
    loo_z,
    offtopic_requests,
    pseudo_queries,
    pseudo_sample,
    query_language,
    save,
    unrelated_scale,
)
from hermes_core.retrieval.dense import soft_max_by_skill, text_keys
from hermes_core.retrieval.gate_store import read_sealed, write_sealed
from hermes_core.types import Skill

log = logging.getLogger(__name__)

# Values kept per row: a row is scored whole again only after this many of its best skills
# changed or went, between two full calibrations.
TOP = 32
# More changed skills than this share of the catalog (at least MIN_CHANGES): a full calibration,
# which then costs about what the update would.
REBUILD_SHARE = 0.1
MIN_CHANGES = 8
# Pseudo-query rows scored against the whole catalog at once (bounds the rows x skills matrix).
CHUNK = 64
# The layout of the state's file: bumped whenever what it holds or means changes.
STATE_VERSION = 1


class Dense(Protocol):
    """What calibrating needs from a dense index (``retrieval.dense.DenseIndex``)."""

    embedder: Any
    cache: Any
    cache_id: str
    query_cache_id: str

    @property
    def matrix(self) -> np.ndarray: ...

    @property
    def parts(self) -> np.ndarray: ...

    @property
    def part_starts(self) -> np.ndarray: ...


class StatsRule(Protocol):
    """The model's fixed-rule gate score (``dense_gate.FixedRule``): of query vectors, and from
    each vector's top and mean cosine over the catalog when those are known."""

    def __call__(self, vectors: np.ndarray) -> np.ndarray: ...

    def from_stats(self, vectors: np.ndarray, top: np.ndarray, mean: np.ndarray) -> np.ndarray: ...


class _Top:
    """Per row, the exact largest values over the current skills with the skills' ids: where a
    value was dropped (its skill changed) the slot holds -inf and id -1, and what lies below the
    smallest kept value is unknown."""

    def __init__(self, vals: np.ndarray, ids: np.ndarray) -> None:
        self.vals, self.ids = vals, ids

    @classmethod
    def of(cls, m: np.ndarray, ids: np.ndarray) -> _Top:
        """The ``TOP`` largest of each row of ``m`` (rows x skills whose ids are ``ids``)."""
        rows, n = m.shape
        if n > TOP:
            sel = np.argpartition(m, n - TOP, axis=1)[:, n - TOP:]
        else:
            sel = np.broadcast_to(np.arange(n), (rows, n))
        vals, got = np.take_along_axis(m, sel, axis=1), ids[sel]
        pad = TOP - vals.shape[1]
        if pad > 0:
            vals = np.hstack([vals, np.full((rows, pad), -np.inf)])
            got = np.hstack([got, np.full((rows, pad), -1, dtype=np.int64)])
        return cls(np.ascontiguousarray(vals, dtype=np.float64), np.ascontiguousarray(got, dtype=np.int64))

    def best(self) -> np.ndarray:
        out: np.ndarray = self.vals.max(axis=1) if self.vals.size else np.full(len(self.vals), -np.inf)
        return out

    def drop(self, gone: np.ndarray) -> None:
        hit = np.isin(self.ids, gone)
        self.vals[hit], self.ids[hit] = -np.inf, -1

    def held(self) -> np.ndarray:
        """How many skills each row's list holds."""
        out: np.ndarray = (self.ids >= 0).sum(axis=1)
        return out

    def add(self, m: np.ndarray, ids: np.ndarray, complete: np.ndarray) -> None:
        """New skills' values (rows x new skills): a value enters a row's list when the list held
        every skill (``complete``) or the value is at least the list's smallest (below it, a kept
        skill not in the list may beat it)."""
        if not m.shape[1]:
            return
        low = np.where(self.ids >= 0, self.vals, np.inf).min(axis=1)
        floor = np.where(complete, -np.inf, low)[:, None]
        ok = m >= floor
        vals = np.hstack([self.vals, np.where(ok, m, -np.inf)])
        got = np.hstack([self.ids, np.where(ok, np.broadcast_to(ids, m.shape), -1)])
        sel = np.argpartition(vals, vals.shape[1] - TOP, axis=1)[:, vals.shape[1] - TOP:]
        self.vals = np.take_along_axis(vals, sel, axis=1)
        self.ids = np.take_along_axis(got, sel, axis=1)

    def replace(self, rows: np.ndarray, fresh: _Top) -> None:
        self.vals[rows], self.ids[rows] = fresh.vals, fresh.ids

    def keep(self, rows: np.ndarray) -> _Top:
        return _Top(self.vals[rows], self.ids[rows])

    @staticmethod
    def stack(parts: Sequence[_Top]) -> _Top:
        return _Top(np.vstack([p.vals for p in parts]), np.vstack([p.ids for p in parts]))


@dataclass
class _Rows:
    """A group of query rows (the reference, or the pseudo-queries): their vectors and languages,
    and per row the best z and best raw cosine over the catalog."""

    vectors: np.ndarray
    langs: np.ndarray
    z: _Top
    cos: _Top


@dataclass
class _State:
    """What a calibration of one catalog keeps for the next: each skill's key and id, in index
    order, its column statistics, and the rows."""

    context: tuple[Any, ...]
    keys: list[tuple[str, str, str]]
    ids: np.ndarray
    next_id: int
    columns: ColumnStats
    ref: _Rows
    pseudo: _Rows
    texts: dict[str, int]          # pseudo-query text's _text_id -> its row
    unrelated: tuple[float, float]


@dataclass
class GateMemo:
    """The last calibration's state per model, for the next refresh of the same retriever."""

    states: dict[str, _State] = field(default_factory=dict)
    # how the last calibration per model was made: "cache", "full" or "update" (tests, benchmark)
    last: dict[str, str] = field(default_factory=dict)


def calibrate_index(dense: Dense, skills: Sequence[Skill], cache_dir: str | os.PathLike[str] | None,
                    fixed: StatsRule | None = None, fixed_rule: str = "",
                    memo: GateMemo | None = None, lineage: str = "", digest: str | None = None,
                    max_idle_days: float = cache_sweep.MAX_IDLE_DAYS) -> DenseCalibration:
    """The calibration of ``dense`` (already built over ``skills``): loaded from the cache when this
    exact catalog and model were calibrated before under the same fixed rule (``fixed_rule``
    names the parameters of ``fixed``); else updated from ``memo``'s state of an earlier catalog
    (or, after a restart, the state saved in ``cache_dir`` for ``lineage``, the catalog's
    sources) when few skills differ, or computed whole (reference and pseudo-queries embedded
    once, their vectors cached too); then saved, with the state when there is a ``memo``.
    ``digest``: ``calibration.catalog_digest(skills)`` when the caller has it; files no process
    used for ``max_idle_days`` are removed after a computation (``skill_utils.cache_idle_days``)."""
    mid = dense.query_cache_id
    key = catalog_key(mid, skills, fixed_rule if fixed is not None else "", digest)
    if cache_dir is not None:   # in use: no other process's sweep takes it
        cache_sweep.touch(cache_path(Path(cache_dir), key), time.time())
    cal = load(cache_dir, key, len(skills))
    if cal is not None:
        if memo is not None:
            memo.last[mid] = "cache"
        return cal
    context = _context(dense, fixed, fixed_rule)
    # taken out while it is updated: an update that fails half-way must not be read again
    state = memo.states.pop(mid, None) if memo is not None else None
    if state is None and memo is not None and cache_dir is not None:
        cache_sweep.touch(_state_path(cache_dir, mid, lineage), time.time())
        state = load_state(_state_path(cache_dir, mid, lineage), context)
    columns = [(s.name, t.doc, t.parts) for s, t in zip(skills, text_keys(skills), strict=True)]
    sample = [t for i in pseudo_sample(skills) for t in pseudo_queries(skills[i])]
    updated = (state is not None and state.context == context
               and _update(state, dense, columns, sample, fixed))
    if state is None or not updated:
        state = _build(context, dense, columns, sample, fixed)
    if memo is not None:
        memo.states[mid] = state
        memo.last[mid] = "update" if updated else "full"
    cal = _finish(state, str(dense.embedder.model_id), key, dense, sample, fixed)
    save(cache_dir, cal)
    if memo is not None and cache_dir is not None:
        save_state(_state_path(cache_dir, mid, lineage), state)
    if cache_dir is not None:   # each catalog edit keys a new file: the old ones, once unused
        _sweep(cache_path(Path(cache_dir), key), _state_path(cache_dir, mid, lineage), max_idle_days)
    return cal


def _sweep(calibration: Path, state: Path, max_idle_days: float) -> None:
    """Remove the calibrations and states no process has read or written for
    ``max_idle_days``, this one's kept (a process serving another catalog or model
    from the same folder marks its files whenever it reads them)."""
    for path, made in ((calibration, _CALIBRATION_MADE), (state, _STATE_MADE)):
        cache_sweep.sweep(path.parent, {path.name}, _OWNED, time.time(), max_idle_days, made=made)


def _text_id(text: str) -> str:
    """A pseudo-query's name in the state: its hash, so the state's file holds no skill text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _context(dense: Dense, fixed: StatsRule | None, fixed_rule: str) -> tuple[Any, ...]:
    """What a kept state is only valid under: the model (its query and document ids: a state read
    from disk may be another build's), the fixed rule and its anchors, the reference, whether the
    index has part vectors, and the vectors' width (last: ``_state_of`` reads it)."""
    anchors = getattr(fixed, "anchors", None)
    digest = hashlib.sha256(np.ascontiguousarray(anchors, dtype=np.float64).tobytes()).hexdigest() \
        if anchors is not None else ""
    width = dense.matrix.shape[1] if dense.matrix.ndim == 2 else 0   # another model under the id
    return (dense.query_cache_id, dense.cache_id, fixed is not None,
            fixed_rule if fixed is not None else "", digest, gate_requests(), len(offtopic_requests()),
            _has_parts(dense), width)


def _has_parts(dense: Dense) -> bool:
    return bool(len(dense.parts)) and len(dense.part_starts) == len(dense.matrix)


def _docs(dense: Dense, positions: np.ndarray | None = None) -> np.ndarray:
    m = dense.matrix if positions is None else dense.matrix[positions]
    out: np.ndarray = np.asarray(m, dtype=np.float64)
    return out


def _part_scores(dense: Dense, vectors: np.ndarray, positions: np.ndarray) -> np.ndarray | None:
    """Each vector's multi-vector part score on the skills at ``positions`` (vectors x skills)."""
    if not _has_parts(dense) or not len(vectors):
        return None
    if not len(positions):
        return np.zeros((len(vectors), 0))
    starts = np.asarray(dense.part_starts)
    ends = np.append(starts[1:], len(dense.parts))
    lo, hi = starts[positions], ends[positions]
    rows = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]) if len(lo) else \
        np.zeros(0, dtype=np.int64)
    sub_starts = np.concatenate([[0], np.cumsum(hi - lo)[:-1]]).astype(np.int64)
    sims = np.asarray(vectors, dtype=np.float64) @ np.asarray(dense.parts[rows], dtype=np.float64).T
    return np.vstack([soft_max_by_skill(r, sub_starts) for r in sims])


def _gate_z(cos: np.ndarray, langs: np.ndarray, columns: ColumnStats, positions: np.ndarray | None
            ) -> np.ndarray:
    """Each row's cosines (rows x skills at ``positions``, all when None) as the gate's z in the
    row's language."""
    z = np.empty_like(cos)
    for lang in set(langs.tolist()):
        rows = langs == lang
        use = lang if lang in columns.gate_mean else "en"
        gm, gs = columns.gate_mean[use], columns.gate_std[use]
        if positions is not None:
            gm, gs = gm[positions], gs[positions]
        z[rows] = (cos[rows] - gm) / gs
    return z


def _score_rows(vectors: np.ndarray, langs: np.ndarray, docs: np.ndarray, ids: np.ndarray,
                columns: ColumnStats) -> tuple[_Top, _Top]:
    """Pseudo-query rows scored against every skill, ``CHUNK`` rows at a time."""
    z_parts: list[_Top] = []
    cos_parts: list[_Top] = []
    for at in range(0, len(vectors), CHUNK):
        cos = vectors[at:at + CHUNK] @ docs.T
        z_parts.append(_Top.of(_gate_z(cos, langs[at:at + CHUNK], columns, None), ids))
        cos_parts.append(_Top.of(cos, ids))
    if not z_parts:
        empty = _Top.of(np.zeros((0, len(ids))), ids)
        return empty, empty
    return _Top.stack(z_parts), _Top.stack(cos_parts)


def _query_vectors(dense: Dense, texts: Sequence[str], dim: int) -> np.ndarray:
    if not texts:
        return np.zeros((0, dim))
    out: np.ndarray = np.asarray(cached_query_vectors(dense, texts), dtype=np.float64)
    return out


def _ref_rows(off: np.ndarray, langs: np.ndarray, sims: np.ndarray, ids: np.ndarray) -> _Rows:
    return _Rows(off, langs, _Top.of(loo_z(sims, langs), ids), _Top.of(sims, ids))


def _build(context: tuple[Any, ...], dense: Dense, columns: list[tuple[str, str, str]],
           sample: Sequence[str], fixed: StatsRule | None) -> _State:
    """The state of a calibration computed whole."""
    off_texts = list(gate_requests())
    docs = _docs(dense)
    off = _query_vectors(dense, off_texts, docs.shape[1])
    langs = np.asarray([query_language(t) for t in off_texts])
    n_rank = len(offtopic_requests())
    ids = np.arange(len(columns), dtype=np.int64)
    sims = off @ docs.T
    stats = column_stats(sims, langs, n_rank, _part_scores(dense, off[:n_rank], ids))
    unique = list(dict.fromkeys(sample))
    ps = _query_vectors(dense, unique, docs.shape[1])
    ps_langs = np.asarray([query_language(t) for t in unique], dtype=object)
    z, cos = _score_rows(ps, ps_langs, docs, ids, stats)
    return _State(context, list(columns), ids, len(columns), stats, _ref_rows(off, langs, sims, ids),
                  _Rows(ps, ps_langs, z, cos), {_text_id(t): i for i, t in enumerate(unique)},
                  unrelated_scale(off[:n_rank]))


def _update(state: _State, dense: Dense, columns: list[tuple[str, str, str]], sample: Sequence[str],
            fixed: StatsRule | None) -> bool:
    """Bring ``state`` to the catalog ``columns`` (index order) and pseudo-query ``sample``;
    False (state untouched) when too much changed for an update to pay."""
    old = {k: i for i, k in enumerate(state.keys)}
    kept_new = np.asarray([i for i, k in enumerate(columns) if k in old], dtype=np.int64)
    kept_old = np.asarray([old[columns[i]] for i in kept_new], dtype=np.int64)
    fresh = np.asarray([i for i, k in enumerate(columns) if k not in old], dtype=np.int64)
    gone_mask = np.ones(len(state.keys), dtype=bool)
    gone_mask[kept_old] = False
    changes = len(fresh) + int(gone_mask.sum())
    if changes > max(MIN_CHANGES, REBUILD_SHARE * len(columns)) or not len(kept_new):
        return False
    gone = state.ids[gone_mask]
    new_ids = np.arange(state.next_id, state.next_id + len(fresh), dtype=np.int64)
    ids = np.empty(len(columns), dtype=np.int64)
    ids[kept_new], ids[fresh] = state.ids[kept_old], new_ids
    # the new skills' columns: statistics, each reference request's leave-one-out z and cosine
    ref = state.ref
    d_new = _docs(dense, fresh)
    n_rank = len(offtopic_requests())
    s_new = ref.vectors @ d_new.T
    new_stats = column_stats(s_new, ref.langs, n_rank, _part_scores(dense, ref.vectors[:n_rank], fresh))
    state.columns = _merge_columns(state.columns, new_stats, len(columns), kept_new, kept_old, fresh)
    n_kept = len(kept_new)
    for rows, z_new, cos_new in ((ref, loo_z(s_new, ref.langs), s_new),
                                 (state.pseudo, None, None)):
        if rows.vectors.shape[0] == 0:
            continue
        if z_new is None:
            cos_new = rows.vectors @ d_new.T
            z_new = _gate_z(cos_new, rows.langs, state.columns, fresh)
        assert cos_new is not None
        for top, m in ((rows.z, z_new), (rows.cos, cos_new)):
            top.drop(gone)
            held = top.held()
            top.add(m, new_ids, held == n_kept)
    state.keys, state.ids, state.next_id = list(columns), ids, state.next_id + len(fresh)
    docs: np.ndarray | None = None
    if (ref.z.held() == 0).any() or (ref.cos.held() == 0).any():
        docs = _docs(dense)   # a reference request lost all it kept: the reference again, whole
        state.ref = _ref_rows(ref.vectors, ref.langs, ref.vectors @ docs.T, ids)
    # pseudo-queries: rows of texts no longer asked go, new texts and exhausted rows are scored whole
    ps = state.pseudo
    unique = list(dict.fromkeys(sample))
    tid = {t: _text_id(t) for t in unique}
    keep_rows = np.asarray([state.texts[tid[t]] for t in unique if tid[t] in state.texts], dtype=np.int64)
    kept_texts = [t for t in unique if tid[t] in state.texts]
    todo = [t for t in unique if tid[t] not in state.texts]
    vectors, langs = ps.vectors[keep_rows], ps.langs[keep_rows]
    z, cos = ps.z.keep(keep_rows), ps.cos.keep(keep_rows)
    empty = np.flatnonzero((z.held() == 0) | (cos.held() == 0))
    if len(empty) or todo:
        docs = _docs(dense) if docs is None else docs
        if len(empty):
            fz, fc = _score_rows(vectors[empty], langs[empty], docs, ids, state.columns)
            z.replace(empty, fz)
            cos.replace(empty, fc)
        if todo:
            add_v = _query_vectors(dense, todo, docs.shape[1])
            add_l = np.asarray([query_language(t) for t in todo], dtype=object)
            fz, fc = _score_rows(add_v, add_l, docs, ids, state.columns)
            vectors, langs = np.vstack([vectors, add_v]), np.concatenate([langs, add_l])
            z, cos = _Top.stack([z, fz]), _Top.stack([cos, fc])
    state.pseudo = _Rows(vectors, langs, z, cos)
    state.texts = {tid[t]: i for i, t in enumerate(kept_texts + todo)}
    return True


def _merge_columns(old: ColumnStats, new: ColumnStats, n: int, kept_new: np.ndarray,
                   kept_old: np.ndarray, fresh: np.ndarray) -> ColumnStats:
    """Each statistic in the new index order: kept skills' values moved, new skills' set."""
    def merge(a: dict[str, np.ndarray] | Any, b: dict[str, np.ndarray] | Any) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for lang in LANGS:
            if lang not in a or lang not in b:
                continue
            v = np.empty(n, dtype=np.float64)
            v[kept_new], v[fresh] = a[lang][kept_old], b[lang]
            out[lang] = v
        return out
    return ColumnStats(merge(old.mean, new.mean), merge(old.std, new.std),
                       merge(old.gate_mean, new.gate_mean), merge(old.gate_std, new.gate_std),
                       merge(old.part_mean, new.part_mean), merge(old.part_std, new.part_std))


def _finish(state: _State, model_id: str, key: str, dense: Dense, sample: Sequence[str],
            fixed: StatsRule | None) -> DenseCalibration:
    """The calibration the state describes (``finish_dense`` on its rows)."""
    total = _docs(dense).sum(axis=0)
    n = max(len(state.keys), 1)

    def rule(rows: _Rows) -> np.ndarray | None:
        if fixed is None or not len(rows.vectors):
            return None
        return fixed.from_stats(rows.vectors, rows.cos.best(), rows.vectors @ total / n)
    ps = state.pseudo
    order = np.asarray([state.texts[_text_id(t)] for t in sample], dtype=np.int64)
    f_ps = rule(ps)
    return finish_dense(model_id, key, state.columns, state.ref.langs, state.ref.z.best(), rule(state.ref),
                        [str(x) for x in ps.langs[order]], ps.z.best()[order],
                        None if f_ps is None else f_ps[order], state.unrelated)



# ------------------------------------------------------------------ the state on disk
_TOPS = ("z_vals", "z_ids", "cos_vals", "cos_ids")
_FIELDS = ("mean", "std", "gate_mean", "gate_std", "part_mean", "part_std")
_KEY_PARTS = ("names", "docs", "parts")


_OWNED = cache_sweep.named(r"[0-9a-f]{32}\.npz")   # a calibration's or a state's file name
# what ``calibration.save`` and :func:`save_state` always store: a user's own arrays named by a
# hash in a ``calibration/`` folder are not taken for them
_CALIBRATION_MADE = cache_sweep.npz_holding("meta", *(f"{p}_{lang}" for p in ("mean", "std")
                                                      for lang in LANGS))
_STATE_MADE = cache_sweep.npz_holding("header", "digest", "ids")


def _state_path(cache_dir: str | os.PathLike[str], model: str, lineage: str) -> Path:
    name = hashlib.sha256(f"{model}\x00{lineage}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(cache_dir) / "calibration" / "state" / f"{name}.npz"


def _context_digest(context: tuple[Any, ...]) -> str:
    return hashlib.sha256(repr(context).encode("utf-8", "surrogatepass")).hexdigest()


def save_state(path: Path, state: _State) -> bool:
    """Write ``state`` to ``path`` (sealed, atomic; a refusing disk costs only the file)."""
    arrays: dict[str, np.ndarray] = {"ids": state.ids}
    for f in _FIELDS:
        arrays.update({f"col_{f}_{lang}": v for lang, v in getattr(state.columns, f).items()})
    for group, rows in (("ref", state.ref), ("pseudo", state.pseudo)):
        arrays[f"{group}_vectors"] = rows.vectors
        for top, name in ((rows.z, "z"), (rows.cos, "cos")):
            arrays[f"{group}_{name}_vals"], arrays[f"{group}_{name}_ids"] = top.vals, top.ids
    # each skill's key as three columns of lines (a name is one line: skills.skill_from_mapping),
    # not JSON (half of the save at 20,000 skills)
    for at, part in enumerate(_KEY_PARTS):
        text = "\n".join(k[at] for k in state.keys).encode("utf-8", "surrogatepass")
        arrays[f"key_{part}"] = np.frombuffer(text, dtype=np.uint8)
    texts = sorted(state.texts, key=state.texts.__getitem__)
    header = {"context": _context_digest(state.context), "top": TOP, "next_id": state.next_id,
              "texts": texts, "unrelated": list(state.unrelated),
              "ref_langs": [str(x) for x in state.ref.langs],
              "pseudo_langs": [str(x) for x in state.pseudo.langs]}
    return write_sealed(path, STATE_VERSION, header, arrays, "gate state cache")


def load_state(path: Path, context: tuple[Any, ...]) -> _State | None:
    """The state saved at ``path`` when it was kept under ``context`` (the same model, fixed rule,
    reference...) and is whole; None otherwise (see :mod:`gate_store` for what is checked)."""
    got = read_sealed(path, STATE_VERSION, "gate state cache")
    if got is None:
        return None
    header, arrays = got
    if header.get("context") != _context_digest(context):
        return None   # another model, rule or reference: not this one's to update
    try:
        state = _state_of(header, arrays, context)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        state, why = None, type(e).__name__
    else:
        why = "its arrays do not fit together"
    if state is None:
        log.warning("gate state cache %s is not a state of this layout (%s); computing it again", path, why)
    return state


def _state_of(header: dict[str, Any], arrays: dict[str, np.ndarray], context: tuple[Any, ...]
              ) -> _State | None:
    """The state the header and arrays describe, or None when they do not fit together."""
    if header["top"] != TOP:
        return None
    lines: list[list[str]] = []
    for part in _KEY_PARTS:
        raw = arrays[f"key_{part}"]
        if raw.dtype != np.uint8 or raw.ndim != 1:
            return None
        lines.append(raw.tobytes().decode("utf-8", "surrogatepass").split("\n"))
    keys = list(zip(*lines, strict=True))
    ids = np.asarray(arrays["ids"])
    n, next_id = len(keys), int(header["next_id"])
    if ids.dtype != np.int64 or ids.shape != (n,) or (ids < 0).any() or (ids >= next_id).any() \
            or len(np.unique(ids)) != n or len(set(keys)) != n:
        return None
    cols: dict[str, dict[str, np.ndarray]] = {f: {} for f in _FIELDS}
    for f in _FIELDS:
        for lang in LANGS:
            v = arrays.get(f"col_{f}_{lang}")
            if v is not None:
                if v.dtype != np.float64 or v.shape != (n,) or not np.isfinite(v).all():
                    return None
                cols[f][lang] = v
    if any(set(cols[f]) != set(LANGS) for f in _FIELDS[:4]) \
            or set(cols["part_mean"]) != set(cols["part_std"]):
        return None
    width = int(context[-1])
    groups: dict[str, _Rows] = {}
    for group in ("ref", "pseudo"):
        vectors = arrays[f"{group}_vectors"]
        langs = np.asarray([str(x) for x in header[f"{group}_langs"]], dtype=object)
        rows = len(langs)
        if vectors.dtype != np.float64 or vectors.shape != (rows, width) or not np.isfinite(vectors).all():
            return None
        tops = [arrays[f"{group}_{name}"] for name in _TOPS]
        for vals, got in ((tops[0], tops[1]), (tops[2], tops[3])):
            if vals.dtype != np.float64 or got.dtype != np.int64 or vals.shape != (rows, TOP) \
                    or got.shape != (rows, TOP) or np.isnan(vals).any() \
                    or not np.isin(got[got >= 0], ids).all() or np.isfinite(vals[got < 0]).any():
                return None
        groups[group] = _Rows(vectors, langs if group == "pseudo" else langs.astype(str),
                              _Top(tops[0], tops[1]), _Top(tops[2], tops[3]))
    texts = [str(t) for t in header["texts"]]
    if len(texts) != len(groups["pseudo"].langs) or len(set(texts)) != len(texts) \
            or len(groups["ref"].langs) != len(gate_requests()):
        return None
    um, us = (float(x) for x in header["unrelated"])
    columns = ColumnStats(*(cols[f] for f in _FIELDS))
    return _State(context, keys, ids, next_id, columns, groups["ref"], groups["pseudo"],
                  {t: i for i, t in enumerate(texts)}, (um, us))
