"""L2 lexical layer: BM25-style scoring over tokens of each skill's name and description.

For every distinct query token ``t``::

    score(skill) += idf(t) * tf / (tf + 1.5)          (tf = count of t in the skill's tokens)
                  + 0.5 * idf(t)  if t appears verbatim in the skill's name or description

with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``. There is no length normalisation: skill
descriptions are short and of similar length. Names are split on camelCase, dots, hyphens and
underscores by the shared tokenizer, so ``Navigation.TrafficViolations.queryViolation`` contributes
navigation/traffic/violations/query/violation. Synonyms are deliberately not indexed here (L3 owns
them), so a synonym hit is never counted twice.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import bm25s
import numpy as np
import simplemma
import snowballstemmer

from hermes_core import tokenize as tok
from hermes_core.retrieval.bm25_postings import Postings, verbatim_pairs
from hermes_core.retrieval.stored_terms import carried, verbatim_of
from hermes_core.retrieval.token_memo import SkillTerms, TokenMemo, uses_jieba
from hermes_core.tokenize import STOPWORDS, cjk_chars, normalize, to_simplified, tokenize
from hermes_core.types import Skill

# bm25s sets its logger to DEBUG when imported, which outranks the level the application gave the
# root logger: its "Building index from IDs" reached the CLI's stderr on every build. NOTSET makes
# it inherit that level again, as every other library's logger does.
logging.getLogger("bm25s").setLevel(logging.NOTSET)

TF_SATURATION = 1.5
DIRECT_MATCH_BONUS = 0.5


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """The Snowball (Porter2) English stem of an ASCII word's lemma: papers/paper -> paper,
    movies/movie -> movi, buses/bus -> bus, knives/knife -> knife, children/child -> child,
    citing/cited -> cite.

    Both sides of the match go through it, so a singular and its plural must land on one stem; a
    home-made suffix stripper did not (movies -> movy but movie -> movie), and Porter2 alone
    leaves the -es after s or z, -ves, -is/-es and irregular plurals apart (buse/bus, knive/knife,
    children/child). simplemma's English lemma (a maintained dictionary, no model) first maps
    those to the singular. The cache makes the per-token cost a dict look-up. CJK, digits and
    identifiers pass through unchanged; Porter2 skips words of three letters or fewer.
    """
    if not word.isascii() or not word.isalpha():
        return word
    lemma = simplemma.lemmatize(word, lang="en").lower()
    if lemma.isascii() and lemma.isalpha() and lemma[:1] == word[:1].lower():
        word = lemma   # not better -> good, was -> be: a form of the word, not a synonym of it
    if len(word) <= 3:
        return word
    return str(_STEMMER.stemWord(word))


def bm25_tokens(text: str) -> list[str]:
    """Shared tokens plus every single CJK character, stopwords dropped.

    jieba's words alone miss paraphrases that share characters but not words (查违章 vs 违章记录);
    adding single characters lifted Recall@5 on the Chinese dev set from 0.66 to 0.83 while idf keeps
    common characters cheap. English words are lightly stemmed and stopwords dropped (0.45 -> 0.61).
    A camelCase word counts whole as well as by its parts: a request typing ``postgresql`` or
    ``cprofile`` in one case has only the whole word (PostgreSQL splits into postgre + sql).
    """
    toks = tokenize(text)
    parts = set(toks)
    toks.extend(w for w in tokenize(text, split_camel=False) if w not in parts)
    toks.extend(cjk_chars(to_simplified(text)))   # 違 and 违 are one character to match
    return [light_stem(t) for t in toks if t not in STOPWORDS]


def skill_tokens(skill: Skill) -> list[str]:
    return bm25_tokens(skill.name) + bm25_tokens(skill.description)


def verbatim_text(skill: Skill) -> str:
    """Name and description, normalised as tokens are (accents folded too, so ``creme`` is found
    in ``Crème``); a (stemmed) query token found in it gets the bonus."""
    return normalize(f"{skill.name} {skill.description}")


def skill_terms(skill: Skill) -> SkillTerms:
    """What an index derives from one skill (:func:`skill_tokens`, :func:`verbatim_text`)."""
    tf = Counter(skill_tokens(skill))
    return SkillTerms(tuple(tf), tuple(tf.values()), verbatim_text(skill))


# Shared by every index built without a memo of its own: the retriever's rebuilds, the usage
# layer's past queries and the gate's reference each re-derive only text they have not seen.
_MEMO = TokenMemo()


@dataclass(frozen=True, slots=True)
class BM25Hit:
    name: str
    score: float


@dataclass(frozen=True, slots=True)
class IndexParts:
    """What an index keeps to be carried to the next catalog (:meth:`BM25Index.updated`): the
    skills as indexed and their terms, the vocabulary (token -> row, rows in insertion order),
    each row's document frequency, the tf entries (valued ``tf / (tf + 1.5)``) and the verbatim
    bonus entries; plus what the terms were derived under (``tokenizer_key()``, and whether
    jieba segmented them, None when no skill's text reached it) and which skills reached jieba."""

    skills: tuple[Skill, ...] = ()
    terms: Sequence[SkillTerms] = ()   # a tuple, or read back from a file (stored_terms)
    vocab: dict[str, int] = field(default_factory=dict)
    df: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tf: Postings = field(default_factory=lambda: Postings.empty(valued=True))
    bonus: Postings = field(default_factory=lambda: Postings.empty(valued=False))
    cjk: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    version: str = ""
    jieba: bool | None = None
    changed: int = 0     # skills the update that made these parts derived anew or dropped

    def derived_alike(self) -> bool:
        """Whether a skill indexed here would be derived to the same terms now."""
        return self.version == tok.tokenizer_key() and (self.jieba is None
                                                          or self.jieba == tok.jieba_available())


class BM25Index:
    """BM25 from ``bm25s``, plus the project's verbatim bonus, so a query costs its tokens'
    postings, not the catalog.

    The tf/idf part is scored by ``bm25s.BM25(method="lucene", k1=1.5, b=0)`` in float64 on the
    project's own token ids and vocabulary (jieba + stemming, remembered by the token memo): bm25s
    never tokenises. It scores a query by adding the CSC columns (``idf * tf / (tf + 1.5)`` per
    skill) of its token ids into one array, so a query walks its tokens' postings only. bm25s can
    only index a corpus whole, one document at a time in Python (1.7 s at 20,000 skills), so its
    matrix is assembled here from kept entries (``bm25_postings``) with bm25s's own arithmetic for
    ``b = 0`` (``idf[term] * (tf / (1.5 + tf))``, idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` by
    ``math.log``) and in its layout (columns by term, rows ascending): the tests hold it, column by
    column, to the bits of ``bm25s.BM25.index`` over the same corpus, from scratch and after any
    sequence of edits, adds and deletes. The verbatim bonus (``0.5 * idf`` for each skill whose
    normalised name and description contains the term as a substring) is not BM25: it is a second
    sparse matrix of the same layout (``_indptr`` / ``_docs`` / ``_weights``, one row per term),
    found by Aho-Corasick and added on top of bm25s's scores.
    """

    def __init__(self, skills: Sequence[Skill] = (), memo: TokenMemo | None = None) -> None:
        self.build(skills, memo)

    def build(self, skills: Sequence[Skill], memo: TokenMemo | None = None) -> None:
        """Index ``skills``. Each skill's tokens and normalised text come from ``memo`` (the shared
        one by default), so only skills it has not seen are tokenised."""
        self._apply(IndexParts(), skills, memo)

    def updated(self, skills: Sequence[Skill], memo: TokenMemo | None = None) -> BM25Index:
        """A new index of ``skills`` that derives and matches only the skills whose name or
        description this one does not hold at the same name, equal to ``BM25Index(skills)`` in
        every score (this index is left as it is: a reader may still be using it).

        Kept skills must keep their order (the retriever's index order is by name); otherwise,
        or if tokenisation changed meanwhile, the new index is built whole."""
        new = BM25Index.__new__(BM25Index)
        new._apply(self._parts if self._parts.derived_alike() else IndexParts(), skills, memo)
        return new

    @classmethod
    def carried_from(cls, parts: IndexParts) -> BM25Index:
        """An index that holds ``parts`` (read back from ``bm25_store``) only to be updated from:
        it scores nothing until :meth:`updated` makes the index of a catalog from it."""
        base = cls.__new__(cls)
        base._parts = parts
        return base

    @property
    def parts(self) -> IndexParts:
        """What this index carries to the next catalog (read-only; ``bm25_store`` saves it)."""
        return self._parts

    def _apply(self, old: IndexParts, skills: Sequence[Skill], memo: TokenMemo | None) -> None:
        n = len(skills)
        doc_map, fresh = _carried(old.skills, skills)
        kept_old = np.flatnonzero(doc_map >= 0)
        if np.any(np.diff(doc_map[kept_old]) <= 0):          # reordered: nothing carries over
            self._apply(IndexParts(), skills, memo)
            return
        fresh_skills = [skills[j] for j in fresh]
        new_terms = (_MEMO if memo is None else memo).terms(fresh_skills, skill_terms)
        vocab = dict(old.vocab)
        add_rows: list[int] = []
        add_docs: list[int] = []
        add_tf: list[int] = []
        for j, t in zip(fresh, new_terms, strict=True):
            add_rows.extend([vocab.setdefault(w, len(vocab)) for w in t.tokens])
            add_docs.extend([j] * len(t.tokens))
            add_tf.extend(t.counts)
        n_old_rows, n_rows = len(old.vocab), len(vocab)
        gone_rows = [old.vocab[w] for i in np.flatnonzero(doc_map < 0).tolist() for w in old.terms[i].tokens]
        df = np.zeros(n_rows, dtype=np.int64)
        df[:n_old_rows] = old.df
        df += np.bincount(np.asarray(add_rows, dtype=np.int64), minlength=n_rows)
        df -= np.bincount(np.asarray(gone_rows, dtype=np.int64), minlength=n_rows)
        alive = df > 0
        row_map: np.ndarray | None = None
        new_words = [(w, r) for w, r in itertools.islice(vocab.items(), n_old_rows, None)]
        if not alive.all():      # words only removed skills had leave; later rows move up
            row_map = np.where(alive, np.cumsum(alive) - 1, -1)
            vocab = {w: int(row_map[r]) for w, r in vocab.items() if alive[r]}
            new_words = [(w, int(row_map[r])) for w, r in new_words]
            df = df[alive]
        rows = np.asarray(add_rows, dtype=np.int64)
        rows = rows if row_map is None else row_map[rows]
        docs = np.asarray(add_docs, dtype=np.int64)
        tf = np.asarray(add_tf, dtype=np.float64)
        tf_part = old.tf.moved(doc_map, row_map).merged(Postings.of(rows, docs, tf / (TF_SATURATION + tf)))
        # bonus: every word in the new or edited skills' text, and the words new to the catalog in
        # the text of the skills kept
        kept_texts = [verbatim_of(old.terms, i) for i in kept_old.tolist()] if new_words else []
        found = [verbatim_pairs(vocab.items(), [t.verbatim for t in new_terms], fresh),
                 verbatim_pairs(new_words, kept_texts, doc_map[kept_old].tolist())]
        extra = Postings.of(np.concatenate([p.rows for p in found]), np.concatenate([p.docs for p in found]))
        bonus = old.bonus.moved(doc_map, row_map).merged(extra)
        terms = carried(old.terms, doc_map, n, dict(zip(fresh, new_terms, strict=True)))
        cjk = np.zeros(n, dtype=bool)
        cjk[doc_map[kept_old]] = old.cjk[kept_old]
        for j, s in zip(fresh, fresh_skills, strict=True):
            cjk[j] = uses_jieba(f"{s.name}\x00{s.description}")
        self._parts = IndexParts(tuple(skills), terms, vocab, df, tf_part, bonus, cjk,
                                 tok.tokenizer_key(), tok.jieba_available() if cjk.any() else None,
                                 len(fresh) + len(old.skills) - len(kept_old))
        self._index()

    def _index(self) -> None:
        """The scorer and the bonus matrix from ``_parts``, with the idf of this catalog."""
        parts = self._parts
        self.names: list[str] = [s.name for s in parts.skills]
        n = len(self.names)
        self._vocab = parts.vocab
        n_terms = len(parts.vocab)
        dfs, inverse = np.unique(parts.df, return_inverse=True)
        self._idf = np.asarray([idf(n, int(d)) for d in dfs], dtype=np.float64)[inverse]
        self._unseen_idf = idf(n, 0) if n else 0.0   # a word no skill has: the rarest possible
        tf = parts.tf
        self._bm25 = None
        if n_terms and tf.values is not None:
            data = self._idf[tf.rows] * tf.values     # bm25s: idf_array[ids] * tfc, per document
            self._bm25 = _bm25s_scorer(data, tf.docs, tf.indptr(n_terms), n, parts.vocab)
        self._indptr = parts.bonus.indptr(n_terms)
        self._docs = parts.bonus.docs
        self._weights = DIRECT_MATCH_BONUS * self._idf[parts.bonus.rows]
        self._by_doc: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocab)

    @property
    def vocabulary(self) -> Mapping[str, int]:
        """The indexed tokens (read-only view, no copy)."""
        return MappingProxyType(self._vocab)

    def token_idf(self, token: str) -> float:
        """idf of a token; 0 for tokens in no skill (they cannot score)."""
        row = self._vocab.get(token)
        return 0.0 if row is None else float(self._idf[row])

    def score_array(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores for every skill, in index order (zeros when nothing matches).

        A token no skill has (df = 0) adds nothing: neither tf nor a verbatim bonus is worth its idf.
        """
        rows = [r for r in (self._vocab.get(t) for t in dict.fromkeys(query_tokens)) if r is not None]
        if not rows or self._bm25 is None:
            return np.zeros(len(self.names), dtype=np.float64)
        scores: np.ndarray = self._bm25.get_scores_from_ids(rows)
        ptr = self._indptr
        sel = np.concatenate([np.arange(ptr[r], ptr[r + 1]) for r in rows])
        np.add.at(scores, self._docs[sel], self._weights[sel])
        return scores

    def score_of(self, query_tokens: Sequence[str], docs: np.ndarray) -> np.ndarray:
        """``score_array(query_tokens)[docs]`` to the bit, without scoring the others: a few
        documents' scores for a query whose postings are long (the usage index's new past
        messages against its sampled ones). Each document's score is added up as bm25s and
        :meth:`score_array` add it: its tf/idf entries in the query's token order from 0.0, then
        its bonus entries in the same order (IEEE addition, in Python as in numpy), read from a
        document-major copy of both matrices made on the first call."""
        out = np.zeros(len(docs), dtype=np.float64)
        rows = [r for r in (self._vocab.get(t) for t in dict.fromkeys(query_tokens)) if r is not None]
        if not rows or self._bm25 is None or not len(docs):
            return out
        if self._by_doc is None:   # a race builds it twice, the same
            tf = self._bm25.scores
            self._by_doc = (_doc_major(self._parts.tf.rows, tf["indices"], tf["data"], len(self.names)),
                            _doc_major(self._parts.bonus.rows, self._docs, self._weights, len(self.names)))
        for k, d in enumerate(np.asarray(docs, dtype=np.int64).tolist()):
            total = 0.0
            for ptr, entry_rows, values in self._by_doc:
                lo, hi = int(ptr[d]), int(ptr[d + 1])
                mine = dict(zip(entry_rows[lo:hi].tolist(), values[lo:hi].tolist(), strict=True))
                for r in rows:
                    v = mine.get(r)
                    if v is not None:
                        total += v
            out[k] = total
        return out

    def reached(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Per skill (index order), whether some of these tokens scores it: ``score_array(tokens)
        > 0`` without adding up any score, read off the postings (bm25s's column, the verbatim
        bonus's row). Every entry of either is positive (idf > 0 whatever the df, tf / (tf + 1.5)
        > 0), so a skill with an entry scores above 0 and one without scores 0."""
        out = np.zeros(len(self.names), dtype=bool)
        rows = [r for r in (self._vocab.get(t) for t in dict.fromkeys(query_tokens)) if r is not None]
        if not rows or self._bm25 is None:
            return out
        tf, ptr = self._bm25.scores, self._indptr
        tf_ptr, tf_docs = tf["indptr"], tf["indices"]
        for r in rows:
            out[tf_docs[tf_ptr[r]:tf_ptr[r + 1]]] = True
            out[self._docs[ptr[r]:ptr[r + 1]]] = True
        return out

    def knows(self, token: str) -> bool:
        """Whether some skill's name or description has ``token``."""
        return token in self._vocab

    def shares_a_word(self, query_tokens: Sequence[str]) -> bool:
        """Whether some query token of two or more characters is in the catalog's vocabulary.
        The Chinese tokenizer adds every character as a token too (for recall); a query whose
        overlap with the catalog is single characters only ("天", "么") shares no word with it."""
        return any(len(t) > 1 and t in self._vocab for t in query_tokens)

    def max_score(self, query_tokens: Sequence[str]) -> float:
        """Upper bound of a skill's score for these tokens if it had each once, verbatim.

        Dividing by it gives a score in roughly [0, 1] whatever the catalog size: a gate feature.
        """
        vocab, w = self._vocab, self._idf
        return sum((self._unseen_idf if (row := vocab.get(t)) is None else float(w[row]))
                   * (1 / (1 + TF_SATURATION) + DIRECT_MATCH_BONUS) for t in dict.fromkeys(query_tokens))

    def search(self, query: str, top_n: int = 50) -> list[BM25Hit]:
        toks = bm25_tokens(query)
        if not toks or not self.names:
            return []
        scores = self.score_array(toks)
        return top_hits(self.names, scores, top_n)


def _carried(old: Sequence[Skill], new: Sequence[Skill]) -> tuple[np.ndarray, list[int]]:
    """Where each skill of ``old`` is in ``new`` if its name and description are the same there
    (-1: edited or gone), and the positions in ``new`` of the skills to derive anew."""
    at = {s.name: i for i, s in enumerate(old)}
    doc_map = [-1] * len(old)
    fresh: list[int] = []
    for j, s in enumerate(new):
        i = at.get(s.name)
        if i is not None and doc_map[i] < 0 and (old[i] is s or old[i].description == s.description):
            doc_map[i] = j
        else:
            fresh.append(j)
    return np.asarray(doc_map, dtype=np.int64), fresh


def _doc_major(rows: np.ndarray, docs: np.ndarray, values: np.ndarray,
               n_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries sorted by (row, doc) regrouped by document, each document's rows still rising:
    a pointer per document, the rows and the values."""
    order = np.argsort(docs, kind="stable")
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(docs, minlength=n_docs), out=ptr[1:])
    return ptr, rows[order], values[order]


def _bm25s_scorer(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n_docs: int,
                  vocab: dict[str, int]) -> bm25s.BM25:
    """bm25s's scorer over the CSC matrix ``data`` / ``indices`` / ``indptr`` (what
    ``BM25.index`` stores as ``scores``), for ``n_docs`` skills.

    ``method="lucene"`` is idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` and tf part
    ``tf / (tf + k1 * (1 - b + b * len / avg_len))``; b = 0 turns length normalisation off (skill
    descriptions are short and of similar length), so a skill's entry for a term depends on its
    tf, the term's df and N alone. float64, as every other layer's scores. No empty token: a
    query with no known token is answered before bm25s is asked.
    """
    index = bm25s.BM25(k1=TF_SATURATION, b=0.0, method="lucene", dtype="float64", int_dtype="int64")
    index.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}
    index.vocab_dict = vocab
    index.nonoccurrence_array = None      # lucene has none (only bm25l / bm25+)
    return index


def top_hits(names: Sequence[str], scores: np.ndarray, top_n: int) -> list[BM25Hit]:
    """The ``top_n`` positive scores, best first; ties broken by name for determinism."""
    nz = np.flatnonzero(scores > 0)
    if nz.size == 0:
        return []
    part = nz[np.argpartition(-scores[nz], top_n)[: top_n * 2]] if nz.size > top_n * 4 else nz
    ranked = sorted(part.tolist(), key=lambda i: (-scores[i], names[i]))[:top_n]
    return [BM25Hit(names[i], float(scores[i])) for i in ranked]


#: ``expand(text, tokens, known)``: tokens to add to a request's own (glossary.Glossary.expansions)
Expander = Callable[[str, Sequence[str], Callable[[str], bool]], list[str]]


def lexical_scores(bm25: BM25Index, text: str, expand: Expander | None = None) -> tuple[np.ndarray, float]:
    """BM25 scores, and the lexical share: the best score over what the query's words could score
    (words no skill has counted at the highest idf), a gate feature in [0, 1] on any catalog; 0
    when the query shares no word with the catalog, only single characters (chance overlap in
    Chinese small talk: "今天天气怎么样" met a travel skill through 天, 怎 and 么 alone).
    ``expand`` adds tokens the catalog knows for words of the request it does not."""
    toks = query_terms(bm25, text, expand)
    s2 = bm25.score_array(toks)
    return s2, lexical_share(bm25, toks, s2)


def query_terms(bm25: BM25Index, text: str, expand: Expander | None = None) -> list[str]:
    """A request's BM25 tokens with what ``expand`` adds for them on this index's vocabulary."""
    toks = bm25_tokens(text)
    if expand is not None:
        toks += expand(text, toks, bm25.knows)
    return toks


def lexical_share(bm25: BM25Index, toks: Sequence[str], scores: np.ndarray) -> float:
    """The lexical share of :func:`lexical_scores` from the request's tokens and their scores."""
    best = float(scores.max()) if scores.size else 0.0
    mx = bm25.max_score(toks)
    if best <= 0 or mx <= 0 or not bm25.shares_a_word(toks):
        return 0.0
    return best / mx


def shared_memo() -> TokenMemo:
    """The token memo every index built without one of its own shares."""
    return _MEMO


def index_terms(skills: Sequence[Skill]) -> list[SkillTerms]:
    """The terms an index built without a memo of its own derives for ``skills`` (the shared memo:
    a skill indexed a moment ago is not tokenised again)."""
    return _MEMO.terms(skills, skill_terms)
