"""Tests of ``hermes_core/retrieval/glossary.py``: the lexical layer's bilingual glossary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.config import SkillSettings
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens, lexical_scores
from hermes_core.retrieval.glossary import Glossary, default_glossary
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill

DATA = Path(__file__).resolve().parent.parent / "data" / "catalogs"
GLOSSARY = Glossary.parse("""
# a comment
ppt | pptx | powerpoint | 幻灯片 | 演示文稿
表格 | spreadsheet | table
列 | column
speaker notes | 演讲者备注
""")


def _expand(glossary: Glossary, text: str, vocabulary: set[str]) -> list[str]:
    return glossary.expansions(text, bm25_tokens(text), vocabulary.__contains__)


def test_a_term_the_catalog_lacks_brings_the_lines_terms_the_catalog_has() -> None:
    vocabulary = {"pptx", "powerpoint", "spreadsheet", "slide"}
    assert _expand(GLOSSARY, "帮我做一个PPT", vocabulary) == ["pptx", "powerpoint"]
    assert _expand(GLOSSARY, "给这个表格加一个图", vocabulary) == ["spreadsheet"]


def test_nothing_is_added_when_the_catalog_uses_the_requests_own_word() -> None:
    assert _expand(GLOSSARY, "帮我做一个PPT", {"ppt", "pptx"}) == []
    assert _expand(GLOSSARY, "做一个演示文稿", {"演示文稿", "演示", "文稿", "pptx"}) == []


def test_a_latin_term_of_several_words_needs_them_all() -> None:
    assert _expand(GLOSSARY, "添加演讲者备注", {"speaker", "note"}) == ["speaker", "note"]
    assert _expand(GLOSSARY, "add speaker notes", {"演讲者"}) == ["演讲者"]
    assert _expand(GLOSSARY, "thank the speaker", {"演讲者"}) == []


def test_a_single_cjk_character_is_never_a_term() -> None:
    assert _expand(GLOSSARY, "查一下T45次列车", {"column"}) == []


def test_the_shipped_glossary_parses_into_lines_of_two_or_more_terms() -> None:
    g = default_glossary()
    assert len(g.lines) > 150
    assert all(len(terms) > 1 for terms in g.lines)
    assert not [t.text for terms in g.lines for t in terms if t.cjk and len(t.text) < 2]


def test_expansions_raise_the_skill_the_glossary_names_in_bm25() -> None:
    idx = BM25Index([Skill("pptx", "Create and edit PowerPoint presentations (.pptx)"),
                     Skill("xlsx", "Create, edit and analyse spreadsheets (.xlsx)")])
    plain, share = lexical_scores(idx, "帮我做一个PPT")
    assert share == 0 and not plain.any()
    scores, share = lexical_scores(idx, "帮我做一个PPT", default_glossary().expansions)
    assert share > 0 and scores.argmax() == 0


def _labelled(name: str) -> list[tuple[str, str | None]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [(d["query"], d["gold"]) for d in map(json.loads, filter(None, lines))]


@pytest.mark.parametrize(("query", "gold"), [
    ("帮我做一个PPT", "pptx"), ("make a PPT about our roadmap", "pptx"),
    ("把这个Excel表格里的数据做一个透视汇总", "xlsx"), ("给这个表格加一个柱状图", "xlsx"),
    ("设计一张海报，用于周末音乐会", "canvas-design"), ("open this xls file", "xlsx"),
])
def test_without_embeddings_a_request_reaches_an_english_skill_through_the_glossary(query: str,
                                                                                    gold: str) -> None:
    r = SkillRetriever(catalogs=[str(DATA / "anthropics_skills.jsonl")], embedders=[])
    res = r.retrieve(query)
    assert not res.gated and res.names[0] == gold, (res.candidates[:3], res.gate)
    bare = SkillRetriever(catalogs=[str(DATA / "anthropics_skills.jsonl")], embedders=[],
                          glossary=Glossary(()))
    assert bare.retrieve(query).gated or bare.retrieve(query).names[0] != gold


def test_without_embeddings_chinese_small_talk_still_meets_no_english_skill() -> None:
    # the glossary's own effect: no listing of requests the gate cannot judge
    r = SkillRetriever(SkillSettings(list_unjudged=False), catalogs=[str(DATA / "anthropics_skills.jsonl")],
                       embedders=[])
    off = [q for q, _ in _labelled("anthropics_skills.negatives.jsonl")]
    assert all(r.retrieve(q).gated for q in off), [q for q in off if not r.retrieve(q).gated]


def test_without_embeddings_a_chinese_docker_question_finds_the_english_docker_skill() -> None:
    home = Path(__file__).resolve().parents[2] / "examples" / "home" / "skills"
    r = SkillRetriever(folders=[str(home)], embedders=[])
    res = r.retrieve("我的容器一启动就退出了怎么办")
    assert not res.gated and res.names[0] == "docker-debugging", (res.candidates[:3], res.gate)
    assert r.retrieve("今天天气怎么样").gated
