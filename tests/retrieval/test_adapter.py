"""Tests of ``hermes_core/retrieval/adapter.py``.

The query adapter's arithmetic, the fingerprint that keys every cache made from query vectors,
the fallback on a missing or corrupt weights file, the setting that turns it off, and the
training script's determinism on a tiny fixture.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from hermes_core.config import SkillSettings, load_settings
from hermes_core.retrieval import adapter as ad
from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval.dense import DenseIndex, EmbeddingCache, default_embedders
from hermes_core.retrieval.fusion import weights_for
from hermes_core.retrieval.retriever import SkillRetriever, build_retriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder

TRAIN = Path(__file__).resolve().parents[1] / "data" / "adapter" / "train_adapter.py"


def _weights(path: Path, model_id: str = "test:hashing", *, dim: int = 64, rank: int = 4,
             seed: int = 0, scale: float = 0.5) -> Path:
    rng = np.random.default_rng(seed)
    np.savez(path, model_id=np.array(model_id),
             a=(scale * rng.standard_normal((dim, rank))).astype(np.float16),
             b=(scale * rng.standard_normal((rank, dim))).astype(np.float16))
    return path


def test_zero_weights_leave_the_models_query_vectors_unchanged() -> None:
    inner = HashingEmbedder()
    zero = ad.QueryAdapter("test:hashing", np.ones((64, 3), np.float32), np.zeros((3, 64), np.float32), "0")
    wrapped = ad.AdaptedEmbedder(HashingEmbedder(), zero)
    for text in ("extract the tables from a pdf", "翻译这段话"):
        np.testing.assert_allclose(wrapped.embed_query(text), inner.embed_query(text), atol=1e-6)
    docs = ["a pdf tool"]
    np.testing.assert_array_equal(wrapped.embed_documents(docs), inner.embed_documents(docs))


def test_the_adapter_adds_its_low_rank_map_and_normalises(tmp_path: Path) -> None:
    adapter = ad.load_adapter(_weights(tmp_path / "w.npz"))
    assert adapter is not None
    q = HashingEmbedder().embed_query("convert this spreadsheet to csv")
    expected = q + adapter.a @ (adapter.b @ q)
    expected /= np.linalg.norm(expected)
    got = adapter.apply(q)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got.dtype == np.float32 and abs(float(np.linalg.norm(got)) - 1) < 1e-5
    batch = adapter.apply(np.vstack([q, q]))
    np.testing.assert_allclose(batch, np.vstack([got, got]), atol=1e-6)


def test_documents_keep_their_cache_and_query_caches_carry_the_fingerprint(tmp_path: Path) -> None:
    wrapped = ad.adapt(HashingEmbedder(), _weights(tmp_path / "w.npz"))
    assert isinstance(wrapped, ad.AdaptedEmbedder)
    index = DenseIndex(wrapped, EmbeddingCache(tmp_path / "cache"), persist_queries=True)
    assert index.cache_id == "test:hashing"
    assert index.query_cache_id == f"test:hashing+adapter:{wrapped.adapter.fingerprint}"
    index.build(SAMPLE_SKILLS)
    v = index.query_vector("extract the tables from a pdf")
    key = "query-" + __import__("hashlib").sha256(b"extract the tables from a pdf").hexdigest()
    assert index.cache.get("test:hashing", key) is None       # never under the plain model's id
    np.testing.assert_array_equal(index.cache.get(index.query_cache_id, key), v)


def test_changed_weights_recalibrate_without_re_embedding_documents(tmp_path: Path) -> None:
    cache = tmp_path / "cache"

    def retriever(seed: int) -> tuple[SkillRetriever, HashingEmbedder]:
        inner = HashingEmbedder()
        wrapped = ad.adapt(inner, _weights(tmp_path / f"w{seed}.npz", seed=seed))
        r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[wrapped], cache_dir=cache)
        r.refresh()
        return r, inner

    first, _ = retriever(1)
    again, inner = retriever(1)
    assert inner.queries_embedded == 0 and inner.documents_embedded == 0   # all cached
    changed, inner = retriever(2)
    assert inner.documents_embedded == 0            # documents are the model's own vectors
    assert inner.queries_embedded > 0               # the reference and pseudo-queries again
    k1 = first._calibration["test:hashing"].key
    k2 = changed._calibration["test:hashing"].key
    assert k1 != k2 and again._calibration["test:hashing"].key == k1
    rule = repr(weights_for(changed.gate_weights, "test:hashing", changed.anchor_weight))
    assert k2 == cal.catalog_key(changed.dense[0].query_cache_id, changed.skills, rule)
    assert len(list((cache / "calibration").glob("*.npz"))) == 2


@pytest.mark.parametrize("content", [None, b"torn", b"PK\x03\x04 not a zip"])
def test_a_missing_or_corrupt_weights_file_leaves_the_plain_model_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, content: bytes | None) -> None:
    path = tmp_path / "w.npz"
    if content is not None:
        path.write_bytes(content)
    inner = HashingEmbedder()
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.adapter"):
        assert ad.adapt(inner, path) is inner
    assert "plain embedding model" in caplog.text


def test_weights_of_mismatched_shapes_or_pickled_objects_are_refused(tmp_path: Path) -> None:
    bad_shape = tmp_path / "shape.npz"
    np.savez(bad_shape, model_id=np.array("test:hashing"), a=np.zeros((64, 4)), b=np.zeros((3, 64)))
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, model_id=np.array("test:hashing"), a=np.array([object()], dtype=object),
             b=np.zeros((4, 64)))
    nan = tmp_path / "nan.npz"
    np.savez(nan, model_id=np.array("test:hashing"), a=np.full((64, 4), np.nan), b=np.zeros((4, 64)))
    for path in (bad_shape, pickled, nan):
        assert ad.load_adapter(path) is None, path


def test_the_adapter_serves_only_the_model_it_was_fitted_for(tmp_path: Path) -> None:
    other = HashingEmbedder("test:other")
    assert ad.adapt(other, _weights(tmp_path / "w.npz")) is other


def test_the_shipped_adapter_is_minilms_and_small() -> None:
    adapter = ad.load_adapter()
    assert adapter is not None and adapter.model_id == "st:all-MiniLM-L6-v2"
    assert adapter.a.shape[0] == adapter.b.shape[1] == 384 and adapter.a.shape[1] == adapter.b.shape[0] <= 64
    assert ad.DEFAULT_WEIGHTS.stat().st_size < 200_000
    assert adapter.fingerprint == ad.fingerprint(adapter.model_id, adapter.a, adapter.b)
    assert (ad.DEFAULT_WEIGHTS.parent / "query_adapter.LICENSE.md").is_file()


def test_the_setting_turns_the_adapter_off(tmp_path: Path) -> None:
    assert SkillSettings().query_adapter is True
    on = default_embedders()[0]
    off = default_embedders(query_adapter=False)[0]
    assert isinstance(on, ad.AdaptedEmbedder) and on.model_id == "st:all-MiniLM-L6-v2"
    assert not isinstance(off, ad.AdaptedEmbedder) and off.model_id == "st:all-MiniLM-L6-v2"
    (tmp_path / "config.yaml").write_text("skill_utils:\n  query_adapter: false\n")
    settings = load_settings(tmp_path / "config.yaml", home=tmp_path)
    assert settings.skill_utils.query_adapter is False
    r = build_retriever(settings, home=tmp_path)
    assert r.dense and not any(isinstance(d.embedder, ad.AdaptedEmbedder) for d in r.dense)


def test_training_is_deterministic_and_moves_requests_towards_their_tools(
        load_script: Callable[..., ModuleType]) -> None:
    train = load_script(TRAIN)
    rng = np.random.default_rng(5)
    docs = rng.standard_normal((24, 16)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    gold = np.repeat(np.arange(24), 3)
    # requests are their tool seen through a fixed distortion plus noise: a map can undo it
    distort = np.eye(16, dtype=np.float32) + 0.8 * rng.standard_normal((16, 16)).astype(np.float32)
    queries = docs[gold] @ distort.T + 0.05 * rng.standard_normal((72, 16)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    groups = ["x" if g < 12 else "y" for g in gold]
    doc_groups = ["x"] * 12 + ["y"] * 12
    kw = dict(rank=4, lam=1e-3, epochs=60, lr=2e-2)
    a1, b1 = train.fit(queries, gold, groups, docs, doc_groups, **kw)
    a2, b2 = train.fit(queries, gold, groups, docs, doc_groups, **kw)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)

    def top1(q: np.ndarray) -> float:
        return float(((q @ docs.T).argmax(1) == gold).mean())
    assert top1(train.adapt(a1, b1, queries)) > top1(queries)
    a0, b0 = train.fit(queries, gold, groups, docs, doc_groups, rank=4, epochs=0)
    np.testing.assert_allclose(train.adapt(a0, b0, queries), queries, atol=1e-6)   # starts as the plain model
