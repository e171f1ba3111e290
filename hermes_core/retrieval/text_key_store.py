"""Each skill's dense text keys on disk, so a restarted retriever does not derive them again.

A skill's :class:`~hermes_core.retrieval.dense.TextKeys` (the hash of the document text it embeds
and of its list of part texts) are what its vectors are found by, in memory, in the vector
snapshot and in the per-vector files; the catalog's digest (the calibrations' cache key) is made
of them too. Deriving them means splitting the name into words twice, cutting the description into
sentences and hashing both: about a second at 20,000 skills, paid by every new process before its
first answer though nothing had changed. They depend on the skill's name and description only, so
they are saved in the retriever's cache folder (``text_keys.npz``) under the SHA-256 of the name
and description, and a new process's first refresh adopts those of its catalog's skills whose
name and description hash the same: an edited skill is not found and is derived as before.

A key read back wrongly would fetch another text's vector, so the file is sealed (``gate_store``:
a digest over every array and the header, atomic replace) and checked (lengths, key shapes): a
torn, flipped or foreign file is ignored with one warning and derived again. A file made by other
builders is ignored quietly (an upgrade, not damage): the header names ``tokenizer_key()``
(``split_identifier`` cuts the names and the Han fold rewrites the text: an OpenCC or jieba
release too, read when a file is written or read) and a fingerprint of the code of ``document_text``,
``skill_parts``, ``model_text`` and the key functions, taken when this module is imported. It is
rewritten whole, so only when :data:`MIN_NEW` skills or more were derived or dropped since it was
read or written.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_core import tokenize as tok
from hermes_core.forked import child_lock
from hermes_core.retrieval import dense
from hermes_core.retrieval.code_fingerprint import hash_functions
from hermes_core.retrieval.dense import TextKeys
from hermes_core.retrieval.gate_store import blob_text, read_checked, text_blob, write_sealed
from hermes_core.retrieval.token_store import RewriteTally
from hermes_core.types import Skill

LAYOUT = 1
WHAT = "text keys cache"
MIN_NEW = 64   # skills derived or dropped since the last read or write before it is written again
_SEP = "\x00"  # in no key (hex digests with a prefix)


def builders_id(functions: Sequence[Callable[..., Any]]) -> str:
    """A fingerprint of the code that derives the keys: the part limit and the code of each
    function with its default arguments' values and the values it closes over (another Python, a
    changed builder or a changed default: another fingerprint; a dataclass's field defaults are
    its ``__init__``'s defaults, their ``default_factory`` functions what that ``__init__`` closes
    over)."""
    h = hashlib.sha256(f"{dense.MAX_PARTS}".encode())
    hash_functions(h, functions)
    return h.hexdigest()


#: the functions that derive a skill's keys, whose code :func:`builders_fingerprint` hashes
KEY_BUILDERS = (dense.document_text, dense.skill_parts, dense.model_text, dense._doc_key,
                dense._parts_key, dense._text_hash)


@functools.cache
def builders_fingerprint() -> str:
    """``builders_id(KEY_BUILDERS)``, computed on the first read or write of a file, not at
    import: an import that never touches the cache does not pay for hashing the code."""
    return builders_id(KEY_BUILDERS)


def text_keys_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / "text_keys.npz"


def source_digest(skill: Skill) -> bytes:
    """What a skill's keys are saved under: the SHA-256 of its name and description."""
    return hashlib.sha256(f"{skill.name}\x00{skill.description}".encode("utf-8", "surrogatepass")).digest()


def save_keys(path: Path, skills: Sequence[Skill], keys: Sequence[TextKeys]) -> bool:
    """Write each skill's ``keys`` to ``path``; False when the disk refused."""
    arrays = {
        "sources": np.frombuffer(b"".join(source_digest(s) for s in skills), dtype=np.uint8).reshape(-1, 32),
        "doc": text_blob(_SEP.join(k.doc for k in keys)),
        "parts": text_blob(_SEP.join(k.parts for k in keys)),
    }
    header = {"builders": builders_fingerprint(), "tokenizer": tok.tokenizer_key()}
    return write_sealed(path, LAYOUT, header, arrays, WHAT)


def load_keys(path: Path) -> dict[bytes, TextKeys] | None:
    """The keys saved at ``path`` by source digest; None when there is no usable file (a damaged
    one is said in the log once, by ``gate_store.read_checked``)."""
    return read_checked(path, LAYOUT, WHAT, again="deriving them again", decode=lambda _, a: _keys(a),
                        ours=lambda h: (h.get("builders") == builders_fingerprint()
                                        and h.get("tokenizer") == tok.tokenizer_key()))


def _keys(a: dict[str, np.ndarray]) -> dict[bytes, TextKeys]:
    """The saved keys by source digest, checked beyond the digest (lengths, key shapes)."""
    sources = a["sources"]
    doc_text, parts_text = blob_text(a["doc"]), blob_text(a["parts"])
    docs = doc_text.split(_SEP) if doc_text else []
    parts = parts_text.split(_SEP) if parts_text else []
    n = len(docs)
    if sources.shape != (n, 32) or sources.dtype != np.uint8 or len(parts) != n:
        raise ValueError("arrays of different lengths")
    if not all(d.startswith("doc-") and len(d) == 68 for d in docs) or any(len(p) != 64 for p in parts):
        raise ValueError("a key of another shape")
    raw = sources.tobytes()
    return {raw[32 * i:32 * i + 32]: TextKeys(d, p) for i, (d, p) in enumerate(zip(docs, parts, strict=True))}


class TextKeyCache:
    """One retriever's link between the process's text-key memo and its file: :meth:`load`
    (once, before a first refresh derives any key) adopts the saved keys of ``skills``; :meth:`save`
    writes the catalog's when ``min_new`` skills or more were derived or dropped since the file was
    read or written. No cache folder: both do nothing."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None, min_new: int = MIN_NEW) -> None:
        self.path = None if cache_dir is None else text_keys_path(cache_dir)
        self.min_new = min_new
        self._tally = RewriteTally()
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self._lock = child_lock(threading.Lock())

    def load(self, skills: Sequence[Skill]) -> None:
        with self._lock:
            if self._tally.loaded or self.path is None:
                return
            saved = load_keys(self.path)
            if saved:
                found = [(s, k) for s in skills if (k := saved.get(source_digest(s))) is not None]
                dense.adopt_text_keys(found)
            self._tally.read(len(saved or ()), dense.text_keys_derived())

    def save(self, skills: Sequence[Skill]) -> bool:
        """Write the keys of ``skills`` (the catalog) when enough changed
        (:class:`~.token_store.RewriteTally`: other retrievers' derivations count too, which only
        errs toward writing); whether it wrote."""
        with self._lock:
            if self.path is None or not self._tally.due(dense.text_keys_derived(), len(skills),
                                                            self.min_new):
                return False
            keys = dense.text_keys(skills)
            self._tally.wrote(len(skills), dense.text_keys_derived())
            return save_keys(self.path, skills, keys)
