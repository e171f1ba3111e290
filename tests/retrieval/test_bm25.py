"""Tests of ``hermes_core/retrieval/bm25.py``: the stemmer agrees with itself."""

from __future__ import annotations

import pytest

from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens, light_stem
from hermes_core.types import Skill

PAIRS = [("movie", "movies"), ("recipe", "recipes"), ("paper", "papers"), ("box", "boxes"),
         ("city", "cities"), ("query", "queries"), ("image", "images"), ("file", "files"),
         ("database", "databases"), ("invoice", "invoices"), ("meeting", "meetings"),
         ("address", "addresses"), ("policy", "policies"), ("class", "classes"),
         ("match", "matches"), ("wish", "wishes"), ("spreadsheet", "spreadsheets"),
         ("delivery", "deliveries"), ("package", "packages"), ("cite", "cited")]


@pytest.mark.parametrize(("singular", "plural"), PAIRS)
def test_singular_and_plural_share_a_stem(singular: str, plural: str) -> None:
    assert light_stem(singular) == light_stem(plural)


def test_short_words_cjk_and_identifiers_pass_through() -> None:
    assert light_stem("css") == "css" and light_stem("违章") == "违章" and light_stem("v2ray") == "v2ray"


def test_a_plural_query_matches_a_singular_description() -> None:
    idx = BM25Index([Skill("movie-finder", "Find a movie to watch tonight."),
                     Skill("recipe-box", "Suggest a recipe from what is in the fridge.")])
    assert idx.search("recommend some movies")[0].name == "movie-finder"
    assert idx.search("any recipes with eggs")[0].name == "recipe-box"
    assert bm25_tokens("recipes") == bm25_tokens("recipe")
