"""What the lexical layer derives from one skill, remembered by what it was derived from.

BM25 tokenises every skill's name and description (jieba for Chinese, identifier splitting,
lemma + Porter2 stemming) and normalises its text for the verbatim bonus. That is about a
millisecond a skill: on a 20,000-skill catalog every refresh re-derived all of it, so one edited
SKILL.md stalled the next turn for tens of seconds. A skill's derivation depends only on its name
and description and on how text is tokenised, so it is remembered under exactly those:

* the SHA-256 of the name and description (not the text itself: the memo holds no copy of it);
* the tokenizer's settings: ``tokenizer_key()`` (``TOKENIZER_VERSION``, the fold config, OpenCC's
  and jieba's releases), the function that derives, and for a text with
  CJK characters whether jieba segments it (the only part of tokenisation that depends on what
  is installed; a text without CJK never reaches jieba, and asking would load it).

The memo is bounded (least recently used out first) both in skills and in tokens held. A new
process would derive every skill once: ``token_store`` saves the entries in the retriever's cache
folder and a restarted retriever adopts them (:meth:`TokenMemo.entries` / :meth:`TokenMemo.adopt`).
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from hermes_core import tokenize as tok
from hermes_core.forked import child_lock
from hermes_core.types import Skill

# Skills remembered (as many as dense.TEXT_KEY_MEMO), and tokens over all of them: at 20,000 long
# descriptions (about 60 tokens each) the tokens bound is not reached; a catalog of far longer
# descriptions keeps its most recently seen skills.
MEMO_SKILLS = 65_536
MEMO_TOKENS = 4_000_000


@dataclass(frozen=True, slots=True)
class SkillTerms:
    """One skill's lexical derivation: its distinct BM25 tokens (name then description, in order
    of first occurrence), how often each occurs, and its normalised name and description, where a
    query token earns the verbatim bonus."""

    tokens: tuple[str, ...]
    counts: tuple[int, ...]
    verbatim: str


Derive = Callable[[Skill], SkillTerms]
#: a remembered skill: the SHA-256 of its name and description, and whether jieba segmented it
#: (None: its text never reached jieba)
Key: TypeAlias = tuple[bytes, bool | None]


class TermsSource(Protocol):
    """Skills' terms made on first use (``stored_terms.StoredTerms``), the same object each time."""

    def __getitem__(self, i: int, /) -> SkillTerms: ...

    def n_tokens(self, i: int, /) -> int: ...


#: a remembered skill's terms, or where to make them the first time they are asked for: a weak
#: reference to the source (the index file's bytes, ``stored_terms``), its place there and its
#: token count. The index owns the source; once it lets it go (every stored skill edited or
#: removed) the memo must not keep the file's bytes for entries no catalog holds any more.
_Held: TypeAlias = SkillTerms | tuple["weakref.ref[TermsSource]", int, int]


def _size(held: _Held) -> int:
    return len(held.tokens) if isinstance(held, SkillTerms) else held[2]


def _made(held: _Held) -> SkillTerms | None:
    """The terms ``held`` stands for, made now if pending; None when their source is gone."""
    if isinstance(held, SkillTerms):
        return held
    source = held[0]()
    return None if source is None else source[held[1]]


def uses_jieba(text: str) -> bool:
    """Whether tokenising ``text`` reaches the CJK segmenter (after NFKC, as ``tokenize`` reads)."""
    return tok.has_cjk(text) or (not text.isascii() and tok.has_cjk(unicodedata.normalize("NFKC", text)))


def skill_key(skill: Skill) -> Key:
    """What a skill's terms are remembered under (in memory and in the caches on disk)."""
    text = f"{skill.name}\x00{skill.description}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return digest, (tok.jieba_available() if uses_jieba(text) else None)


class TokenMemo:
    """Bounded, least-recently-used memo of :class:`SkillTerms` (see the module docstring).

    ``terms`` derives only what it has not seen under the same settings; entries of another
    ``derive`` function or tokenizer version are dropped at once."""

    def __init__(self, max_skills: int = MEMO_SKILLS, max_tokens: int = MEMO_TOKENS) -> None:
        self._max_skills = max_skills
        self._max_tokens = max_tokens
        self._memo: OrderedDict[Key, _Held] = OrderedDict()
        self._tokens = 0
        self._settings: tuple[object, ...] | None = None
        # free in a forked child (a refresh holding it at the fork hung the child's first one)
        self._lock = child_lock(threading.Lock())
        self._let_go = False   # a source died: its pending entries are to leave (under the lock)
        self.derived = 0   # skills derived (not found) since this memo was made

    def __len__(self) -> int:
        with self._lock:
            self._forget_let_go()
            return len(self._memo)

    @property
    def tokens_held(self) -> int:
        with self._lock:
            self._forget_let_go()
            return self._tokens

    def terms(self, skills: Sequence[Skill], derive: Derive) -> list[SkillTerms]:
        """Each skill's terms, in order; ``derive`` is called only for those not remembered."""
        settings = (tok.tokenizer_key(), derive)
        out: list[SkillTerms] = []
        with self._lock:
            if settings != self._settings:
                self._clear()
                self._settings = settings
            self._forget_let_go()
            memo = self._memo
            for s in skills:
                k = skill_key(s)
                held = memo.get(k)
                made = None if held is None else _made(held)
                if made is None:
                    if held is not None:   # pending on a source let go: derived as if unknown
                        self._tokens -= _size(held)
                    made = derive(s)
                    self.derived += 1
                    self._tokens += len(made.tokens)
                memo[k] = made
                memo.move_to_end(k)
                out.append(made)
            self._bound()
        return out

    def entries(self, derive: Derive) -> list[tuple[Key, SkillTerms]]:
        """Everything remembered for ``derive`` under this tokenizer, least recently used first
        (nothing if the memo holds another's): what a restart can adopt without hashing again."""
        with self._lock:
            if self._settings != (tok.tokenizer_key(), derive):
                return []
            made = [(k, _made(held)) for k, held in self._memo.items()]
            out = [(k, t) for k, t in made if t is not None]
            for k, t in made:
                if t is None:   # pending on a source let go: forgotten
                    self._tokens -= _size(self._memo.pop(k))
            self._memo.update(out)   # values replaced, the order kept: each made once
            return out

    def adopt(self, derive: Derive, entries: Sequence[tuple[Key, SkillTerms]]) -> None:
        """Remember ``entries`` (derived by ``derive`` under this tokenizer, e.g. read back from a
        cache file) as older than anything held: an entry already held is kept as it is."""
        self._adopt(derive, entries)

    def adopt_stored(self, derive: Derive, keys: Sequence[Key], source: TermsSource) -> None:
        """:meth:`adopt` of ``source[i]`` under ``keys[i]``, each made only when asked for (a
        restart's memo remembers the whole catalog, and decodes only what it is asked). The
        memo holds ``source`` weakly: its owner (the index) keeps it alive; once it is gone, a
        pending entry is as unknown (derived if asked, not listed), and leaves the memo's size
        and token count at its next use (so the bounds weigh only what can be served)."""
        ref = weakref.ref(source, self._source_gone())
        self._adopt(derive, [(k, (ref, i, source.n_tokens(i))) for i, k in enumerate(keys)])

    def _source_gone(self) -> Callable[[object], None]:
        """A weak reference's callback marking this memo's pending entries to forget: it may run
        at any point of any thread (the collector), even one holding the lock, so it only sets a
        flag; and it holds the memo weakly (a memo let go is no longer kept by its sources)."""
        memo = weakref.ref(self)

        def gone(_: object) -> None:
            held = memo()
            if held is not None:
                held._let_go = True
        return gone

    def _forget_let_go(self) -> None:
        """Drop the pending entries whose source died (under the lock; a scan only after one did)."""
        if not self._let_go:
            return
        self._let_go = False   # before the scan: a source dying during it marks again
        dead = [k for k, held in self._memo.items()
                if not isinstance(held, SkillTerms) and held[0]() is None]
        for k in dead:
            self._tokens -= _size(self._memo.pop(k))

    def _adopt(self, derive: Derive, entries: Sequence[tuple[Key, _Held]]) -> None:
        with self._lock:
            self._forget_let_go()
            settings = (tok.tokenizer_key(), derive)
            if settings != self._settings:
                self._clear()
                self._settings = settings
            held = self._memo
            merged: OrderedDict[Key, _Held] = OrderedDict(
                (k, t) for k, t in entries if k not in held)
            self._tokens += sum(_size(t) for t in merged.values())
            merged.update(held)
            self._memo = merged
            self._bound()

    def _bound(self) -> None:
        memo = self._memo
        while memo and (len(memo) > self._max_skills or self._tokens > self._max_tokens):
            _, old = memo.popitem(last=False)
            self._tokens -= _size(old)

    def _clear(self) -> None:
        self._memo.clear()
        self._tokens = 0
