"""The sparse BM25 index scores exactly as the formula in ``hermes_core.retrieval.bm25`` says."""

from __future__ import annotations

import logging
import math
import random
from collections import Counter
from collections.abc import Callable

import bm25s
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.retrieval.bm25 import (
    DIRECT_MATCH_BONUS,
    TF_SATURATION,
    BM25Index,
    bm25_tokens,
    idf,
    lexical_scores,
    light_stem,
    skill_tokens,
)
from hermes_core.retrieval.token_memo import TokenMemo
from hermes_core.tokenize import normalize
from hermes_core.types import Skill


def formula_scores(skills: list[Skill], query_tokens: list[str]) -> list[float]:
    """The module docstring's formula, term by term, straight from the skills' text."""
    n = len(skills)
    docs = [Counter(skill_tokens(s)) for s in skills]
    texts = [normalize(f"{s.name} {s.description}") for s in skills]
    out = [0.0] * n
    for tok in dict.fromkeys(query_tokens):
        df = sum(1 for d in docs if tok in d)
        if df == 0:
            continue
        w = idf(n, df)
        for i, d in enumerate(docs):
            tf = d.get(tok, 0)
            if tf:
                out[i] += w * tf / (tf + TF_SATURATION)
            if tok in texts[i]:
                out[i] += DIRECT_MATCH_BONUS * w
    return out


WORDS = [
    "apple", "red", "green", "sky", "blue", "mail", "email", "send", "query", "violation",
    "traffic", "report", "invoice", "pdf", "table", "extract", "rebase", "conflict", "git",
    "postgres", "slow", "index", "查询", "违章", "记录", "发票", "报销", "会议",
]


def random_catalog(rng: random.Random, n: int) -> list[Skill]:
    return [Skill(f"skill-{i}-{rng.choice(WORDS)}",
                  " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))) for i in range(n)]


def test_scores_equal_the_formula_to_floating_point_tolerance_on_random_catalogs() -> None:
    rng = random.Random(11)
    for size in (1, 7, 60):
        skills = random_catalog(rng, size)
        idx = BM25Index(skills)
        for _ in range(40):
            toks = bm25_tokens(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))))
            assert idx.score_array(toks).tolist() == pytest.approx(formula_scores(skills, toks), rel=1e-12)


def test_the_tf_idf_part_is_bm25s_lucene_with_no_length_normalisation() -> None:
    """Without the verbatim bonus, a skill's score is what bm25s gives for the same token lists."""
    rng = random.Random(5)
    skills = random_catalog(rng, 40)
    idx = BM25Index(skills)
    ref = bm25s.BM25(method="lucene", k1=TF_SATURATION, b=0.0, dtype="float64")
    ref.index([skill_tokens(s) for s in skills], create_empty_token=False, show_progress=False)
    texts = [normalize(f"{s.name} {s.description}") for s in skills]
    for _ in range(30):
        toks = [t for t in dict.fromkeys(bm25_tokens(" ".join(rng.sample(WORDS, 4)))) if idx.knows(t)]
        bonus = [sum(DIRECT_MATCH_BONUS * idx.token_idf(t) for t in toks if t in text) for text in texts]
        expected = ref.get_scores(toks) + np.asarray(bonus) if toks else np.zeros(len(skills))
        assert idx.score_array(toks).tolist() == pytest.approx(expected.tolist(), rel=1e-12)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_building_an_index_logs_nothing_below_the_level_the_application_chose() -> None:
    """bm25s sets its own logger to DEBUG: left so, the CLI printed "DEBUG bm25s: Building index
    from IDs" on every build at its default WARNING level."""
    root, handler = logging.getLogger(), _Records()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        BM25Index([Skill("mail-sender", "send an email"), Skill("weather", "forecast for a city")])
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert [r.getMessage() for r in handler.records if r.levelno < logging.WARNING] == []


def test_verbatim_bonus_counts_substrings_of_the_normalised_text() -> None:
    # "mail" is a token of the first skill and a substring (not a token) of the second's "email"
    skills = [Skill("mailer", "send mail"), Skill("inbox", "read EMAIL"), Skill("other", "sky")]
    idx = BM25Index(skills)
    w = idf(3, 1)
    s = idx.score_array(["mail"])
    expected = [w / (1 + TF_SATURATION) + DIRECT_MATCH_BONUS * w, DIRECT_MATCH_BONUS * w, 0.0]
    assert s.tolist() == pytest.approx(expected, rel=1e-12)
    assert s.tolist() == pytest.approx(formula_scores(skills, ["mail"]), rel=1e-12)


def test_tokens_no_skill_has_add_nothing_and_repeats_count_once() -> None:
    skills = [Skill("alpha", "red apple"), Skill("beta", "green apple apple")]
    idx = BM25Index(skills)
    (apple,) = bm25_tokens("apple")        # the index holds stems
    assert idx.score_array(["zebra"]).tolist() == [0.0, 0.0]
    assert idx.score_array([apple, apple, "zebra"]).tolist() == idx.score_array([apple]).tolist()
    assert idx.score_array([apple]).min() > 0.0
    assert idx.token_idf("zebra") == 0.0
    assert idx.token_idf(apple) == pytest.approx(math.log(1 + 0.5 / 2.5))
    assert idx.vocabulary_size == len({t for s in skills for t in skill_tokens(s)})


def test_empty_index_scores_an_empty_array() -> None:
    idx = BM25Index([])
    assert idx.score_array(["apple"]).shape == (0,) and idx.search("apple") == []


def test_every_skill_sharing_a_token_scores_above_zero() -> None:
    skills = random_catalog(random.Random(5), 30)
    idx = BM25Index(skills)
    toks = bm25_tokens("git rebase conflict")
    s = idx.score_array(toks)
    assert s.dtype == np.float64 and s.shape == (30,)
    sharing = {i for i, sk in enumerate(skills) if set(skill_tokens(sk)) & set(toks)}
    assert {int(i) for i in np.flatnonzero(s)} >= sharing


PAIRS = [("movie", "movies"), ("recipe", "recipes"), ("paper", "papers"), ("box", "boxes"),
         ("city", "cities"), ("query", "queries"), ("image", "images"), ("file", "files"),
         ("database", "databases"), ("invoice", "invoices"), ("meeting", "meetings"),
         ("address", "addresses"), ("policy", "policies"), ("class", "classes"),
         ("match", "matches"), ("wish", "wishes"), ("spreadsheet", "spreadsheets"),
         ("delivery", "deliveries"), ("package", "packages"), ("cite", "cited"),
         # -es after s and z, -f/-fe to -ves, -is to -es, and the common irregular plurals:
         # Porter2 leaves each pair apart (buse/bus, quizz/quiz, knive/knife, analys/analysi)
         ("bus", "buses"), ("quiz", "quizzes"), ("knife", "knives"), ("analysis", "analyses"),
         ("child", "children"), ("mouse", "mice"), ("man", "men"), ("woman", "women")]


@pytest.mark.parametrize(("singular", "plural"), PAIRS)
def test_singular_and_plural_share_a_stem(singular: str, plural: str) -> None:
    assert light_stem(singular) == light_stem(plural)


def test_short_words_cjk_and_identifiers_pass_through() -> None:
    assert light_stem("css") == "css" and light_stem("违章") == "违章" and light_stem("v2ray") == "v2ray"


def test_a_plural_query_matches_a_singular_description() -> None:
    idx = BM25Index([Skill("movie-finder", "Find a movie to watch tonight."),
                     Skill("recipe-box", "Suggest a recipe from what is in the fridge.")])
    assert idx.search("recommend some movies")[0].name == "movie-finder"
    assert idx.search("any recipes with eggs")[0].name == "recipe-box"
    assert bm25_tokens("recipes") == bm25_tokens("recipe")


def test_a_query_sharing_only_single_characters_with_the_catalog_has_no_lexical_share() -> None:
    idx = BM25Index([Skill("travel-itinerary", "规划旅行行程：按天安排景点，几天几晚怎么安排"),
                     Skill("express", "根据快递单号查询包裹物流状态")])
    scores, share = lexical_scores(idx, "今天天气怎么样")      # meets travel through 天, 怎, 么
    assert scores.max() > 0 and share == 0.0
    assert not idx.shares_a_word(bm25_tokens("今天天气怎么样"))
    scores, share = lexical_scores(idx, "下周去杭州玩三天怎么安排")   # shares 安排
    assert idx.shares_a_word(bm25_tokens("下周去杭州玩三天怎么安排"))
    best, top = float(scores.max()), idx.max_score(bm25_tokens("下周去杭州玩三天怎么安排"))
    assert share == pytest.approx(best / top) and share > 0


ACCENTED = [Skill("coffee-finder", "Trouver un café ou une crème près de chez moi."),
            Skill("cv-writer", "Rédiger un résumé (curriculum vitae) professionnel."),
            Skill("tailoring", "Passende Größe für Hemden und Hosen bestimmen."),
            Skill("translator", "Traducción de textos del español al inglés, con acentos."),
            Skill("shopping-ru", "Купить ёлку и подарки к Новому году.")]


@pytest.mark.parametrize(("query", "gold"), [
    ("un café svp", "coffee-finder"), ("un cafe svp", "coffee-finder"),
    ("mon résumé", "cv-writer"), ("mon resume", "cv-writer"), ("mes résumés", "cv-writer"),
    ("welche Größe", "tailoring"), ("welche grosse", "tailoring"), ("GRÖSSE", "tailoring"),
    ("traduccion al ingles", "translator"), ("traducción", "translator"),
    ("где купить ёлку", "shopping-ru"),
])
def test_accented_words_match_with_or_without_their_accents(query: str, gold: str) -> None:
    hits = BM25Index(ACCENTED).search(query)
    assert hits and hits[0].name == gold


@pytest.mark.parametrize(("a", "b"), [("café", "cafe"), ("cafés", "café"), ("résumés", "résumé"),
                                      ("Größe", "grosse"), ("ações", "acoes")])
def test_accented_words_stem_like_their_accentless_spelling(a: str, b: str) -> None:
    assert bm25_tokens(a) == bm25_tokens(b) != []


def test_verbatim_bonus_matches_accentless_query_words() -> None:
    idx = BM25Index(ACCENTED)
    plain, accented = idx.score_array(bm25_tokens("creme")), idx.score_array(bm25_tokens("crème"))
    assert plain.tolist() == accented.tolist()
    assert plain[0] == pytest.approx(idx.token_idf("creme") * (1 / (1 + TF_SATURATION) + DIRECT_MATCH_BONUS))


@pytest.mark.parametrize(("written", "typed"), [
    ("🅿\ufe0f", "🅿"), ("🅿", "🅿\ufe0f"), ("🅰\ufe0f", "🅰\ufe0e"), ("🈁\ufe0f", "🈁")])
def test_an_emoji_word_finds_its_skill_with_or_without_its_presentation_selector(
        written: str, typed: str) -> None:
    """🅿️ and 🅿 (🅰 🅱 🅾, and 🈁 read as ココ) were two BM25 words: the selector stayed on the
    token, so a skill written with one was not found by the other."""
    idx = BM25Index([Skill("parking", f"Find a {written} spot near the venue."),
                     Skill("weather", "Forecast for the venue today.")])
    assert bm25_tokens(written) == bm25_tokens(typed) != []
    hits = idx.search(f"{typed} spot")
    assert hits and hits[0].name == "parking"
    assert idx.score_array(bm25_tokens(typed)).tolist() == idx.score_array(
        bm25_tokens(written)).tolist()


@pytest.mark.parametrize(("query", "gold"), [("postgresql is slow", "sql-tuning"),
                                             ("run cprofile on it", "py-profile"),
                                             ("open abcmouse", "kids-games")])
def test_an_identifier_written_in_one_case_matches_its_camelcase_spelling(query: str, gold: str) -> None:
    idx = BM25Index([Skill("sql-tuning", "Speed up a slow PostgreSQL or MySQL statement."),
                     Skill("py-profile", "Profile a Python program with cProfile and py-spy."),
                     Skill("kids-games", "ABCmouse learning games for children."),
                     Skill("weather", "Get the forecast for a city.")])
    hits = idx.search(query)
    assert hits and hits[0].name == gold
    assert set(bm25_tokens("PostgreSQL")) >= set(bm25_tokens("postgresql"))


# ------------------------------------------------------------------ rebuilt from remembered tokens
EDITS = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete"]), st.integers(0, 40),
                           st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)),
                 min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), edits=EDITS)
def test_an_index_built_from_remembered_tokens_equals_one_built_from_scratch(
        seed: int, edits: list[tuple[str, int, list[str]]]) -> None:
    rng = random.Random(seed)
    skills = random_catalog(rng, rng.randint(1, 12))
    memo = TokenMemo()
    BM25Index(skills, memo)
    added = 0
    for op, at, words in edits:
        if op == "edit" and skills:
            i = at % len(skills)
            skills[i] = Skill(skills[i].name, " ".join(words))
        elif op == "add":
            skills.insert(at % (len(skills) + 1), Skill(f"new-{added}-{words[0]}", " ".join(words)))
            added += 1
        elif skills:
            del skills[at % len(skills)]
        kept, fresh = BM25Index(skills, memo), BM25Index(skills, TokenMemo())
        assert kept.names == fresh.names and kept._vocab == fresh._vocab
        assert kept._indptr.tolist() == fresh._indptr.tolist()
        assert kept._docs.tolist() == fresh._docs.tolist()
        assert kept._weights.tolist() == fresh._weights.tolist()
        assert (kept._bm25 is None) == (fresh._bm25 is None)
        if kept._bm25 is not None and fresh._bm25 is not None:
            for part in ("data", "indices", "indptr"):
                assert kept._bm25.scores[part].tolist() == fresh._bm25.scores[part].tolist()
        for q in (" ".join(words), " ".join(rng.sample(WORDS, 3)), "Invoice PDF 查询违章"):
            toks = bm25_tokens(q)
            assert kept.score_array(toks).tolist() == fresh.score_array(toks).tolist()
            assert kept.search(q, top_n=5) == fresh.search(q, top_n=5)
            assert lexical_scores(kept, q)[1] == lexical_scores(fresh, q)[1]


# ------------------------------------------------------------------ bm25s's matrix, and updates
def bm25s_reference(skills: list[Skill]) -> tuple[bm25s.BM25, dict[str, int]]:
    """``bm25s.BM25.index`` itself over the skills' token ids (first occurrence numbering, each
    id repeated as often as its token occurs): the scorer of record's own build."""
    vocab: dict[str, int] = {}
    corpus = [[vocab.setdefault(t, len(vocab)) for t in skill_tokens(s)] for s in skills]
    ref = bm25s.BM25(k1=TF_SATURATION, b=0.0, method="lucene", dtype="float64", int_dtype="int64")
    ref.index((corpus, vocab), create_empty_token=False, show_progress=False)
    return ref, vocab


def columns(scores: dict[str, object], vocab: dict[str, int]) -> dict[str, tuple[list[int], list[float]]]:
    """Each token's CSC column (skills, values) of a bm25s ``scores`` matrix, by token."""
    data, indices, indptr = (np.asarray(scores[k]) for k in ("data", "indices", "indptr"))
    return {t: (indices[indptr[r]:indptr[r + 1]].tolist(), data[indptr[r]:indptr[r + 1]].tolist())
            for t, r in vocab.items()}


def bonus_rows(idx: BM25Index) -> dict[str, tuple[list[int], list[float]]]:
    ptr = idx._indptr
    return {t: (idx._docs[ptr[r]:ptr[r + 1]].tolist(), idx._weights[ptr[r]:ptr[r + 1]].tolist())
            for t, r in idx.vocabulary.items()}


def assert_same_index(got: BM25Index, skills: list[Skill], queries: list[str]) -> None:
    """``got`` holds, to the bit, what a build from scratch (and bm25s's own index) holds."""
    fresh = BM25Index(skills, TokenMemo())
    assert got.names == fresh.names and dict(got.vocabulary).keys() == dict(fresh.vocabulary).keys()
    assert (got._bm25 is None) == (fresh._bm25 is None)
    if got._bm25 is not None and fresh._bm25 is not None:
        ref, ref_vocab = bm25s_reference(skills)
        want = columns(ref.scores, ref_vocab)
        assert columns(got._bm25.scores, dict(got.vocabulary)) == want
        assert columns(fresh._bm25.scores, dict(fresh.vocabulary)) == want
    assert bonus_rows(got) == bonus_rows(fresh)
    for t in fresh.vocabulary:
        assert got.token_idf(t) == fresh.token_idf(t)
    for q in queries:
        toks = bm25_tokens(q)
        assert got.score_array(toks).tolist() == fresh.score_array(toks).tolist()
        assert got.search(q, top_n=5) == fresh.search(q, top_n=5)
        assert got.max_score(toks) == fresh.max_score(toks)
        assert lexical_scores(got, q)[1] == lexical_scores(fresh, q)[1]


def test_a_build_from_scratch_is_bm25s_own_index_of_the_same_corpus_to_the_bit() -> None:
    """The matrix is assembled here, not by ``bm25s.BM25.index``: it must be that index's, array
    for array (same numbering from scratch), so bm25s's scorer scores what bm25s would build."""
    rng = random.Random(3)
    for size in (1, 9, 80):
        skills = random_catalog(rng, size)
        idx = BM25Index(skills, TokenMemo())
        ref, vocab = bm25s_reference(skills)
        assert dict(idx.vocabulary) == vocab and idx._bm25 is not None
        for part in ("data", "indices", "indptr"):
            assert np.asarray(idx._bm25.scores[part]).tolist() == np.asarray(ref.scores[part]).tolist()
        assert idx._bm25.scores["num_docs"] == ref.scores["num_docs"] == size


CHANGES = st.lists(st.tuples(st.sampled_from(["edit", "add", "delete", "rename", "two"]), st.integers(0, 40),
                             st.lists(st.sampled_from([*WORDS, "mailbox", "sky-blue", "报销单"]),
                                      min_size=0, max_size=8)),
                   min_size=1, max_size=7)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), changes=CHANGES)
def test_an_updated_index_equals_one_built_from_scratch_to_the_bit(
        seed: int, changes: list[tuple[str, int, list[str]]]) -> None:
    """Random edits (to no words at all, too), adds, deletes, renames and two-skill edits, each
    applied by ``updated`` to the index before: bm25s's matrix column by column, the bonus, every
    idf and every score are those of a build from scratch and of ``bm25s.BM25.index``."""
    rng = random.Random(seed)
    skills = sorted(random_catalog(rng, rng.randint(0, 10)), key=lambda s: s.name)
    idx = BM25Index(skills, TokenMemo())
    added = 0
    for op, at, words in changes:
        text = " ".join(words)
        if op in ("edit", "two") and skills:
            for i in {at % len(skills), (at * 7 + 3) % len(skills)} if op == "two" else {at % len(skills)}:
                skills[i] = Skill(skills[i].name, text)
        elif op == "add" or not skills:
            skills.append(Skill(f"new-{added}-{rng.choice(WORDS)}", text))
            added += 1
        elif op == "rename":
            old = skills.pop(at % len(skills))
            skills.append(Skill(f"renamed-{added}", old.description))
            added += 1
        else:
            del skills[at % len(skills)]
        skills.sort(key=lambda s: s.name)
        before = [idx.score_array(bm25_tokens(q)).tolist() for q in ("invoice pdf", text)]
        old_idx, idx = idx, idx.updated(skills, TokenMemo())
        assert [old_idx.score_array(bm25_tokens(q)).tolist() for q in ("invoice pdf", text)] == before
        assert_same_index(idx, skills, [text, " ".join(rng.sample(WORDS, 3)), "Invoice PDF 查询违章 mail"])


def test_an_update_derives_only_the_skills_it_has_not_indexed() -> None:
    skills = sorted(random_catalog(random.Random(8), 30), key=lambda s: s.name)
    memo = TokenMemo()
    idx = BM25Index(skills, memo)
    assert memo.derived == 30
    skills[4] = Skill(skills[4].name, "a brand new description with zebra words")
    del skills[9]
    skills.append(Skill("zz-added", "send an email with zebra stripes"))
    memo = TokenMemo()         # an empty memo: whatever it derives, the update asked for
    updated = idx.updated(skills, memo)
    assert memo.derived == 2
    assert_same_index(updated, skills, ["zebra", "send mail", "email"])


def test_a_reordered_catalog_is_built_whole_and_still_equals_a_fresh_build() -> None:
    skills = random_catalog(random.Random(2), 12)
    idx = BM25Index(skills, TokenMemo())
    reordered = skills[::-1]
    memo = TokenMemo()
    assert_same_index(idx.updated(reordered, memo), reordered, ["invoice pdf", "git rebase"])
    assert memo.derived == 12


def test_an_update_after_the_tokenizer_changed_derives_every_skill_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Terms kept from an index made under another ``TOKENIZER_VERSION`` are not reused."""
    from hermes_core import tokenize as tok
    skills = sorted(random_catalog(random.Random(4), 6), key=lambda s: s.name)
    idx = BM25Index(skills, TokenMemo())
    monkeypatch.setattr(tok, "TOKENIZER_VERSION", tok.TOKENIZER_VERSION + 1)
    memo = TokenMemo()
    idx.updated(skills, memo)
    assert memo.derived == 6
    memo = TokenMemo()
    idx.updated(skills, memo).updated(skills, memo)
    assert memo.derived == 6


def test_a_word_only_a_deleted_skill_had_leaves_the_vocabulary() -> None:
    skills = [Skill("a-mail", "send mail"), Skill("b-sky", "blue sky zebra")]
    idx = BM25Index(skills, TokenMemo()).updated(skills[:1], TokenMemo())
    assert not idx.knows("zebra") and idx.token_idf("zebra") == 0.0
    assert idx.vocabulary_size == BM25Index(skills[:1], TokenMemo()).vocabulary_size
    assert_same_index(idx, skills[:1], ["zebra sky", "mail"])


REACH_WORDS = ["docker", "dock", "container", "contain", "exit", "start", "log", "logs", "pod",
               "安排", "出行", "会议", "记录", "出", "怎", "么", "办"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(st.sampled_from(REACH_WORDS), min_size=1, max_size=6), min_size=1, max_size=8),
       query=st.lists(st.sampled_from([*REACH_WORDS, "unseen", "未知"]), max_size=6))
def test_reached_is_exactly_the_skills_the_tokens_score_above_zero(texts: list[list[str]],
                                                                    query: list[str]) -> None:
    # read off the postings (bm25s's columns and the verbatim bonus rows, "dock" inside "docker"),
    # never scored: the lexical hint's evidence costs no second BM25 pass
    idx = BM25Index([Skill(f"s{i}", " ".join(words)) for i, words in enumerate(texts)])
    toks = bm25_tokens(" ".join(query))
    assert idx.reached(toks).tolist() == (idx.score_array(toks) > 0).tolist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(st.sampled_from(REACH_WORDS), min_size=1, max_size=6), min_size=1, max_size=8),
       query=st.lists(st.sampled_from([*REACH_WORDS, "unseen", "未知"]), max_size=6),
       picked=st.lists(st.integers(0, 7), max_size=5))
def test_a_few_documents_score_as_the_whole_array_scores_them_to_the_bit(
        texts: list[list[str]], query: list[str], picked: list[int]) -> None:
    # the usage index's incremental leave-one-out compares these with kept similarities by ==
    idx = BM25Index([Skill(f"s{i}", " ".join(words)) for i, words in enumerate(texts)])
    toks = bm25_tokens(" ".join(query))
    docs = np.asarray([d for d in picked if d < len(texts)], dtype=np.int64)
    assert idx.score_of(toks, docs).tolist() == idx.score_array(toks)[docs].tolist()


HAN_VARIANTS = [Skill("db-fix", "排查数据库连接错误"), Skill("traffic", "查詢車輛的交通違章記錄"),
                Skill("meeting", "预订会议室并邀请参会人"), Skill("weather", "查看天气预报")]


@pytest.mark.parametrize(("query", "gold"), [
    ("數據庫連接錯誤怎麼辦", "db-fix"),        # traditional query, simplified skill
    ("查询我的违章记录", "traffic"),           # simplified query, traditional skill
    ("幫我預訂會議室", "meeting"),
    ("postgres 數據庫 connection 錯誤", "db-fix"),   # mixed English and Chinese
])
def test_a_query_in_either_chinese_script_finds_a_skill_written_in_the_other(query: str, gold: str) -> None:
    hits = BM25Index(HAN_VARIANTS).search(query)
    assert hits and hits[0].name == gold


def test_traditional_and_simplified_queries_score_every_skill_alike() -> None:
    idx = BM25Index(HAN_VARIANTS)
    assert (idx.score_array(bm25_tokens("數據庫連接錯誤")).tolist()
            == idx.score_array(bm25_tokens("数据库连接错误")).tolist())
    assert bm25_tokens("違章記錄") == bm25_tokens("违章记录")


def test_an_update_after_an_opencc_or_jieba_upgrade_derives_every_skill_again(
        tokenizer_upgraded: Callable[[], None]) -> None:
    skills = sorted(random_catalog(random.Random(5), 4), key=lambda s: s.name)
    idx = BM25Index(skills, TokenMemo())
    memo = TokenMemo()
    idx.updated(skills, memo)
    assert memo.derived == 0
    tokenizer_upgraded()
    idx.updated(skills, memo)
    assert memo.derived == 4
