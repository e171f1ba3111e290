"""Tests of ``hermes_core/retrieval/triggers.py``.

"the longest matching trigger wins" measures the phrase that matched.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.retrieval import triggers as triggers_mod
from hermes_core.retrieval.synonyms import load_mapping_file
from hermes_core.retrieval.triggers import TriggerHit, TriggerIndex, _rule, _subsequence_at, normalize
from hermes_core.tokenize import to_simplified


def test_padding_around_a_trigger_does_not_make_it_longer() -> None:
    # a quoted YAML string or a folded block scalar (`- >`) keeps spaces / a trailing newline
    idx = TriggerIndex({"ship-skill": ["ship    ", "\n"], "release-skill": ["ship it"]})
    hit = idx.match("please ship it now")
    assert hit is not None and hit.skill == "release-skill"


def test_compatibility_characters_count_as_what_they_normalise_to() -> None:
    # "㎏" (one character) normalises to "kg" and matches as a two-letter phrase: at equal length
    # the one found earlier in the query wins
    idx = TriggerIndex({"weigh": ["㎏"], "fruit": ["苹果"]})
    hit = idx.match("买 2 ㎏ 苹果")
    assert hit is not None and hit.skill == "weigh"


def test_triggers_file_phrases_are_stripped(tmp_path: Path) -> None:
    p = tmp_path / "triggers.yaml"
    p.write_text('deploy:\n  - "ship it  "\n  - >\n    roll out\n')
    assert load_mapping_file(p, "triggers") == {"deploy": ("ship it", "roll out")}


@pytest.mark.parametrize("trigger, query", [
    ("PDF转换", "把 PDF 转换成 Word"),      # the query spaces Latin from Chinese, the trigger does not
    ("PDF 转换", "把PDF转换成Word"),        # and the other way round (already worked)
    ("git提交代码", "帮我 git 提交一下代码"),
])
def test_mixed_script_trigger_matches_whether_or_not_the_scripts_are_spaced(trigger: str, query: str) -> None:
    hit = TriggerIndex({"skill": [trigger]}).match(query)
    assert hit is not None and hit.skill == "skill"


def test_mixed_script_fuzzy_match_keeps_ascii_word_boundaries() -> None:
    assert TriggerIndex({"skill": ["PDF转换"]}).match("把 xpdf 转换成 Word") is None


def test_a_single_cjk_character_beside_latin_is_not_a_fuzzy_segment() -> None:
    assert TriggerIndex({"x": ["查PDF"]}).match("查一下PDF") is None


def rule_by_rule(triggers: dict[str, list[str]], query: str) -> list[TriggerHit]:
    """Every rule tried against the query, best tier per rule (the definition)."""
    q = normalize(query)
    hits: list[TriggerHit] = []
    for skill in sorted(triggers):
        for t in triggers[skill]:
            r = _rule(skill, t)
            if r is None:
                continue
            pos = r.find(q)
            if pos != -1:
                hits.append(TriggerHit(r.skill, r.trigger, 1, pos, len(r.norm)))
                continue
            if r.cjk_subseq:
                pos = _subsequence_at(q, r.norm)
                if pos != -1:
                    hits.append(TriggerHit(r.skill, r.trigger, 2, pos, len(r.norm)))
                    continue
            if r.fuzzy is not None:
                pos = regex.compile(r.fuzzy, regex.DOTALL).search(q)
                if pos is not None:
                    hits.append(TriggerHit(r.skill, r.trigger, 3, pos.start(), len(r.norm)))
    hits.sort(key=TriggerHit.sort_key)
    return hits


PIECES = ["git", "commit", "pr", "print", "send", "mail", "email", "a", "pdf", "转换", "查", "违章",
          "记录", "一下", "预约", "会议室", "发送", "邮件", " ", " ", "-", "."]


def test_automaton_hits_equal_rule_by_rule_hits() -> None:
    rng = random.Random(4)
    triggers = {
        "git": ["git", "git commit"], "pr": ["pr"], "mail": ["send mail", "发送 邮件"],
        "pdf": ["PDF转换", "pdf"], "fines": ["查违章", "查 违章 记录"], "room": ["预约 会议室"],
    }
    idx = TriggerIndex(triggers)
    tiers = set()
    for _ in range(400):
        q = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        got = idx.matches(q)
        assert got == rule_by_rule(triggers, q)
        tiers |= {h.tier for h in got}
    assert tiers == {1, 2, 3}   # the random queries exercised every tier


def test_rules_filed_under_their_rarest_key_hit_as_every_rule_tried() -> None:
    # many triggers share common segments and characters ("send", "查", "记录"): each rule is
    # filed under its rarest one, and the hits must still be those of trying every rule
    rng = random.Random(11)
    words = PIECES[:-4]
    triggers: dict[str, list[str]] = {}
    for k in range(300):
        n = rng.randint(2, 3)
        cjk = [w for w in words if not w.isascii()]
        pick = rng.sample(cjk, n) if k % 2 else rng.sample(words, n)
        triggers[f"s{k:03d}"] = [("" if k % 3 else " ").join(pick)]
    idx = TriggerIndex(triggers)
    tiers = set()
    for _ in range(300):
        q = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        got = idx.matches(q)
        assert got == rule_by_rule(triggers, q)
        tiers |= {h.tier for h in got}
    assert tiers == {1, 2, 3}


def test_word_boundaries_are_checked_after_the_match() -> None:
    idx = TriggerIndex({"git": ["git"], "pr": ["pr"]})
    assert idx.match("what digit is it") is None
    assert idx.match("print this") is None
    hit = idx.match("print the pr please")
    assert hit is not None and (hit.skill, hit.position) == ("pr", 10)
    hit = idx.match("git")
    assert hit is not None and hit.position == 0


def test_first_valid_occurrence_is_the_position() -> None:
    hit = TriggerIndex({"git": ["git"]}).match("digit, then git")
    assert hit is not None and hit.position == 12


def test_empty_index_and_empty_query() -> None:
    assert TriggerIndex().match("anything") is None
    assert TriggerIndex({"a": ["x"]}).match("") is None
    assert len(TriggerIndex({"a": ["  "]})) == 0


@pytest.mark.parametrize("trigger", ["a", "the", "how to", "的", "。"])
def test_a_trigger_of_stopwords_only_is_ignored_not_fired_on_every_message(trigger: str) -> None:
    # a SKILL.md saying `triggers: [a]` auto-loaded its body into every English message with "a"
    idx = TriggerIndex({"hijack": [trigger], "pdf": ["pdf to text"]})
    assert idx.match("I have a problem with how to read the file。的") is None
    assert idx.ignored == (("hijack", trigger),)
    hit = idx.match("convert this pdf to text")
    assert hit is not None and hit.skill == "pdf"


@pytest.mark.parametrize("trigger,query,fires", [
    ("git", "what digit is it", False),                 # English
    ("git", "use git now", True),
    ("café", "un cafécrème", False),                    # French, accented ends
    ("été", "un étéphant", False),
    ("café", "un café crème", True),
    ("кот", "который час", False),                      # Russian
    ("кот", "мой кот спит", True),
    ("кот", "это кот.", True),
    ("кот рыжий", "скоты рыжий", False),                # fuzzy tier keeps the boundary too
    ("кот рыжий", "кот, рыжий", True),
    ("违章", "帮我查违章记录", True),                     # Chinese needs no boundary
    ("git", "用git提交", True),                          # a Latin trigger beside CJK
    ("кот", "我的кот很可爱", True),                       # a Cyrillic trigger beside CJK
    ("git", "gitを使う", True),                          # kana beside it is a boundary
    ("회의", "회의를 잡아줘", True),                       # Hangul: particles attach to the noun
])
def test_word_boundaries_hold_for_every_script(trigger: str, query: str, fires: bool) -> None:
    assert (TriggerIndex({"s": [trigger]}).match(query) is not None) is fires


def test_building_the_index_compiles_no_pattern_and_a_query_only_those_it_could_match(
        monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = triggers_mod.regex.compile

    def counting(pattern: str, *args: object) -> regex.Pattern[str]:
        compiled.append(pattern)
        return real(pattern, *args)
    monkeypatch.setattr(triggers_mod.regex, "compile", counting)
    triggers_mod._compiled.cache_clear()
    idx = TriggerIndex({f"skill-{i}": [f"send invoice {i}", f"book room {i}"] for i in range(300)})
    assert compiled == []
    hit = idx.match("please send invoice #17 today")
    assert hit is not None and (hit.skill, hit.tier) == ("skill-17", 3)
    assert len(compiled) == 3      # the rules whose every segment the query holds: 1, 7 and 17
    again = idx.match("send invoice #17 again")
    assert again is not None and (again.skill, again.tier) == ("skill-17", 3)
    assert len(compiled) == 3      # compiled once, then remembered


def test_a_rebuild_derives_each_trigger_once_and_a_chinese_one_again_without_jieba(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core import tokenize as tok

    derived: list[str] = []
    real = triggers_mod._rule

    def counting(skill: str, trigger: str) -> object:
        derived.append(trigger)
        return real(skill, trigger)
    monkeypatch.setattr(triggers_mod, "_rule", counting)
    triggers_mod._prepared.cache_clear()
    catalog = {"mail": ["send mail", "the"], "fines": ["查询 违章 记录"]}
    first = TriggerIndex(catalog)
    again = TriggerIndex(catalog)
    assert sorted(derived) == sorted(["send mail", "the", "查询 违章 记录"])
    assert again.ignored == first.ignored == (("mail", "the"),)
    for q in ("please send mail now", "帮我查询一下违章记录"):
        assert again.match(q) == first.match(q) is not None
    monkeypatch.setattr(tok, "_load_jieba", lambda: None)
    TriggerIndex(catalog)
    assert derived[3:] == ["查询 违章 记录"]      # the English ones never reach jieba


@pytest.mark.parametrize(("trigger", "query"), [
    ("数据库连接错误", "我的數據庫連接錯誤了"),     # simplified trigger, traditional query
    ("查詢違章", "帮我查询违章"),                  # and the reverse
    ("數據庫 timeout", "数据库timeout了"),
])
def test_a_trigger_fires_whichever_chinese_script_either_side_is_written_in(trigger: str, query: str) -> None:
    hit = TriggerIndex({"skill": [trigger]}).match(query)
    assert hit is not None and hit.skill == "skill"


@pytest.mark.parametrize(("trigger", "query", "fires"), [
    ("乾", "乾隆年間的瓷器", True),      # folded alone 乾 -> 干, in the phrase 乾隆 kept: as written
    ("乾", "頭髮乾燥", True),            # the fold of both: 干 in 头发干燥
    ("乾", "头发干燥", True),            # traditional trigger, simplified query
    ("干", "頭髮乾燥", True),            # simplified trigger, traditional query
    ("乾隆", "乾隆年間的瓷器", True),
    ("干", "乾隆年間的瓷器", False),     # 乾隆 is a name, not 干: the simplified 干 is another word
])
def test_a_trigger_fires_where_its_characters_are_written_or_where_its_fold_is(
        trigger: str, query: str, fires: bool) -> None:
    hit = TriggerIndex({"skill": [trigger]}).match(query)
    assert (hit is not None and hit.skill == "skill") is fires


@pytest.mark.parametrize("query", ["乾隆年間的瓷器", "Größe 頭髮乾燥 ＰＤＦ", "plain english query"])
def test_a_query_is_normalised_once_for_its_folded_and_its_written_match(
        query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # with a trigger written in traditional characters, a Chinese query was normalised twice
    # (NFKC, case fold, accents: once folded to simplified, once as written); the fold is the
    # written form's t2s, so the second pass was the first again
    index = TriggerIndex({"skill": ["乾"], "pdf": ["größe pdf"]})
    want = index.matches(query)
    calls: list[bool] = []
    real = triggers_mod.normalize_text

    def counted(text: str, *, fold: bool = True) -> str:
        calls.append(fold)
        return real(text, fold=fold)

    monkeypatch.setattr(triggers_mod, "normalize_text", counted)
    assert index.matches(query) == want
    assert len(calls) == 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("乾隆頭髮干燥年間ÉéßẞＰｄf AΣς數據İı\u0301"), max_size=12))
def test_the_fold_of_a_text_is_the_t2s_of_its_written_normal_form(text: str) -> None:
    # what lets a query be normalised once for both of its matches
    assert normalize(text) == to_simplified(triggers_mod.normalize_text(text, fold=False))


def test_ascii_trigger_does_not_fire_inside_another_word() -> None:
    from hermes_core.retrieval.triggers import TriggerIndex
    t = TriggerIndex({"git": ["git"], "pr": ["pr"], "mail": ["send mail"]})
    assert t.match("what digit comes next?") is None
    assert t.match("print this page") is None
    assert t.match("resend mailbox settings") is None
    hit = t.match("open a PR, then git push")
    assert hit is not None and hit.skill in ("git", "pr") and hit.tier == 1
    assert t.match("git-push it") is not None  # punctuation is a boundary
    assert t.match("then send a mail") is not None  # tier 3 still works between words


def test_cjk_and_symbol_triggers_still_match_inside_text() -> None:
    from hermes_core.retrieval.triggers import TriggerIndex
    t = TriggerIndex({"v": ["查违章"], "c": ["c++"], "mix": ["PDF转换"]})
    assert t.match("帮我查违章了吗") is not None
    assert t.match("compile c++code") is not None  # ends in a symbol: no boundary needed there
    assert t.match("把PDF转换成Word") is not None  # CJK neighbours are not word characters
