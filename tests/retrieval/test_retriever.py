"""Tests of ``hermes_core/retrieval/retriever.py``.

SkillRetriever end to end with a test embedder: abstention, gate, bad input, caching, rendering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.agent.skill_tool import SkillSelection
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.retrieval import crosslingual as xl
from hermes_core.retrieval import retriever as retriever_mod
from hermes_core.retrieval import retriever as rmod
from hermes_core.retrieval.bm25 import BM25Index
from hermes_core.retrieval.dense import skill_parts, with_parts
from hermes_core.retrieval.fusion import NULL_ANCHORS, GateWeights
from hermes_core.retrieval.retriever import (
    DEFAULT_GATE_WEIGHTS,
    DENSE_QUERY_TOKENS,
    SkillRetriever,
    as_retrieval_query,
    is_follow_up,
    ranking_text,
    render,
)
from hermes_core.testing import FakeClock
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder, skill_md, write_skill
from hermes_core.tokenize import estimate_tokens
from hermes_core.types import Message, RetrievalQuery, Skill
from tests.retrieval.conftest import SKILLS, TOPIC_SKILLS, hashing_retriever


def make(**kw: object) -> SkillRetriever:
    kw.setdefault("skills", SAMPLE_SKILLS)
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
    block, res = SkillRetriever(load_settings({}).skill_utils, skills=SAMPLE_SKILLS).select("pdf")
    assert res.layer == "disabled" and len(res.skills) == len(SAMPLE_SKILLS)
    assert all(f"- {s.name}:" in block for s in SAMPLE_SKILLS)


def test_disabled_by_setting_returns_full_list() -> None:
    block, res = make(enabled=False).select("pdf")
    assert res.layer == "disabled" and block.startswith("## Available Skills")


def test_short_follow_up_uses_history() -> None:
    r = make(gate_thresholds={"lexical": 0.3})
    hist = [Message("user", "extract the tables from the PDF report"), Message("assistant", "Done.")]
    assert r.retrieve("and images?", hist).names[:1] == ("pdf-extract",)


def test_top_k_and_deterministic_order() -> None:
    r = make(top_k=2, hint_ratio=0.0)   # no closeness cut: top_k alone bounds the list
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
    parts_first = sum(len(skill_parts(s)) for s in r.skills)   # name words and sentences, apart
    assert r.embedded_docs == 2 and r.dense[0].embedded_parts == parts_first == 4
    assert r.refresh().empty and r.embedded_docs == 2  # unchanged: nothing re-embedded
    write_skill(root, "b", skill_md("beta", "book a flight or a train"))
    delta = r.refresh()
    assert len(delta.changed) == 1 and r.embedded_docs == 3
    # a new process (new retriever) with the same cache embeds no skill document
    emb2 = HashingEmbedder()
    r2 = SkillRetriever(folders=[root], embedders=[emb2], cache_dir=cache)
    r2.refresh()
    assert r2.embedded_docs == 0
    assert emb2.documents_embedded == 0  # the gate anchors and the skills' parts come from the cache too
    assert r2.dense[0].embedded_parts == 0
    assert docs_first == 2 + len(NULL_ANCHORS) + parts_first
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


def test_gate_keeps_scale_with_and_without_dense() -> None:
    """With z-score fusion, the fused top score of a clear match stays in the same range."""
    q = "extract text and tables from a PDF document"
    without = make().retrieve(q)
    with_dense = make(embedders=[HashingEmbedder()]).retrieve(q)
    assert without.names[0] == with_dense.names[0] == "pdf-extract"
    assert np.isclose(without.scores[0], with_dense.scores[0], rtol=0.5)


def test_hint_lists_only_skills_above_the_catalog_mean() -> None:
    res = make(embedders=[HashingEmbedder()]).retrieve("extract the tables from this PDF")
    assert res.names[0] == "pdf-extract"
    assert all(s > 0 for s in res.scores) and len(res.skills) < len(SAMPLE_SKILLS)
    assert len(res.candidates) == len(SAMPLE_SKILLS)  # the full ranking stays available for eval/explain


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


def test_retrieve_during_refresh_never_crashes(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for i in range(30):
        write_skill(root, f"s{i}", skill_md(f"skill-{i}", f"does task number {i} with files"))
    r = SkillRetriever(folders=[root], embedders=[HashingEmbedder()], gate_thresholds={"dense": -1})
    r.refresh()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                res = r.retrieve("task number 7 with files")
                assert len(res.skills) <= 5
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(15):
        write_skill(root, f"n{i}", skill_md(f"new-{i}", f"brand new task {i}"))
        r.refresh()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(r.skills) == 45


def test_without_jieba_l1_and_dense_still_work(tmp_path: Path) -> None:
    script = (
        "from hermes_core.testing.retrieval import SAMPLE_SKILLS as SKILLS, HashingEmbedder\n"
        "from hermes_core.tokenize import jieba_available\n"
        "from hermes_core.retrieval.retriever import SkillRetriever\n"
        "assert not jieba_available()\n"
        "r = SkillRetriever(skills=SKILLS, embedders=[HashingEmbedder()], gate_thresholds={'dense': -1})\n"
        "a = r.retrieve('帮我查违章')\n"
        "b = r.retrieve('创建会议')\n"
        "print(a.layer, a.names[0], 'dense' in b.answered, b.names[0])\n"
    )
    env = {**os.environ, "HERMES_DISABLE_JIEBA": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                         os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["L1", "Navigation.TrafficViolations.queryViolation", "True",
                                  "Calendar.Meeting.createMeeting"]


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_skills_search_top_k_must_be_a_positive_integer(value: str, tmp_path: Path, hermes_home: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_core.cli.main import main
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"name": "a", "description": "convert currencies"}) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["skills", "search", "convert currencies", "--catalog", str(p), "--no-embeddings",
              "--top-k", value])
    assert exc.value.code == 2
    assert "--top-k" in capsys.readouterr().err


def test_skills_search_top_k_one_returns_one(tmp_path: Path, hermes_home: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_core.cli.main import main
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"name": f"s{i}", "description": f"convert currencies {i}"}) + "\n"
                         for i in range(4)), encoding="utf-8")
    assert main(["skills", "search", "convert currencies", "--catalog", str(p), "--no-embeddings",
                 "--top-k", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["skills"]) == 1


def test_dense_layer_mid_refresh_abstains_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "skills"
    write_skill(root, "alpha", skill_md("alpha", "convert currencies"))
    r, _ = hashing_retriever(root, tmp_path / "cache")
    r.refresh()
    write_skill(root, "beta", skill_md("beta", "book a flight"))
    # the lexical layers are swapped in first; the dense layer has not embedded 'beta' yet
    monkeypatch.setattr(r, "_build_dense", lambda d, skills, digest=None: None)
    r.refresh()
    with caplog.at_level("DEBUG"):
        res = r.retrieve("book a flight")
    assert "dense" not in res.answered and res.candidates[0] == "beta"
    assert not [rec for rec in caplog.records if rec.levelname == "WARNING"]  # expected, not a fault


def test_minilm_has_fitted_gate_weights() -> None:
    w = DEFAULT_GATE_WEIGHTS["st:all-MiniLM-L6-v2"]
    assert w.anchor_mean > 0 and w.catalog_mean > 0  # off-topic-like lowers, catalog-like raises


def test_retriever_feeds_anchor_and_catalog_means_to_the_gate() -> None:
    emb = HashingEmbedder("test:en")
    weights = {"test:en": {"anchor_max": 0.3, "anchor_mean": 1.5, "catalog_mean": 2.0}}
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb], gate_thresholds={"test:en": -10.0},
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


def test_retriever_hint_is_shorter_with_a_strict_cut() -> None:
    q = "extract the tables from this PDF"
    loose = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], hint_ratio=0.0,
                           hint_margin=100.0, gate_thresholds={"lexical": 0.0, "dense": -1.0})
    strict = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], hint_ratio=1.0,
                            hint_margin=0.0, gate_thresholds={"lexical": 0.0, "dense": -1.0})
    a, b = loose.retrieve(q), strict.retrieve(q)
    assert a.names[0] == b.names[0] == "pdf-extract"
    assert b.names == ("pdf-extract",) and len(a.names) >= len(b.names)
    assert a.candidates == b.candidates  # the ranking is untouched; only the hint is cut


def test_retriever_switches_query_persistence_for_every_dense_layer(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder("a"), HashingEmbedder("b")],
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
                             for s in SAMPLE_SKILLS) + "\n", encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"query": "extract the text of a pdf", "gold": "pdf-extract"}) + "\n",
                 encoding="utf-8")
    for flag, expected in ((["--query-cache"], True), ([], False)):
        assert main(["skills", "eval", "--catalog", str(cat), "--queries", str(q), "--no-embeddings",
                     "--json", *flag]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["query_cache"] is expected and data["hint_len_mean"] >= 1.0


def test_disabled_retrieval_lets_skill_view_find_a_skill_added_mid_chat(tmp_path: Path,
                                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hermes_core.config import load_settings
    monkeypatch.setenv("HERMES_DISABLE_SKILL_RETRIEVAL", "1")   # config maps it onto the setting
    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "First skill."))
    r = SkillRetriever(load_settings({}).skill_utils, folders=[root], embedders=[HashingEmbedder()],
                       clock=FakeClock(100.0))
    sel = SkillSelection(r)
    assert "alpha" in sel.select("hi", [], "hi")
    write_skill(root, "b", skill_md("beta", "Second skill."))
    assert "beta" in sel.select("hi", [], "hi")      # the full list is read every turn
    found = sel.find("beta")
    assert found is not None and found.name == "beta"
    assert not r._built                               # no index (and no model) was built


def test_a_refresh_that_failed_midway_is_completed_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path, "a", skill_md("alpha", "Convert currency exchange rates"))
    write_skill(tmp_path, "b", skill_md("beta", "Book a flight ticket"))
    r = SkillRetriever(folders=[tmp_path])
    assert r.retrieve("currency exchange rates").names == ("alpha",)
    write_skill(tmp_path, "a", skill_md("alpha", "Order a pizza delivery"))

    def broken(*a: Any, **kw: Any) -> Any:
        raise MemoryError("out of memory while indexing")

    monkeypatch.setattr(retriever_mod.BM25Index, "updated", broken)
    with pytest.raises(MemoryError):
        r.refresh()
    monkeypatch.undo()
    r.refresh()  # the skill index already holds the edit: the layers must be rebuilt all the same
    assert r.retrieve("pizza delivery").names == ("alpha",)
    assert r.retrieve("currency exchange rates").names == ()


def test_synonyms_file_naming_an_unknown_skill_is_warned_like_triggers(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging
    r = SkillRetriever(skills=SKILLS, synonyms={"wether": ["is it raining"]},
                       triggers={"emial": ["send mail"]})
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.retriever"):
        r.refresh()
    assert "triggers file names unknown skill(s): emial" in caplog.text
    assert "synonyms file names unknown skill(s): wether" in caplog.text


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.query_lengths: list[int] = []
        self.query_tokens: list[int] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.query_lengths.append(len(text))
        self.query_tokens.append(estimate_tokens(text))
        return super().embed_query(text)


def test_long_message_embeds_only_its_head() -> None:
    emb = Recording()
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb])
    res = r.retrieve("创建会议并邀请参会人，" + "今天天气不错我们去公园散步吧。" * 300)
    assert "dense" in res.answered
    assert emb.query_lengths and max(emb.query_lengths) < 600  # of 4,511 characters
    assert max(emb.query_tokens) <= DENSE_QUERY_TOKENS


def test_short_message_is_embedded_whole() -> None:
    emb = Recording()
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb])
    r.refresh()
    emb.query_lengths.clear()   # the gate calibration's reference queries, embedded at index time
    r.retrieve("extract the tables from this pdf")
    assert emb.query_lengths == [len("extract the tables from this pdf")]


def test_english_keeps_more_characters_than_the_english_model_reads() -> None:
    # MiniLM reads 256 word pieces (~1,000 characters): a 1,500-character English message reaches
    # it whole, as before, so the English dev numbers and gate cannot move
    emb = Recording()
    text = "extract the tables from this pdf and then " * 36  # 1,512 characters
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[emb])
    r.refresh()
    emb.query_lengths.clear()   # the gate calibration's reference queries, embedded at index time
    r.retrieve(text)
    assert emb.query_lengths == [len(text.strip())]


def lexical(**tuning: object) -> SkillRetriever:
    tuning.setdefault("gate_thresholds", {"lexical": 0.0})
    return SkillRetriever(skills=TOPIC_SKILLS, **tuning)  # type: ignore[arg-type]


def test_history_does_not_outvote_a_message_that_matches_other_skills() -> None:
    r = lexical()
    hist = [Message("user", "git rebase stopped with a conflict, resolve it"), Message("assistant", "ok")]
    res = r.retrieve(RetrievalQuery.of("my sql query is slow, which index?", hist))
    assert res.names[0] == "sql-tuning" and "git-rebase" not in res.names
    assert res.contributions["sql-tuning"]   # the message alone scored it


def test_history_breaks_a_tie_the_message_leaves() -> None:
    r = lexical()
    msg = "show me the weather forecast today"   # both weather skills score exactly the same
    alone = r.retrieve(msg)
    assert alone.scores[0] == alone.scores[1]
    assert alone.names[:2] == ("weather-city", "weather-sea")   # index order without history
    hist = [Message("user", "we sail across the sea tomorrow"), Message("assistant", "nice")]
    res = r.retrieve(RetrievalQuery.of(msg, hist))
    assert res.names[:2] == ("weather-sea", "weather-city")
    assert res.scores == alone.scores          # the history changed the order, not the scores


def test_short_follow_up_reads_the_question_it_follows() -> None:
    r = lexical()
    hist = [Message("user", "extract the tables from this PDF file"), Message("assistant", "Done."),
            Message("user", "why?"), Message("assistant", "Because.")]
    q = RetrievalQuery.of("and images?", hist)
    assert q.previous_users == ("why?", "extract the tables from this PDF file")
    assert ranking_text("and images?", q) == "extract the tables from this PDF file\nwhy?\nand images?"
    assert r.retrieve(q).names[:1] == ("pdf-extract",)


def test_follow_up_rule_counts_words_in_english_and_characters_in_chinese() -> None:
    assert is_follow_up("why?") and is_follow_up("and in Chinese?") and is_follow_up("为什么？")
    assert not is_follow_up("my sql query is slow") and not is_follow_up("帮我查一下最近的违章记录")


def test_a_trigger_fires_on_the_message_only_never_on_history() -> None:
    r = lexical()
    hist = [Message("user", "I hit a rebase conflict"), Message("assistant", "Fixed.")]
    res = r.retrieve(RetrievalQuery.of("now speed up my slow sql query", hist))
    assert res.layer == "L5" and res.names[0] == "sql-tuning"
    assert r.retrieve(RetrievalQuery.of("another rebase conflict", hist)).layer == "L1"


def test_plain_message_and_history_become_one_query() -> None:
    hist = [Message("user", "first"), Message("assistant", "reply"), Message("tool", "x")]
    q = as_retrieval_query("second", hist)
    assert q == RetrievalQuery("second", ("reply", "first"), ("first",))
    assert as_retrieval_query(q) is q


def test_skill_list_and_trigger_hit_load_no_model(counting_embedder) -> None:  # type: ignore[no-untyped-def]
    r = SkillRetriever(skills=TOPIC_SKILLS, embedders=[counting_embedder])
    sel = SkillSelection(r)
    assert sel.has_skills()
    assert sorted(s.name for s in r.skills) == sorted(s.name for s in TOPIC_SKILLS)
    res = r.retrieve("I have a rebase conflict")
    assert res.layer == "L1"
    assert counting_embedder.calls == []          # nothing embedded: no model would have loaded
    res = r.retrieve("speed up my slow sql query")
    assert res.layer == "L5" and "dense" in res.answered
    assert ("documents", len(TOPIC_SKILLS)) in counting_embedder.calls


def test_dense_layer_embeds_the_message_not_the_history(counting_embedder) -> None:  # type: ignore[no-untyped-def]
    r = SkillRetriever(skills=TOPIC_SKILLS, embedders=[counting_embedder])
    hist = [Message("user", "x" * 250), Message("assistant", "y" * 250)]
    msg = "speed up my slow sql query"
    r.refresh()
    counting_embedder.calls.clear()   # the index build embeds the gate calibration's pseudo-queries
    r.retrieve(RetrievalQuery.of(msg, hist))
    queries = [n for kind, n in counting_embedder.calls if kind == "query"]
    assert queries == [len(msg)]


def test_gate_anchor_vectors_are_cached_with_the_skill_vectors(tmp_path, counting_embedder) -> None:  # type: ignore[no-untyped-def]
    first = SkillRetriever(skills=TOPIC_SKILLS, embedders=[counting_embedder], cache_dir=tmp_path)
    first.refresh()
    assert ("documents", len(NULL_ANCHORS)) in counting_embedder.calls
    counting_embedder.calls.clear()
    again = SkillRetriever(skills=TOPIC_SKILLS, embedders=[counting_embedder], cache_dir=tmp_path)
    again.refresh()
    assert counting_embedder.calls == []            # skills and anchors all came from the cache
    assert (again._anchors["test:counting"] == first._anchors["test:counting"]).all()


def test_usage_layer_alone_without_history_answers_nothing_instead_of_failing() -> None:
    from hermes_core.retrieval.usage import UsageLayer, UsageStore
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[], layers=("L6",), usage=UsageLayer(UsageStore(None)))
    res = r.retrieve("send the quarterly report to Bob")
    assert res.gated and res.skills == () and res.answered == ()
    assert res.gate is not None and res.gate.rule == "no-layer"


class LazyEmbedder(HashingEmbedder):
    """Loads its "model" on first use, like the real ones; ``gate`` (an Event) holds the load."""

    imports_torch = True

    def __init__(self, model_id: str, gate: threading.Event | None = None) -> None:
        super().__init__(model_id)
        self._model: object | None = None
        self.gate = gate

    def load(self) -> object:
        if self._model is None:
            assert self.gate is None or self.gate.wait(timeout=10), "the load was waited for"
            self._model = object()
        return self._model

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.load()
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.load()
        return super().embed_query(text)


def test_a_warm_restart_answers_with_the_loaded_model_while_the_torch_one_still_loads(tmp_path: Path) -> None:
    make(embedders=[LazyEmbedder("test:heavy"), HashingEmbedder("test:light")], cache_dir=tmp_path).refresh()
    release = threading.Event()
    heavy = LazyEmbedder("test:heavy", release)   # every vector cached; only the model is slow
    r = make(embedders=[heavy, HashingEmbedder("test:light")], cache_dir=tmp_path)
    t = r.warm_up(background=True)
    assert t is not None
    for _ in range(1000):
        if r.dense_status().startswith("ready"):
            break
        threading.Event().wait(0.01)
    assert r.dense_status() == "ready (test:light); loading test:heavy (ready ones answer)"
    res = r.retrieve("extract tables from a pdf")     # routed to the loaded model, not waiting
    assert "dense" in res.answered and heavy._model is None
    release.set()
    t.join(timeout=30)
    assert r.dense_status() == "ready (test:heavy, test:light)"
    assert r._dense_for("extract tables from a pdf") is r.dense[0]   # the preferred model again


def test_the_dense_layer_ranks_by_calibrated_cosine_plus_calibrated_part_score(tmp_path: Path) -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()], cache_dir=tmp_path,
                       layers=("L4",))
    r.refresh()
    query = "extract the tables from a pdf document"
    res = r.retrieve(query)
    d, c = r.dense[0], r._calibration["test:hashing"]
    sims, parts = d.similarities(query), d.part_similarities(query)
    # SAMPLE_SKILLS mixes English and Chinese descriptions: each raw score is read less its
    # description language's mean off-topic score (crosslingual.by_language)
    groups = xl.description_languages(r.skills)
    raw, praw = xl.by_language(sims, c.mean["en"], groups), xl.by_language(parts, c.part_mean["en"], groups)
    assert raw is not None and praw is not None
    want = with_parts(c.rank_scores(sims, "en", raw), c.part_rank(parts, "en", praw))
    z = (want - want.mean()) / want.std()
    for name, contribution in res.contributions.items():
        assert contribution["dense"] == pytest.approx(z[d.names.index(name)])


def test_a_bad_skill_file_is_warned_about_once_not_on_every_refresh(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "SKILL.md").write_text(
        "---\nname: good\ndescription: Fix docker containers that exit\n---\nbody\n", encoding="utf-8")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    r = SkillRetriever(folders=[tmp_path])
    with caplog.at_level("WARNING", logger="hermes_core.retrieval.skills"):
        r.refresh(dense=False)
        r.load_catalog()
        r.refresh(dense=False)
    assert [m for m in caplog.messages if "skipping skill" in m] == [
        f"skipping skill: {tmp_path / 'bad' / 'SKILL.md'}:2: front matter is not valid YAML"]
    assert [str(i) for i in r.issues] == [
        f"{tmp_path / 'bad' / 'SKILL.md'}:2: front matter is not valid YAML"]


def test_a_trigger_of_stopwords_only_is_warned_naming_the_skill(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging
    skills = [Skill("weather", "Get the weather forecast", triggers=("the", "weather forecast")),
              Skill("email", "Send an email")]
    r = SkillRetriever(skills=skills)
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.retriever"):
        r.refresh()
    assert "skill 'weather': trigger 'the' has no word but stopwords; ignored" in caplog.text
    assert r.retrieve("send the email").layer != "L1"
    assert r.retrieve("the weather forecast for Paris").names == ("weather",)


# A skill's own words outrank words another skill only has among its synonyms (no embeddings).
OWN_WORDS = [
    Skill("k8s-pods", "Diagnose Kubernetes pods stuck in CrashLoopBackOff with kubectl describe and events."),
    Skill("sql-tuning", "Speed up a slow SQL statement with EXPLAIN and the right index.",
          synonyms=("database query timeout", "which index should I add")),
    Skill("pdf-extract", "Extract text and tables from PDF files with pdfplumber.",
          synonyms=("read tables out of a pdf",)),
    Skill("py-profile", "Find where a Python program spends CPU time with cProfile.",
          synonyms=("find the bottleneck in a script", "python memory leak")),
    Skill("git-rebase", "Resolve conflicts that stop a git rebase.", synonyms=("undo a bad rebase",)),
    Skill("weather", "Forecast the weather for a city.", synonyms=("will it rain tomorrow",)),
    Skill("email-send", "Send an email message.", synonyms=("drop a line",)),
]


@pytest.mark.parametrize(("query", "gold"), [
    ("kubectl timeout", "k8s-pods"),            # timeout: a word of sql-tuning's synonyms only
    ("pdfplumber bottleneck", "pdf-extract"),   # bottleneck: a word of py-profile's synonyms only
    ("kubectl memory leak", "k8s-pods"),        # two synonym words against one of its own
    ("explain why it will rain", "sql-tuning"),   # rain: a word of a weather synonym
])
def test_a_skills_own_word_outranks_another_skills_synonym_words(query: str, gold: str) -> None:
    res = make(skills=OWN_WORDS).retrieve(query)
    assert res.answered == ("bm25", "synonyms")
    assert res.names[0] == gold


@pytest.mark.parametrize(("query", "gold"), [
    ("drop a line to Bob", "email-send"),             # only synonyms know the request
    ("my database query timeout again", "sql-tuning"),
    ("python memory leak", "py-profile"),              # its synonyms and its own word agree
    ("explain: will it rain tomorrow", "weather"),     # a whole phrase of the author's outranks a word
])
def test_synonyms_still_rank_what_no_description_word_reaches(query: str, gold: str) -> None:
    assert make(skills=OWN_WORDS).retrieve(query).names[0] == gold


def test_a_refresh_works_out_the_catalog_digest_once_for_every_gate_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.retrieval import calibration as cal

    calls: list[int] = []
    real = cal.catalog_digest

    def counted(skills: Any) -> str:
        calls.append(len(skills))
        return real(skills)
    monkeypatch.setattr(cal, "catalog_digest", counted)
    monkeypatch.setattr(rmod, "catalog_digest", counted)
    english = [s for s in SAMPLE_SKILLS if s.description.isascii()]   # Chinese judged across
    r = SkillRetriever(skills=english, embedders=[HashingEmbedder()], cache_dir=tmp_path)
    r.refresh()
    # three keys (the lexical gate, the one across languages, the dense gate): one digest
    assert r._lexical_cal is not None and r._translated_gate is not None and r._calibration
    assert calls == [len(english)]
    assert r._lexical_cal.key == cal.catalog_key("lexical", r.index.ordered())


EXAMPLE_SKILLS = Path(__file__).resolve().parents[2] / "examples" / "home" / "skills"


def test_a_lexical_only_turn_listing_several_skills_scores_the_catalog_once_and_cuts_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the evidence that a listed rival shares a word comes from the turn's one BM25 pass; it was
    # a second tokenisation and scoring of the request, and a second hint_cut
    r = SkillRetriever(folders=[str(EXAMPLE_SKILLS)], embedders=[])
    r.refresh()
    scored: list[int] = []
    cuts: list[int] = []
    score_array, cut = BM25Index.score_array, rmod.hint_cut

    def counted_scores(self: BM25Index, toks: Sequence[str]) -> np.ndarray:
        scored.append(len(toks))
        return score_array(self, toks)

    def counted_cut(*args: Any, **kw: Any) -> list[int]:
        cuts.append(1)
        return cut(*args, **kw)

    monkeypatch.setattr(BM25Index, "score_array", counted_scores)
    monkeypatch.setattr(rmod, "hint_cut", counted_cut)
    res = r.retrieve("my docker container crashes")
    assert not res.gated and res.names == ("docker-debugging", "kubernetes-pod-crashloop"), res.names
    assert len(scored) == 1 and len(cuts) == 1, (scored, cuts)
