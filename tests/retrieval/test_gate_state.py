"""The dense gate's calibration kept up to date through edits equals one computed from scratch."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval import gate_state
from hermes_core.retrieval.dense import DenseIndex, soft_max_by_skill
from hermes_core.retrieval.dense_gate import FixedRule
from hermes_core.retrieval.fusion import GateWeights, anchor_vectors
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import write_catalog

WORDS = ["invoice", "flight", "weather", "playlist", "meeting", "recipe", "ticket", "album",
         "route", "note", "查询", "快递", "天气", "会议", "create", "cancel", "share", "export"]


class MemoEmbedder(HashingEmbedder):
    """The hashing embedder, each text embedded once (the examples re-ask the same texts)."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__("test:gate-state", dim=dim)
        self._seen: dict[str, np.ndarray] = {}

    def _vec(self, text: str) -> np.ndarray:
        if text not in self._seen:
            self._seen[text] = super()._vec(text)
        return self._seen[text]


def _skill(i: int, words: Sequence[int], revision: int = 0) -> Skill:
    text = " ".join(WORDS[w % len(WORDS)] for w in words)
    return Skill(f"skill-{i}", f"{text.capitalize()} for the user. Revision {revision} of {text}.")


def _from_scratch(d: DenseIndex, skills: Sequence[Skill], fixed: FixedRule) -> cal.DenseCalibration:
    """The calibration as the reference computes it: every skill against every row."""
    off_texts = list(cal.gate_requests())
    off = cal.cached_query_vectors(d, off_texts)
    texts = [t for i in cal.pseudo_sample(skills) for t in cal.pseudo_queries(skills[i])]
    ps = cal.cached_query_vectors(d, texts) if texts else np.zeros((0, off.shape[1]))
    rows, starts = np.asarray(d.parts, dtype=np.float64), d.part_starts

    def parts(vectors: np.ndarray) -> np.ndarray:
        return np.vstack([soft_max_by_skill(r, starts) for r in np.asarray(vectors) @ rows.T])
    return cal.calibrate_dense("m", "k", d.matrix, off, [cal.query_language(t) for t in off_texts], ps,
                               [cal.query_language(t) for t in texts], fixed, parts,
                               ranking_rows=len(cal.offtopic_requests()))


def _assert_same(got: cal.DenseCalibration, want: cal.DenseCalibration) -> None:
    tol = {"rel": 1e-9, "abs": 1e-9}
    assert dict(got.threshold) == pytest.approx(dict(want.threshold), **tol)
    assert set(got.scale) == set(want.scale)
    for lang in want.scale:
        assert got.scale[lang] == pytest.approx(want.scale[lang], **tol)
    for lang in cal.LANGS:
        assert got.report[lang] == pytest.approx(want.report[lang], **tol)
        for field in ("mean", "std", "gate_mean", "gate_std", "part_mean", "part_std"):
            assert getattr(got, field)[lang] == pytest.approx(getattr(want, field)[lang], **tol)
    assert (got.unrelated_mean, got.unrelated_std) == pytest.approx((want.unrelated_mean, want.unrelated_std))


OPS = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete"]), st.integers(0, 10_000),
                         st.lists(st.integers(0, 100), min_size=1, max_size=5)), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, top=st.sampled_from([1, 3, 32]))
def test_an_updated_calibration_equals_one_computed_from_scratch(
        ops: list[tuple[str, int, list[int]]], top: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # a small sample limit so that adds and deletes move who gives pseudo-queries, and short
    # per-row lists so that rows run out and are scored whole again
    monkeypatch.setattr(cal, "MAX_PSEUDO_SKILLS", 12)
    monkeypatch.setattr(gate_state, "TOP", top)
    skills = [_skill(i, [i, i + 3, i * 7]) for i in range(30)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0, catalog_mean=2.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
    assert memo.last[d.query_cache_id] == "full"
    made = 30
    for n, (op, at, words) in enumerate(ops):
        if op == "edit":
            i = at % len(skills)
            skills[i] = _skill(int(skills[i].name.split("-")[1]), words, revision=n + 1)
        elif op == "add":
            skills.insert(at % (len(skills) + 1), _skill(made, words))
            made += 1
        elif len(skills) > 2:
            del skills[at % len(skills)]
        d.build(skills)
        got = gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
        assert memo.last[d.query_cache_id] == "update"
        _assert_same(got, _from_scratch(d, skills, fixed))


def test_a_full_calibration_equals_the_reference_and_is_read_from_the_cache(tmp_path) -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0, catalog_mean=2.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    first = gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo)
    _assert_same(first, _from_scratch(d, skills, fixed))
    again = gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo)
    assert memo.last[d.query_cache_id] == "cache" and again.threshold == pytest.approx(first.threshold)


def test_many_changes_or_another_fixed_rule_calibrate_whole() -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, None, fixed, "rule", memo)
    other = [_skill(i, [i + 5], revision=1) for i in range(20)]   # every skill rewritten
    d.build(other)
    _assert_same(gate_state.calibrate_index(d, other, None, fixed, "rule", memo),
                 _from_scratch(d, other, fixed))
    assert memo.last[d.query_cache_id] == "full"
    reweighted = FixedRule(d, GateWeights(anchor_mean=2.0), fixed.anchors)
    other[0] = _skill(0, [1, 2], revision=2)
    d.build(other)
    _assert_same(gate_state.calibrate_index(d, other, None, reweighted, "rule-2", memo),
                 _from_scratch(d, other, reweighted))
    assert memo.last[d.query_cache_id] == "full"


def test_a_model_of_another_width_under_the_same_id_calibrates_whole() -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    memo = gate_state.GateMemo()
    for dim in (64, 32):   # no fixed rule: no anchors of the other width to tell them apart
        d = DenseIndex(MemoEmbedder(dim))
        d.build(skills)
        got = gate_state.calibrate_index(d, skills, None, None, "", memo)
        assert memo.last[d.query_cache_id] == "full"
        assert len(got.gate_mean["en"]) == len(skills) and np.isfinite(got.threshold_for("en"))
        skills[0] = _skill(0, [dim, 3], revision=dim)


# ------------------------------------------------------------------ the state on disk
def _apply(skills: list[Skill], op: str, at: int, words: list[int], n: int, made: int) -> int:
    """One edit, add or delete of ``skills`` (in place); the next new skill's number."""
    if op == "edit":
        i = at % len(skills)
        skills[i] = _skill(int(skills[i].name.split("-")[1]), words, revision=n + 1)
    elif op == "add":
        skills.insert(at % (len(skills) + 1), _skill(made, words))
        return made + 1
    elif len(skills) > 2:
        del skills[at % len(skills)]
    return made


def _catalog(skills: list[Skill]) -> tuple[tuple[str, str], ...]:
    return tuple((s.name, s.description) for s in skills)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
@example(ops=[("add", 500, [0]), ("delete", 7041, [0])])   # the add undone: the first catalog again
def test_after_a_restart_the_first_change_is_an_update_from_the_saved_state_and_equals_one_from_scratch(
        ops: list[tuple[str, int, list[int]]], monkeypatch: pytest.MonkeyPatch,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setattr(cal, "MAX_PSEUDO_SKILLS", 12)
    cache = tmp_path_factory.mktemp("cache")
    skills = [_skill(i, [i, i + 3, i * 7]) for i in range(30)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0, catalog_mean=2.0), anchor_vectors(d))
    gate_state.calibrate_index(d, skills, cache, fixed, "rule", gate_state.GateMemo(), "sources")
    made = 30
    seen = {_catalog(skills)}   # a catalog calibrated before (an add then its delete) is read back
    for n, (op, at, words) in enumerate(ops):
        made = _apply(skills, op, at, words, n, made)
        d.build(skills)
        memo = gate_state.GateMemo()   # a new process: nothing in memory
        got = gate_state.calibrate_index(d, skills, cache, fixed, "rule", memo, "sources")
        assert memo.last[d.query_cache_id] == ("cache" if _catalog(skills) in seen else "update")
        seen.add(_catalog(skills))
        _assert_same(got, _from_scratch(d, skills, fixed))


def _saved(tmp_path) -> tuple[DenseIndex, list[Skill], FixedRule, gate_state.GateMemo, object]:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0), anchor_vectors(d))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo, "sources")
    (path,) = (tmp_path / "calibration" / "state").glob("*.npz")
    return d, skills, fixed, memo, path


def _restarted(d: DenseIndex, skills: list[Skill], at: int, fixed: FixedRule, rule: str, cache,
               lineage: str = "sources") -> tuple[cal.DenseCalibration, str]:
    """Skill ``at`` edited, calibrated by a process with nothing in memory: the calibration and
    how it was made."""
    skills[at] = _skill(at, [at + 5, at + 6], revision=at)
    d.build(skills)
    memo = gate_state.GateMemo()
    got = gate_state.calibrate_index(d, skills, cache, fixed, rule, memo, lineage)
    return got, memo.last[d.query_cache_id]


def _same_state(a: gate_state._State, b: gate_state._State) -> None:
    assert a.context == b.context and a.keys == b.keys and a.next_id == b.next_id
    assert a.texts == b.texts and a.unrelated == b.unrelated
    np.testing.assert_array_equal(a.ids, b.ids)
    for f in gate_state._FIELDS:
        assert getattr(a.columns, f).keys() == getattr(b.columns, f).keys()
        for lang, v in getattr(a.columns, f).items():
            np.testing.assert_array_equal(v, getattr(b.columns, f)[lang])
    for ra, rb in ((a.ref, b.ref), (a.pseudo, b.pseudo)):
        np.testing.assert_array_equal(ra.vectors, rb.vectors)
        assert list(ra.langs) == list(rb.langs)
        for ta, tb in ((ra.z, rb.z), (ra.cos, rb.cos)):
            np.testing.assert_array_equal(ta.vals, tb.vals)
            np.testing.assert_array_equal(ta.ids, tb.ids)


def test_the_saved_state_reads_back_as_it_was_kept(tmp_path) -> None:
    d, _, _, memo, path = _saved(tmp_path)
    kept = memo.states[d.query_cache_id]
    loaded = gate_state.load_state(path, kept.context)
    assert loaded is not None
    _same_state(loaded, kept)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7), cut=st.booleans())
def test_a_truncated_or_flipped_state_file_is_never_trusted(
        at: float, bit: int, cut: bool, tmp_path_factory: pytest.TempPathFactory) -> None:
    d, _, _, memo, path = _saved(tmp_path_factory.mktemp("cache"))
    kept = memo.states[d.query_cache_id]
    raw = bytearray(path.read_bytes())
    i = int(at * len(raw))
    if cut:
        path.write_bytes(bytes(raw[:i]))
    else:
        raw[i] ^= 1 << bit
        path.write_bytes(bytes(raw))
    loaded = gate_state.load_state(path, kept.context)
    if cut:
        assert loaded is None
    elif loaded is not None:   # a byte the zip reader ignores (a header's time stamp): same state
        _same_state(loaded, kept)


@pytest.mark.parametrize("damage", ["torn", "garbage", "other-version", "fifo", "unsealed-change"])
def test_a_damaged_or_foreign_state_file_is_ignored_with_a_warning_and_calibrated_whole(
        tmp_path, caplog: pytest.LogCaptureFixture, damage: str) -> None:
    d, skills, fixed, _, path = _saved(tmp_path)
    if damage == "torn":
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04 not a state")
    elif damage == "fifo":
        path.unlink()
        os.mkfifo(path)
    else:
        from hermes_core.retrieval.gate_store import read_sealed, write_sealed
        got = read_sealed(path, gate_state.STATE_VERSION, "test")
        assert got is not None
        header, arrays = got
        if damage == "other-version":
            write_sealed(path, gate_state.STATE_VERSION + 1, header, arrays, "test")
        else:   # a well-sealed file whose arrays do not fit together: a kept id no skill has
            arrays["ref_z_ids"][0, 0] = 10_000
            write_sealed(path, gate_state.STATE_VERSION, header, arrays, "test")
    with caplog.at_level(logging.WARNING):
        got, how = _restarted(d, skills, 3, fixed, "rule", tmp_path)
    assert how == "full"
    assert any("gate state cache" in r.getMessage() for r in caplog.records)
    _assert_same(got, _from_scratch(d, skills, fixed))
    # the file written in its place is whole again: the next process updates from it
    assert _restarted(d, skills, 4, fixed, "rule", tmp_path)[1] == "update"


def test_a_state_kept_under_another_fixed_rule_or_sources_is_not_used(
        tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    d, skills, fixed, _, _ = _saved(tmp_path)
    reweighted = FixedRule(d, GateWeights(anchor_mean=2.0), fixed.anchors)
    with caplog.at_level(logging.WARNING):
        got, how = _restarted(d, skills, 3, reweighted, "rule-2", tmp_path)
    assert how == "full" and not caplog.records   # not damaged: not its own
    _assert_same(got, _from_scratch(d, skills, reweighted))
    assert _restarted(d, skills, 4, fixed, "rule", tmp_path, "other sources")[1] == "full"


def test_a_restart_with_no_change_reads_no_state(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    d, skills, fixed, _, _ = _saved(tmp_path)
    read: list[object] = []
    monkeypatch.setattr(gate_state, "load_state", lambda *a: read.append(a))
    memo = gate_state.GateMemo()
    gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", memo, "sources")
    assert memo.last[d.query_cache_id] == "cache" and read == []


def test_the_state_file_holds_no_skill_text(tmp_path) -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    skills[5] = Skill("skill-5", "Rotate the staging token kept in vault path ops/ci. Then restart.")
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    gate_state.calibrate_index(d, skills, tmp_path, None, "", gate_state.GateMemo(), "sources")
    (path,) = (tmp_path / "calibration" / "state").glob("*.npz")
    raw = path.read_bytes()
    assert "Rotate the staging token kept in vault path ops/ci." in cal.pseudo_queries(skills[5])
    assert b"staging token" not in raw and b"vault" not in raw


def test_calibrations_and_states_no_process_used_for_long_are_removed_and_a_live_catalogs_kept(
        tmp_path) -> None:
    # two catalogs (two processes' lineages) calibrated in one cache folder
    first, second = [_skill(i, [i, i + 1]) for i in range(20)], [_skill(i, [i + 2]) for i in range(20, 40)]
    d = DenseIndex(MemoEmbedder())
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0), anchor_vectors(d))
    for skills, lineage in ((first, "first"), (second, "second")):
        d.build(skills)
        gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", gate_state.GateMemo(), lineage)
    folder, states = tmp_path / "calibration", tmp_path / "calibration" / "state"
    files = {p: p.stat().st_mtime for p in [*folder.glob("*.npz"), *states.glob("*.npz")]}
    assert len(files) == 4
    for p in files:   # all unused for 40 days
        os.utime(p, (files[p] - 40 * 86_400, files[p] - 40 * 86_400))
    d.build(first)    # the first catalog's process starts again: it marks what it reads
    gate_state.calibrate_index(d, first, tmp_path, fixed, "rule", gate_state.GateMemo(), "first")
    assert all(p.exists() for p in files)   # a cache hit makes no file: nothing swept
    edited = [*first[:-1], _skill(19, [3], revision=1)]
    d.build(edited)   # an edit makes a new calibration (and state), then sweeps
    gate_state.calibrate_index(d, edited, tmp_path, fixed, "rule", gate_state.GateMemo(), "first")
    left = {p for p in files if p.exists()}
    # kept: the first catalog's calibration (read at the restart) and state (read and rewritten);
    # removed: the second's, unused for 40 days
    mid = d.query_cache_id
    assert len(left) == 2 and {p.parent.name for p in left} == {"calibration", "state"}
    assert gate_state._state_path(tmp_path, mid, "first") in left
    assert not gate_state._state_path(tmp_path, mid, "second").exists()
    assert len(list(folder.glob("*.npz"))) == 2 and len(list(states.glob("*.npz"))) == 1


def test_a_users_own_arrays_named_like_a_calibration_are_kept_by_the_sweep(tmp_path) -> None:
    # the cache folder given is the user's project, whose ``calibration/`` holds their own
    # arrays named by an md5; the calibration's sweep removes only what calibration wrote
    folder = tmp_path / "calibration"
    (folder / "state").mkdir(parents=True)
    theirs = [folder / ("0" * 32 + ".npz"), folder / "state" / ("1" * 32 + ".npz")]
    for path in theirs:
        np.savez(path, offsets=np.arange(3.0))
        os.utime(path, (0.0, 0.0))
    skills = [_skill(i, [i, i + 1]) for i in range(20)]
    d = DenseIndex(MemoEmbedder())
    d.build(skills)
    fixed = FixedRule(d, GateWeights(anchor_mean=1.0), anchor_vectors(d))
    gate_state.calibrate_index(d, skills, tmp_path, fixed, "rule", gate_state.GateMemo(), "first")
    made = [p for p in [*folder.glob("*.npz"), *(folder / "state").glob("*.npz")] if p not in theirs]
    assert len(made) == 2
    for path in made:   # the cache's own, unused as long as the user's
        os.utime(path, (0.0, 0.0))
    edited = [*skills[:-1], _skill(19, [3], revision=1)]
    d.build(edited)   # an edit makes a new calibration, then sweeps
    gate_state.calibrate_index(d, edited, tmp_path, fixed, "rule", gate_state.GateMemo(), "second")
    assert all(p.exists() for p in theirs) and not any(p.exists() for p in made)


def test_a_restarted_retriever_updates_the_dense_gate_from_its_saved_state_and_ranks_as_a_fresh_one(
        tmp_path: Path) -> None:
    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    write = partial(write_catalog, path)
    write(skills)
    SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "kept").refresh()
    first = next(iter(skills))
    steps = [("edit", first, skills[first] + " It also reads archived invoices."),
             ("add", "receipt-scanner", "Scan a paper receipt and file it as an expense"),
             ("delete", first, "")]
    for op, name, text in steps:
        restarted = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()],
                                   cache_dir=tmp_path / "kept")
        restarted.refresh()   # the catalog the last process left: read from the cache
        assert restarted._gate_memo.last == {"test:hashing": "cache"}
        if op == "delete":
            del skills[name]
        else:
            skills[name] = text
        write(skills)
        restarted.refresh()
        assert restarted._gate_memo.last == {"test:hashing": "update"}, op
        fresh = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()],
                               cache_dir=tmp_path / f"fresh-{op}")
        fresh.refresh()
        for q in ["extract tables from an invoice", "scan my receipt", "what's the weather like"]:
            a, b = restarted.retrieve(q), fresh.retrieve(q)
            assert (a.names, a.candidates, a.gated) == (b.names, b.candidates, b.gated)
            assert a.scores == pytest.approx(b.scores, rel=1e-12, abs=1e-12)
