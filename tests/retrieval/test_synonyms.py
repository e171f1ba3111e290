"""Tests of ``hermes_core/retrieval/synonyms.py``.

Synonym phrases in mixed Chinese/English text (no spaces between scripts).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.retrieval.synonyms import PHRASE_WEIGHT, TOKEN_WEIGHT, SynonymIndex, load_mapping_file
from hermes_core.retrieval.triggers import normalize
from hermes_core.tokenize import content_tokens

NAMES = ["meeting", "mail"]


@pytest.mark.parametrize("query", ["用zoom开个会", "明天3点开个会", "开个会3点开始", "开个会abc"])
def test_cjk_phrase_next_to_latin_letters_or_digits_is_found_whole(query: str) -> None:
    idx = SynonymIndex({"meeting": ["开个会"]}, NAMES)
    scores, whole = idx.score(query)
    assert whole and scores[0] == PHRASE_WEIGHT


def test_ascii_phrase_keeps_its_word_boundaries() -> None:
    idx = SynonymIndex({"mail": ["mail"]}, NAMES)
    assert idx.score("send an email")[1] is False
    assert idx.score("发mail给他")[1] is True  # CJK beside it is a boundary


BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]\n"
    for i in range(7))


@pytest.mark.parametrize("text,why", [(BOMB, "alias"), ("a: " + "[" * 500 + "]" * 500, "levels deep"),
                                      ("a: &x\n  b: *x\n", "recursive alias"), ("a: [1\n", "not valid YAML")])
def test_hostile_mapping_file_is_one_config_error(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_mapping_file(path, "triggers")
    assert why in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("text", [
    "{key}: [a, b\n", "{key}:\n\tb: c\n", "{key}:\n  - [a\n", "{key}: a\n{key}: b\n"])
def test_a_secret_looking_key_is_not_shown_in_a_mapping_file_s_error(tmp_path: Path,
                                                                      text: str) -> None:
    """A key pasted into a triggers or synonyms file is masked as config.yaml's are: a syntax
    error now names the key path the parser was in."""
    key = "sk-ant-api03-" + "A1b2C3d4" * 5
    path = tmp_path / "synonyms.yaml"
    path.write_text(text.format(key=key), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_mapping_file(path, "synonyms")
    assert key[:12] not in str(info.value) and "secret-looking key" in str(info.value)
    assert info.value.line is not None


def test_empty_values_and_ordinary_mappings_load(tmp_path: Path) -> None:
    path = tmp_path / "synonyms.yaml"
    path.write_text("deploy: [ship, release]\nweather: forecast\n", encoding="utf-8")
    assert load_mapping_file(path, "synonyms") == {"deploy": ("ship", "release"), "weather": ("forecast",)}


def scan_scores(synonyms: dict[str, list[str]], names: list[str], query: str) -> tuple[list[float], bool]:
    """The layer's formula applied phrase by phrase (the definition the index must reproduce)."""
    q = normalize(query)
    qtoks = set(content_tokens(q))
    out = [0.0] * len(names)
    any_whole = False
    for skill, phrases in synonyms.items():
        if skill not in names:
            continue
        i = names.index(skill)
        whole, partial = 0, set()
        for p in dict.fromkeys(phrases):
            norm = normalize(p).strip()
            toks = set(content_tokens(norm))
            if not norm or not toks:
                continue
            left = r"(?<![a-z0-9])" if norm[0].isascii() and norm[0].isalnum() else ""
            right = r"(?![a-z0-9])" if norm[-1].isascii() and norm[-1].isalnum() else ""
            if re.search(left + re.escape(norm) + right, q):
                whole += 1
            else:
                partial |= toks & qtoks
        any_whole |= whole > 0
        out[i] = PHRASE_WEIGHT * whole + TOKEN_WEIGHT * len(partial) if (whole or partial) else 0.0
    return out, any_whole


VOCAB = [
    "rain", "umbrella", "weather", "drop", "a", "line", "mail", "email", "send", "开个会", "会议",
    "zoom", "查", "违章", "git", "commit", "pr",
]


def test_index_equals_the_phrase_scan_on_random_synonyms_and_queries() -> None:
    rng = random.Random(2)
    names = [f"s{i}" for i in range(12)]
    syn = {n: [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 3))) for _ in range(3)]
           for n in names}
    idx = SynonymIndex(syn, names)
    for _ in range(300):
        q = rng.choice([" ", "", "-"]).join(rng.choice(VOCAB) for _ in range(rng.randint(1, 8)))
        scores, whole = idx.score(q)
        assert (scores.tolist(), whole) == scan_scores(syn, names, q)


def test_ascii_phrase_needs_word_boundaries_cjk_phrase_does_not() -> None:
    idx = SynonymIndex({"mail": ["mail"], "meet": ["开个会"]}, ["mail", "meet"])
    scores, whole = idx.score("check my email")
    assert not whole and scores.tolist() == [0.0, 0.0]
    scores, whole = idx.score("用zoom开个会")
    assert whole and scores.tolist() == [0.0, PHRASE_WEIGHT]
    scores, whole = idx.score("MAIL it")
    assert whole and scores.tolist() == [PHRASE_WEIGHT, 0.0]


def test_a_phrase_shared_by_two_skills_counts_for_both_and_duplicates_once() -> None:
    idx = SynonymIndex({"a": ["look it up", "Look it up"], "b": ["look it up"]}, ["a", "b"])
    scores, _ = idx.score("please look it up")
    # "Look it up" normalises to the same phrase but is a second synonym of a: both count
    assert scores.tolist() == [2 * PHRASE_WEIGHT, PHRASE_WEIGHT]
    assert idx.phrase_count == 3


def test_spoken_marks_skills_whose_whole_phrase_of_several_words_is_in_the_query() -> None:
    idx = SynonymIndex({"weather": ["will it rain tomorrow", "umbrella"], "mail": ["drop a line"],
                        "notes": ["会议总结"]}, ["weather", "mail", "notes"])
    assert idx.spoken("Will it rain tomorrow? and drop a line").tolist() == [True, True, False]
    assert idx.spoken("umbrella, rain").tolist() == [False, False, False]   # one word; only a part
    assert idx.spoken("帮我写会议总结").tolist() == [False, False, True]
    assert idx.spoken("").tolist() == [False, False, False]


def test_a_long_pasted_log_is_scanned_once() -> None:
    idx = SynonymIndex({"a": ["stack trace"]}, ["a"])
    log = "ERROR at line 12: connection reset\n" * 120 + "stack trace follows"
    scores, whole = idx.score(log)
    assert whole and scores.tolist() == [PHRASE_WEIGHT]


# --------------------------------------------------------------------------- property: any file

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_BITS = st.sampled_from(["skill:", "  - ", "- ", "a: ", "&a ", "*a", "[", "]", "{", "}", "\n", "  ",
                         "'", '"', "~", "1", "true", "? ", "<<: *a", "#", "\t", "\ufeff", "ä"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.lists(_BITS, max_size=40).map("".join).map(str.encode) | st.binary(max_size=200))
def test_any_mapping_file_loads_or_is_one_config_error(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_bytes(raw)
    try:
        out = load_mapping_file(path, "triggers")
    except ConfigError as e:
        assert str(path) in str(e)
    else:
        assert all(isinstance(k, str) and isinstance(v, tuple) for k, v in out.items())


@pytest.mark.parametrize("phrase,query,whole", [
    ("mail", "send an email", False),                   # English
    ("mail", "send a mail", True),
    ("café", "un cafécrème", False),                    # French
    ("café", "un café crème", True),
    ("кот", "который час", False),                      # Russian
    ("кот", "мой кот спит", True),
    ("开个会", "用zoom开个会", True),                     # Chinese needs no boundary
    ("кот", "我的кот很可爱", True),                       # CJK beside a Cyrillic phrase
])
def test_phrase_word_boundaries_hold_for_every_script(phrase: str, query: str, whole: bool) -> None:
    assert SynonymIndex({"s": [phrase]}, ["s"]).score(query)[1] is whole


@pytest.mark.parametrize(("phrase", "query"), [("开个会", "明天開個會"), ("會議總結", "帮我写会议总结")])
def test_a_synonym_is_found_whichever_chinese_script_either_side_is_written_in(phrase: str,
                                                                              query: str) -> None:
    idx = SynonymIndex({"meeting": [phrase]}, NAMES)
    scores, whole = idx.score(query)
    assert whole and scores[0] == PHRASE_WEIGHT
    assert idx.spoken(query).tolist() == [True, False]


@pytest.mark.parametrize(("phrase", "query"), [
    ("軟體更新", "帮我检查软件更新"),          # Taiwan phrase, mainland query
    ("滑鼠設定", "打开鼠标设置"),
    ("数据库", "幫我查詢資料庫"),              # mainland phrase, Taiwan query
    ("鼠标", "我的滑鼠壞了"),
])
def test_a_taiwan_synonym_meets_its_mainland_word_and_back(phrase: str, query: str) -> None:
    """t2s folds characters, not vocabulary: 軟體 is 软体, never 软件. The phrase is also
    indexed in its mainland and Taiwan wordings (OpenCC tw2sp / s2twp), as one phrase."""
    idx = SynonymIndex({"meeting": [phrase]}, NAMES)
    scores, whole = idx.score(query)
    assert whole and scores[0] == PHRASE_WEIGHT
    assert idx.phrase_count == 1


def test_a_phrase_in_both_wordings_in_one_query_counts_once() -> None:
    idx = SynonymIndex({"meeting": ["数据库"]}, NAMES)
    scores, whole = idx.score("数据库就是資料庫")
    assert whole and scores[0] == PHRASE_WEIGHT


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


def test_a_mapping_file_that_is_a_pipe_a_device_or_huge_is_refused_by_name(tmp_path: Path) -> None:
    """``triggers_file: /dev/zero`` read until the process was killed for memory; a FIFO blocked
    every command that loads the skills. Each is now a ConfigError naming the file."""
    import os

    from hermes_core.yaml_safe import MAX_CHARS
    fifo = tmp_path / "triggers.yaml"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(ConfigError, match="not a regular file") as e:
            load_mapping_file(path, "triggers")
        assert str(path) in str(e.value)
    big = tmp_path / "big.yaml"
    big.write_text("a: [" + "x, " * MAX_CHARS + "]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="triggers file") as e:
        load_mapping_file(big, "triggers")
    assert str(big) in str(e.value)
