"""Tests of ``hermes_core/retrieval/translated_gate.py``.

The gate without embeddings for a Chinese request on a catalog with no Chinese skill: the score
(only the words no off-topic reference request brings), the leave-one-out threshold, how its
verdict combines with the lexical share's, the cache, when it abstains, and, with the CC-CEDICT
lexicon, Chinese requests on part of the English-name HammerBench catalog
(tests/data/catalogs/README.md): requests written for these tests, kept; small talk, rejected.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval import translated_gate as tg
from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
from hermes_core.retrieval.calibration import UNJUDGED_MAX_SKILLS
from hermes_core.retrieval.fusion import UNJUDGED, GateDecision
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "catalogs"
SKILLS = [Skill("pdf-tools", "Extract text and tables from PDF files"),
          Skill("weather", "Weather forecast for a city"),
          Skill("docker-debugging", "Diagnose a Docker container that exits at start")]
# an English reference: "weather" is brought by two requests, "pdf" and "docker" by one each
REFERENCE = ["nice weather today", "the weather is cold", "tell me a joke", "convert this pdf",
             "my docker setup broke"]


@pytest.fixture
def bm25() -> BM25Index:
    return BM25Index(SKILLS)


def _best(bm25: BM25Index, tokens: list[str]) -> float:
    return float(bm25.score_array(tokens).max())


def test_the_score_reads_only_the_words_no_reference_request_brings(bm25: BM25Index) -> None:
    tokens = bm25_tokens("docker container weather")
    without = _best(bm25, bm25_tokens("docker container"))
    assert tg.specific_best(bm25, tokens, {"weather"}) == pytest.approx(without)
    assert tg.specific_best(bm25, tokens, set()) == pytest.approx(_best(bm25, tokens))
    assert tg.specific_best(bm25, bm25_tokens("weather"), {"weather"}) == 0.0     # nothing specific left
    assert tg.specific_best(bm25, [], set()) == 0.0
    assert tg.specific_best(BM25Index(), ["pdf"], set()) == 0.0                   # an empty catalog


def test_the_threshold_is_a_quantile_of_the_reference_each_request_read_against_the_others(
        bm25: BM25Index) -> None:
    c = tg.calibrate("k", bm25, bm25_tokens, "en", REFERENCE)
    assert c.reference == {"weather", "pdf", "docker"} and c.language == "en" and c.key == "k"
    # leave-one-out: "weather" is brought by another request too, so it is generic for both;
    # "pdf" only by "convert this pdf", which is read as if the rest of the reference never said it
    off = [0.0, 0.0, 0.0, _best(bm25, ["pdf"]), _best(bm25, ["docker"])]
    assert c.threshold == pytest.approx(float(np.quantile(off, tg.OFF_QUANTILE))) and c.threshold > 0
    assert c.report["reference"] == len(REFERENCE)
    # one more request bringing both: no reference request meets a skill by a word of its own
    assert tg.calibrate("k", bm25, bm25_tokens, "en", [*REFERENCE, "a pdf about docker"]).threshold == 0.0
    # the reference's requests in another language do not set this language's threshold
    assert tg.calibrate("k", bm25, bm25_tokens, "zh", REFERENCE).threshold == 0.0


def test_a_request_passes_only_above_the_threshold(bm25: BM25Index) -> None:
    one_word = _best(bm25, ["docker"])
    c = tg.TranslatedCalibration("k", "zh", frozenset({"weather"}), one_word)
    assert not c.decide(bm25, ["docker"]).passed                 # exactly the bar: not above it
    d = c.decide(bm25, ["docker", "contain"])
    assert d.passed and d.rule == tg.RULE and d.calibrated and d.threshold == one_word
    zero = tg.TranslatedCalibration("k", "zh", frozenset({"weather"}), 0.0)
    assert not zero.decide(bm25, ["weather"]).passed             # only a generic word: score 0
    assert not zero.decide(bm25, ["unknownword"]).passed
    assert zero.decide(bm25, ["weather", "forecast"]).passed


PASS = GateDecision(True, 0.3, 0.0, "lexical", calibrated=True)
REJECT = GateDecision(False, 0.0, 0.0, "lexical", calibrated=True)
LISTED = GateDecision(True, 0.0, 0.0, UNJUDGED, calibrated=True)
T_PASS = GateDecision(True, 6.0, 0.0, tg.RULE, calibrated=True)
T_REJECT = GateDecision(False, 0.0, 0.0, tg.RULE, calibrated=True)
BIG, SMALL = UNJUDGED_MAX_SKILLS + 1, UNJUDGED_MAX_SKILLS


@pytest.mark.parametrize(("first", "translated", "size", "expected"), [
    (PASS, T_REJECT, BIG, PASS),          # the request's own words passed: that stands
    (PASS, T_PASS, BIG, PASS),
    (REJECT, None, BIG, REJECT),          # not judged across languages
    (REJECT, T_REJECT, BIG, REJECT),
    (REJECT, T_PASS, BIG, T_PASS),        # kept by its translation
    (REJECT, T_PASS, SMALL, REJECT),      # a catalog small enough to list whole keeps its rejection
    (LISTED, T_PASS, SMALL, T_PASS),      # a ranked hint instead of the whole list
    (LISTED, T_REJECT, SMALL, LISTED),
])
def test_the_translation_keeps_a_rejected_request_only_on_a_catalog_too_large_to_list_whole(
        first: GateDecision, translated: GateDecision | None, size: int, expected: GateDecision) -> None:
    assert tg.judged(first, translated, size) is expected


def test_the_calibration_is_cached_and_a_damaged_or_foreign_file_is_recomputed(
        tmp_path: Path, bm25: BM25Index, caplog: pytest.LogCaptureFixture) -> None:
    c = tg.calibrate("k1", bm25, bm25_tokens, "en", REFERENCE)
    tg.save(tmp_path, c)
    assert tg.load(tmp_path, "k1", "en") == c
    assert tg.load(tmp_path, "k2", "en") is None                  # another catalog
    assert tg.load(tmp_path, "k1", "zh") is None                  # another request language
    assert tg.load(None, "k1", "en") is None
    tg.save(None, c)                                              # no cache directory: nothing written
    path = next((tmp_path / "calibration").glob("translated-en-k1.json"))
    path.write_text("{not json", "utf-8")
    with caplog.at_level(logging.WARNING):
        assert tg.load(tmp_path, "k1", "en") is None
    assert "unreadable" in caplog.text
    data = json.loads(json.dumps({"version": tg.VERSION, "key": "k1", "language": "en",
                                  "reference": [], "threshold": float("nan")}))
    path.write_text(json.dumps(data), "utf-8")
    assert tg.load(tmp_path, "k1", "en") is None                  # a threshold that is not a number


def test_a_catalog_is_calibrated_once_and_a_restart_reads_the_cache(
        tmp_path: Path, bm25: BM25Index, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = tg.calibrate

    def counting(*args: object, **kw: object) -> tg.TranslatedCalibration:
        made.append("x")
        return real(*args, **kw)   # type: ignore[arg-type]
    monkeypatch.setattr(tg, "calibrate", counting)
    for _ in range(2):                                          # the second is a restart
        gate = tg.TranslatedGate("k", bm25, bm25_tokens, frozenset({"zh"}), tmp_path, lambda lang: True)
        first = gate.decide("容器", "zh")
        assert first is not None and gate.decide("容器", "zh") == first
        assert set(gate.report()) == {"zh"}
    assert made == ["x"]


def test_the_gate_abstains_where_it_does_not_judge(bm25: BM25Index) -> None:
    gate = tg.TranslatedGate("k", bm25, bm25_tokens, frozenset({"zh"}), None, lambda lang: False)
    assert gate.decide("容器", "zh") is None                      # no lexicon translates it
    gate = tg.TranslatedGate("k", bm25, bm25_tokens, frozenset({"zh", "en"}), None, lambda lang: True)
    assert gate.languages == {"zh"} and gate.decide("container", "en") is None   # not an English request
    from hermes_core.retrieval import crosslingual as xl
    from hermes_core.retrieval.glossary import Glossary
    mixed = [*SKILLS, Skill("快递查询", "根据快递单号查询包裹物流")]
    expand = xl.Expansion(Glossary(()), frozenset({"zh", "en"}), lambda: None)
    assert tg.TranslatedGate.for_catalog(mixed, BM25Index(mixed), expand, xl.readable(mixed), None) is None
    english = tg.TranslatedGate.for_catalog(SKILLS, bm25, expand, xl.readable(SKILLS), None)
    assert english is not None and english.languages == {"zh"}


# ------------------------------------------------------------------ with the lexicon
APPS = ("Navigation.", "Health.HealthManagement.", "OfficeSoftware.Email.", "OfficeSoftware.Conferencing.")


@pytest.fixture(scope="module")
def english_hammerbench(tmp_path_factory: pytest.TempPathFactory) -> SkillRetriever:
    rows = [json.loads(line) for line in
            (DATA / "hammerbench_en_names.skills.jsonl").read_text(encoding="utf-8").splitlines() if line]
    skills = [Skill(d["name"], d["description"]) for d in rows if d["name"].startswith(APPS)]
    r = SkillRetriever(skills=skills, embedders=[], cache_dir=tmp_path_factory.mktemp("cache"))
    r.refresh()
    return r


@pytest.mark.parametrize(("query", "app"), [           # requests written for this test
    ("帮我查一下这辆车的违章记录", "Navigation.TrafficViolations."),
    ("我想查违章", "Navigation.TrafficViolations."),
    ("附近有没有地铁站", "Navigation.PublicTransit."),
])
def test_without_embeddings_a_chinese_request_on_an_english_catalog_is_kept_by_its_translation(
        english_hammerbench: SkillRetriever, query: str, app: str) -> None:
    res = english_hammerbench.retrieve(query)
    assert res.gate is not None and res.gate.passed and res.gate.rule == tg.RULE, res.gate
    assert res.names and res.names[0].startswith(app), res.names
    assert "lexical_translated" in english_hammerbench.calibration_report()


@pytest.mark.parametrize("query", ["今天晚饭吃什么好", "今天天气怎么样", "你会不会觉得孤独",
                                   "给我讲个冷笑话吧", "我最近睡不好觉"])
def test_without_embeddings_chinese_small_talk_stays_rejected_on_an_english_catalog(
        english_hammerbench: SkillRetriever, query: str) -> None:
    res = english_hammerbench.retrieve(query)
    assert res.gated and res.names == (), (res.gate, res.candidates[:3])


def test_a_small_catalog_lists_a_ranked_hint_for_a_request_its_translation_reads() -> None:
    review = Skill("contract-review", "Review a legal contract and suggest changes in plain English")
    skills = [SKILLS[0], review, SKILLS[2]]
    r = SkillRetriever(skills=skills, embedders=[])
    res = r.retrieve("审阅一下这份租赁协议")      # no word of any skill as written; 审阅 reads as "review"
    assert res.gate is not None and res.gate.rule == tg.RULE and res.names[0] == "contract-review", res.names
    assert r.retrieve("今天晚饭吃什么好").gated


def test_without_embeddings_the_example_home_still_hints_docker_for_a_chinese_container_request() -> None:
    # a catalog with Chinese skills reads the request as written: the translated gate never asks
    r = SkillRetriever(folders=[str(ROOT / "examples/home/skills")], embedders=[])
    res = r.retrieve("我的容器一启动就退出了怎么办")
    assert not res.gated and res.names[0] == "docker-debugging", (res.names, res.gate)
    assert res.gate is not None and res.gate.rule != tg.RULE
    assert r.retrieve("今天晚饭吃什么好").names == ()


def test_a_refused_save_keeps_the_old_calibration_and_leaves_no_temp_file(
        tmp_path: Path, bm25: BM25Index, monkeypatch: pytest.MonkeyPatch) -> None:
    c = tg.calibrate("k1", bm25, bm25_tokens, "en", REFERENCE)
    tg.save(tmp_path, c)

    def refuse(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(os, "replace", refuse)
    tg.save(tmp_path, tg.TranslatedCalibration("k1", "en", frozenset(), 9.0, {}))
    monkeypatch.undo()
    assert tg.load(tmp_path, "k1", "en") == c
    assert [p.name for p in (tmp_path / "calibration").iterdir()] == ["translated-en-k1.json"]


def test_a_gate_whose_cache_cannot_be_written_still_judges(
        tmp_path: Path, bm25: BM25Index, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    gate = tg.TranslatedGate("k", bm25, bm25_tokens, frozenset({"zh"}), blocker, lambda lang: True)
    with caplog.at_level(logging.WARNING):
        assert gate.decide("容器", "zh") is not None
    assert "translated gate cache: cannot write" in caplog.text


def test_a_child_forked_while_a_thread_held_its_lock_reports(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A calibration made on the warm-up thread under the gate's lock when a server forked its
    workers: the worker's first cross-language request waited on it for ever."""
    from hermes_core.retrieval.bm25 import BM25Index
    from hermes_core.retrieval.translated_gate import TranslatedGate

    gate = TranslatedGate("key", BM25Index(), lambda q: None, frozenset(), None, lambda s: False)
    with held_by_a_thread(gate._lock):
        assert in_forked_child(gate.report) == {}
