"""Tests of ``hermes_core/retrieval/fusion.py``.

Each layer's arithmetic, trigger precedence, fusion re-normalisation and the gate, pinned.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens, idf
from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache
from hermes_core.retrieval.fusion import (
    NULL_ANCHORS,
    Below,
    GateEvidence,
    GateWeights,
    anchor_vectors,
    fuse,
    gate,
    ranks,
    subordinate,
    zscores,
)
from hermes_core.retrieval.synonyms import SynonymIndex
from hermes_core.retrieval.triggers import TriggerIndex
from hermes_core.testing.retrieval import HashingEmbedder
from hermes_core.types import Skill

# ------------------------------------------------------------------ L1 triggers


def test_tier1_exact_substring_is_case_insensitive() -> None:
    t = TriggerIndex({"git-commit": ["Git Commit"]})
    hit = t.match("please GIT COMMIT this")
    assert hit is not None and (hit.skill, hit.tier, hit.position) == ("git-commit", 1, 7)


def test_tier2_cjk_subsequence_within_window() -> None:
    t = TriggerIndex({"violation": ["查违章"]})
    hit = t.match("帮我查一下违章")
    assert hit is not None and hit.tier == 2 and hit.position == 2
    # characters too far apart (window is 3 x trigger length) do not match
    assert t.match("查" + "的" * 20 + "违章") is None
    # ASCII mixed in: no subsequence tier
    t2 = TriggerIndex({"x": ["查PDF"]})
    assert t2.match("查一下PDF") is None


def test_tier3_fuzzy_segments_joined_by_up_to_three_chars() -> None:
    t = TriggerIndex({"mail": ["send mail"]})
    hit = t.match("send a mail now")  # 'a ' is two characters between the segments
    assert hit is not None and hit.tier == 3
    assert t.match("send something long, then mail") is None


def test_tier3_cjk_word_segments() -> None:
    t = TriggerIndex({"meet": ["预约 会议室"]})
    hit = t.match("帮我预约一间会议室")
    assert hit is not None and hit.tier in (2, 3)


def test_longest_trigger_wins_then_earliest_then_tier() -> None:
    t = TriggerIndex({"short": ["pdf"], "long": ["pdf tables"], "early": ["extract"]})
    assert t.match("extract pdf tables").skill == "long"  # type: ignore[union-attr]
    t = TriggerIndex({"b": ["beta"], "a": ["alfa"]})
    assert t.match("beta then alfa").skill == "b"  # type: ignore[union-attr]
    assert t.match("alfa then beta").skill == "a"  # type: ignore[union-attr]
    hits = TriggerIndex({"s": ["abc"], "t": ["abc"]}).matches("xx abc")
    assert [h.skill for h in hits] == ["s", "t"]  # full tie: by skill name


def test_trigger_with_regex_metacharacters_is_literal() -> None:
    t = TriggerIndex({"re": ["a.*b (c)+"]})
    assert t.match("axxxb cc") is None
    assert t.match("use a.*b (c)+ now") is not None


def test_100kb_query_is_fast_and_safe() -> None:
    t = TriggerIndex({"v": ["查违章", "查 违章 记录"], "x": ["a+b"]})
    assert t.match("查" * 100_000) is None

# ------------------------------------------------------------------ L2 BM25


def test_bm25_formula_pinned() -> None:
    skills = [Skill("alpha", "red apple"), Skill("beta", "green apple apple"), Skill("gamma", "blue sky")]
    idx = BM25Index(skills)
    n = 3
    idf_apple, idf_red = idf(n, 2), idf(n, 1)
    assert idf_apple == pytest.approx(math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    s = idx.score_array(bm25_tokens("red apple"))
    # alpha: apple tf=1 + verbatim bonus; red tf=1 + bonus
    exp_alpha = idf_apple * (1 / 2.5) + 0.5 * idf_apple + idf_red * (1 / 2.5) + 0.5 * idf_red
    exp_beta = idf_apple * (2 / 3.5) + 0.5 * idf_apple
    assert s.tolist() == pytest.approx([exp_alpha, exp_beta, 0.0])
    assert idx.max_score(bm25_tokens("red apple")) == pytest.approx((idf_apple + idf_red) * (0.4 + 0.5))


def test_bm25_splits_identifiers_and_verbatim_bonus_uses_substring() -> None:
    idx = BM25Index([Skill("Navigation.TrafficViolations.queryViolation", "查询违章"),
                     Skill("other", "nothing")])
    hits = idx.search("traffic violation")
    assert hits[0].name == "Navigation.TrafficViolations.queryViolation"
    # repeated query tokens count once
    assert idx.score_array(["traffic", "traffic"]).tolist() == idx.score_array(["traffic"]).tolist()


def test_bm25_adds_single_cjk_characters_and_drops_stopwords() -> None:
    toks = bm25_tokens("查一下违章 the weather")
    assert {"违", "章", "违章", "weather"} <= set(toks)
    assert "the" not in toks


def test_bm25_empty_and_unknown() -> None:
    idx = BM25Index([Skill("a", "b")])
    assert idx.search("") == [] and idx.search("zzz") == []
    assert BM25Index([]).search("x") == []

# ------------------------------------------------------------------ L3 synonyms


def test_synonym_scores_phrase_15_token_10() -> None:
    syn = SynonymIndex({"w": ["is it going to rain", "umbrella"], "m": ["drop a line"], "ghost": ["x"]},
                       ["m", "w"])
    scores, whole = syn.score("Is it going to rain today? need umbrella")
    assert whole
    assert scores.tolist() == [0.0, 1.5 + 1.5]
    scores, whole = syn.score("rain and a line")  # tokens only: rain (w); line (m)
    assert not whole and scores.tolist() == [1.0, 1.0]
    assert not SynonymIndex({}, ["a"]).available
    assert syn.score("")[0].tolist() == [0.0, 0.0]

# ------------------------------------------------------------------ L5 fusion


def test_ranks_and_zscores() -> None:
    assert ranks(np.array([0.2, 0.9, 0.0, 0.9])).tolist() == [3, 1, 0, 2]
    z = zscores(np.array([1.0, 2.0, 3.0]))
    assert z.tolist() == pytest.approx([-1.2247449, 0.0, 1.2247449])
    assert zscores(np.array([5.0, 5.0])).tolist() == [0.0, 0.0]


def test_rrf_arithmetic_and_renormalisation() -> None:
    bm = np.array([3.0, 1.0, 0.0])
    de = np.array([0.1, 0.8, 0.5])
    w = {"bm25": 0.45, "synonyms": 0.35, "dense": 0.20}
    f = fuse({"bm25": bm, "synonyms": None, "dense": de}, w, mode="rrf", k=60)
    assert f.answered == ("bm25", "dense")
    tot = 0.45 + 0.20
    exp0 = 61 * (0.45 / tot / 61 + 0.20 / tot / 63)
    exp1 = 61 * (0.45 / tot / 62 + 0.20 / tot / 61)
    exp2 = 61 * (0.20 / tot / 62)
    assert f.scores.tolist() == pytest.approx([exp0, exp1, exp2])
    # a skill first in every answering layer scores 1.0 with or without the dense layer
    only_bm = fuse({"bm25": bm, "dense": None}, w, mode="rrf", k=60)
    assert only_bm.scores[0] == pytest.approx(1.0)
    both_top = fuse({"bm25": bm, "dense": np.array([0.9, 0.1, 0.0])}, w, mode="rrf")
    assert both_top.scores[0] == pytest.approx(1.0)


def test_zscore_fusion_renormalises_over_answering_layers() -> None:
    bm = np.array([3.0, 1.0, 0.0, 0.0])
    de = np.array([0.2, 0.9, 0.1, 0.0])
    w = {"bm25": 0.25, "dense": 0.75}
    f = fuse({"bm25": bm, "dense": de}, w)
    assert f.scores.tolist() == pytest.approx((0.25 * zscores(bm) + 0.75 * zscores(de)).tolist())
    assert f.contributions["dense"].tolist() == pytest.approx((0.75 * zscores(de)).tolist())
    alone = fuse({"bm25": bm, "dense": None}, w)
    assert alone.scores.tolist() == pytest.approx(zscores(bm).tolist())  # weight re-normalised to 1
    assert fuse({"bm25": None}, w).answered == ()
    with pytest.raises(ValueError, match="unknown fusion mode"):
        fuse({"bm25": bm}, w, mode="max")

# ------------------------------------------------------------------ gate


def test_gate_with_dense_uses_model_threshold_and_anchor() -> None:
    th = {"m": 0.30, "dense": 0.5, "lexical": 0.2}
    d = gate(GateEvidence(dense_top=0.50, dense_anchor=0.30, dense_model="m"), th, anchor_weight=0.5)
    assert d.passed and d.score == pytest.approx(0.35) and d.rule == "dense:m"
    d = gate(GateEvidence(dense_top=0.50, dense_anchor=0.60, dense_model="m"), th, anchor_weight=0.5)
    assert not d.passed and d.score == pytest.approx(0.20)
    d = gate(GateEvidence(dense_top=0.45, dense_anchor=None, dense_model="unknown"), th)
    assert not d.passed and d.threshold == 0.5  # unknown model: the generic dense threshold


def test_gate_without_dense_uses_lexical_share() -> None:
    th = {"lexical": 0.2}
    assert gate(GateEvidence(lexical=0.25), th).passed
    d = gate(GateEvidence(lexical=0.1), th)
    assert not d.passed and d.rule == "lexical"
    assert gate(GateEvidence(lexical=0.1), th, override=0.05).passed
    assert gate(GateEvidence(lexical=0.0, synonym_phrase_hit=True), th).passed


def test_a_raw_layer_is_fused_as_given_not_restandardised() -> None:
    dense = np.array([0.9, 0.5, 0.4, 0.3])
    usage = np.array([0.0, 3.0, 0.0, 0.0])       # one skill voted for: a z of 1.7 if standardised
    f = fuse({"dense": dense, "usage": usage}, {"dense": 1.0, "usage": 1.0}, raw=("usage",))
    assert f.contributions["usage"] == pytest.approx(0.5 * usage)
    assert f.contributions["dense"] == pytest.approx(0.5 * zscores(dense))
    g = fuse({"dense": dense, "usage": usage}, {"dense": 1.0, "usage": 1.0})
    assert g.contributions["usage"] == pytest.approx(0.5 * zscores(usage))
    assert f.answered == g.answered == ("dense", "usage")


def test_fuse_with_no_layer_asked_gives_one_zero_per_skill() -> None:
    out = fuse({}, {"bm25": 1.0}, size=3)
    assert out.answered == () and list(out.scores) == [0.0, 0.0, 0.0]
    assert len(fuse({"bm25": None}, {"bm25": 1.0}).scores) == 0


def test_a_subordinate_layer_adds_at_most_its_share_of_the_superiors_best() -> None:
    over = np.array([2.0, -0.5, -0.5, -1.0])
    part = np.array([-0.3, 3.0, 0.5, -0.3])
    assert subordinate(part, over).tolist() == [-0.3, 1.0, 0.5, -0.3]      # 0.5 * 2.0 caps skill 1
    keep = np.array([False, True, False, False])
    assert subordinate(part, over, keep=keep).tolist() == part.tolist()
    silent = np.zeros(4)                                                   # nothing to defer to
    assert subordinate(part, silent).tolist() == part.tolist()


def test_fusion_caps_a_layer_fused_below_another_only_when_both_answered() -> None:
    bm25 = np.array([3.0, 0.0, 0.0, 0.0, 0.0])
    syn = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    weights = {"bm25": 0.2, "synonyms": 0.3}
    plain = fuse({"bm25": bm25, "synonyms": syn}, weights)
    assert int(np.argmax(plain.scores)) == 1        # equally rare hits: the heavier layer won
    f = fuse({"bm25": bm25, "synonyms": syn}, weights, below={"synonyms": Below("bm25")})
    assert int(np.argmax(f.scores)) == 0
    assert f.contributions["synonyms"].max() == pytest.approx(0.5 * f.contributions["bm25"].max())
    kept = fuse({"bm25": bm25, "synonyms": syn}, weights,
                below={"synonyms": Below("bm25", np.array([False, True, False, False, False]))})
    assert kept.scores.tolist() == plain.scores.tolist()
    alone = fuse({"bm25": None, "synonyms": syn}, weights, below={"synonyms": Below("bm25")})
    assert alone.scores.tolist() == fuse({"bm25": None, "synonyms": syn}, weights).scores.tolist()
    rrf = fuse({"bm25": bm25, "synonyms": syn}, weights, mode="rrf", below={"synonyms": Below("bm25")})
    assert int(np.argmax(rrf.scores)) == 0


# A gate anchor vector of another width in the cache (a different model under the same id) was
# stacked with the rest and took the whole dense layer down; it is re-embedded instead.

def test_a_cached_anchor_vector_of_another_width_is_re_embedded(tmp_path: Path) -> None:
    d = DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path))
    d.build([Skill("weather", "Get the weather forecast")])
    width = d.matrix.shape[1]
    first = anchor_vectors(d)
    key = "anchor-" + hashlib.sha256(NULL_ANCHORS[3].encode("utf-8")).hexdigest()
    d.cache.put(d.cache_id, key, np.ones(8, dtype=np.float32))
    got = anchor_vectors(d)
    assert got.shape == (len(NULL_ANCHORS), width) and np.allclose(got, first, atol=1e-6)
    repaired = d.cache.get(d.cache_id, key)
    assert repaired is not None and repaired.shape == (width,)   # the cache is repaired too


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
