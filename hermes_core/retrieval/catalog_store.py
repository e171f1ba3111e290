"""What each line of a JSONL catalog parsed to, on disk, so a restarted retriever does not parse the
catalog whole again.

A retriever remembers each line's parse in memory (``catalog_memo``), so a refresh parses only new
lines; a new process has no memo and parsed every line (``json.loads`` and ``skill_from_mapping``:
0.55-1.3 s at 20,000 skills) though nothing had changed. So the skills of a read are saved in the
cache folder (``catalogs/<sha256 of the file's path>[:16].npz``) with each line's bytes, and a
retriever's first read of that file takes the parse of every line whose bytes are there (an
edited or new line is parsed as before). The memo then holds them as if this process
had parsed them, except that it has no *place* for them: a line's warnings (an over-long
description) are logged as on a fresh read, and its skill is moved to its line (``Skill.at``) when
the line moved. Only lines that parsed to a skill are saved; a refused line is parsed again (and its
issue reported) as a fresh read does.

A wrong skill read back would be served and indexed, silently, so the file is sealed (``gate_store``:
a digest over every array and the header, atomic replace: a concurrent writer leaves one whole
file or the other) and checked (lengths, digests' and hashes' shapes): a torn, flipped or foreign
file is ignored with one warning naming it and the catalog is parsed whole. A file made by another
parser is ignored quietly: the header holds a fingerprint of the code and constants of
``skills`` (the parser), of ``Skill`` (its fields and content hash) and of this module, taken when
it is imported, and the catalog's path. It is rewritten whole, so only when :data:`MIN_NEW` lines
or more were parsed or dropped since it was read or written. A file is one a catalog path, so a
catalog no longer configured would leave its file for good: a retriever's first save removes
those no process has read or written for a month (``cache_sweep``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import os
import re
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core.forked import child_lock
from hermes_core.retrieval import cache_sweep
from hermes_core.retrieval import skills as skill_parser
from hermes_core.retrieval.catalog_memo import LastRead, ParsedLine
from hermes_core.retrieval.code_fingerprint import stable_repr
from hermes_core.retrieval.gate_store import blob_texts, read_checked, texts_blob, write_sealed
from hermes_core.retrieval.text_key_store import builders_id
from hermes_core.types import Skill

LAYOUT = 1
WHAT = "catalog cache"
MIN_NEW = 64   # lines parsed or dropped since the last read or write before it is written again
#: a skill's text fields, in the order their lengths are stored (``metadata`` as JSON, ``hash``
#: its content hash; ``category`` and ``license`` may be None: ``absent`` says which)
TEXTS = ("name", "description", "body", "path", "metadata", "hash", "category", "license")
#: a skill's tuple fields and the parse's warnings, each a count and its items
LISTS = ("triggers", "synonyms", "tags", "platforms", "allowed_tools", "notes")


def _functions(module: types.ModuleType) -> list[Callable[..., Any]]:
    """The functions ``module`` defines, in name order."""
    return [v for _, v in sorted(vars(module).items())
            if inspect.isfunction(v) and v.__module__ == module.__name__]


def parser_id() -> str:
    """A fingerprint of how a line becomes a skill: the code of every function of ``skills``, its
    constants (upper-case ones and the private tables), ``Skill``'s fields and methods, and this
    module's own code."""
    fns: list[Any] = [*_functions(skill_parser), *_functions(sys.modules[__name__])]
    fns += [m.fget if isinstance(m, property) else m for _, m in sorted(vars(Skill).items())
            if isinstance(m, property) or inspect.isfunction(m)]
    consts = {k: v for k, v in vars(skill_parser).items() if k.lstrip("_").isupper()
              and isinstance(v, int | float | str | tuple | frozenset | dict | re.Pattern)}
    listed = "\x00".join(f"{k}={stable_repr(v)}" for k, v in sorted(consts.items()))
    fields = [(f.name, str(f.type), f.init) for f in dataclasses.fields(Skill)]
    h = hashlib.sha256(f"{LAYOUT}\x00{listed}\x00{fields}".encode("utf-8", "surrogatepass"))
    h.update(builders_id([f for f in fns if f is not None]).encode())
    return h.hexdigest()


#: what a catalog's file is named (``catalog_file``): the sweep removes no other file
FILE_NAME = r"[0-9a-f]{16}\.npz"


def catalog_file(cache_dir: str | os.PathLike[str], catalog: str) -> Path:
    """Where the lines of ``catalog`` (a path as read) are saved."""
    name = hashlib.sha256(catalog.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(cache_dir) / "catalogs" / f"{name}.npz"


def save_lines(path: Path, catalog: str, lines: Sequence[tuple[bytes, ParsedLine]]) -> bool:
    """Write each (line bytes, parse to a skill) of ``lines`` to ``path``; False when the disk refused."""
    texts: list[str] = []
    items: list[str] = []
    counts: list[int] = []
    absent: list[int] = []
    kept: list[bytes] = []
    for line, parsed in lines:
        s = parsed.skill
        assert s is not None
        try:
            meta = json.dumps(dict(s.metadata), ensure_ascii=False) if s.metadata else ""
        except RecursionError:   # nested near the limit the read met higher up the stack:
            continue             # not saved, parsed again
        kept.append(line)
        texts += [s.name, s.description, s.body, s.path or "", meta, s.content_hash,
                  s.category or "", s.license or ""]
        absent += [s.category is None, s.license is None]
        for group in (s.triggers, s.synonyms, s.tags, s.platforms, s.allowed_tools, parsed.notes):
            counts.append(len(group))
            items.extend(group)
    text_arr, text_lengths = texts_blob(texts)
    item_arr, item_lengths = texts_blob(items)
    n = len(kept)
    arrays: dict[str, np.ndarray] = {
        "lines": np.frombuffer(b"".join(kept), dtype=np.uint8),
        "line_lengths": np.asarray([len(b) for b in kept], dtype=np.int64),
        "texts": text_arr, "text_lengths": text_lengths.reshape(n, len(TEXTS)),
        "items": item_arr, "item_lengths": item_lengths,
        "counts": np.asarray(counts, dtype=np.int64).reshape(n, len(LISTS)),
        "absent": np.asarray(absent, dtype=np.uint8).reshape(n, 2),
    }
    return write_sealed(path, LAYOUT, {"parser": parser_fingerprint(), "catalog": catalog}, arrays, WHAT)


def load_lines(path: Path, catalog: str) -> dict[bytes, ParsedLine] | None:
    """The parses saved at ``path`` by line; None when there is no usable file (a damaged
    one is said in the log once, by ``gate_store.read_checked``)."""
    return read_checked(path, LAYOUT, WHAT, again="parsing the catalog again",
                        ours=lambda h: (h.get("parser") == parser_fingerprint()
                                        and h.get("catalog") == catalog),
                        decode=lambda _, a: _decoded(a))


def _decoded(a: dict[str, np.ndarray]) -> dict[bytes, ParsedLine]:
    """The saved parses by line, checked beyond the digest (lengths add up, counts, shapes)."""
    raw, line_lengths = a["lines"], a["line_lengths"]
    text_lengths, counts, absent = a["text_lengths"], a["counts"], a["absent"]
    n = len(line_lengths)
    if (raw.dtype != np.uint8 or raw.ndim != 1 or line_lengths.dtype != np.int64 or line_lengths.ndim != 1
            or (line_lengths < 0).any() or int(line_lengths.sum()) != len(raw)
            or text_lengths.shape != (n, len(TEXTS))
            or counts.shape != (n, len(LISTS)) or absent.shape != (n, 2)
            or text_lengths.dtype != np.int64 or counts.dtype != np.int64 or (counts < 0).any()
            or int(counts.sum()) != len(a["item_lengths"])):   # their shape and dtype: blob_texts
        raise ValueError("arrays of different lengths")
    texts = blob_texts(a["texts"], text_lengths.reshape(-1))
    items = blob_texts(a["items"], a["item_lengths"])
    data = raw.tobytes()
    ends = np.cumsum(line_lengths).tolist()
    lines = [data[a:b] for a, b in zip([0, *ends][:n], ends, strict=True)]
    return _skills(lines, texts, items, counts, absent)


def _skills(lines: list[bytes], texts: list[str], items: list[str], counts: np.ndarray,
            absent: np.ndarray) -> dict[bytes, ParsedLine]:
    k = len(TEXTS)
    names, descs, bodies, wheres, metas, digests, categories, licences = (texts[f::k] for f in range(k))
    if any(len(d) != 64 for d in digests) or not all(wheres):
        raise ValueError("a skill of another shape")
    # most skills have no list field at all: only theirs are cut out of ``items``
    groups: list[tuple[tuple[str, ...], ...] | None] = [None] * len(lines)
    ends = np.cumsum(counts.reshape(-1)).reshape(counts.shape)
    starts = ends - counts
    for i in np.flatnonzero(counts.any(axis=1)).tolist():
        cuts = zip(starts[i].tolist(), ends[i].tolist(), strict=True)
        groups[i] = tuple(tuple(items[a:b]) for a, b in cuts)
    no_category, no_licence = absent[:, 0].tolist(), absent[:, 1].tolist()
    none: tuple[tuple[str, ...], ...] = ((),) * len(LISTS)
    out: dict[bytes, ParsedLine] = {}
    for i, line in enumerate(lines):
        triggers, synonyms, tags, platforms, tools, notes = groups[i] or none
        meta = metas[i]
        try:
            metadata = json.loads(meta) if meta else {}
        except RecursionError:   # saved from a shallower stack than this one: parsed again
            continue
        if not isinstance(metadata, dict):
            raise ValueError("metadata is not a mapping")
        skill = Skill(names[i], descs[i], bodies[i], triggers, synonyms, tags,
                      None if no_category[i] else categories[i], wheres[i], platforms, metadata, tools,
                      None if no_licence[i] else licences[i])
        object.__setattr__(skill, "_content_hash", digests[i])
        out[line] = ParsedLine(skill, None, notes)
    return out


class CatalogCache:
    """One retriever's link between its catalog memo and the files: :meth:`recall` (a file's first
    read in this retriever) gives the saved parses of the lines now in it; :meth:`save` writes a
    file's when ``min_new`` lines or more were parsed or dropped since it was read or written.
    No cache folder: neither does anything.

    Files of catalogs no longer configured are removed by the first :meth:`save` (once a
    retriever): those of no catalog it read and unused (read or written, by any process) for
    ``max_idle_days`` (``cache_sweep``: a process serving another catalog from the same folder
    marks its file at each start, so its file is not taken)."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None, min_new: int = MIN_NEW, *,
                 max_idle_days: float = cache_sweep.MAX_IDLE_DAYS,
                 clock: Callable[[], float] = time.time) -> None:
        self.cache_dir = cache_dir
        self.min_new = min_new
        self.max_idle_days = max_idle_days
        self._clock = clock
        self._swept = False
        self._held: dict[str, frozenset[bytes]] = {}   # by catalog: its file's lines in the catalog
        self._stale: dict[str, int] = {}   # by catalog: its file's lines no longer in the catalog
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self._lock = child_lock(threading.Lock())

    def recall(self, catalog: str, lines: Sequence[bytes]) -> dict[bytes, ParsedLine]:
        """The saved parse of each of ``lines`` whose bytes the file of ``catalog`` holds."""
        with self._lock:
            if self.cache_dir is None or catalog in self._held:
                return {}
            path = catalog_file(self.cache_dir, catalog)
            cache_sweep.touch(path, self._clock())   # in use: no other process's sweep takes it
            saved = load_lines(path, catalog) or {}
            found = {line: got for line in lines if (got := saved.get(line)) is not None}
            self._held[catalog] = frozenset(found)
            self._stale[catalog] = len(saved) - len(found)   # dropped, as far as the next save goes
            return found

    def save(self, reads: Iterable[tuple[str, LastRead]]) -> int:
        """Write the file of each catalog whose read (``CatalogMemo.reads``) parsed or dropped
        ``min_new`` lines or more since its file was read or written; how many it wrote."""
        wrote = 0
        with self._lock:
            if self.cache_dir is None:
                return 0
            reads = list(reads)
            for catalog, read in reads:
                kept = {b: p for b, p in read.parsed.items() if p.skill is not None}
                held = self._held.get(catalog, frozenset())
                changed = len(kept.keys() - held) + len(held - kept.keys()) + self._stale.get(catalog, 0)
                if changed < self.min_new:
                    continue
                self._held[catalog], self._stale[catalog] = frozenset(kept), 0
                wrote += save_lines(catalog_file(self.cache_dir, catalog), catalog, list(kept.items()))
            if not self._swept:
                self._swept = True
                keep = {catalog_file(self.cache_dir, c).name for c, _ in reads} | {
                    catalog_file(self.cache_dir, c).name for c in self._held}
                cache_sweep.sweep(catalog_file(self.cache_dir, "").parent, keep,
                                  cache_sweep.named(FILE_NAME), self._clock(), self.max_idle_days,
                                  made=cache_sweep.npz_holding("header", "digest", "lines"))
        return wrote


@functools.cache
def parser_fingerprint() -> str:
    """``parser_id()``, computed on the first read or write of a file, not at import: an import
    that never touches the cache does not pay for hashing the code (~1 ms)."""
    return parser_id()
