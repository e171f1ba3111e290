"""Tests of ``hermes_core/retrieval/calibration.py``.

The per-catalog gate calibration: its arithmetic on known vectors, the threshold rule, the cache
with the index, and the Chinese/English cases on a real public catalog (anthropics/skills) and the
bundled example home, with and without embeddings.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.config import SkillSettings
from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval import dense as dense_mod
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.tokenize import cjk_chars
from hermes_core.types import Skill
from tests.retrieval.conftest import ScriptEmbedder, generic_requests


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return a / np.linalg.norm(a)


def test_offtopic_reference_is_bilingual_package_data() -> None:
    ref = cal.offtopic_requests()
    langs = [cal.query_language(t) for t in ref]
    assert langs.count("en") >= 40 and langs.count("zh") >= 40
    assert not any(t.startswith("#") for t in ref)


def test_the_gates_reference_extends_the_rankings_with_over_a_hundred_requests_a_language() -> None:
    # the gate estimates each skill's off-topic mean and spread per language from these lines
    gate = cal.gate_requests()
    langs = [cal.query_language(t) for t in gate]
    assert langs.count("en") >= 140 and langs.count("zh") >= 140
    assert gate[:len(cal.offtopic_requests())] == cal.offtopic_requests()
    assert len(set(gate)) == len(gate) and not any(t.startswith("#") for t in gate)


def test_the_held_apart_generic_requests_are_not_in_the_reference() -> None:
    # they measure rejection of off-topic requests the calibration has never seen
    generic = generic_requests()
    assert not set(generic) & set(cal.gate_requests())
    langs = [cal.query_language(t) for t in generic]
    assert langs.count("en") >= 30 and langs.count("zh") >= 30


def test_lexical_threshold_is_a_share_of_the_reference_median_per_language() -> None:
    ref = cal.gate_requests()
    shares = {t: (i % 7) / 10 for i, t in enumerate(ref)}
    c = cal.calibrate_lexical("k", lambda t: shares.get(t, 1.0), ["pseudo query"])
    for lang in cal.LANGS:
        median = float(np.median([shares[t] for t in ref if cal.query_language(t) == lang]))
        assert c.threshold_for(lang) == pytest.approx(cal.LEXICAL_OFF_SHARE * median)
    nothing = cal.calibrate_lexical("k", lambda t: 0.0, [])
    assert nothing.threshold_for("zh") == 0.0    # the reference shares no word: any overlap passes


def test_lexical_calibration_scores_each_text_once() -> None:
    # an English catalog has no Chinese pseudo-queries: the Chinese report borrows the English
    # ones, which were scored a second time (about 800 BM25 queries of a large catalog's refresh)
    asked: list[str] = []

    def share(text: str) -> float:
        asked.append(text)
        return 0.5
    pseudo = ["query a flight", "book a meeting room", "query a flight"]
    c = cal.calibrate_lexical("k", share, pseudo)
    assert sorted(asked) == sorted(set(cal.gate_requests()) | set(pseudo))
    assert c.report["zh"]["pseudo_q10"] == c.report["en"]["pseudo_q10"] == 0.5


def test_query_language_follows_the_share_of_cjk() -> None:
    assert cal.query_language("帮我做一个PPT") == "zh"
    assert cal.query_language("make a poster") == "en"


def test_pseudo_queries_come_from_the_name_and_the_head_of_the_description() -> None:
    s = Skill("Navigation.TrafficViolations.queryViolation",
              "Look up traffic fines for a car plate. Needs the plate number and city.")
    qs = cal.pseudo_queries(s)
    assert qs[0] == "navigation traffic violations query violation"
    assert qs[1] == "Look up traffic fines for a car plate."
    desc = "查询快递的物流状态，输入快递单号即可查看最新位置和预计送达时间"
    zh = cal.pseudo_queries(Skill("快递查询", desc))
    assert zh[1] == desc[:cal.PSEUDO_CJK_CHARS]


def test_pseudo_sample_is_bounded_and_deterministic() -> None:
    skills = [Skill(f"s{i}", "d") for i in range(1000)]
    a, b = cal.pseudo_sample(skills, 100), cal.pseudo_sample(skills, 100)
    assert a == b and len(a) == 100 and a == sorted(a)
    assert cal.pseudo_sample(skills[:10], 100) == list(range(10))


def test_pseudo_sample_moves_by_one_skill_when_one_is_added_deleted_or_edited() -> None:
    # membership is decided by the skill's own name, not its position: a change near the start of
    # the catalog must not shift every later pick (the gate is then updated per changed skill)
    skills = [Skill(f"s{i}", "d") for i in range(1000)]

    def names(ss: list[Skill]) -> set[str]:
        return {ss[i].name for i in cal.pseudo_sample(ss, 100)}
    before = names(skills)
    added = names([*skills[:10], Skill("new-one", "d"), *skills[10:]])
    deleted = names(skills[:3] + skills[4:])
    edited = names([*skills[:5], Skill("s5", "other text"), *skills[6:]])
    assert len(added - before) <= 1 and len(before - added) <= 1
    assert len(before - deleted) <= 1 and len(deleted - before) <= 1
    assert edited == before


def test_pick_threshold_moves_a_fifth_of_the_gap_and_is_capped_by_the_reference() -> None:
    off = [0.0, 1.0, 2.0, 3.0, 4.0]            # median 2, 90th percentile 3.6
    assert cal.pick_threshold(off, [7.0] * 10) == pytest.approx(2.0 + cal.PSEUDO_SHARE * 5.0)
    assert cal.pick_threshold(off, [100.0] * 10) == pytest.approx(3.6)   # the cap
    assert cal.pick_threshold(off, []) == pytest.approx(3.6)


def test_per_skill_z_scores_use_that_skills_offtopic_cosines_in_the_querys_language() -> None:
    docs = np.vstack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    # English chit-chat leans towards skill 0, Chinese chit-chat towards skill 1
    off = np.vstack([_unit([0.6, 0.1, 1]), _unit([0.4, 0.1, 1]), _unit([0.5, 0.0, 1]),
                     _unit([0.1, 0.6, 1]), _unit([0.1, 0.4, 1]), _unit([0.0, 0.5, 1])])
    c = cal.calibrate_dense("m", "k", docs, off, ["en"] * 3 + ["zh"] * 3, np.zeros((0, 3)), [])
    sims = off @ docs.T
    assert c.mean["en"][0] == pytest.approx(sims[:3, 0].mean())
    assert c.std["en"][0] == pytest.approx(max(sims[:3, 0].std(), cal.MIN_STD))
    assert c.mean["zh"][1] == pytest.approx(sims[3:, 1].mean())
    q = np.array([0.45, 0.45])   # the same cosine to both skills
    en, zh = c.normalise(q, "en"), c.normalise(q, "zh")
    assert en[1] > en[0] and zh[0] > zh[1]   # the skill chit-chat does not lean to stands out
    assert c.gate_score(q, "en") == pytest.approx(float(en.max()))


def test_a_calibration_covers_only_an_index_of_its_own_catalogs_size() -> None:
    # mid-refresh an index may hold the new catalog while its calibration describes the old one
    docs = np.vstack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    off = np.vstack([_unit([0.6, 0.1, 1]), _unit([0.1, 0.6, 1])])
    c = cal.calibrate_dense("m", "k", docs, off, ["en", "zh"], np.zeros((0, 3)), [])
    assert c.covers(2) and not c.covers(3) and not c.covers(1)


def test_the_gate_reads_the_whole_reference_and_the_ranking_its_first_rows() -> None:
    docs = np.vstack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    off = np.vstack([_unit([0.6, 0.1, 1]), _unit([0.4, 0.1, 1]), _unit([0.5, 0.0, 1]),
                     _unit([0.9, 0.3, 1]), _unit([0.1, 0.2, 1]), _unit([0.3, 0.6, 1])])
    sims = off @ docs.T
    c = cal.calibrate_dense("m", "k", docs, off, ["en"] * 6, np.zeros((0, 3)), [], ranking_rows=3)
    assert c.mean["en"] == pytest.approx(sims[:3].mean(axis=0))
    assert c.std["en"] == pytest.approx(np.maximum(sims[:3].std(axis=0), cal.MIN_STD))
    assert c.gate_mean["en"] == pytest.approx(sims.mean(axis=0))
    assert c.gate_std["en"] == pytest.approx(np.maximum(sims.std(axis=0), cal.MIN_STD))
    q = np.array([0.7, 0.5])
    assert c.normalise(q, "en") == pytest.approx((q - c.mean["en"]) / c.std["en"])
    gz = (q - c.gate_mean["en"]) / c.gate_std["en"]
    assert c.gate_z(q, "en") == pytest.approx(gz)
    assert c.gate_score(q, "en") == pytest.approx(float(gz.max()))
    assert c.own_gate_margins(q, "en") == pytest.approx(gz - c.threshold_for("en"))
    whole = cal.calibrate_dense("m", "k", docs, off, ["en"] * 6, np.zeros((0, 3)), [])
    assert whole.mean["en"] == pytest.approx(c.gate_mean["en"])   # by default every row ranks


def test_part_scores_are_calibrated_per_skill_and_language_like_the_cosine() -> None:
    docs = np.vstack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    off = np.vstack([_unit([0.6, 0.1, 1]), _unit([0.4, 0.1, 1]), _unit([0.5, 0.0, 1]),
                     _unit([0.1, 0.6, 1]), _unit([0.1, 0.4, 1]), _unit([0.0, 0.5, 1])])

    def parts(vectors: np.ndarray) -> np.ndarray:   # any per-skill score of query vectors
        return np.asarray(vectors @ docs.T) ** 2
    c = cal.calibrate_dense("m", "k", docs, off, ["en"] * 3 + ["zh"] * 3, np.zeros((0, 3)), [],
                            parts=parts)
    ref = parts(off)
    assert c.part_mean["en"] == pytest.approx(ref[:3].mean(axis=0))
    assert c.part_std["zh"] == pytest.approx(np.maximum(ref[3:].std(axis=0), cal.MIN_STD))
    soft = np.array([0.3, 0.2])

    def z(x: np.ndarray) -> np.ndarray:
        return (x - x.mean()) / x.std()
    want = ((1 - cal.PART_BLEND) * z(soft)
            + cal.PART_BLEND * z((soft - c.part_mean["zh"]) / c.part_std["zh"]))
    assert c.part_rank(soft, "zh") == pytest.approx(want)
    assert c.part_rank(None, "en") is None
    bare = cal.calibrate_dense("m", "k", docs, off, ["en"] * 3 + ["zh"] * 3, np.zeros((0, 3)), [])
    assert bare.part_rank(soft, "en") is soft      # no part statistics: the raw score


def test_ranking_and_gate_statistics_are_cached_with_the_calibration(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    r.refresh()
    first = r._calibration["test:hashing"]
    assert set(first.part_mean) == set(cal.LANGS)
    again = cal.load(tmp_path, first.key, len(SAMPLE_SKILLS))
    assert again is not None
    for lang in cal.LANGS:
        assert again.part_mean[lang] == pytest.approx(first.part_mean[lang])
        assert again.part_std[lang] == pytest.approx(first.part_std[lang])
        assert again.gate_mean[lang] == pytest.approx(first.gate_mean[lang])
        assert again.gate_std[lang] == pytest.approx(first.gate_std[lang])


def test_calibration_separates_offtopic_from_pseudo_queries_and_reports_it() -> None:
    rng = np.random.default_rng(3)
    docs = np.vstack([_unit(list(rng.standard_normal(16))) for _ in range(8)])
    off = np.vstack([_unit(list(rng.standard_normal(16))) for _ in range(40)])
    pseudo = np.vstack([_unit(list(d + 0.3 * rng.standard_normal(16))) for d in docs])
    c = cal.calibrate_dense("m", "k", docs, off, ["en"] * 20 + ["zh"] * 20, pseudo, ["en"] * 8)
    for lang in cal.LANGS:
        r = c.report[lang]
        assert r["off_median"] < c.threshold[lang] < r["pseudo_q10"]
        assert r["reference"] == 20 and r["pseudo"] == 8   # zh borrows the English pseudo-queries
    assert all(c.gate_score(docs @ p, "en") >= c.threshold["en"] for p in pseudo)


def test_calibration_is_cached_with_the_index_and_reused_on_restart(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb], cache_dir=tmp_path)
    r.refresh()
    first = emb.queries_embedded
    assert first > 0 and list((tmp_path / "calibration").glob("*.npz"))
    emb2 = HashingEmbedder()
    r2 = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb2], cache_dir=tmp_path)
    r2.refresh()
    assert emb2.queries_embedded == 0            # no embedding on restart
    assert r2.calibration_report() == r.calibration_report()
    res = r2.retrieve("extract the tables from a pdf document")
    assert res.gate is not None and res.gate.calibrated and res.names[0] == "pdf-extract"
    assert emb2.queries_embedded == 1            # the query itself; nothing per turn for the gate


def test_the_ranking_statistics_come_from_offtopic_txt_alone(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb], cache_dir=tmp_path)
    r.refresh()
    c = r._calibration["test:hashing"]
    docs = np.asarray(r.dense[0].matrix, dtype=np.float64)
    for name, ref in (("mean", cal.offtopic_requests()), ("gate_mean", cal.gate_requests())):
        sims = np.asarray(cal.embed_queries(emb, ref), dtype=np.float64) @ docs.T
        zh = np.array([cal.query_language(t) == "zh" for t in ref])
        assert getattr(c, name)["zh"] == pytest.approx(sims[zh].mean(axis=0), abs=1e-6), name
    assert c.report["en"]["reference"] == sum(cal.query_language(t) == "en" for t in cal.gate_requests())


def test_a_changed_skill_gets_a_new_calibration(tmp_path: Path) -> None:
    key = cal.catalog_key("m", SAMPLE_SKILLS)
    changed = [Skill(s.name, s.description + " Also CSV.") if s.name == "pdf-extract" else s
               for s in SAMPLE_SKILLS]
    assert cal.catalog_key("m", changed) != key and cal.catalog_key("m2", SAMPLE_SKILLS) != key


@pytest.mark.parametrize("builder", ["document_text", "skill_parts", "pseudo_queries"])
def test_a_change_in_the_texts_embedded_for_a_skill_gives_a_new_calibration_key(
        monkeypatch: pytest.MonkeyPatch, builder: str) -> None:
    key = cal.catalog_key("m", SAMPLE_SKILLS)
    owner = cal if builder == "pseudo_queries" else dense_mod
    before = getattr(owner, builder)
    if builder == "document_text":
        monkeypatch.setattr(owner, builder, lambda s: before(s).upper())
    else:
        monkeypatch.setattr(owner, builder, lambda s: [t.upper() for t in before(s)])
    assert cal.catalog_key("m", SAMPLE_SKILLS) != key   # same skills, other texts: calibrated anew
    monkeypatch.undo()
    assert cal.catalog_key("m", SAMPLE_SKILLS) == key


def test_an_opencc_or_jieba_upgrade_or_another_fold_config_gives_a_new_calibration_key(
        tokenizer_upgraded: Callable[[], None]) -> None:
    key = cal.catalog_key("m", SAMPLE_SKILLS)
    tokenizer_upgraded()
    assert cal.catalog_key("m", SAMPLE_SKILLS) != key


def test_a_retriever_recalibrates_when_the_embedded_text_is_built_otherwise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    first.refresh()
    before = dense_mod.document_text
    monkeypatch.setattr(dense_mod, "document_text", lambda s: before(s).upper())
    again = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    again.refresh()
    old, new = first._calibration["test:hashing"], again._calibration["test:hashing"]
    assert new.key != old.key
    assert len(list((tmp_path / "calibration").glob("*.npz"))) == 2   # the old one was not reused


@pytest.mark.parametrize("tuning", [{"anchor_weight": 0.9},
                                    {"gate_weights": {"test:hashing": {"anchor_max": 0.1,
                                                                       "catalog_mean": 1.0}}}])
def test_changed_gate_weights_recalibrate_instead_of_reading_the_cache(tmp_path: Path,
                                                                       tuning: dict[str, Any]) -> None:
    # the calibration stores the fixed rule's statistics, which the gate weights decide: a cache
    # made under other weights would put this rule on the wrong scale
    def fixed_stats(settings: SkillSettings) -> tuple[Any, ...]:
        emb = HashingEmbedder()
        r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb], cache_dir=tmp_path,
                           settings=settings)
        r.refresh()
        c = r._calibration["test:hashing"]
        return emb.queries_embedded, c.key, tuple(v for s in c.scale.values() for v in s[2:])

    _, key, before = fixed_stats(SkillSettings())
    embedded, changed_key, after = fixed_stats(SkillSettings(**tuning))
    assert changed_key != key and after != before and embedded == 0   # reference vectors cached
    assert fixed_stats(SkillSettings())[1:] == (key, before)


def test_a_torn_cache_file_is_recomputed(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    r.refresh()
    for p in (tmp_path / "calibration").glob("*.npz"):
        p.write_bytes(b"torn")
    assert cal.load(tmp_path, r._calibration["test:hashing"].key, len(r.skills)) is None
    r2 = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    r2.refresh()
    assert r2.calibration_report()["test:hashing"] == r.calibration_report()["test:hashing"]


def test_lexical_gate_is_calibrated_without_embeddings() -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[])
    on = r.retrieve("extract the tables from a pdf document")
    assert on.gate is not None and on.gate.rule == "lexical" and on.gate.calibrated and on.names
    off = r.retrieve("what is the meaning of life")
    assert off.gated and not off.names
    assert set(r.calibration_report()["lexical"]) == {"en", "zh"}


def test_a_configured_threshold_keeps_the_fixed_rule() -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()],
                       gate_thresholds={"test:hashing": 0.0})
    res = r.retrieve("extract the tables from a pdf document")
    assert res.gate is not None and not res.gate.calibrated
    r2 = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], calibrate=False)
    res2 = r2.retrieve("extract the tables from a pdf document")
    assert res2.gate is not None and not res2.gate.calibrated and r2.calibration_report() == {}


def test_catalog_languages_are_read_from_names_and_descriptions() -> None:
    en = Skill("pdf", "Extract tables from PDF files")
    zh = Skill("快递查询", "根据快递单号查询物流")
    assert cal.catalog_languages([en]) == {"en"}
    assert cal.catalog_languages([zh]) == {"zh"}
    assert cal.catalog_languages([en, zh]) == {"en", "zh"}


_TEXT_PIECES = st.sampled_from(["pdf", "tables", "x", "快", "快递", "查询物流", "🙂", "queryViolation",
                                " ", "-", "é"])


_NAMED_TEXTS = st.tuples(st.lists(_TEXT_PIECES, max_size=4), st.lists(_TEXT_PIECES, max_size=6))


@settings(max_examples=80, deadline=None)
@given(st.lists(_NAMED_TEXTS, max_size=8))
def test_catalog_languages_are_the_union_of_every_skills_languages(
        texts: list[tuple[list[str], list[str]]]) -> None:
    skills = [Skill("".join(n) or "s", "".join(d)) for n, d in texts]
    want: set[str] = set()
    for s in skills:
        want |= cal.text_languages(s.name, s.description)
    assert cal.catalog_languages(skills) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT_PIECES, max_size=8), st.lists(_TEXT_PIECES, max_size=8))
def test_a_skill_is_zh_for_two_cjk_characters_and_en_for_two_latin_words(
        name: list[str], description: list[str]) -> None:
    # the two words and characters are counted up to two (the text is not listed whole)
    n, d = "".join(name), "".join(description)
    text = f"{n} {d}"
    want = ({"zh"} if len(cjk_chars(text)) >= 2 else set()) | (
        {"en"} if len(re.findall(r"[A-Za-z]{2,}", text)) >= 2 else set())
    assert cal.text_languages(n, d) == want


def test_an_english_catalogs_languages_are_known_without_reading_every_skill(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process asked each of 20,000 skills its languages (two regex scans each, ~1 s)
    though the first English skill settles what an English-only catalog can hold."""
    asked: list[str] = []
    real = cal.text_languages
    monkeypatch.setattr(cal, "text_languages", lambda n, d: asked.append(n) or real(n, d))
    skills = [Skill(f"tool-{i}", f"Book a meeting number {i} for the team") for i in range(50)]
    assert cal.catalog_languages(skills) == {"en"}
    assert len(asked) == 1


# --------------------------------------------------------------------------- property: any cache file

@pytest.fixture(scope="module")
def cached_calibration(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, bytes]:
    """A calibrated sample catalog: its cache folder, its key and the good .npz file's bytes."""
    d = tmp_path_factory.mktemp("calib")
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=d)
    r.refresh()
    key = r._calibration["test:hashing"].key
    return d, key, (d / "calibration" / f"{key}.npz").read_bytes()


def _npz(good: bytes, **changes: object) -> bytes:
    arrays = dict(np.load(io.BytesIO(good)))
    arrays.update({k: np.asarray(v) for k, v in changes.items()})
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _meta(good: bytes) -> dict:
    return json.loads(str(np.load(io.BytesIO(good))["meta"]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=4),
       cut=st.none() | st.floats(0, 1))
def test_a_damaged_cache_file_is_a_recompute_never_a_traceback(
        cached_calibration: tuple[Path, str, bytes], flips: list[tuple[float, int]],
        cut: float | None) -> None:
    """Flipped bytes (a bad zip, an unknown compression method) and truncation at any point read
    as "no cached calibration"; a bit flip escaped as BadZipFile or NotImplementedError."""
    d, key, good = cached_calibration
    data = bytearray(good)
    for where, byte in flips:
        data[int(where * len(data))] = byte
    if cut is not None:
        data = data[:int(cut * len(data))]
    (d / "calibration" / f"{key}.npz").write_bytes(bytes(data))
    got = cal.load(d, key, len(SAMPLE_SKILLS))
    assert got is None or got.key == key


def test_a_pipe_in_the_cache_files_place_is_a_recompute_never_waited_on(
        cached_calibration: tuple[Path, str, bytes]) -> None:
    import os
    d, key, good = cached_calibration
    path = d / "calibration" / f"{key}.npz"
    path.unlink()
    os.mkfifo(path)
    try:
        assert cal.load(d, key, len(SAMPLE_SKILLS)) is None
    finally:   # the folder is the module's: a pipe left behind blocks the next test's write
        path.unlink()
        path.write_bytes(good)


def test_a_cache_file_of_another_shape_is_recomputed_with_a_message(
        cached_calibration: tuple[Path, str, bytes], caplog: pytest.LogCaptureFixture) -> None:
    d, key, good = cached_calibration
    meta = _meta(good)
    n = len(SAMPLE_SKILLS)
    variants = {
        "meta a list": _npz(good, meta=json.dumps([])),
        "meta a number": _npz(good, meta=json.dumps(5)),
        "meta without threshold": _npz(good, meta=json.dumps({"key": key})),
        "threshold a list": _npz(good, meta=json.dumps({**meta, "threshold": [1]})),
        "threshold of text": _npz(good, meta=json.dumps({**meta, "threshold": {"en": "x"}})),
        "scale of two": _npz(good, meta=json.dumps({**meta, "scale": {"en": [1, 2]}})),
        "unrelated of one": _npz(good, meta=json.dumps({**meta, "unrelated": [1]})),
        "unrelated null": _npz(good, meta=json.dumps({**meta, "unrelated": None})),
        "report a list": _npz(good, meta=json.dumps({**meta, "report": []})),
        "meta an array": _npz(good, meta=[1, 2]),
        "means of text": _npz(good, mean_en=["a"] * n),
        "means 2-d": _npz(good, mean_en=np.zeros((n, 2))),
        "binary": bytes(range(256)) * 8,
        "zip header": b"PK\x03\x04garbage",
    }
    path = d / "calibration" / f"{key}.npz"
    for name, data in variants.items():
        path.write_bytes(data)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=cal.__name__):
            assert cal.load(d, key, n) is None, name
        assert str(path) in caplog.text and "recomput" in caplog.text, name
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=d)
    r.refresh()                                   # rebuilt and written again
    assert cal.load(d, key, n) is not None and path.read_bytes() != variants["zip header"]


# The calibration cache is written atomically (hermes_core/atomic_write.py).

def _saved(key: str, report_rows: int) -> cal.DenseCalibration:
    return cal.DenseCalibration("m", key, mean={lang: np.array([0.1, 0.2]) for lang in cal.LANGS},
                                std={lang: np.array([0.1, 0.1]) for lang in cal.LANGS},
                                threshold={"en": float(report_rows)},
                                report={f"row{i}": {"x": float(i)} for i in range(report_rows)})


def test_two_threads_saving_one_calibration_leave_a_whole_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The two saves overlap (each has its temp file open when the other writes): the file read
    back is the later save, whole. A temp file named by the pid was shared by the two threads:
    the later one wrote into the file the first had already renamed into place."""
    real_savez = np.savez
    both_open = threading.Barrier(2)
    first_saved = threading.Event()
    path = tmp_path / "calibration" / "k.npz"

    def savez(f: Any, **arrays: Any) -> None:
        both_open.wait(timeout=10)
        if threading.current_thread().name == "later":
            assert first_saved.wait(timeout=10)
        real_savez(f, **arrays)

    monkeypatch.setattr(np, "savez", savez)
    big, small = _saved("k", 300), _saved("k", 1)

    def first() -> None:
        cal.save(tmp_path, big)
        first_saved.set()
    threads = [threading.Thread(target=first, name="first"),
               threading.Thread(target=cal.save, args=(tmp_path, small), name="later")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    got = cal.load(tmp_path, "k", 2)
    assert got is not None and got.report == small.report and got.threshold == {"en": 1.0}
    assert [p.name for p in path.parent.iterdir()] == ["k.npz"]
    monkeypatch.undo()
    cal.save(tmp_path / "alone", small)      # the later save's file, with nothing of the first's
    assert path.stat().st_size == (tmp_path / "alone" / "calibration" / "k.npz").stat().st_size


def test_a_save_failing_half_way_leaves_the_old_calibration_and_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cal.save(tmp_path, _saved("k", 1))
    real_savez = np.savez

    def full_disk(f: Any, **arrays: Any) -> None:
        real_savez(f, **arrays)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(np, "savez", full_disk)
    cal.save(tmp_path, _saved("k", 5))                         # costs "not cached", never a turn
    got = cal.load(tmp_path, "k", 2)
    assert got is not None and len(got.report) == 1
    assert [p.name for p in (tmp_path / "calibration").iterdir()] == ["k.npz"]


def test_a_cache_folder_that_cannot_be_written_does_not_fail_the_retriever(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=blocker)
    with caplog.at_level(logging.WARNING):
        r.refresh()
        res = r.retrieve("extract the text of a pdf file")
    assert res.names and "test:hashing" in r._calibration
    assert "cannot write" in caplog.text and blocker.read_text().startswith("a file where")


def test_a_past_or_reference_query_is_embedded_as_a_live_query_is_with_its_han_simplified(
        tmp_path: Path) -> None:
    # a live query is embedded with its Han in simplified characters (DenseIndex.query_vector);
    # the vectors of past queries (the usage layer) and of the gate's pseudo-queries come from
    # cached_query_vectors and must be made alike, or a traditional request re-typed word for
    # word is not near its own past use
    d = dense_mod.DenseIndex(ScriptEmbedder(), dense_mod.EmbeddingCache(tmp_path))
    d.build([Skill("db-fix", "排查數據庫連接錯誤")])
    texts = ["排查數據庫連接錯誤", "排查数据库连接错误", "check the weather"]
    got = cal.cached_query_vectors(d, texts)
    assert np.array_equal(got, np.vstack([d.query_vector(t) for t in texts]))
    assert np.array_equal(got[0], got[1])
    assert np.array_equal(cal.cached_query_vectors(d, texts), got)   # read back from the cache
