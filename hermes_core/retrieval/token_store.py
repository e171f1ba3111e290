"""The lexical token memo on disk, so a restarted retriever does not tokenise its catalog again.

Tokenising a skill for BM25 (jieba, identifier splitting, lemma + Porter2) is about a
millisecond; a new process paid it for every skill of its catalog on its first refresh (20,000
skills: seconds) though nothing had changed. The memo's entries are saved in the retriever's
cache folder (``bm25/terms.npz``) and adopted by the next process's first refresh: a skill's
entry is found under the same key as before (the SHA-256 of its name and description and its
jieba state, ``token_memo``), so an entry of a skill edited meanwhile is simply never asked for.

The file is sealed (``gate_store``: a digest over every array and the header, atomic replace):
an entry read back wrongly would feed every later index of that skill, so a torn, flipped or
foreign file is ignored with one warning and written again. A file made under another
``tok.tokenizer_key()`` (``TOKENIZER_VERSION``, the fold config, OpenCC's and jieba's releases)
or by another deriving function or other code (:func:`derive_id`: a fingerprint of the
tokenizer's and the deriving module's code, not the function's name alone) is ignored quietly
(an upgrade, not damage).
A restart adopts the file's entries as the BM25 index file's are (``stored_terms``): each skill's
terms are made when first asked for, so a skill dropped meanwhile is never decoded.
Only the catalog's entries are saved (the memo also holds past requests, the usage layer's).
Saving rewrites the whole file, so it is done only when enough skills were derived or dropped
since the file was read or written (:attr:`TermsCache.min_new`); a restart derives the few skills
edited since. A catalog that shrank derives nothing, so the dropped skills are counted too: the
file would otherwise keep their terms for good. With BM25's own file (``bm25_store``, which holds
the same terms and keys) the terms are stored once: a retriever with an index file writes no
token file, and removes one an older release left beside it once it adopted it.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hermes_core import tokenize as tok
from hermes_core.forked import child_lock
from hermes_core.retrieval import token_memo
from hermes_core.retrieval.cache_sweep import npz_holding
from hermes_core.retrieval.code_fingerprint import imported_releases, modules_id
from hermes_core.retrieval.gate_store import blob_texts, read_checked, text_blob, write_sealed
from hermes_core.retrieval.stored_terms import SEP, StoredTerms
from hermes_core.retrieval.token_memo import Derive, Key, SkillTerms, TokenMemo

LAYOUT = 1
WHAT = "token memo cache"
MIN_NEW = 64   # skills derived since the last read or write before the file is written again
#: what every file this store writes holds (``gate_store.write_sealed``): a name is no proof
made_by_cache = npz_holding("header", "digest", "keys", "n_tokens")


def terms_path(cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / "bm25" / "terms.npz"


def save_terms(path: Path, derive: Derive, entries: Sequence[tuple[Key, SkillTerms]]) -> bool:
    """Write ``entries`` (made by ``derive``) to ``path``; False when the disk refused."""
    entries = [(k, t) for k, t in entries if not any(SEP in w for w in t.tokens)]
    tokens = [w for _, t in entries for w in t.tokens]
    header = {"tokenizer": tok.tokenizer_key(), "derive": derive_id(derive)}
    arrays: dict[str, np.ndarray] = {
        "keys": np.frombuffer(b"".join(k[0] for k, _ in entries), dtype=np.uint8).reshape(-1, 32),
        "jieba": np.asarray([-1 if k[1] is None else int(k[1]) for k, _ in entries], dtype=np.int8),
        "n_tokens": np.asarray([len(t.tokens) for _, t in entries], dtype=np.int64),
        "counts": np.asarray([c for _, t in entries for c in t.counts], dtype=np.int64),
        "tokens": text_blob(SEP.join(tokens)),
        "verbatim_len": np.asarray([len(t.verbatim) for _, t in entries], dtype=np.int64),
        "verbatim": text_blob("".join(t.verbatim for _, t in entries)),
    }
    return write_sealed(path, LAYOUT, header, arrays, WHAT)


def load_terms(path: Path, derive: Derive) -> list[tuple[Key, SkillTerms]] | None:
    """The entries saved at ``path`` for ``derive`` under this tokenizer, every one made; None when
    there is no usable file (a damaged one is said in the log once, by ``gate_store.read_checked``)."""
    found = load_stored(path, derive)
    return None if found is None else list(zip(found[0], found[1], strict=True))


def load_stored(path: Path, derive: Derive) -> tuple[list[Key], StoredTerms] | None:
    """As :func:`load_terms`, each skill's terms made only when first asked for (what a restart
    adopts: ``TokenMemo.adopt_stored``). The file is checked whole here, its tokens' UTF-8 too."""
    return read_checked(path, LAYOUT, WHAT, again="computing it again", decode=lambda _, a: _stored(a),
                        ours=lambda h: (h.get("tokenizer") == tok.tokenizer_key()
                                        and h.get("derive") == derive_id(derive)))


def _stored(a: dict[str, np.ndarray]) -> tuple[list[Key], StoredTerms]:
    keys, jieba, n_tokens, counts, tokens = a["keys"], a["jieba"], a["n_tokens"], a["counts"], a["tokens"]
    verbatim = blob_texts(a["verbatim"], a["verbatim_len"])
    n = len(n_tokens)
    if (keys.shape != (n, 32) or keys.dtype != np.uint8 or jieba.shape != (n,)
            or n_tokens.dtype != np.int64 or counts.dtype != np.int64):
        raise ValueError("per-skill arrays of different lengths or kinds")
    if not np.isin(jieba, (-1, 0, 1)).all():
        raise ValueError("unknown jieba state")
    if tokens.dtype != np.uint8 or tokens.ndim != 1:
        raise ValueError("token blob")
    raw = keys.tobytes()   # one copy, sliced (as bm25_store reads its keys)
    key_list = [(raw[32 * i:32 * i + 32], None if j < 0 else bool(j)) for i, j in enumerate(jieba.tolist())]
    return key_list, StoredTerms(tokens.tobytes(), n_tokens, counts, verbatim, key_list)


def derive_name(derive: Derive) -> str:
    """What a file names the function its terms were derived by (another one's are not used)."""
    return f"{getattr(derive, '__module__', '?')}.{getattr(derive, '__qualname__', '?')}"


def derive_id(derive: Derive, *modules: types.ModuleType) -> str:
    """What a file's terms are filed under: ``derive``'s name and a fingerprint of the code that
    derives them (``code_fingerprint``: the tokenizer, the memo's terms, ``derive``'s own module,
    and ``modules``, e.g. the code that builds postings from them, and the releases of the
    libraries they import, e.g. simplemma's for BM25's stemming). An edit of any of these
    without a ``TOKENIZER_VERSION`` bump is another id, so no stale terms are served.

    Hashed once a process for the same function, module objects and releases (as the text-key
    and scorer stores keep theirs), not at import: code on disk edited is seen by the next
    process; in this one, another ``derive`` (a reload of its own module makes a new function)
    or another module object is hashed anew, and so is a library release that differs. A module
    edited in place is not seen until :func:`forget_derive_ids` (what a new process starts
    from): a function patched inside it, or ``importlib.reload`` of the tokenizer or of
    ``modules``, which keeps the module object."""
    home = sys.modules.get(getattr(derive, "__module__", "") or "")
    mods = tuple(dict.fromkeys([tok, token_memo, *modules, *([home] if home is not None else [])]))
    key = (derive, mods, imported_releases(mods))
    with _ids_lock:
        found = _ids.get(key)
    if found is None:
        found = f"{derive_name(derive)}:{modules_id(mods, key[2])}"
        with _ids_lock:
            _ids[key] = found
    return found


#: :func:`derive_id`'s fingerprints this process took, by function, modules and releases
_ids: dict[tuple[Derive, tuple[types.ModuleType, ...], str], str] = {}
# free in a forked child (one a thread held at the fork hung the child's first use)
_ids_lock = child_lock(threading.Lock())


def forget_derive_ids() -> None:
    """Drop the fingerprints :func:`derive_id` kept, as a new process starts without them (for a
    test that edits code in place)."""
    with _ids_lock:
        _ids.clear()


class RewriteTally:
    """When a memo's file, rewritten whole, is worth writing again: once ``min_new`` entries or
    more (the cache's own, which a test may lower) were derived or dropped since it was read or
    written. ``derived`` is the memo's running count of derivations; dropped is what the file
    holds less the catalog's entries not derived since (a count that includes other derivations
    only errs toward writing). Shared by the terms file and :mod:`.text_key_store`, which keep
    two memos by the same rule."""

    def __init__(self) -> None:
        self.loaded = False
        self.mark = 0   # the memo's derived count when the file was last read or written
        self.held = 0   # entries the file holds, as far as this process read or wrote it

    def read(self, held: int, derived: int) -> None:
        """The file was read (or its entries adopted from elsewhere): ``held`` entries."""
        self.loaded, self.held, self.mark = True, held, derived

    def due(self, derived: int, catalog: int, min_new: int) -> bool:
        new = derived - self.mark
        return new + max(0, self.held - (catalog - new)) >= min_new

    def wrote(self, held: int, derived: int) -> None:
        self.held, self.mark = held, derived


class TermsCache:
    """One retriever's link between the token memo and its file: the first :meth:`load` adopts
    the file's entries into the memo, each made when first asked for; :meth:`save` writes the
    catalog's entries when ``min_new`` skills or more were derived or dropped since the file was
    read or written. No cache folder: both do nothing.

    The memo holds the read file weakly (``TokenMemo.adopt_stored``); this cache owns it until
    the next :meth:`save`, :meth:`release` or :meth:`drop`, by when the refresh that loaded it
    has asked for its catalog's terms: the entries still pending then are of skills dropped or
    edited meanwhile, forgotten with the file's bytes rather than made to be left out of the
    next file."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None, min_new: int = MIN_NEW) -> None:
        self.path = None if cache_dir is None else terms_path(cache_dir)
        self.min_new = min_new
        self._tally = RewriteTally()
        self._read: StoredTerms | None = None   # what load adopted, owned until save, release or drop
        self._lock = threading.Lock()

    def load(self, memo: TokenMemo, derive: Derive) -> None:
        with self._lock:
            if self._tally.loaded or self.path is None:
                return
            found = load_stored(self.path, derive)
            if found:
                memo.adopt_stored(derive, *found)
                self._read = found[1]
            self._tally.read(len(found[0]) if found else 0, memo.derived)

    def adopted(self, memo: TokenMemo, held: int = 0) -> None:
        """The memo adopted the catalog's terms from elsewhere (``bm25_store``'s file, which
        holds them with their keys, ``held`` skills, as this file does when the two were written
        together): the file is not read, and counts from here."""
        with self._lock:
            self._tally.read(held, memo.derived)

    def save(self, memo: TokenMemo, derive: Derive, catalog: Sequence[SkillTerms], *,
             force: bool = False) -> bool:
        """Write the memo's entries for the skills of ``catalog`` (the very objects the memo
        gave for them) when enough changed, or with ``force``; whether it wrote. The memo also
        holds past requests (the usage layer's index), which are the user's words and have no
        place in a tokenizer cache.

        Enough changed (:class:`RewriteTally`): past requests count as derived, which only
        errs toward writing."""
        with self._lock:
            self._read = None   # the refresh asked for its terms: the rest are let go, not made
            if self.path is None:
                return False
            if not force and not self._tally.due(memo.derived, len(catalog), self.min_new):
                return False
            held = {id(t) for t in catalog}
            entries = [(k, t) for k, t in memo.entries(derive) if id(t) in held]
            self._tally.wrote(len(entries), memo.derived)
            return save_terms(self.path, derive, entries)

    def release(self) -> None:
        """Let go of the file :meth:`load` read, neither writing nor removing it: the refresh
        asked for its terms, and neither file was due to be written (``bm25_store``)."""
        with self._lock:
            self._read = None

    def drop(self) -> bool:
        """Remove the file when another holds its terms (``bm25_store``'s index file): only one
        this cache's writer made (a sealed file's arrays), never a user's file, a link or a FIFO
        under its name; whether it removed one."""
        with self._lock:
            self._read = None
            if self.path is None or not made_by_cache(self.path):
                return False
            try:
                self.path.unlink()
            except OSError:   # gone meanwhile, or a folder that refuses: kept, harmless
                return False
            return True
