"""Tests of ``hermes_core/retrieval/dense_judges.py``.

Which calibrated gate judges a request when two models serve one catalog: an English-only hashing
embedder and a multilingual one, over a catalog with English and Chinese descriptions.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval import dense_judges as judges
from hermes_core.retrieval.fusion import weights_for
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.tokenize import cjk_ratio
from hermes_core.types import Skill

MIXED = [*SAMPLE_SKILLS, Skill("traffic-fines", "查询车辆的交通违章记录和罚款"),
         Skill("meeting-room", "预订公司的会议室并通知参会人员")]


@pytest.fixture
def two_models(tmp_path: Path) -> SkillRetriever:
    r = SkillRetriever(skills=MIXED, cache_dir=tmp_path,
                       embedders=[HashingEmbedder("test:english", english_only=True),
                                  HashingEmbedder("test:multi")])
    r.refresh()
    return r


def test_a_models_gate_is_its_calibration_while_that_describes_its_index(two_models: SkillRetriever) -> None:
    d = two_models.dense[0]
    w = weights_for(two_models.gate_weights, "test:english", two_models.anchor_weight)
    m = judges.gate_model(d, two_models._calibration, w, two_models._anchors)
    assert m is not None and m.calibration is two_models._calibration["test:english"] and m.index is d
    assert judges.gate_model(d, {}, w, two_models._anchors) is None          # not calibrated
    cal = two_models._calibration["test:english"]
    cut = {f: {k: v[:-1] for k, v in getattr(cal, f).items()} for f in ("mean", "std")}
    stale = {"test:english": dataclasses.replace(cal, **cut)}               # one skill fewer
    assert judges.gate_model(d, stale, w, two_models._anchors) is None


def test_the_skills_one_model_cannot_read_are_judged_by_one_that_reads_them(
        two_models: SkillRetriever) -> None:
    english, multi = two_models.dense
    found = judges.other_model(english, two_models.dense, "book a meeting room", two_models._gate_model,
                               set())
    assert found is not None
    model, unread, sims = found
    assert model.index is multi
    chinese = {s.name for s in MIXED if cjk_ratio(s.description) >= 0.3}
    assert {english.names[i] for i in np.flatnonzero(unread)} == chinese >= {"meeting-room", "traffic-fines"}
    np.testing.assert_allclose(sims, multi.similarities("book a meeting room"))


def test_no_other_model_when_every_skill_is_read_or_the_other_failed(two_models: SkillRetriever) -> None:
    english, multi = two_models.dense
    assert judges.other_model(multi, two_models.dense, "book a room", two_models._gate_model, set()) is None
    assert judges.other_model(english, two_models.dense, "book a room", two_models._gate_model,
                              {"test:multi"}) is None


def test_no_translated_opinion_when_nothing_crosses_or_mid_refresh(two_models: SkillRetriever) -> None:
    r = two_models
    with r._swap:
        expand, names = r._expand, r._names
    args = (r._dense_for, r._gate_model, r._other_model)
    assert judges.translated_opinion(expand, "", "en", names, 512, *args) is None   # nothing to translate
    assert judges.translated_opinion(expand, "查询交通违章记录", "zh", names[:-1], 512, *args) is None


def test_a_translated_request_is_judged_by_the_model_that_serves_the_translation(
        two_models: SkillRetriever) -> None:
    r = two_models
    with r._swap:
        expand, names = r._expand, r._names
    got = judges.translated_opinion(expand, "查询交通违章记录", "zh", names, 512, r._dense_for,
                                    r._gate_model, r._other_model)
    assert got is not None and got.language == "en" and got.text
    served = r._dense_for(got.text)
    assert served is not None
    want = r._gate_model(served)
    assert want is not None
    assert got.decision.score >= want.decide(got.text, "en").score   # the stronger of two opinions
