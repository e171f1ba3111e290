"""The lexical gate's scored requests on disk, so a restarted retriever does not score them again.

The lexical gate's calibration (``calibration.calibrate_lexical``) reads each off-topic reference
request's and pseudo-query's lexical share on the catalog's BM25 index: about 1,074 requests
scored at 20,000 skills, 0.3-0.5 s that every new process paid before its first answer though
nothing had changed. ``lexical_update`` keeps those rows (a request's tokens after glossary
expansion, its share, its best score and the skills holding it) in memory for the next edit;
this module saves them in the retriever's cache folder (``lexical_rows.npz``) and hands them
back to a new process whose catalog is the one they were scored on.

A share depends on the catalog's skills (their names and content, the pseudo-queries sampled:
the lexical calibration's ``catalog_key``, which also names the reference requests and the
tokenizer's version), the glossary that expands a request, the scoring code and whether jieba
is there. The file is filed under a key of all of these (the code by a fingerprint of the
bytecode and constants of the modules that tokenise, expand and score, with bm25s's and numpy's
versions); a file under another key is of another catalog or program and is ignored quietly:
the rows are scored whole, as before, and the file is written again. It holds one catalog,
the last calibrated, so it is rewritten on every catalog change (0.7 MB at 20,000 skills,
most of it the skills tied for a request's best score).

A share read back wrongly would set the gate's threshold, so the file is sealed (``gate_store``:
a digest over every array and the header, atomic replace) and checked (lengths, holders in
range, finite non-negative scores): torn, flipped or inconsistent, it is ignored with one warning
and the rows are scored again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import types
from collections.abc import Mapping, Sequence
from pathlib import Path

import bm25s
import numpy as np

from hermes_core import tokenize as tok
from hermes_core.forked import child_lock
from hermes_core.retrieval import bm25, bm25_postings, glossary, lexical_update, token_memo
from hermes_core.retrieval.code_fingerprint import imported_releases, modules_id
from hermes_core.retrieval.gate_store import blob_texts, read_checked, texts_blob, write_sealed
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexical_update import RowState
from hermes_core.retrieval.token_store import derive_name

LAYOUT = 1
WHAT = "lexical gate cache"
# what tokenises a request and a skill, expands a request and scores it
SCORING_MODULES: tuple[types.ModuleType, ...] = (tok, bm25, bm25_postings, glossary, lexical_update,
                                                  token_memo)


def scorers_id(modules: Sequence[types.ModuleType] = SCORING_MODULES) -> str:
    """A fingerprint of how a share is computed: the code of every function and method of
    ``modules``, their upper-case constants, bm25s's and numpy's versions and those of the
    libraries ``modules`` import (simplemma's lemmas make BM25's stems)."""
    return modules_id(modules, f"{bm25s.__version__}\x00{np.__version__}\x00{imported_releases(modules)}")


@functools.cache
def scorers_fingerprint() -> str:
    """``scorers_id()``, computed on the first key asked for, not at import: an import that never
    touches the cache does not pay for hashing the code (~1.5 ms)."""
    return scorers_id()


def rows_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / "lexical_rows.npz"


def rows_key(catalog: str, words: Glossary) -> str:
    """What a file's rows are filed under: the lexical calibration's ``catalog`` key, the
    glossary's lines, the scorers' fingerprint, the tokenizer (``tokenizer_key``: its version, fold
    config and OpenCC's and jieba's releases), jieba's presence and the skills' deriving function."""
    h = hashlib.sha256(f"{catalog}\x00{scorers_fingerprint()}\x00{tok.tokenizer_key()}\x00"
                       f"{tok.jieba_available()}\x00{derive_name(bm25.skill_terms)}\x00".encode())
    h.update(repr(words.lines).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def save_rows(path: Path, key: str, n_skills: int, rows: Mapping[str, RowState]) -> bool:
    """Write ``rows`` (scored on a catalog of ``n_skills`` skills) under ``key``; False when the
    disk refused."""
    states = list(rows.values())
    texts, text_len = texts_blob(list(rows))
    tokens, token_len = texts_blob([t for r in states for t in r.tokens])
    holders = [sorted(r.holders) for r in states]
    arrays = {
        "texts": texts, "text_len": text_len, "tokens": tokens, "token_len": token_len,
        "n_tokens": np.asarray([len(r.tokens) for r in states], dtype=np.int64),
        "share": np.asarray([r.share for r in states], dtype=np.float64),
        "best": np.asarray([r.best for r in states], dtype=np.float64),
        "n_holders": np.asarray([len(h) for h in holders], dtype=np.int64),
        # a skill's number fits 32 bits; ties make these most of the file (134,294 at 20,000)
        "holders": np.asarray([i for h in holders for i in h], dtype=np.int32),
    }
    return write_sealed(path, LAYOUT, {"key": key, "skills": n_skills}, arrays, WHAT)


def load_rows(path: Path, key: str, n_skills: int) -> dict[str, RowState] | None:
    """The rows saved at ``path`` if they were scored under ``key`` on ``n_skills`` skills; None
    otherwise (a damaged file is said in the log once, by ``gate_store.read_checked``)."""
    return read_checked(path, LAYOUT, WHAT, again="scoring the requests again",
                        ours=lambda h: h.get("key") == key and h.get("skills") == n_skills,
                        decode=lambda _, a: _rows(a, n_skills))


def _counts(a: np.ndarray, n: int) -> list[int]:
    if a.shape != (n,) or a.dtype != np.int64 or (a < 0).any():
        raise ValueError("per-request counts of another shape")
    return [int(x) for x in a.tolist()]


def _rows(a: Mapping[str, np.ndarray], n_skills: int) -> dict[str, RowState]:
    texts = blob_texts(a["texts"], a["text_len"])
    tokens = blob_texts(a["tokens"], a["token_len"])
    n = len(texts)
    n_tokens, n_holders = _counts(a["n_tokens"], n), _counts(a["n_holders"], n)
    share, best, holders = a["share"], a["best"], a["holders"]
    if len(set(texts)) != n or sum(n_tokens) != len(tokens):
        raise ValueError("requests and tokens do not add up")
    if (share.shape != (n,) or best.shape != (n,) or share.dtype != np.float64 or best.dtype != np.float64
            or not bool(np.isfinite(share).all() and np.isfinite(best).all())
            or bool((share < 0).any() or (best < 0).any())):
        raise ValueError("a share or best score of another shape, negative or not finite")
    if (holders.shape != (sum(n_holders),) or holders.dtype != np.int32
            or (holders.size and (holders.min() < 0 or holders.max() >= n_skills))):
        raise ValueError("a holder out of range")
    out: dict[str, RowState] = {}
    t = h = 0
    held = holders.tolist()
    for i, text in enumerate(texts):
        out[text] = RowState(tuple(tokens[t:t + n_tokens[i]]), float(share[i]), float(best[i]),
                             frozenset(held[h:h + n_holders[i]]))
        t, h = t + n_tokens[i], h + n_holders[i]
    return out


class LexicalRowCache:
    """One retriever's link between its lexical memo and the file: :meth:`load` gives a first
    calibration the rows saved under its key; :meth:`save` writes a calibration's rows unless the
    file already holds that key's. No cache folder: both do nothing."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None) -> None:
        self.path = None if cache_dir is None else rows_path(cache_dir)
        self._held: str | None = None   # the key the file holds, as last read or written here
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self._lock = child_lock(threading.Lock())

    def load(self, key: str, n_skills: int) -> dict[str, RowState] | None:
        with self._lock:
            if self.path is None:
                return None
            rows = load_rows(self.path, key, n_skills)
            if rows is not None:
                self._held = key
            return rows

    def save(self, key: str, n_skills: int, rows: Mapping[str, RowState]) -> bool:
        """Write ``rows`` unless the file holds ``key``'s already; whether it wrote."""
        with self._lock:
            if self.path is None or self._held == key:
                return False
            self._held = key
            return save_rows(self.path, key, n_skills, rows)
