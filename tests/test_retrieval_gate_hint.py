"""The fitted dense gate score, the hint's closeness cut, their config keys and eval metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import SKILLS, HashingEmbedder

from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.retrieval.evaluate import LabeledQuery, evaluate
from hermes_core.retrieval.fusion import GateEvidence, GateWeights, gate
from hermes_core.retrieval.retriever import (
    DEFAULT_GATE_WEIGHTS,
    NULL_ANCHORS,
    SkillRetriever,
    build_retriever,
    hint_cut,
)

# ------------------------------------------------------------------ gate score


def test_gate_weights_score_is_pinned() -> None:
    ev = GateEvidence(dense_top=0.6, dense_anchor=0.4, dense_model="m", dense_anchor_mean=0.1,
                      dense_catalog_mean=0.2)
    w = GateWeights(anchor_max=0.25, anchor_mean=2.0, catalog_mean=3.0)
    assert w.score(ev) == pytest.approx(0.6 - 0.25 * 0.4 - 2.0 * 0.1 + 3.0 * 0.2)
    # the default weights are the first rule: top - 0.5 x best anchor cosine
    assert GateWeights().score(ev) == pytest.approx(0.6 - 0.5 * 0.4)


def test_gate_uses_the_models_weights_else_the_anchor_rule() -> None:
    ev = GateEvidence(dense_top=0.5, dense_anchor=0.6, dense_model="m", dense_anchor_mean=0.1,
                      dense_catalog_mean=0.2)
    th = {"m": 0.3, "dense": 0.3}
    fitted = gate(ev, th, weights={"m": GateWeights(0.0, 1.0, 1.0)})
    assert fitted.passed and fitted.score == pytest.approx(0.5 - 0.1 + 0.2) and fitted.rule == "dense:m"
    plain = gate(ev, th, anchor_weight=0.5, weights={"other": GateWeights(0.0, 1.0, 1.0)})
    assert not plain.passed and plain.score == pytest.approx(0.5 - 0.5 * 0.6)
    # missing evidence counts as 0, never raises
    bare = gate(GateEvidence(dense_top=0.5, dense_model="m"), th, weights={"m": GateWeights(1, 1, 1)})
    assert bare.score == pytest.approx(0.5)


def test_minilm_has_fitted_gate_weights() -> None:
    w = DEFAULT_GATE_WEIGHTS["st:all-MiniLM-L6-v2"]
    assert w.anchor_mean > 0 and w.catalog_mean > 0  # off-topic-like lowers, catalog-like raises


def test_retriever_feeds_anchor_and_catalog_means_to_the_gate() -> None:
    emb = HashingEmbedder("test:en")
    weights = {"test:en": {"anchor_max": 0.3, "anchor_mean": 1.5, "catalog_mean": 2.0}}
    r = SkillRetriever(skills=SKILLS, embedders=[emb], gate_thresholds={"test:en": -10.0},
                       gate_weights=weights)
    q = "send an email to my boss"
    res = r.retrieve(q)
    assert res.gate is not None and res.gate.rule == "dense:test:en" and res.gate.passed
    d = r.dense[0]
    sims = d.similarities(q)
    anchors = emb.embed_documents(list(NULL_ANCHORS)) @ d.query_vector(q)
    expected = (float(sims.max()) - 0.3 * float(anchors.max()) - 1.5 * float(anchors.mean())
                + 2.0 * float(sims.mean()))
    assert res.gate.score == pytest.approx(expected, abs=1e-5)
    assert r.gate_weights["test:en"] == GateWeights(0.3, 1.5, 2.0)


def test_bad_gate_weight_key_is_a_config_error(hermes_home: Path) -> None:
    with pytest.raises(ConfigError, match="gate_weights"):
        load_settings({"skill_utils": {"gate_weights": {"m": {"anchor_mena": 1.0}}}}, home=hermes_home)
    with pytest.raises(ConfigError, match="hint_ratio"):
        load_settings({"skill_utils": {"hint_ratio": 1.5}}, home=hermes_home)


def test_settings_reach_the_retriever(hermes_home: Path) -> None:
    s = load_settings({"skill_utils": {"embeddings": False, "hint_ratio": 0.8, "hint_margin": 0.25,
                                       "gate_weights": {"m": {"anchor_mean": 1.0}}}}, home=hermes_home)
    r = build_retriever(s, home=hermes_home)
    assert r.hint_ratio == 0.8 and r.hint_margin == 0.25
    assert r.gate_weights["m"] == GateWeights(0.5, 1.0, 0.0)
    assert "st:all-MiniLM-L6-v2" in r.gate_weights  # defaults kept alongside


# ------------------------------------------------------------------ hint cut


def test_hint_cut_keeps_skills_close_to_the_best() -> None:
    scores = np.array([4.0, 2.5, 1.9, 0.8, -0.1, 3.0])
    order = np.argsort(-scores, kind="stable")[:5]  # 0, 5, 1, 2, 3
    # >= 0.5 x 4.0 = 2.0, or >= 4.0 - 1.5 = 2.5 -> 0, 5, 1
    assert hint_cut(scores, order, 0.5, 1.5) == [0, 5, 1]
    # a wider margin lets 2 in (1.9 >= 4.0 - 2.5) but never a skill at or below the mean
    assert hint_cut(scores, order, 0.5, 3.5) == [0, 5, 1, 2, 3]
    assert hint_cut(scores, np.array([4]), 0.5, 1.5) == [4]  # the best is always listed
    assert hint_cut(scores, np.array([], dtype=int)) == []


def test_hint_cut_with_rrf_scale_keeps_every_ranked_skill() -> None:
    # RRF scores are in (0, 1]: the margin 1.5 admits every skill some layer ranked
    scores = np.array([1.0, 0.3, 0.1, 0.0])
    assert hint_cut(scores, np.array([0, 1, 2, 3])) == [0, 1, 2]


def test_retriever_hint_is_shorter_with_a_strict_cut() -> None:
    q = "extract the tables from this PDF"
    loose = SkillRetriever(skills=SKILLS, embedders=[HashingEmbedder()], hint_ratio=0.0,
                           hint_margin=100.0, gate_thresholds={"lexical": 0.0, "dense": -1.0})
    strict = SkillRetriever(skills=SKILLS, embedders=[HashingEmbedder()], hint_ratio=1.0,
                            hint_margin=0.0, gate_thresholds={"lexical": 0.0, "dense": -1.0})
    a, b = loose.retrieve(q), strict.retrieve(q)
    assert a.names[0] == b.names[0] == "pdf-extract"
    assert b.names == ("pdf-extract",) and len(a.names) >= len(b.names)
    assert a.candidates == b.candidates  # the ranking is untouched; only the hint is cut


def test_eval_reports_hint_recall_and_length() -> None:
    r = SkillRetriever(skills=SKILLS, gate_thresholds={"lexical": 0.0}, hint_ratio=1.0, hint_margin=0.0)
    res = evaluate(r, [LabeledQuery("extract tables from pdf", "pdf-extract"),
                       LabeledQuery("send an email with a subject", "pdf-extract")])
    assert res["hint_len_mean"] == 1.0  # strict cut: one skill per hint
    assert res["hint_recall"] == 0.5


# ------------------------------------------------------------------ eval query cache


def test_eval_query_vectors_persist_on_disk_only_when_asked(tmp_path: Path) -> None:
    from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache
    cache = EmbeddingCache(tmp_path / "emb")
    first = HashingEmbedder("test:q")
    d1 = DenseIndex(first, cache, persist_queries=True)
    d1.build(SKILLS)
    v1 = d1.query_vector("send an email")
    assert first.queries_embedded == 1
    second = HashingEmbedder("test:q")
    d2 = DenseIndex(second, cache, persist_queries=True)
    assert np.allclose(d2.query_vector("send an email"), v1) and second.queries_embedded == 0
    third = HashingEmbedder("test:q")
    DenseIndex(third, cache).query_vector("send an email")  # chat turns: never read or written
    assert third.queries_embedded == 1
    DenseIndex(third, cache).query_vector("a private message")
    fourth = HashingEmbedder("test:q")
    DenseIndex(fourth, cache, persist_queries=True).query_vector("a private message")
    assert fourth.queries_embedded == 1


def test_retriever_switches_query_persistence_for_every_dense_layer(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SKILLS, embedders=[HashingEmbedder("a"), HashingEmbedder("b")],
                       cache_dir=tmp_path)
    assert not any(d.persist_queries for d in r.dense)
    r.persist_query_vectors()
    assert all(d.persist_queries for d in r.dense)


def test_eval_cli_query_cache_flag_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               hermes_home: Path) -> None:
    import json

    from hermes_core.cli.main import main
    cat = tmp_path / "skills.jsonl"
    cat.write_text("\n".join(json.dumps({"name": s.name, "description": s.description}, ensure_ascii=False)
                             for s in SKILLS) + "\n", encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"query": "extract the text of a pdf", "gold": "pdf-extract"}) + "\n",
                 encoding="utf-8")
    for flag, expected in ((["--query-cache"], True), ([], False)):
        assert main(["skills", "eval", "--catalog", str(cat), "--queries", str(q), "--no-embeddings",
                     "--json", *flag]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["query_cache"] is expected and data["hint_len_mean"] >= 1.0
