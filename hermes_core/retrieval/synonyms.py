"""L3 synonyms: phrases a user says for a skill that its description does not use.

For each skill, against one query::

    score = 1.5 * (number of its synonym phrases found whole in the query)
          + 1.0 * (number of distinct query content tokens found in its other synonym phrases)

A phrase found whole scores 1.5 and its tokens are not counted again. Stopwords never count, so a
synonym like "look up the weather" does not match every question containing "the".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from hermes_core.errors import ConfigError
from hermes_core.retrieval.triggers import normalize
from hermes_core.tokenize import content_tokens
from hermes_core.yaml_safe import YamlLimitError, format_path, load_yaml

TOKEN_WEIGHT = 1.0
PHRASE_WEIGHT = 1.5


def _ascii_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


class SynonymIndex:
    def __init__(self, synonyms: Mapping[str, Sequence[str]] | None = None,
                 names: Sequence[str] = ()) -> None:
        self.set(synonyms or {}, names)

    def set(self, synonyms: Mapping[str, Sequence[str]], names: Sequence[str]) -> None:
        """``names`` fixes the index order (the catalog's); synonyms for unknown skills are ignored."""
        self.names = list(names)
        pos = {n: i for i, n in enumerate(self.names)}
        self._phrases: list[tuple[int, re.Pattern[str], frozenset[str]]] = []
        for skill, phrases in synonyms.items():
            if skill not in pos:
                continue
            for p in dict.fromkeys(phrases):
                norm = normalize(p).strip()
                toks = frozenset(content_tokens(norm))
                if norm and toks:
                    # word boundaries at ASCII ends only, so "mail" is not found inside "email",
                    # while 开个会 is found in 用zoom开个会 (mixed text puts no space between scripts)
                    left = r"(?<![a-z0-9])" if _ascii_alnum(norm[0]) else ""
                    right = r"(?![a-z0-9])" if _ascii_alnum(norm[-1]) else ""
                    pat = re.compile(left + re.escape(norm) + right)
                    self._phrases.append((pos[skill], pat, toks))

    @property
    def available(self) -> bool:
        """Whether any skill has synonyms; without any, the layer abstains."""
        return bool(self._phrases)

    def score_array(self, query: str) -> np.ndarray:
        return self.score(query)[0]

    def score(self, query: str) -> tuple[np.ndarray, bool]:
        """Scores in index order, and whether any phrase was found whole."""
        scores = np.zeros(len(self.names), dtype=np.float64)
        if not self._phrases or not query:
            return scores, False
        q = normalize(query)
        qtoks = set(content_tokens(q))
        whole: dict[int, int] = {}
        partial: dict[int, set[str]] = {}
        for i, phrase, toks in self._phrases:
            if phrase.search(q):
                whole[i] = whole.get(i, 0) + 1
            else:
                hit = toks & qtoks
                if hit:
                    partial.setdefault(i, set()).update(hit)
        for i, n in whole.items():
            scores[i] += PHRASE_WEIGHT * n
        for i, found in partial.items():
            scores[i] += TOKEN_WEIGHT * len(found)
        return scores, bool(whole)


def load_mapping_file(path: str | os.PathLike[str], what: str) -> dict[str, tuple[str, ...]]:
    """A YAML file mapping skill name -> phrase or list of phrases (triggers or synonyms file)."""
    p = Path(os.path.expanduser(os.fspath(path)))
    try:  # depth, alias expansion and size bounded, as for config.yaml
        data, _ = load_yaml(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} file not found", file=str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {what} file: {e}", file=str(p)) from None
    except YamlLimitError as e:
        reason = "is not valid YAML" if e.reason.startswith("invalid YAML") else f": {e.reason}"
        raise ConfigError(f"{what} file {reason}".replace(" :", ":"), file=str(p),
                          key_path=format_path(e.path) or None, line=e.line) from None
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
