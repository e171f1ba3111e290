"""SkillRetriever end to end with a test embedder: abstention, gate, bad input, caching, rendering."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import SKILLS, HashingEmbedder, skill_md, write_skill

from hermes_core.retrieval import retriever as rmod
from hermes_core.retrieval.retriever import (
    SkillRetriever,
    get_skill_retriever,
    render,
    render_hint,
    reset_skill_retriever,
)
from hermes_core.types import Message, Skill


def make(**kw: object) -> SkillRetriever:
    kw.setdefault("skills", SKILLS)
    kw.setdefault("gate_thresholds", {"lexical": 0.0, "dense": -1.0})
    return SkillRetriever(**kw)  # type: ignore[arg-type]


def test_l1_trigger_auto_loads_body() -> None:
    r = make()
    res = r.retrieve("明天天气预报怎么样")
    assert res.layer == "L1" and res.names == ("weather-forecast",)
    assert res.trigger is not None and res.trigger.tier == 1
    block = render(res)
    assert block.startswith("## Auto-loaded Skill: weather-forecast\n")
    assert "Call the weather API" in block and "System note" in block


def test_l2_l3_without_embeddings_hint_block() -> None:
    r = make()
    res = r.retrieve("extract the tables from this PDF")
    assert res.layer == "L5" and res.names[0] == "pdf-extract"
    assert res.answered == ("bm25", "synonyms")
    assert set(res.contributions["pdf-extract"]) == {"bm25", "synonyms"}
    assert len(res.skills) == len(res.scores) <= 5
    block = render(res)
    assert block.startswith("## Skill Retrieval Hint\n") and "skill_view(name)" in block
    assert "- pdf-extract: Extract text" in block
    assert {"L2", "L3", "L5", "total"} <= set(res.timings_ms)


def test_synonym_layer_ranks_skill_whose_text_lacks_the_word() -> None:
    res = make().retrieve("drop a line to Bob")
    assert res.names[0] == "email-send"


def test_dense_layer_answers_and_abstains_on_uncovered_language() -> None:
    en = HashingEmbedder("test:en", english_only=True)
    r = make(embedders=[en])
    res = r.retrieve("send an email to my boss")
    assert "dense" in res.answered and res.gate is not None and res.gate.rule == "dense:test:en"
    res = r.retrieve("帮我创建一个会议")
    assert "dense" not in res.answered  # the English-only model abstains on Chinese
    assert res.gate is not None and res.gate.rule == "lexical"
    assert res.names[0] == "Calendar.Meeting.createMeeting"


def test_language_routing_picks_the_first_embedder_that_covers() -> None:
    en = HashingEmbedder("test:en", english_only=True)
    multi = HashingEmbedder("test:multi")
    r = make(embedders=[en, multi])
    assert r.retrieve("创建会议").gate.rule == "dense:test:multi"  # type: ignore[union-attr]
    assert r.retrieve("send email").gate.rule == "dense:test:en"  # type: ignore[union-attr]


def test_gate_rejects_weak_match_with_and_without_dense() -> None:
    r = make(gate_thresholds={"lexical": 0.5})
    res = r.retrieve("what is the meaning of life")
    assert res.gated and res.skills == () and render(res) == ""
    assert res.candidates  # the ranking is still there for explain/eval
    r = make(embedders=[HashingEmbedder("test:en")], gate_thresholds={"test:en": 0.99})
    res = r.retrieve("what is the meaning of life")
    assert res.gated and res.gate is not None and res.gate.rule == "dense:test:en"
    assert not make(threshold=0.0, embedders=[HashingEmbedder("test:en")]).retrieve("email").gated


def test_failing_embedder_abstains_instead_of_crashing(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("model file corrupt")

    r = make(embedders=[Broken("test:broken")])
    res = r.retrieve("send an email")
    assert res.answered == ("bm25", "synonyms") and res.names[0] == "email-send"
    assert "model file corrupt" in caplog.text


@pytest.mark.parametrize("query", [
    "", "   \n\t ", "x" * 100_000, "🙂🚀🎉", "send 邮件 to 会议 participants 🙂",
    r"(.*)+[a-z]{2,}\\d?^$|(?=x)", "查" * 50_000,
])
def test_bad_input_queries_never_crash(query: str) -> None:
    r = make(embedders=[HashingEmbedder("test:en", english_only=True)])
    res = r.retrieve(query)
    assert isinstance(res.skills, tuple)
    assert len(res.skills) <= r.top_k
    if not query.strip():
        assert res.gated and res.skills == ()


def test_no_skills_means_no_hint(tmp_path: Path) -> None:
    r = SkillRetriever(folders=[tmp_path / "missing"])
    res = r.retrieve("anything")
    assert res.layer == "none" and render(res) == ""
    block, _ = r.select("anything")
    assert block == ""


def test_disabled_env_returns_full_list(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.config import load_settings
    monkeypatch.setenv("HERMES_DISABLE_SKILL_RETRIEVAL", "1")   # config maps it onto the setting
    block, res = SkillRetriever(load_settings({}).skill_utils, skills=SKILLS).select("pdf")
    assert res.layer == "disabled" and len(res.skills) == len(SKILLS)
    assert all(f"- {s.name}:" in block for s in SKILLS)


def test_disabled_by_setting_returns_full_list() -> None:
    block, res = make(enabled=False).select("pdf")
    assert res.layer == "disabled" and block.startswith("## Available Skills")


def test_short_follow_up_uses_history() -> None:
    r = make(gate_thresholds={"lexical": 0.3})
    hist = [Message("user", "extract the tables from the PDF report"), Message("assistant", "Done.")]
    assert r.retrieve("and images?", hist).names[:1] == ("pdf-extract",)


def test_top_k_and_deterministic_order() -> None:
    r = make(top_k=2)
    a, b = r.retrieve("send email weather"), r.retrieve("send email weather")
    assert len(a.skills) == 2 and a.names == b.names and a.scores == b.scores


def test_refresh_is_incremental_and_embedding_cache_survives_restart(tmp_path: Path) -> None:
    root, cache = tmp_path / "skills", tmp_path / "cache"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    write_skill(root, "b", skill_md("beta", "book a flight"))
    emb = HashingEmbedder()
    r = SkillRetriever(folders=[root], embedders=[emb], cache_dir=cache)
    r.refresh()
    docs_first = emb.documents_embedded
    assert r.embedded_docs == 2
    assert r.refresh().empty and r.embedded_docs == 2  # unchanged: nothing re-embedded
    write_skill(root, "b", skill_md("beta", "book a flight or a train"))
    delta = r.refresh()
    assert len(delta.changed) == 1 and r.embedded_docs == 3
    # a new process (new retriever) with the same cache embeds no skill document
    emb2 = HashingEmbedder()
    r2 = SkillRetriever(folders=[root], embedders=[emb2], cache_dir=cache)
    r2.refresh()
    assert r2.embedded_docs == 0
    assert emb2.documents_embedded == 0  # the gate anchors come from the cache too
    assert docs_first == 2 + len(rmod.NULL_ANCHORS)
    # a torn cache file is re-embedded, not trusted
    for f in cache.rglob("*.npy"):
        f.write_bytes(b"garbage")
    r3 = SkillRetriever(folders=[root], embedders=[HashingEmbedder()], cache_dir=cache)
    r3.refresh()
    assert r3.embedded_docs == 2
    res = r3.retrieve("book a train")
    assert res.names[0] == "beta"


def test_vanished_folder_between_refreshes_drops_skills(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "convert currencies"))
    r = SkillRetriever(folders=[root], gate_thresholds={"lexical": 0.0})
    assert r.retrieve("convert currencies").names == ("alpha",)
    import shutil
    shutil.rmtree(root)
    assert len(r.refresh().removed) == 1
    assert r.retrieve("convert currencies").layer == "none"


def test_singleton_is_built_once_across_threads(monkeypatch: pytest.MonkeyPatch, hermes_home: Path) -> None:
    reset_skill_retriever()
    calls: list[int] = []
    real = rmod.build_retriever

    def counting(settings: object = None, **kw: object) -> SkillRetriever:
        calls.append(1)
        return real(settings, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(rmod, "build_retriever", counting)
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    from hermes_core.config import load_settings
    settings = load_settings(home=hermes_home).with_overrides(**{"skill_utils.embeddings": False})
    got: list[SkillRetriever] = []
    threads = [threading.Thread(target=lambda: got.append(get_skill_retriever(settings))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(g) for g in got}) == 1
    reset_skill_retriever()


def test_warm_up_in_background_builds_index() -> None:
    r = make(embedders=[HashingEmbedder()])
    t = r.warm_up(background=True)
    assert t is not None
    t.join(timeout=30)
    assert r.embedded_docs == len(SKILLS)


def test_render_hint_empty() -> None:
    assert render_hint([]) == ""
    assert "skill_view(name)" in render_hint([Skill("a", "b")])


def test_gate_keeps_scale_with_and_without_dense() -> None:
    """With z-score fusion, the fused top score of a clear match stays in the same range."""
    q = "extract text and tables from a PDF document"
    without = make().retrieve(q)
    with_dense = make(embedders=[HashingEmbedder()]).retrieve(q)
    assert without.names[0] == with_dense.names[0] == "pdf-extract"
    assert np.isclose(without.scores[0], with_dense.scores[0], rtol=0.5)


def test_background_warm_up_serves_lexical_layers_while_dense_embeds() -> None:
    release = threading.Event()

    class Slow(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            assert release.wait(timeout=30)
            return super().embed_documents(texts)

    r = make(embedders=[Slow("test:slow")])
    t = r.warm_up(background=True)
    assert t is not None
    res = r.retrieve("extract tables from a pdf")  # not blocked by the embedding
    assert res.names[0] == "pdf-extract" and "dense" not in res.answered
    release.set()
    t.join(timeout=30)
    res = r.retrieve("extract tables from a pdf")
    assert "dense" in res.answered


def test_hint_lists_only_skills_above_the_catalog_mean() -> None:
    res = make(embedders=[HashingEmbedder()]).retrieve("extract the tables from this PDF")
    assert res.names[0] == "pdf-extract"
    assert all(s > 0 for s in res.scores) and len(res.skills) < len(SKILLS)
    assert len(res.candidates) == len(SKILLS)  # the full ranking stays available for eval/explain


def test_english_model_abstains_over_a_mostly_chinese_catalog() -> None:
    zh = [Skill(f"App.Feature.action{i}", d) for i, d in enumerate(
        ["查询车辆的交通违章记录", "创建会议并邀请参会人", "预约汽车试驾", "计算贷款方案", "查看天气预报"])]
    en = HashingEmbedder("test:en", english_only=True)
    r = make(skills=zh, embedders=[en])
    res = r.retrieve("check my traffic violations")
    assert "dense" not in res.answered  # English query, but the catalog is Chinese
    assert r.dense[0].doc_coverage == 0.0
    r2 = make(skills=zh, embedders=[en, HashingEmbedder("test:multi")])
    assert r2.retrieve("check my traffic violations").gate.rule == "dense:test:multi"  # type: ignore[union-attr]


def test_uncovered_documents_get_a_neutral_dense_score() -> None:
    r = make(embedders=[HashingEmbedder("test:en", english_only=True)])
    r.refresh()
    assert r.dense[0].doc_coverage == pytest.approx(4 / 6)
    sims = r.dense[0].similarities("send an email")
    covered = r.dense[0].covered
    assert not covered.all()
    assert np.allclose(sims[~covered], sims[covered].mean())
    assert "dense" in r.retrieve("send an email").answered
