"""BM25's state on disk, so a restarted retriever updates its lexical index instead of building it.

With its tokens saved (``token_store``) a new process still rebuilt BM25 for the whole catalog
on its first refresh: every skill looked up in the token memo (a SHA-256 and a CJK scan each),
its token ids listed in Python, the postings sorted, and the verbatim bonus found by an
Aho-Corasick pass over every skill's text (1.9 s at 20,000 skills, 0.9 of it that pass). The
index's carried state (``bm25.IndexParts``: the skills' names and descriptions, their terms, the
vocabulary, each term's df, the tf and bonus postings) is what an update starts from, so it is
saved to ``<cache>/bm25/index.npz``; a new process's first refresh reads it back and *updates*
from it (``BM25Index.updated``, decision 102), which derives and scans only the skills that
changed meanwhile. A file of an older catalog is therefore still a good start, not a stale one:
the update's equality with a build from scratch is what the tests hold it to. The terms read
back are adopted by the token memo under their saved keys, so the token file is not read too;
each skill's are decoded only when first used (``stored_terms``): an update decodes the edited
and removed skills' alone.

The file is sealed (``gate_store``: a digest over every array and the header, atomic replace)
and checked on reading (lengths, sorted postings in range, each row's df equal to its
postings): the postings become the scores, so a torn, flipped or foreign file is ignored with
one warning and the index is built as before; one made under another tokenizer or deriving
code (``token_store.derive_id``, with the postings' module) is ignored quietly (an upgrade, not
damage), as the token file is. It is rewritten whole, so only when :data:`MIN_NEW` skills or
more were derived or dropped since it was read or written (a catalog that shrank derives
nothing, yet the file would hold the old one for good).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core import tokenize as tok
from hermes_core.forked import child_lock
from hermes_core.retrieval import bm25, bm25_postings
from hermes_core.retrieval.bm25 import BM25Index, IndexParts
from hermes_core.retrieval.bm25_postings import Postings
from hermes_core.retrieval.gate_store import (
    blob_text,
    blob_texts,
    read_checked,
    text_blob,
    texts_blob,
    write_sealed,
)
from hermes_core.retrieval.stored_terms import SEP, CarriedTerms, StoredTerms, encoded, stored_place
from hermes_core.retrieval.token_memo import Derive, Key, TokenMemo, skill_key
from hermes_core.retrieval.token_store import TermsCache, derive_id
from hermes_core.types import Skill

LAYOUT = 1
WHAT = "bm25 index cache"
MIN_NEW = 64   # skills derived or dropped since the last read or write before it is written again


def index_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / "bm25" / "index.npz"


def save_parts(path: Path, parts: IndexParts, keys: Sequence[Key], derive: Derive) -> bool:
    """Write ``parts`` (and each skill's token-memo key) to ``path``; False when the disk refused."""
    words = sorted(parts.vocab, key=parts.vocab.__getitem__)
    if any(SEP in w for w in words):
        return False
    stored = encoded(parts.terms)   # a kept skill's as the file read back holds them
    names, name_len = texts_blob([s.name for s in parts.skills])
    desc, desc_len = texts_blob([s.description for s in parts.skills])
    verbatim, verbatim_len = texts_blob(stored.verbatim)
    tf, bonus = parts.tf, parts.bonus
    assert tf.values is not None
    arrays: dict[str, np.ndarray] = {
        "keys": np.frombuffer(b"".join(k[0] for k in keys), dtype=np.uint8).reshape(-1, 32),
        "key_jieba": np.asarray([-1 if k[1] is None else int(k[1]) for k in keys], dtype=np.int8),
        "names": names, "name_len": name_len, "desc": desc, "desc_len": desc_len,
        "verbatim": verbatim, "verbatim_len": verbatim_len,
        "n_tokens": stored.n_tokens, "tokens": np.frombuffer(stored.tokens, dtype=np.uint8),
        "counts": stored.counts,
        "words": text_blob(SEP.join(words)), "df": parts.df,
        # a posting's row is where it stands between the row pointers, and a skill's number fits
        # 32 bits: a third less to read and digest than the arrays held in memory
        "tf_indptr": tf.indptr(len(words)), "tf_docs": tf.docs.astype(np.int32), "tf_values": tf.values,
        "bonus_indptr": bonus.indptr(len(words)), "bonus_docs": bonus.docs.astype(np.int32),
        "cjk": parts.cjk,
    }
    header = {"tokenizer": parts.version, "jieba": parts.jieba, "derive": derive_id(derive, bm25_postings)}
    return write_sealed(path, LAYOUT, header, arrays, WHAT)


def load_parts(path: Path, derive: Derive,
               catalog: Sequence[Skill] = ()) -> tuple[IndexParts, list[Key]] | None:
    """The parts saved at ``path`` and their skills' memo keys; None when there is no usable file
    (a damaged one is said in the log once, by ``gate_store.read_checked``). A saved skill whose name
    and description a skill of ``catalog`` has is that skill (no object made for it). A file of
    another tokenizer or deriving function is an upgrade, not damage: ignored quietly."""
    def ours(h: Mapping[str, Any]) -> bool:
        jieba = h.get("jieba")
        return (h.get("tokenizer") == tok.tokenizer_key()
                and (jieba is None or jieba == tok.jieba_available())
                and h.get("derive") == derive_id(derive, bm25_postings))

    return read_checked(path, LAYOUT, WHAT, again="building it again", ours=ours,
                        decode=lambda h, a: _parts(a, h.get("jieba"), catalog))


def _postings(indptr: np.ndarray, stored_docs: np.ndarray, n_rows: int, n_docs: int) -> Postings:
    """The (row, doc) entries saved as row pointers and 32-bit docs, checked: pointers from 0 to
    the docs' count, never decreasing; docs in range and rising within each row."""
    if (indptr.shape != (n_rows + 1,) or indptr.dtype != np.int64 or stored_docs.ndim != 1
            or stored_docs.dtype != np.int32 or indptr[0] != 0 or indptr[-1] != stored_docs.size
            or (np.diff(indptr) < 0).any()):
        raise ValueError("row pointers do not fit the postings")
    docs = stored_docs.astype(np.int64)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(indptr))
    if docs.size and (docs.min() < 0 or docs.max() >= n_docs):
        raise ValueError("a posting out of range")
    keys = (rows << 32) | docs
    if keys.size > 1 and not bool((keys[1:] > keys[:-1]).all()):
        raise ValueError("postings out of order")
    return Postings(rows, docs)


def _parts(a: dict[str, np.ndarray], jieba: object,
           catalog: Sequence[Skill]) -> tuple[IndexParts, list[Key]]:
    names, descs = blob_texts(a["names"], a["name_len"]), blob_texts(a["desc"], a["desc_len"])
    verbatim = blob_texts(a["verbatim"], a["verbatim_len"])
    n = len(names)
    keys, key_jieba, n_tokens, counts, cjk = a["keys"], a["key_jieba"], a["n_tokens"], a["counts"], a["cjk"]
    if (len(descs) != n or len(verbatim) != n or keys.shape != (n, 32) or keys.dtype != np.uint8
            or key_jieba.shape != (n,) or n_tokens.shape != (n,) or cjk.shape != (n,) or cjk.dtype != bool):
        raise ValueError("per-skill arrays of different lengths")
    if not np.isin(key_jieba, (-1, 0, 1)).all() or (n_tokens < 0).any():
        raise ValueError("unknown jieba state or negative length")
    tokens = a["tokens"]
    if tokens.dtype != np.uint8 or tokens.ndim != 1:
        raise ValueError("token blob")
    raw = keys.tobytes()   # one copy, sliced: indexing the array row by row cost 0.2 s at 20,000
    key_list = [(raw[32 * i:32 * i + 32], None if j < 0 else bool(j))
                for i, j in enumerate(key_jieba.tolist())]
    terms = StoredTerms(tokens.tobytes(), n_tokens, counts, verbatim, key_list)
    words_text = blob_text(a["words"])
    words = words_text.split(SEP) if words_text else []
    vocab = {w: i for i, w in enumerate(words)}
    df = a["df"]
    if len(vocab) != len(words) or df.shape != (len(words),) or df.dtype != np.int64:
        raise ValueError("vocabulary and df of different lengths")
    tf = _postings(a["tf_indptr"], a["tf_docs"], len(words), n)
    bonus = _postings(a["bonus_indptr"], a["bonus_docs"], len(words), n)
    tf_rows, tf_values = tf.rows, a["tf_values"]
    if (tf_values.shape != tf_rows.shape or tf_values.dtype != np.float64
            or not bool(((tf_values > 0) & (tf_values < 1)).all())):
        raise ValueError("a tf factor out of (0, 1)")
    if not np.array_equal(np.bincount(tf_rows, minlength=len(words)), df) or (df < 1).any():
        raise ValueError("df does not count the postings")
    if len(tf_rows) != int(n_tokens.sum()):
        raise ValueError("postings and tokens do not add up")
    held = {s.name: s for s in catalog}
    skills = tuple(s if (s := held.get(nm)) is not None and s.description == d else Skill(nm, d)
                   for nm, d in zip(names, descs, strict=True))
    parts = IndexParts(skills, terms, vocab,
                       df, Postings(tf_rows, tf.docs, tf_values), bonus, cjk, tok.tokenizer_key(),
                       None if jieba is None else bool(jieba))
    return parts, key_list


class IndexCache:
    """One retriever's link between its BM25 index and the file: :meth:`base` reads the file
    once, for a first refresh, as the index to update from; :meth:`save` writes an index when
    ``min_new`` skills or more were derived or dropped since the file was read or written (an
    edit is both). No cache folder: both do nothing."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None, min_new: int = MIN_NEW) -> None:
        self.path = None if cache_dir is None else index_path(cache_dir)
        self.min_new = min_new
        self._read = False
        self._changed = 0
        # free in a forked child (one a thread held at the fork hung the child's first use)
        self._lock = child_lock(threading.Lock())

    def base(self, index: BM25Index, memo: TokenMemo, derive: Derive,
             catalog: Sequence[Skill] = ()) -> BM25Index | None:
        """For a retriever's first refresh (``index`` empty) of ``catalog``, the index the last
        process saved, its terms adopted by ``memo``; otherwise (or with no usable file) None."""
        with self._lock:
            if self._read or self.path is None or len(index.parts.skills):
                self._read = True
                return None
            self._read = True
            found = load_parts(self.path, derive, catalog)
        if found is None:
            return None
        parts, keys = found
        assert isinstance(parts.terms, StoredTerms)
        memo.adopt_stored(derive, keys, parts.terms)   # decoded only when asked for
        return BM25Index.carried_from(parts)

    def save(self, index: BM25Index, memo: TokenMemo, derive: Derive) -> bool:
        """Write ``index`` when enough changed; whether it wrote."""
        with self._lock:
            self._changed += index.parts.changed
            if self.path is None or self._changed < self.min_new:
                return False
            self._changed = 0
            path = self.path
        return save_parts(path, index.parts, _keys(index.parts, memo, derive), derive)


def _keys(parts: IndexParts, memo: TokenMemo, derive: Derive) -> list[Key]:
    """Each skill's memo key: a kept skill's as the file read back holds it, a derived one's by
    hashing it (as the memo filed it), and for terms held in memory (no file read) the memo's,
    matched by identity (no hashing). Asking the memo for all its entries would make every
    pending one, the stored skills' too."""
    terms = parts.terms
    if isinstance(terms, StoredTerms | CarriedTerms):
        out: list[Key] = []
        for i, s in enumerate(parts.skills):
            place = stored_place(terms, i)
            out.append(place[0].keys[place[1]] if place is not None and place[0].keys else skill_key(s))
        return out
    held = {id(t): k for k, t in memo.entries(derive)}
    return [held.get(id(t)) or skill_key(s) for s, t in zip(parts.skills, terms, strict=True)]


def updated_index(index: BM25Index, skills: Sequence[Skill], cache: TermsCache,
                  state: IndexCache | None = None) -> BM25Index:
    """``index.updated(skills)`` on the shared memo. A first refresh starts from the index
    ``state``'s file kept from the last process when there is one (its terms adopted, so the
    token file is not read); otherwise the memo first adopts the tokens ``cache``'s file kept
    (one an older release wrote beside the index file, or the only one without ``state``).
    The terms are stored once: in the index file when there is one (a token file beside it,
    which held the same terms and keys again, is removed once the index file is written or
    read), otherwise in the token file; each is saved when much was derived or dropped."""
    memo, derive = bm25.shared_memo(), bm25.skill_terms   # what the index derives with, now
    base = state.base(index, memo, derive, skills) if state is not None else None
    if base is not None:
        cache.adopted(memo, len(base.parts.skills))
        cache.drop()   # one left by a process that died between writing the index file and this
    else:
        cache.load(memo, derive)
    new = (index if base is None else base).updated(skills)
    if state is None or state.path is None:
        cache.save(memo, derive, new.parts.terms)
    elif state.save(new, memo, derive):
        cache.drop()   # the index file holds every term and key: a token file would hold them twice
    else:
        cache.release()   # neither written: the token file read is let go, kept on disk
    return new
