"""Tests of ``hermes_core/retrieval/evaluate.py``.

Labelled query files as other tools write them (BOM, CRLF, U+2028).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.retrieval.evaluate import (
    LabeledQuery,
    calibrate,
    evaluate,
    load_queries,
    reciprocal_rank,
    sample,
)
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS


def test_queries_file_with_bom_and_crlf_loads(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"query": "weather in paris", "gold": "weather"}\r\n'
                  b'{"query": "hello", "gold": null}\r\n')
    assert load_queries(p) == [LabeledQuery("weather in paris", "weather"), LabeledQuery("hello", None)]


def test_query_holding_a_unicode_line_separator_is_one_record(tmp_path: Path) -> None:
    # json.dumps(ensure_ascii=False) writes U+2028 / U+2029 / NEL raw inside strings
    p = tmp_path / "q.jsonl"
    lines = [json.dumps({"query": f"weather{sep}in paris", "gold": "weather"}, ensure_ascii=False)
             for sep in ("\u2028", "\u2029", "\x85", "\x0c")]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [q.query for q in load_queries(p)] == [
        "weather\u2028in paris", "weather\u2029in paris", "weather\x85in paris", "weather\x0cin paris"]


def test_bad_line_number_counts_newlines_only(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    good = json.dumps({"query": "a\u2028b", "gold": None}, ensure_ascii=False)
    p.write_text(good + "\n{broken\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_queries(p)
    assert e.value.line == 2


def test_eval_of_negatives_only_reports_no_recall_instead_of_zero() -> None:
    from hermes_core.retrieval.evaluate import evaluate
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.types import Skill
    r = SkillRetriever(skills=[Skill("weather", "Get the weather forecast for a city")])
    out = evaluate(r, [], [LabeledQuery("tell me a joke", None), LabeledQuery("weather in rome", None)])
    assert out["queries"] == 0 and out["negatives"] == 2
    for key in ("recall@1", "recall@5", "mrr@10", "recall@5_gated", "hint_recall", "hint_len_mean",
                "gate_keep_rate"):
        assert out[key] is None, key  # 0.0 would read as "the retriever missed every query"
    assert out["gate_reject_rate"] == 0.5
    json.dumps(out)


def test_eval_counts_gold_names_missing_from_the_catalog(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from hermes_core.retrieval.evaluate import evaluate
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.types import Skill
    r = SkillRetriever(skills=[Skill("weather", "Get the weather forecast for a city")])
    qs = [LabeledQuery("weather in rome", "weather"), LabeledQuery("forecast for oslo", "Weather"),
          LabeledQuery("rain tomorrow?", "weather_forecast")]
    with caplog.at_level(logging.WARNING):
        out = evaluate(r, qs)
    assert out["unknown_gold"] == 2  # a wrong catalog or a typo, not a retriever that misses
    assert "2 of 3" in caplog.text and "weather_forecast" in caplog.text


def test_per_layer_rows_rank_by_each_layer_alone_and_restore_the_retriever() -> None:
    from hermes_core.retrieval.evaluate import evaluate, evaluate_layers
    from hermes_core.retrieval.retriever import LAYERS, SkillRetriever
    from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()])
    weights = dict(r.weights)
    qs = [LabeledQuery("should I take an umbrella", "weather-forecast"),
          LabeledQuery("extract text and tables from a pdf", "pdf-extract"),
          LabeledQuery("tell me a joke", None)]
    rows = evaluate_layers(r, qs)
    assert set(rows) == {"bm25", "synonyms", "dense"}      # no usage store: no usage row
    assert all(row["answered"] == 2 for row in rows.values())   # the off-topic line is not ranked
    # only the synonym "umbrella" names the weather skill; BM25 shares no word with it
    umbrella = evaluate_layers(r, qs[:1])
    assert umbrella["synonyms"]["recall@1"] == 1.0 and umbrella["bm25"]["recall@5"] == 0.0
    alone = evaluate(SkillRetriever(skills=SAMPLE_SKILLS, layers=("L2",)), qs)
    assert rows["bm25"]["recall@1"] == alone["recall@1"] and rows["bm25"]["mrr@10"] == alone["mrr@10"]
    assert r.layers == LAYERS and r.weights == weights


def test_per_layer_rows_with_usage_include_the_usage_layer_on_the_replayed_side_only() -> None:
    from hermes_core.retrieval.evaluate import evaluate_with_usage
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.testing.retrieval import SAMPLE_SKILLS
    r = SkillRetriever(skills=SAMPLE_SKILLS)
    past = [LabeledQuery(f"drop a note to the landlord about flat {i}", "email-send") for i in range(8)]
    past += [LabeledQuery(f"get the text out of scan {i} of the pdf", "pdf-extract") for i in range(8)]
    qs = [LabeledQuery("please drop a note to the landlord", "email-send")]
    out = evaluate_with_usage(r, qs, [], past, per_layer=True)
    assert "usage" not in out["zero_shot"]["per_layer"]
    assert out["with_usage"]["per_layer"]["usage"]["recall@1"] == 1.0
    assert out["zero_shot"]["per_layer"]["bm25"] == out["with_usage"]["per_layer"]["bm25"]


def test_a_usage_file_past_the_stores_cap_is_replayed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay store had the home's default cap (20,000 events): a longer --usage file kept
    only its newest 20,000 lines while usage_events reported every line as learnt from."""
    from hermes_core.retrieval import evaluate as E
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.retrieval.usage import DEFAULT_CAP
    from hermes_core.testing.retrieval import SAMPLE_SKILLS
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[])
    names = [s.name for s in SAMPLE_SKILLS]
    past = [LabeledQuery(f"request {i}", names[i % len(names)]) for i in range(DEFAULT_CAP + 3)]
    held: list[int] = []   # what the replayed history holds once the replay is done
    replay = E.replay_usage

    def replay_and_count(retriever: SkillRetriever, usage: list[LabeledQuery]) -> int:
        n = replay(retriever, usage)
        held.append(len(retriever.usage.store) if retriever.usage is not None else 0)
        return n
    monkeypatch.setattr(E, "replay_usage", replay_and_count)
    out = E.evaluate_with_usage(r, [], [], past)
    assert out["usage_events"] == DEFAULT_CAP + 3 and held == [DEFAULT_CAP + 3]


def test_eval_metrics_and_calibration() -> None:
    assert reciprocal_rank(["a", "b", "c"], "c") == pytest.approx(1 / 3)
    assert reciprocal_rank(["a"] * 10 + ["g"], "g") == 0.0
    items = [LabeledQuery(str(i), "x") for i in range(10)]
    assert sample(items, 3, seed=7) == sample(items, 3, seed=7) and len(sample(items, 3)) == 3
    assert sample(items, None) == items
    cal = calibrate({"r": [float(i) for i in range(1, 101)]}, {"r": [0.0, 3.0, 10.0, 50.0]})
    assert cal["r"]["threshold_at_95_keep"] == pytest.approx(5.95)
    assert cal["r"]["reject_at_95_keep"] == 0.5
    r = SkillRetriever(skills=SAMPLE_SKILLS, gate_thresholds={"lexical": 0.3})
    res = evaluate(r, [LabeledQuery("extract tables from pdf", "pdf-extract"),
                       LabeledQuery("帮我查违章", "Navigation.TrafficViolations.queryViolation")],
                   [LabeledQuery("what is love", None)])
    assert res["recall@1"] == 1.0 and res["gate_reject_rate"] == 1.0
    assert res["deciding_layer"] == {"L1": 1, "L5": 1}


def test_eval_reports_hint_recall_and_length() -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, gate_thresholds={"lexical": 0.0}, hint_ratio=1.0,
                       hint_margin=0.0)
    res = evaluate(r, [LabeledQuery("extract tables from pdf", "pdf-extract"),
                       LabeledQuery("send an email with a subject", "pdf-extract")])
    assert res["hint_len_mean"] == 1.0  # strict cut: one skill per hint
    assert res["hint_recall"] == 0.5
