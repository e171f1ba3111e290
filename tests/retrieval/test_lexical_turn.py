"""Tests of ``hermes_core/retrieval/lexical_turn.py``: one BM25 pass a turn says what the separate
passes said (ranking scores, the gate's share, the crossing scores, the per-skill word evidence)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from hermes_core.retrieval import crosslingual as xl
from hermes_core.retrieval.bm25 import BM25Index, Expander, lexical_scores, query_terms
from hermes_core.retrieval.calibration import query_language
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexical_turn import lexical_turn
from hermes_core.retrieval.lexicon import Lexicon
from hermes_core.retrieval.result import lexical_evidence
from hermes_core.types import Skill

SKILLS = [Skill("docker-debugging", "Diagnose a Docker container that exits at start"),
          Skill("travel-itinerary", "规划出行：按天安排景点，几天几晚怎么安排"),
          Skill("会议纪要", "整理会议记录，列出待办事项"),
          Skill("parcel-tracking", "Track an express parcel delivery by its number")]


def _lexicon() -> Lexicon:
    return Lexicon("test", {"快递": ("express", "delivery"), "容器": ("container",)},
                   {"container": ("容器",), "meeting": ("会议",)})


def _glossary(text: str, toks: Sequence[str], known: Callable[[str], bool]) -> list[str]:
    return [t for t in ("exit",) if "退出" in text and known(t)]


def _word_matches(bm25: BM25Index, text: str, expand: Expander | None = None) -> np.ndarray:
    """The word evidence as a pass of its own: the request tokenised again, its words looked up."""
    return bm25.reached([t for t in query_terms(bm25, text, expand) if len(t) > 1])


def _crossing_scores(bm25: BM25Index, text: str, expand: xl.Expansion) -> np.ndarray | None:
    """The crossing scores as a pass of their own: the request scored again with the lexicon's
    words, for a request the expansion translates."""
    return lexical_scores(bm25, text, expand)[0] if expand.translates(query_language(text)) else None


@pytest.fixture
def index() -> BM25Index:
    return BM25Index(SKILLS)


@pytest.fixture
def expand() -> xl.Expansion:
    can = xl.readable(SKILLS)
    return xl.Expansion(Glossary(()), frozenset(lang for lang, m in can.items() if not m.all()), _lexicon)


@pytest.mark.parametrize(("text", "asked"), [
    ("my docker container exits", "my docker container exits"),
    ("我的容器一启动就退出了怎么办", "我的容器一启动就退出了怎么办"),   # the lexicon adds "contain"
    ("下周出行怎么安排", "下周出行怎么安排"),                         # crosses, adds no word
    ("where is my express parcel", "where is my express parcel, from the mail below"),
    ("", ""),
])
def test_one_pass_says_what_the_separate_passes_said(index: BM25Index, expand: xl.Expansion,
                                                     text: str, asked: str) -> None:
    # the hint's word evidence and the crossing scores used to be a tokenisation and a BM25
    # pass each; one pass must give the same bits
    turn = lexical_turn(index, text, asked, _glossary, expand)
    scores, _ = lexical_scores(index, text, _glossary)
    assert turn.scores.tolist() == scores.tolist()
    assert turn.share == lexical_scores(index, asked, _glossary)[1]
    assert list(turn.asked_terms) == query_terms(index, asked, _glossary)   # what the word rule reads
    crossed = _crossing_scores(index, text, expand)
    assert (turn.crossed is None) == (crossed is None)
    if crossed is not None and turn.crossed is not None:
        assert turn.crossed.tolist() == crossed.tolist()
    assert turn.words().tolist() == _word_matches(index, text, expand).tolist()
    synonyms = np.array([0.0, 0.0, 0.3, 0.0])
    assert turn.evidence(synonyms, None).tolist() == lexical_evidence(
        _word_matches(index, text, expand), synonyms, None).tolist()


def test_a_crossing_request_the_lexicon_adds_no_word_to_is_scored_once(
        index: BM25Index, expand: xl.Expansion, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    score_array = BM25Index.score_array

    def counted(self: BM25Index, toks: Sequence[str]) -> np.ndarray:
        calls.append(list(toks))
        return score_array(self, toks)

    monkeypatch.setattr(BM25Index, "score_array", counted)
    same = lexical_turn(index, "下周出行怎么安排", "下周出行怎么安排", _glossary, expand)
    assert expand.translates("zh") and same.crossed is same.scores and len(calls) == 1
    calls.clear()
    container = "我的容器一启动就退出了怎么办"
    more = lexical_turn(index, container, container, _glossary, expand)
    assert len(calls) == 2 and "contain" in calls[1] and "contain" not in calls[0]
    assert more.crossed is not None and more.crossed[0] > 0
    # the word evidence is read from the postings, not scored again
    calls.clear()
    assert more.words().tolist() == [True, False, False, False] and calls == []


def test_a_skill_met_through_single_characters_alone_shares_no_word_with_the_request() -> None:
    idx = BM25Index([Skill("travel-itinerary", "规划出行：按天安排景点，几天几晚怎么安排"),
                     Skill("docker-debugging", "Diagnose a Docker container that exits at start"),
                     Skill("notes", "整理会议记录，列出待办事项")])
    plain = xl.Expansion(Glossary(()))          # crosses no language
    container = "我的容器一启动就退出了怎么办"
    turn = lexical_turn(idx, container, container, Glossary(()).expansions, plain)
    assert turn.scores[0] > 0 and turn.scores[2] > 0             # 出, 怎, 么 / 出, 办
    assert turn.words().tolist() == [False, False, False]

    # the glossary's "container" and "exit" for 容器 and 退出 are words the docker skill shares
    def glossary(text: str, toks: Sequence[str], known: Callable[[str], bool]) -> list[str]:
        return [t for t in ("contain", "exit") if known(t)]

    assert lexical_turn(idx, container, container, glossary, plain).words().tolist() == [False, True, False]
    trip = "下周出行怎么安排"
    none = Glossary(()).expansions
    assert lexical_turn(idx, trip, trip, none, plain).words().tolist() == [True, False, False]  # 出行, 安排
    assert lexical_turn(idx, "", "", none, plain).words().tolist() == [False, False, False]
