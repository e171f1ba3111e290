"""Skills' terms read back from the BM25 index file, each decoded the first time it is used.

A warm restart reads every skill's terms from ``bm25/index.npz`` (``bm25_store``), yet the update
that follows touches only the skills edited or removed meanwhile: the others are carried as they
are. Decoding all of them (a tuple of tokens and one of counts per skill, 1.2 million strings at
20,000 skills) and handing them to the token memo cost about 0.2 s of a 2.1 s restart. So the
file's token bytes, counts and verbatim texts are kept as read, and a skill's
:class:`~hermes_core.retrieval.token_memo.SkillTerms` is made when someone asks for it (an
update removing the skill, the memo asked for it, a rewrite of the file) and then kept, so every
asker gets the same object (``bm25_store`` and ``token_store`` match terms to keys by identity).

The whole token text is decoded once when the file is read, only to check it is UTF-8 (a
sealed file of another writer must be refused then, with the warning, not fail a later query);
the bytes are kept, and a skill's slice between two NULs (a byte no other UTF-8 character holds)
is valid UTF-8 by itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from hermes_core.forked import child_lock
from hermes_core.retrieval.token_memo import Key, SkillTerms

SEP = "\x00"   # between tokens in the file (in no token: tokens are runs of word characters)
_SEP_BYTE = SEP.encode()   # the NUL byte, as the file holds it
_NONE = SkillTerms((), (), "")


class _Lazy(Sequence[SkillTerms]):
    """A sequence of terms each made by :meth:`_one` when asked for (a slice: a list of them)."""

    def _one(self, i: int) -> SkillTerms:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> SkillTerms: ...
    @overload
    def __getitem__(self, i: slice) -> list[SkillTerms]: ...

    def __getitem__(self, i: int | slice) -> SkillTerms | list[SkillTerms]:
        if isinstance(i, slice):
            return [self._one(k) for k in range(*i.indices(len(self)))]
        return self._one(i)

    def __iter__(self) -> Iterator[SkillTerms]:
        return (self._one(k) for k in range(len(self)))


class StoredTerms(_Lazy):
    """The terms of the file's skills, in file order (see the module docstring)."""

    def __init__(self, tokens: bytes, n_tokens: np.ndarray, counts: np.ndarray,
                 verbatim: Sequence[str], keys: Sequence[Key] = ()) -> None:
        """``tokens``: the skills' tokens in order, NUL-separated UTF-8; ``n_tokens``: how many
        each skill has; ``counts``: each token's count; ``keys``: each skill's memo key, when
        known (what a rewrite files a kept skill under). ValueError when they do not add up."""
        tokens.decode("utf-8", "surrogatepass")   # raises UnicodeDecodeError (a ValueError)
        seps = np.flatnonzero(np.frombuffer(tokens, dtype=np.uint8) == ord(SEP))
        total = len(seps) + 1 if tokens else 0
        if (n_tokens.ndim != 1 or len(n_tokens) != len(verbatim) or (n_tokens < 0).any()
                or int(n_tokens.sum()) != total or counts.shape != (total,) or (counts < 1).any()):
            raise ValueError("token and count lengths do not add up")
        starts = np.concatenate([[0], seps + 1]).astype(np.int64)     # token k's first byte
        ends = np.concatenate([seps, [len(tokens)]]).astype(np.int64)   # and its end
        first = np.concatenate([[0], np.cumsum(n_tokens)]).astype(np.int64)
        some = n_tokens > 0            # a skill's bytes: its first token's start to its last's end
        self._lo = np.where(some, starts[np.minimum(first[:-1], len(starts) - 1)], 0)
        self._hi = np.where(some, ends[np.maximum(first[1:] - 1, 0)], 0)
        self._first = first
        self._bytes = tokens
        self._counts = counts
        self._verbatim = verbatim
        self._made: list[SkillTerms | None] = [None] * len(verbatim)
        self.keys = keys
        # two threads asking at once get one object; free again in a forked child (one slot's
        # store, so the list is whole whenever the fork fell)
        self._lock = child_lock(threading.Lock())

    def __len__(self) -> int:
        return len(self._made)

    def _one(self, i: int) -> SkillTerms:
        i = self._at(i)
        found = self._made[i]
        if found is None:
            made = self._decode(i)
            with self._lock:
                found = self._made[i]
                if found is None:
                    found = self._made[i] = made
        return found

    def _at(self, i: int) -> int:
        """``i`` as a place from the start (IndexError outside): ``_decode`` reads ``i + 1``, so a
        negative ``i`` would pair one skill's tokens with no counts, and be kept as the last's."""
        return range(len(self._made))[i]

    def _decode(self, i: int) -> SkillTerms:
        a, b = int(self._first[i]), int(self._first[i + 1])
        if a == b:
            return SkillTerms((), (), self._verbatim[i])
        text = self._bytes[int(self._lo[i]):int(self._hi[i])].decode("utf-8", "surrogatepass")
        return SkillTerms(tuple(text.split(SEP)), tuple(self._counts[a:b].tolist()), self._verbatim[i])

    def n_tokens(self, i: int) -> int:
        """How many distinct tokens skill ``i`` has, without decoding them."""
        i = self._at(i)
        return int(self._first[i + 1] - self._first[i])

    def verbatim(self, i: int) -> str:
        """Skill ``i``'s normalised text, without decoding its tokens."""
        return self._verbatim[self._at(i)]

    def raw(self, i: int) -> tuple[bytes, np.ndarray]:
        """Skill ``i``'s tokens as the file holds them (NUL-separated UTF-8) and their counts."""
        i = self._at(i)
        return self._bytes[int(self._lo[i]):int(self._hi[i])], self._counts[self._first[i]:self._first[i + 1]]

    def decoded(self) -> int:
        """How many skills' terms were made so far."""
        return sum(t is not None for t in self._made)


class CarriedTerms(_Lazy):
    """An updated catalog's terms: each kept skill's still in the file's :class:`StoredTerms`
    (``src``: its place there, -1 for a skill derived since), the others held (``own``)."""

    def __init__(self, root: StoredTerms, src: np.ndarray, own: dict[int, SkillTerms]) -> None:
        self.root, self.src, self.own = root, src, own

    def __len__(self) -> int:
        return len(self.src)

    def _one(self, i: int) -> SkillTerms:
        s = int(self.src[i])
        return self.own[i % len(self.src)] if s < 0 else self.root[s]

    def verbatim(self, i: int) -> str:
        s = int(self.src[i])
        return self.own[i % len(self.src)].verbatim if s < 0 else self.root.verbatim(s)


@dataclass(frozen=True)
class Encoded:
    """A catalog's terms as a file stores them: every token in order, NUL-separated UTF-8 (no
    separator after a skill without tokens), how many each skill has, their counts, and each
    skill's verbatim text."""

    tokens: bytes
    n_tokens: np.ndarray
    counts: np.ndarray
    verbatim: list[str]


def encoded(terms: Sequence[SkillTerms]) -> Encoded:
    """``terms`` as a file stores them. A skill still in the file read back (stored, carried)
    is copied as the file's bytes, not decoded: a rewrite after a warm restart decodes only the
    skills changed since (made already, or held), as the update did."""
    pieces: list[bytes] = []
    n_tokens = np.zeros(len(terms), dtype=np.int64)
    counts: list[np.ndarray] = []
    verbatim: list[str] = []
    for i in range(len(terms)):
        place = stored_place(terms, i)
        if place is not None:
            root, s = place
            piece, c = root.raw(s)
            n, text = len(c), root.verbatim(s)
        else:
            t = terms[i]
            piece = SEP.join(t.tokens).encode("utf-8", "surrogatepass")
            c = np.asarray(t.counts, dtype=np.int64)
            n, text = len(t.tokens), t.verbatim
        if n:
            pieces.append(piece)
            counts.append(c)
        n_tokens[i] = n
        verbatim.append(text)
    all_counts = np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, dtype=np.int64)
    return Encoded(_SEP_BYTE.join(pieces), n_tokens, all_counts, verbatim)


def stored_place(terms: Sequence[SkillTerms], i: int) -> tuple[StoredTerms, int] | None:
    """Where skill ``i`` of ``terms`` stands in the file read back (its :class:`StoredTerms` and
    place there), None for a skill derived since or terms held in memory."""
    if isinstance(terms, StoredTerms):
        return terms, i
    if isinstance(terms, CarriedTerms):
        s = int(terms.src[i])
        return (terms.root, s) if s >= 0 else None
    return None


def verbatim_of(terms: Sequence[SkillTerms], i: int) -> str:
    """Skill ``i``'s normalised text, decoding nothing else of a stored skill."""
    return terms.verbatim(i) if isinstance(terms, (StoredTerms, CarriedTerms)) else terms[i].verbatim


def carried(old: Sequence[SkillTerms], doc_map: np.ndarray, n: int,
            fresh: dict[int, SkillTerms]) -> Sequence[SkillTerms]:
    """The terms of a catalog of ``n`` skills: ``old``'s skill ``i`` at ``doc_map[i]`` (-1: not
    kept), ``fresh[j]`` at ``j``. Stored terms stay undecoded (one level deep, however many
    updates follow, and let go once no stored skill is left); otherwise a tuple."""
    if isinstance(old, (StoredTerms, CarriedTerms)):
        root, src, own = ((old, np.arange(len(old), dtype=np.int64), {}) if isinstance(old, StoredTerms)
                          else (old.root, old.src, old.own))
        new_src = np.full(n, -1, dtype=np.int64)
        kept = doc_map >= 0
        new_src[doc_map[kept]] = src[kept]
        new_own = {int(doc_map[i]): t for i, t in own.items() if doc_map[i] >= 0}
        new_own.update(fresh)
        if (new_src >= 0).any():
            return CarriedTerms(root, new_src, new_own)
        # every stored skill edited or gone: the file's bytes are let go
        return tuple(new_own[j] for j in range(n))
    terms = [_NONE] * n
    for i in np.flatnonzero(doc_map >= 0).tolist():
        terms[doc_map[i]] = old[i]
    for j, t in fresh.items():
        terms[j] = t
    return tuple(terms)
