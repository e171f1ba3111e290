"""The lexical gate's calibration kept up to date through edits equals one computed from scratch."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import calibration as cal
from hermes_core.retrieval.bm25 import BM25Index, lexical_scores, query_terms
from hermes_core.retrieval.glossary import Glossary
from hermes_core.retrieval.lexical_update import LexicalMemo, calibrate_lexical_memo
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder
from hermes_core.types import Skill
from tests.retrieval.conftest import write_catalog

# Words of the reference requests too, so that edits move the idf of words they hold; the
# glossary's pairs make an edit that adds or removes a word change what a request expands to.
WORDS = ["weather", "flight", "meeting", "music", "recipe", "email", "translate", "news", "joke",
         "invoice", "playlist", "天气", "会议", "音乐", "新闻", "create", "cancel", "export", "report"]
GLOSSARY = Glossary.parse("weather | forecast | 天气\nmeeting | 会议 | calendar\nmusic | 音乐 | song\n"
                          "news | 新闻 | headlines\ninvoice | bill | 发票\n")
EXPAND = GLOSSARY.expansions


def _skill(i: int, words: Sequence[int], revision: int = 0) -> Skill:
    text = " ".join(WORDS[w % len(WORDS)] for w in words)
    return Skill(f"skill-{i}", f"{text.capitalize()} for the user, revision {revision}.")


def _calibrate(skills: Sequence[Skill], memo: LexicalMemo) -> cal.LexicalCalibration:
    bm25 = BM25Index(skills)
    pseudo = [t for i in cal.pseudo_sample(skills) for t in cal.pseudo_queries(skills[i])]
    return calibrate_lexical_memo("k", bm25, skills, pseudo, EXPAND, memo)


def _assert_rows_exact(skills: Sequence[Skill], memo: LexicalMemo) -> None:
    """Every kept or rescored request's share is, to the bit, the share scored whole now."""
    bm25 = BM25Index(skills)
    pseudo = [t for i in cal.pseudo_sample(skills) for t in cal.pseudo_queries(skills[i])]
    assert set(memo.rows) == set(cal.gate_requests()) | set(pseudo)
    for text, row in memo.rows.items():
        assert row.share == lexical_scores(bm25, text, EXPAND)[1], text


def _reference(skills: Sequence[Skill]) -> cal.LexicalCalibration:
    """What the retriever computed before any state was kept: every request scored whole."""
    bm25 = BM25Index(skills)
    pseudo = [t for i in cal.pseudo_sample(skills) for t in cal.pseudo_queries(skills[i])]
    return cal.calibrate_lexical("k", lambda q: lexical_scores(bm25, q, EXPAND)[1], pseudo, skills,
                                 lambda q: cal.known_words(bm25, query_terms(bm25, q, EXPAND)))


WORD_LISTS = st.lists(st.integers(0, len(WORDS) - 1), min_size=1, max_size=6)
OPS = st.lists(st.tuples(st.sampled_from(["edit", "edit", "edit", "edit2", "add", "delete"]),
                         st.floats(0, 1, exclude_max=True), WORD_LISTS), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(start=st.lists(WORD_LISTS, min_size=2, max_size=25), ops=OPS)
def test_a_calibration_updated_through_edits_equals_one_computed_from_scratch(
        start: list[list[int]], ops: list[tuple[str, float, list[int]]]) -> None:
    skills = [_skill(i, w) for i, w in enumerate(start)]
    memo = LexicalMemo()
    _calibrate(skills, memo)
    made = len(skills)
    for step, (op, where, words) in enumerate(ops, start=1):
        at = int(where * len(skills))
        updates, names = memo.updated, [s.name for s in skills]
        if op.startswith("edit"):
            skills[at] = _skill(int(skills[at].name.split("-")[1]), words, step)
            if op == "edit2":   # two skills edited in one refresh
                other = (at + 1) % len(skills)
                skills[other] = dataclasses.replace(skills[other], description=skills[at].description)
        elif op == "add":
            skills.insert(at, _skill(made, words, step))
            made += 1
        elif len(skills) > 1:
            del skills[at]
        got, want = _calibrate(skills, memo), _reference(skills)
        assert got.threshold == want.threshold      # the same shares, so the same bits
        assert got.report == want.report
        assert (got.languages, got.size, got.generic) == (want.languages, want.size, want.generic)
        # an edit (or nothing: a delete of the last skill is not done) is an update; adds and
        # deletes calibrate whole
        assert memo.updated == updates + (names == [s.name for s in skills])
        _assert_rows_exact(skills, memo)


def test_one_edit_rescores_only_the_requests_it_can_move_and_keeps_the_thresholds_exact() -> None:
    skills = [_skill(i, [i, i + 3, i + 7]) for i in range(40)]
    memo = LexicalMemo()
    _calibrate(skills, memo)
    rows = len(memo.rows)
    skills[5] = _skill(5, [2, 11], revision=1)   # flight + invoice: moves the df of a few words
    got = _calibrate(skills, memo)
    assert memo.updated == 1
    assert 0 < memo.rescored < rows / 4
    assert got.threshold == _reference(skills).threshold
    assert got.generic is None                    # 40 skills: the share decides alone
    _assert_rows_exact(skills, memo)


def test_a_request_whose_best_skill_was_edited_is_scored_again() -> None:
    # the reference's weather requests are best on skill-0; editing it to another word entirely
    # leaves no moved word in a request that met only the weather skill's other words
    skills = [_skill(0, [0, 0, 0]), _skill(1, [0, 17]), _skill(2, [4, 5])]
    memo = LexicalMemo()
    _calibrate(skills, memo)
    skills[0] = dataclasses.replace(skills[0], description="Weather weather for the user, revision 9.")
    got = _calibrate(skills, memo)
    assert memo.updated == 1
    assert got.threshold == _reference(skills).threshold
    assert got.report == _reference(skills).report
    _assert_rows_exact(skills, memo)


def test_another_glossary_or_renamed_skills_calibrate_whole() -> None:
    skills = [_skill(i, [i, i + 1]) for i in range(6)]
    memo = LexicalMemo()
    _calibrate(skills, memo)
    bm25 = BM25Index(skills)
    calibrate_lexical_memo("k", bm25, skills, [], Glossary.parse("joke | 笑话\n").expansions, memo)
    renamed = [dataclasses.replace(skills[0], name="other"), *skills[1:]]
    _calibrate(renamed, memo)
    assert memo.updated == 0


def _share_after_edit(before: list[str], after: list[str], request: str) -> tuple[float, float, float]:
    """``request``'s share kept through an edit of ``before`` into ``after`` (one skill differs),
    scored whole on ``after``, and on ``before``."""
    def skills(texts: list[str]) -> list[Skill]:
        return [Skill(f"s{i}", t) for i, t in enumerate(texts)]
    memo = LexicalMemo()
    calibrate_lexical_memo("k", BM25Index(skills(before)), skills(before), [request], EXPAND, memo)
    then = memo.rows[request].share
    calibrate_lexical_memo("k", BM25Index(skills(after)), skills(after), [request], EXPAND, memo)
    assert memo.updated == 1
    return memo.rows[request].share, lexical_scores(BM25Index(skills(after)), request, EXPAND)[1], then


def test_a_request_whose_best_skill_held_its_words_only_verbatim_is_scored_again() -> None:
    # "Weatherproof raincoat" holds weather and rain as substrings only, and beats the skills that
    # have them as words; edited away, no df of the request's words moved
    got, want, then = _share_after_edit(["Weatherproof raincoat", "Weather", "Rain"],
                                        ["Camping tents", "Weather", "Rain"], "weather rain")
    assert got == want != then


def test_a_request_an_edited_skill_now_holds_verbatim_is_scored_again() -> None:
    got, want, then = _share_after_edit(["Camping tents", "Weather", "Rain"],
                                        ["Weatherproof raincoat", "Weather", "Rain"], "weather rain")
    assert got == want != then


def test_a_request_whose_glossary_expansion_an_edit_changed_is_scored_again() -> None:
    # "forecast" is no skill's word: the request expands to "weather" once a skill has it
    got, want, then = _share_after_edit(["Camping tents", "Rain gear"],
                                        ["Weather tents", "Rain gear"], "forecast")
    assert got == want != then


def test_a_retriever_refreshed_through_edits_ranks_as_one_built_from_scratch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.retrieval import bm25 as bm25_mod
    from hermes_core.retrieval.token_memo import TokenMemo

    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    write = partial(write_catalog, path)
    write(skills)
    kept = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()], cache_dir=tmp_path / "kept")
    kept.refresh()
    first = next(iter(skills))
    steps = [("edit", first, skills[first] + " It also reads archived invoices."),
             ("add", "receipt-scanner", "Scan a paper receipt and file it as an expense"),
             ("delete", first, ""), ("add", "invoice-pdf", "Extract the tables of an invoice PDF")]
    queries = ["extract tables from an invoice", "scan my receipt", "book a flight to Paris",
               "archived invoices", "查询交通违章", "what's the weather like"]
    for op, name, text in steps:
        if op == "delete":
            del skills[name]
        else:
            skills[name] = text
        write(skills)
        kept.refresh()
        monkeypatch.setattr(bm25_mod, "_MEMO", TokenMemo())   # from scratch: nothing remembered
        fresh = SkillRetriever(catalogs=[path], embedders=[HashingEmbedder()],
                               cache_dir=tmp_path / f"fresh-{len(skills)}-{op}")
        fresh.refresh()
        # the lexical gate's calibration is updated through the edit (lexical_update), to the bit
        assert kept._lexical_memo.updated == 1
        assert kept._lexical_cal is not None and fresh._lexical_cal is not None
        assert kept._lexical_cal.threshold == fresh._lexical_cal.threshold
        assert kept._lexical_cal.report == fresh._lexical_cal.report
        for q in queries:
            a, b = kept.retrieve(q), fresh.retrieve(q)
            assert (a.names, a.candidates, a.gated) == (b.names, b.candidates, b.gated)
            # the dense gate's calibration is updated per changed skill (gate_state): its per-skill
            # statistics come from a product over the changed skills' columns, equal to the whole
            # catalog's up to BLAS's rounding (OpenBLAS picks its kernel by the matrix's shape), so
            # the fused scores too
            assert a.scores == pytest.approx(b.scores, rel=1e-12, abs=1e-12)
            assert a.contributions.keys() == b.contributions.keys()
            for skill, parts in a.contributions.items():
                assert parts == pytest.approx(b.contributions[skill], rel=1e-12, abs=1e-12)
    assert kept.retrieve("scan my receipt").names[:1] == ("receipt-scanner",)
