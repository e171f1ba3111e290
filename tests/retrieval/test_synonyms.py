"""The synonym index finds exactly what a phrase-by-phrase scan finds, by lookup."""

from __future__ import annotations

import random
import re

from hermes_core.retrieval.synonyms import PHRASE_WEIGHT, TOKEN_WEIGHT, SynonymIndex
from hermes_core.retrieval.triggers import normalize
from hermes_core.tokenize import content_tokens


def scan_scores(synonyms: dict[str, list[str]], names: list[str], query: str) -> tuple[list[float], bool]:
    """The layer's formula applied phrase by phrase (the definition the index must reproduce)."""
    q = normalize(query)
    qtoks = set(content_tokens(q))
    out = [0.0] * len(names)
    any_whole = False
    for skill, phrases in synonyms.items():
        if skill not in names:
            continue
        i = names.index(skill)
        whole, partial = 0, set()
        for p in dict.fromkeys(phrases):
            norm = normalize(p).strip()
            toks = set(content_tokens(norm))
            if not norm or not toks:
                continue
            left = r"(?<![a-z0-9])" if norm[0].isascii() and norm[0].isalnum() else ""
            right = r"(?![a-z0-9])" if norm[-1].isascii() and norm[-1].isalnum() else ""
            if re.search(left + re.escape(norm) + right, q):
                whole += 1
            else:
                partial |= toks & qtoks
        any_whole |= whole > 0
        out[i] = PHRASE_WEIGHT * whole + TOKEN_WEIGHT * len(partial) if (whole or partial) else 0.0
    return out, any_whole


VOCAB = [
    "rain", "umbrella", "weather", "drop", "a", "line", "mail", "email", "send", "开个会", "会议",
    "zoom", "查", "违章", "git", "commit", "pr",
]


def test_index_equals_the_phrase_scan_on_random_synonyms_and_queries() -> None:
    rng = random.Random(2)
    names = [f"s{i}" for i in range(12)]
    syn = {n: [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 3))) for _ in range(3)]
           for n in names}
    idx = SynonymIndex(syn, names)
    for _ in range(300):
        q = rng.choice([" ", "", "-"]).join(rng.choice(VOCAB) for _ in range(rng.randint(1, 8)))
        scores, whole = idx.score(q)
        assert (scores.tolist(), whole) == scan_scores(syn, names, q)


def test_ascii_phrase_needs_word_boundaries_cjk_phrase_does_not() -> None:
    idx = SynonymIndex({"mail": ["mail"], "meet": ["开个会"]}, ["mail", "meet"])
    scores, whole = idx.score("check my email")
    assert not whole and scores.tolist() == [0.0, 0.0]
    scores, whole = idx.score("用zoom开个会")
    assert whole and scores.tolist() == [0.0, PHRASE_WEIGHT]
    scores, whole = idx.score("MAIL it")
    assert whole and scores.tolist() == [PHRASE_WEIGHT, 0.0]


def test_a_phrase_shared_by_two_skills_counts_for_both_and_duplicates_once() -> None:
    idx = SynonymIndex({"a": ["look it up", "Look it up"], "b": ["look it up"]}, ["a", "b"])
    scores, _ = idx.score("please look it up")
    # "Look it up" normalises to the same phrase but is a second synonym of a: both count
    assert scores.tolist() == [2 * PHRASE_WEIGHT, PHRASE_WEIGHT]
    assert idx.phrase_count == 3


def test_a_long_pasted_log_is_scanned_once() -> None:
    idx = SynonymIndex({"a": ["stack trace"]}, ["a"])
    log = "ERROR at line 12: connection reset\n" * 120 + "stack trace follows"
    scores, whole = idx.score(log)
    assert whole and scores.tolist() == [PHRASE_WEIGHT]
