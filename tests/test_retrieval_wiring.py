"""Settings -> retriever wiring, trigger/synonym files, concurrency, no-jieba degradation, eval maths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from retrieval_fixtures import SKILLS, HashingEmbedder, skill_md, write_skill

from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.retrieval.evaluate import LabeledQuery, calibrate, evaluate, reciprocal_rank, sample
from hermes_core.retrieval.retriever import SkillRetriever, build_retriever
from hermes_core.retrieval.synonyms import load_mapping_file


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


def test_mapping_file_errors_name_file_line_and_key(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("a: [1, 2\nb: c\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_mapping_file(p, "triggers")
    assert str(p) in str(e.value) and e.value.line is not None
    p.write_text("a: {x: 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="key 'a'"):
        load_mapping_file(p, "synonyms")
    p.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must map skill names"):
        load_mapping_file(p, "synonyms")
    with pytest.raises(ConfigError, match="not found"):
        load_mapping_file(tmp_path / "missing.yaml", "triggers")
    p.write_text("", encoding="utf-8")
    assert load_mapping_file(p, "triggers") == {}


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
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from retrieval_fixtures import SKILLS, HashingEmbedder\n"
        "from hermes_core.tokenize import jieba_available\n"
        "from hermes_core.retrieval.retriever import SkillRetriever\n"
        "assert not jieba_available()\n"
        "r = SkillRetriever(skills=SKILLS, embedders=[HashingEmbedder()], gate_thresholds={'dense': -1})\n"
        "a = r.retrieve('帮我查违章')\n"
        "b = r.retrieve('创建会议')\n"
        "print(a.layer, a.names[0], 'dense' in b.answered, b.names[0])\n"
    )
    env = {**os.environ, "HERMES_DISABLE_JIEBA": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["L1", "Navigation.TrafficViolations.queryViolation", "True",
                                  "Calendar.Meeting.createMeeting"]


def test_eval_metrics_and_calibration() -> None:
    assert reciprocal_rank(["a", "b", "c"], "c") == pytest.approx(1 / 3)
    assert reciprocal_rank(["a"] * 10 + ["g"], "g") == 0.0
    items = [LabeledQuery(str(i), "x") for i in range(10)]
    assert sample(items, 3, seed=7) == sample(items, 3, seed=7) and len(sample(items, 3)) == 3
    assert sample(items, None) == items
    cal = calibrate({"r": [float(i) for i in range(1, 101)]}, {"r": [0.0, 3.0, 10.0, 50.0]})
    assert cal["r"]["threshold_at_95_keep"] == pytest.approx(5.95)
    assert cal["r"]["reject_at_95_keep"] == 0.5
    r = SkillRetriever(skills=SKILLS, gate_thresholds={"lexical": 0.3})
    res = evaluate(r, [LabeledQuery("extract tables from pdf", "pdf-extract"),
                       LabeledQuery("帮我查违章", "Navigation.TrafficViolations.queryViolation")],
                   [LabeledQuery("what is love", None)])
    assert res["recall@1"] == 1.0 and res["gate_reject_rate"] == 1.0
    assert res["deciding_layer"] == {"L1": 1, "L5": 1}
