"""Tests of ``hermes_core/retrieval/singleton.py``: a retriever built from settings (a home's
skills folder, mapping files, tuning), and the process-wide one built once across threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.config import load_settings
from hermes_core.retrieval import singleton
from hermes_core.retrieval.fusion import GateWeights
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.singleton import build_retriever, get_skill_retriever, reset_skill_retriever
from hermes_core.testing.retrieval import skill_md, write_skill


def test_singleton_is_built_once_across_threads(monkeypatch: pytest.MonkeyPatch, hermes_home: Path) -> None:
    reset_skill_retriever()
    calls: list[int] = []
    real = singleton.build_retriever

    def counting(settings: object = None, **kw: object) -> SkillRetriever:
        calls.append(1)
        return real(settings, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(singleton, "build_retriever", counting)
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


def test_build_retriever_from_settings_with_trigger_and_synonym_files(hermes_home: Path,
                                                                     tmp_path: Path) -> None:
    write_skill(hermes_home / "skills", "pdf", skill_md("pdf-extract", "Extract text from PDF files",
                                                         body="Use pdftotext -layout."))
    extra = tmp_path / "more"
    write_skill(extra, "mail", skill_md("email-send", "Send an email"))
    (tmp_path / "t.yaml").write_text("pdf-extract: [抽取PDF, pdf to text]\nunknown-skill: x\n",
                                     encoding="utf-8")
    (tmp_path / "s.yaml").write_text("email-send: drop a line\n", encoding="utf-8")
    settings = load_settings({"skill_utils": {
        "folders": [str(extra)], "triggers_file": str(tmp_path / "t.yaml"),
        "synonyms_file": str(tmp_path / "s.yaml"), "embeddings": False, "top_k": 3,
        "weights": {"bm25": 0.5}, "fusion": "rrf", "gate_thresholds": {"lexical": 0.0}}},
        home=hermes_home)
    r = build_retriever(settings, home=hermes_home)
    assert [s.name for s in r.skills] == ["email-send", "pdf-extract"]
    assert r.top_k == 3 and r.fusion == "rrf" and r.weights["bm25"] == 0.5
    block, res = r.select("please convert this pdf to text")
    assert res.layer == "L1" and block.startswith("## Auto-loaded Skill: pdf-extract")
    assert "pdftotext -layout" in block
    _, res = r.select("drop a line to my boss")
    assert res.names[0] == "email-send" and res.gate is not None and res.gate.rule == "synonym-phrase"


def test_settings_reach_the_retriever(hermes_home: Path) -> None:
    s = load_settings({"skill_utils": {"embeddings": False, "hint_ratio": 0.8, "hint_margin": 0.25,
                                       "gate_weights": {"m": {"anchor_mean": 1.0}}}}, home=hermes_home)
    r = build_retriever(s, home=hermes_home)
    assert r.hint_ratio == 0.8 and r.hint_margin == 0.25
    assert r.gate_weights["m"] == GateWeights(0.5, 1.0, 0.0)
    assert "st:all-MiniLM-L6-v2" in r.gate_weights  # defaults kept alongside


def test_a_child_forked_while_a_thread_was_building_the_retriever_builds_one(
        hermes_home: Path, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    reset_skill_retriever()
    settings = load_settings(home=hermes_home).with_overrides(**{"skill_utils.embeddings": False})
    try:
        with held_by_a_thread(singleton._singleton_lock):
            got = in_forked_child(lambda: type(get_skill_retriever(settings)).__name__)
        assert got == "SkillRetriever"
    finally:
        reset_skill_retriever()
