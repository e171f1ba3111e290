"""L3 synonyms: phrases a user says for a skill that its description does not use.

For each skill, against one query::

    score = 1.5 * (number of its synonym phrases found whole in the query)
          + 1.0 * (number of distinct query content tokens found in its other synonym phrases)

A phrase found whole scores 1.5 and its tokens are not counted again. Stopwords never count, so a
synonym like "look up the weather" does not match every question containing "the".

**Taiwan and mainland wording.** The Han fold (OpenCC t2s) joins characters, not vocabulary:
軟體 folds to 软体, never the mainland 软件; 滑鼠 is 鼠标, 資料庫 数据库. A Chinese phrase is
also indexed in its mainland wording (OpenCC ``tw2sp``) and its Taiwan wording (``s2twp``), as
the same phrase (found in either, it counts once). Only here: folding every text this way
traded plain and Hong Kong traditional recall for Taiwan's (decision 140); a synonym is an
author's phrase, and meeting its other wording is what it is for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import ahocorasick
import numpy as np

from hermes_core.atomic_write import read_cache
from hermes_core.config_messages import safe_path
from hermes_core.errors import ConfigError
from hermes_core.retrieval.skills import user_path
from hermes_core.retrieval.triggers import normalize
from hermes_core.tokenize import content_tokens, has_cjk, is_spaced_word_char, opencc_converter
from hermes_core.yaml_safe import MAX_CHARS, YamlLimitError, load_yaml

TOKEN_WEIGHT = 1.0
PHRASE_WEIGHT = 1.5
#: OpenCC configs giving a Chinese phrase's other regional wordings (mainland, Taiwan).
WORDING_CONFIGS = ("tw2sp", "s2twp")


def wordings(phrase: str) -> tuple[str, ...]:
    """``phrase`` and, when it holds Han characters, its mainland and Taiwan wordings."""
    if phrase.isascii() or not has_cjk(phrase):
        return (phrase,)
    return tuple(dict.fromkeys(
        (phrase, *(str(opencc_converter(c).convert(phrase)) for c in WORDING_CONFIGS))))


class SynonymIndex:
    """Synonym phrases indexed for lookup: a query costs its own length and its tokens' postings.

    Whole phrases are found by one Aho-Corasick automaton over every phrase (scanned once per query,
    word boundaries checked after each match); partial matches come from an inverted index
    from content token to the phrases holding it. Nothing walks the catalog's phrases per query.
    """

    def __init__(self, synonyms: Mapping[str, Sequence[str]] | None = None,
                 names: Sequence[str] = ()) -> None:
        self.set(synonyms or {}, names)

    def set(self, synonyms: Mapping[str, Sequence[str]], names: Sequence[str]) -> None:
        """``names`` fixes the index order (the catalog's); synonyms for unknown skills are ignored."""
        self.names = list(names)
        pos = {n: i for i, n in enumerate(self.names)}
        # phrase id -> skill index; normalised phrase text -> its ids and boundary rules
        self._skill_of: list[int] = []
        by_text: dict[str, list[int]] = {}
        self._by_token: dict[str, list[int]] = {}
        self._tokens: list[frozenset[str]] = []
        for skill, phrases in synonyms.items():
            if skill not in pos:
                continue
            for p in dict.fromkeys(phrases):
                norm = normalize(p).strip()
                toks = frozenset(content_tokens(norm))
                if norm and toks:
                    pid = len(self._skill_of)
                    self._skill_of.append(pos[skill])
                    self._tokens.append(toks)
                    seen: set[str] = set()
                    for other in wordings(p):
                        o_norm = norm if other is p else normalize(other).strip()
                        if not o_norm or o_norm in seen:
                            continue
                        seen.add(o_norm)
                        by_text.setdefault(o_norm, []).append(pid)
                        for t in toks if other is p else content_tokens(o_norm):
                            ids = self._by_token.setdefault(t, [])
                            if not ids or ids[-1] != pid:
                                ids.append(pid)
        self._automaton: Any = None
        if by_text:
            auto = ahocorasick.Automaton(ahocorasick.STORE_ANY)
            for norm, pids in by_text.items():
                # word boundaries at ends in spaced scripts only, so "mail" is not found inside
                # "email" nor кот in который, while 开个会 is found in 用zoom开个会 (no spaces in CJK)
                auto.add_word(norm, (len(norm), is_spaced_word_char(norm[0]), is_spaced_word_char(norm[-1]),
                                     tuple(pids)))
            auto.make_automaton()
            self._automaton = auto

    @property
    def available(self) -> bool:
        """Whether any skill has synonyms; without any, the layer abstains."""
        return bool(self._skill_of)

    @property
    def phrase_count(self) -> int:
        return len(self._skill_of)

    def score_array(self, query: str) -> np.ndarray:
        return self.score(query)[0]

    def whole_phrases(self, q: str) -> frozenset[int]:
        """Ids of the phrases found whole in the normalised query ``q``, word boundaries respected."""
        if self._automaton is None or not q:
            return frozenset()
        found: list[int] = []
        n = len(q)
        for end, (length, left, right, pids) in self._automaton.iter(q):
            start = end - length + 1
            if left and start > 0 and is_spaced_word_char(q[start - 1]):
                continue
            if right and end + 1 < n and is_spaced_word_char(q[end + 1]):
                continue
            found.extend(pids)
        return frozenset(found)

    def spoken(self, query: str) -> np.ndarray:
        """Per skill, whether a whole synonym phrase of two or more content words is in ``query``:
        a request that says the author's phrase, as specific as the skill's own words."""
        out = np.zeros(len(self.names), dtype=bool)
        for pid in self.whole_phrases(normalize(query)) if query else ():
            if len(self._tokens[pid]) >= 2:
                out[self._skill_of[pid]] = True
        return out

    def score(self, query: str) -> tuple[np.ndarray, bool]:
        """Scores in index order, and whether any phrase was found whole."""
        scores = np.zeros(len(self.names), dtype=np.float64)
        if not self._skill_of or not query:
            return scores, False
        q = normalize(query)
        whole = self.whole_phrases(q)
        partial: dict[int, set[str]] = {}
        for tok in set(content_tokens(q)):
            for pid in self._by_token.get(tok, ()):
                if pid not in whole:
                    partial.setdefault(self._skill_of[pid], set()).add(tok)
        counts: dict[int, int] = {}
        for pid in whole:
            counts[self._skill_of[pid]] = counts.get(self._skill_of[pid], 0) + 1
        for i, c in counts.items():
            scores[i] += PHRASE_WEIGHT * c
        for i, found in partial.items():
            scores[i] += TOKEN_WEIGHT * len(found)
        return scores, bool(whole)


def load_mapping_file(path: str | os.PathLike[str], what: str) -> dict[str, tuple[str, ...]]:
    """A YAML file mapping skill name -> phrase or list of phrases (triggers or synonyms file)."""
    p = user_path(path)
    try:  # depth, alias expansion and size bounded, as for config.yaml; a FIFO or /dev/zero unread
        data, _ = load_yaml(read_cache(p, MAX_CHARS).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} file not found", file=str(p)) from None
    except OSError as e:
        raise ConfigError(f"cannot read {what} file: {e.strerror or e}", file=str(p)) from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read {what} file: {e}", file=str(p)) from None
    except YamlLimitError as e:
        reason = "is not valid YAML" if e.reason.startswith("invalid YAML") else f": {e.reason}"
        raise ConfigError(f"{what} file {reason}".replace(" :", ":"), file=str(p),
                          key_path=safe_path(e.path) or None, line=e.line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{what} file must map skill names to lists of phrases", file=str(p))
    out: dict[str, tuple[str, ...]] = {}
    for k, v in data.items():
        items = [v] if isinstance(v, str) else v
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise ConfigError(f"{what} for a skill must be a string or a list of strings",
                              file=str(p), key_path=str(k))
        out[str(k)] = tuple(x.strip() for x in items if x.strip())
    return out
