"""Tests of ``hermes_core/tokenize.py``.

an unusable jieba cache folder costs the cache, not the retriever.
"""

from __future__ import annotations

import logging
import os
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import tokenize as tok
from hermes_core.tokenize import segment_for_index, symbol_terms, tokenize


@pytest.fixture
def fresh_jieba(monkeypatch: pytest.MonkeyPatch) -> None:
    jieba = pytest.importorskip("jieba")
    monkeypatch.setattr(tok, "_jieba", None)
    monkeypatch.setattr(tok, "_jieba_failed", False)
    monkeypatch.setattr(jieba.dt, "tmp_dir", jieba.dt.tmp_dir)  # restored after the test


def test_cache_path_that_is_a_file_falls_back_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None,
        caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(blocker))
    with caplog.at_level(logging.WARNING, logger="hermes_core.tokenize"):
        assert tok.jieba_available()
    assert "违章" in tok.tokenize("查询违章记录")
    assert str(blocker) in caplog.text and "jieba" in caplog.text


def test_cache_folder_we_may_not_write_falls_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None) -> None:
    theirs = tmp_path / "hermes-core-jieba"  # made by another user in a shared /tmp
    theirs.mkdir()
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(theirs))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(theirs)
                        else real_access(p, mode, **kw))
    used = tok.jieba_cache_dir()
    assert used is not None and used != str(theirs) and os.access(used, os.W_OK)
    assert tok.jieba_available()


# Chinese glued to Latin letters or digits is segmented like spaced text.

@pytest.mark.parametrize("glued, spaced", [
    ("把PDF转换成Word文档", "把 PDF 转换成 Word 文档"),
    ("明天下午3点和John开会讨论Q3预算", "明天下午 3 点和 John 开会讨论 Q 3 预算"),
    ("iPhone手机壳", "iPhone 手机壳"),
    ("3点开会", "3 点开会"),
])
def test_glued_mixed_text_tokenizes_like_spaced_text(glued: str, spaced: str) -> None:
    assert tokenize(glued) == tokenize(spaced)


def test_chinese_after_latin_is_segmented_not_kept_as_one_token() -> None:
    toks = tokenize("明天下午3点和John开会讨论Q3预算")
    assert "开会" in toks and "john" in toks and "预算" in toks
    assert not any(any(c.isascii() for c in t) and any(ord(c) > 0x3000 for c in t) for t in toks)


def test_identifiers_still_split() -> None:
    assert tokenize("Navigation.TrafficViolations.queryViolation") == [
        "navigation", "traffic", "violations", "query", "violation"]
    assert tokenize("HTTPServer2 über") == ["http", "server", "2", "uber"]


def test_token_estimate_is_the_formula_for_cached_and_long_texts() -> None:
    from hermes_core import tokenize as tk

    short = "hello 你好 world" * 10
    long = "hello 你好 world " * (tk._ESTIMATE_CACHE_CHARS // 10)
    assert len(long) > tk._ESTIMATE_CACHE_CHARS
    for text in (short, long, short):      # the second short one comes from the cache
        cjk = sum(1 for c in text if c in "你好")
        assert tk.estimate_tokens(text) == cjk + (len(text) - cjk + 3) // 4
    assert tk.estimate_tokens("") == 0


def test_cjk_words_are_jiebas_plain_words_in_order() -> None:
    assert tok.cjk_words("打开邮件") == ("打开", "邮件")


def test_cjk_words_without_jieba_end_on_the_runs_last_two_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tok, "_load_jieba", lambda: None)
    assert tok.cjk_words("打开邮件") == ("打开", "邮件")
    assert tok.cjk_words("小李微信")[-1] == "微信" and tok.cjk_words("信") == ("信",)


def test_cjk_tagged_gives_each_word_its_part_of_speech() -> None:
    assert tok.cjk_tagged("用中文回答") == (("用", "p"), ("中文", "nz"), ("回答", "v"))


def test_cjk_tagged_without_jieba_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tok, "_load_jieba", lambda: None)
    assert tok.cjk_tagged("用中文回答") == ()


def test_head_tokens_is_the_longest_prefix_within_the_estimate() -> None:
    from hermes_core.tokenize import estimate_tokens, head_tokens

    for text in ("word " * 400, "快递查询" * 300, "mixed 中文 text " * 200):
        head = head_tokens(text, 100)
        assert text.startswith(head) and estimate_tokens(head) <= 100
        assert estimate_tokens(text[:len(head) + 1]) > 100   # one more character would not fit
    assert head_tokens("short", 100) == "short"


# Words with accented or non-Latin letters stay whole; Latin accents fold away, on every side.

@pytest.mark.parametrize("text, tokens", [
    ("café crème", ["cafe", "creme"]),                                     # fr
    ("naïve résumé à la carte", ["naive", "resume", "a", "la", "carte"]),
    ("¿Dónde está la estación? niño", ["donde", "esta", "la", "estacion", "nino"]),   # es
    ("Größe Straße Übersetzung", ["grosse", "strasse", "ubersetzung"]),     # de: casefold ß -> ss
    ("ação não informação coração", ["acao", "nao", "informacao", "coracao"]),        # pt
    ("Ελληνικά Σοφία ΟΔΟΣ", ["ελληνικά", "σοφία", "οδοσ"]),                # el: not Latin, kept
    ("Русский язык, ёлка, йогурт", ["русский", "язык", "ёлка", "йогурт"]),  # ru: й is a letter
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),                                          # vowel signs are marks
    ("naïveBayes ÉtatCivil", ["naive", "bayes", "etat", "civil"]),           # camelCase still splits
])
def test_accented_and_non_latin_words_stay_whole(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize("text", ["café résumé Größe", "São Paulo ação", "n̈oël", "Ёлка й"])
def test_decomposed_input_tokenizes_like_composed_input(text: str) -> None:
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    assert nfc != nfd
    assert tokenize(nfd) == tokenize(nfc)


def test_an_accentless_spelling_matches_the_accented_one() -> None:
    assert tokenize("cafe creme resume") == tokenize("Café Crème Résumé")
    assert tokenize("GROSSE") == tokenize("größe")


def test_latin_glued_to_chinese_keeps_its_accents_whole() -> None:
    assert tokenize("用Python写café脚本") == tokenize("用 Python 写 café 脚本")
    toks = tokenize("用Python写café脚本")
    assert "cafe" in toks and "python" in toks and "脚本" in toks


def test_unsplit_tokens_fold_like_split_ones_unless_asked_not_to() -> None:
    assert tokenize("ÉtatCivil Größe", split_camel=False) == ["etatcivil", "grosse"]
    assert tokenize("Résumé Größe", split_camel=False, fold=False) == ["résumé", "größe"]


def test_words_to_show_keep_their_chinese_script_as_written() -> None:
    # fold=False is for words shown to a reader (a session's tags): the fold is a match key only
    shown = "".join(tokenize("排查數據庫連接錯誤", fold=False))
    assert "數據庫" in shown and "数据库" not in shown
    assert tokenize("排查數據庫連接錯誤") == tokenize("排查数据库连接错误")   # matching still folds


def test_words_to_show_keep_their_chinese_script_without_jieba(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tok, "_load_jieba", lambda: None)
    tok._segment_cjk.cache_clear()
    try:
        assert tokenize("數據", fold=False) == ["數", "據", "數據"]
        assert tokenize("數據") == ["数", "据", "数据"]
    finally:
        tok._segment_cjk.cache_clear()


def test_split_identifier_keeps_accented_letters_in_their_word() -> None:
    assert tok.split_identifier("naïveBayes") == ["naïve", "bayes"]
    assert tok.split_identifier("ÉtatCivilHTTP2") == ["état", "civil", "http", "2"]


def test_normalize_folds_the_way_tokens_do() -> None:
    assert tok.normalize("Crème BRÛLÉE, Größe") == "creme brulee, grosse"
    assert tok.normalize(unicodedata.normalize("NFD", "ёлка")) == "ёлка"


@pytest.mark.parametrize("text,ratio", [
    ("Привет, как дела? 猫", 1 / 14),           # Russian with one Chinese character
    ("Καλημέρα κόσμε 猫", 1 / 14),               # Greek
    ("مرحبا بالعالم 猫", 1 / 13),                # Arabic
    ("Ça café déjà été 猫", 1 / 14),             # accented Latin
    ("我喜欢吃苹果", 1.0),                        # pure Chinese
    ("用zoom开个会", 4 / 8),                      # mixed Chinese and English
    ("ひらがなとカタカナ", 0.0),                  # Japanese kana are letters, not Chinese
    ("私は猫が好きです", 3 / 8),                  # kanji among kana
    ("123 ... !!", 0.0),                          # no letters at all
])
def test_cjk_ratio_counts_letters_of_every_script(text: str, ratio: float) -> None:
    assert tok.cjk_ratio(text) == pytest.approx(ratio)


@pytest.mark.parametrize("text", ["查询车辆违章 and 𠀀 more", "no cjk", "", "会议室👍预订", "ｆｕｌｌ宽"])
def test_cjk_chars_are_the_characters_is_cjk_accepts_in_order(text: str) -> None:
    assert tok.cjk_chars(text) == [c for c in text if tok.is_cjk(c)]


#: (text, tokens in OpenAI's o200k_base, in cl100k_base), counted with those encodings offline.
_MEASURED = [
    ("오늘 회의는 오후 3시에 시작합니다. 발표 자료를 미리 준비해 주세요.", 20, 33),
    ("ユーザーはコーヒーが好きで、毎朝カフェに行きます。", 20, 27),
    ("東京の天気は晴れです。明日は雨が降るかもしれません。", 20, 29),
    ("出荷しました 🎉🚀👍 ありがとう！", 11, 17),
    ("The user prefers terse answers and works on Python projects.", 11, 11),
    ("用户喜欢简洁的回答，主要使用Python开发项目。", 13, 21),
]


@pytest.mark.parametrize(("text", "o200k", "cl100k"), _MEASURED,
                         ids=["korean", "japanese-kana", "japanese-kanji", "emoji", "english",
                              "chinese"])
def test_the_estimate_is_not_far_below_a_real_tokenizer_in_cjk_scripts(text: str, o200k: int,
                                                                     cl100k: int) -> None:
    """Kana and Hangul counted as Latin letters (four to a token): a Korean MEMORY.md under its
    20,000-token budget was 46,000 tokens to o200k, 74,000 to cl100k; emoji 6-10x over."""
    got = tok.estimate_tokens(text)
    assert got >= 0.8 * o200k
    assert got <= 1.6 * cl100k


def test_keep_whole_adds_a_split_identifier_as_written_and_nothing_else() -> None:
    assert tokenize("PostgreSQL on k8s", keep_whole=True) == [
        "postgre", "sql", "postgresql", "on", "k", "8", "s", "k8s"]
    assert tokenize("plain words 数据库", keep_whole=True) == tokenize("plain words 数据库")
    assert tokenize("PostgreSQL") == ["postgre", "sql"]   # queries and skills: parts only


@pytest.mark.parametrize(("traditional", "simplified"), [
    ("數據庫連接錯誤", "数据库连接错误"),
    ("查詢車輛違章記錄", "查询车辆违章记录"),
    ("會議室預訂", "会议室预订"),
    ("裡面", "里面"),          # Taiwan / Hong Kong variant of 裏
    ("頭髮乾燥", "头发干燥"),    # 髮 and 乾 fold to 发 and 干 by phrase
    ("颱風", "台风"),
    ("瞭解", "了解"),
])
def test_traditional_chinese_yields_the_tokens_of_its_simplified_spelling(traditional: str,
                                                                         simplified: str) -> None:
    assert tokenize(traditional) == tokenize(simplified) != []
    assert tok.normalize(traditional) == simplified
    assert tok.to_simplified(traditional) == simplified


def test_simplified_folding_touches_only_han_characters() -> None:
    text = "café Größe ёлка 회의를 かな カタカナ ｆｕｌｌ 123 「」！"
    assert tok.to_simplified(text) == text
    ascii_text = "plain ascii"
    assert tok.to_simplified(ascii_text) is ascii_text
    assert tok.to_simplified("用Git提交數據") == "用Git提交数据"
    assert tokenize("John開會 about 數據庫") == tokenize("John开会 about 数据库")


def test_japanese_shinjitai_kanji_stay_as_written_and_still_match_themselves() -> None:
    # 読 and 駅 are Japanese forms t2s has no entry for: they are kept, so a Japanese query finds a
    # Japanese text; a kanji that is also a traditional character (電) folds the same on both sides
    assert tok.to_simplified("本を読む") == "本を読む"
    assert "読" in tokenize("本を読む")
    assert set(tokenize("駅で電車を待つ")) & set(tokenize("電車の駅")) >= {"駅"}
    assert tokenize("電車") == tokenize("电车")


def test_a_text_of_only_emoji_or_punctuation_is_indexed_by_its_symbols() -> None:
    """FTS5's unicode61 drops every symbol and punctuation mark, so "🚀🚀" or "？？？" was stored
    with no index term and found by no query; an emoji in a sentence is a term of its own too."""
    assert symbol_terms("🚀🚀") == symbol_terms("🚀") != []
    assert symbol_terms("？？？") == symbol_terms("???") != []       # NFKC: fullwidth is ASCII
    assert set(symbol_terms("🚀")) <= set(segment_for_index("🚀🚀").split())
    assert set(symbol_terms("？？？")) <= set(segment_for_index("？？？").split())
    assert set(symbol_terms("🚀")) <= set(segment_for_index("launch day 🚀 went fine").split())
    # punctuation in a text with words is no term (every sentence has a full stop)
    assert segment_for_index("deploy failed.") == "deploy failed"
    assert all(t.isascii() and t.isalnum() for t in symbol_terms("👨\u200d👩\u200d👧 🇫🇷 ©™ ?!…"))


def test_a_run_of_punctuation_in_a_text_with_words_is_a_term_a_lone_mark_is_not() -> None:
    """Only texts of no word had their punctuation indexed, so a search for "？？？" never found
    "why？？？". A run of two or more marks is one term, its repeats folded ("??" and "????"
    meet "???"); a lone full stop or comma, in every sentence, is still no term."""
    asked = set(symbol_terms("？？？"))
    assert asked & set(segment_for_index("why？？？").split())
    assert asked & set(segment_for_index("really?? ok").split())
    assert set(symbol_terms(":-)")) & set(segment_for_index("ship it :-) tomorrow").split())
    assert not set(symbol_terms(":-)")) & set(segment_for_index("ship it :-( tomorrow").split())
    assert segment_for_index("deploy failed, again.") == "deploy failed again"
    assert segment_for_index("why?") == "why"
    # a megabyte-long run is one bounded term; ten megabytes of marks alone raised MemoryError
    assert max(map(len, symbol_terms("x " + "?!" * 500_000))) < 80
    assert symbol_terms("?!" * 5_000_000) == symbol_terms("?!" * 4)   # its first 8 marks


def test_an_emoji_sequence_is_one_term_not_its_parts() -> None:
    """A family, a rainbow flag or a skin tone was indexed as the emoji it is joined from, so a
    search for the family found a summary with only the man, and 🇫🇷 met 🇷🇺 by their shared
    letter. A grapheme cluster (``regex``'s \\X) is one term; a lone emoji keeps its term."""
    family, man = "👨\u200d👩\u200d👧", "👨"
    pairs = [(family, man), ("🏳\ufe0f\u200d🌈", "🌈"), ("👍🏽", "👍"), ("🇫🇷", "🇷🇺")]
    for joined, part in pairs:
        assert not set(symbol_terms(joined)) & set(segment_for_index(f"we {part} met").split())
        if joined != "🇫🇷":   # a base, a member or an emblem is indexed too (161, 187): index-only
            continue
        assert not set(symbol_terms(joined)) & set(symbol_terms(part)), (joined, part)
        assert not set(symbol_terms(part)) & set(segment_for_index(f"we {joined} met").split())
        assert set(symbol_terms(joined)) <= set(segment_for_index(f"we {joined} met").split())
    assert symbol_terms("🇫🇷🇩🇪") == [*symbol_terms("🇫🇷"), *symbol_terms("🇩🇪")]   # paired in order
    assert symbol_terms("🚀") == ["zsym1f680"]                # as decision 143 indexed it
    assert symbol_terms("❤\ufe0f") == symbol_terms("❤")      # the emoji presentation selector


KEYCAPS = ("1\ufe0f\u20e3", "#\ufe0f\u20e3", "*\ufe0f\u20e3", "0\u20e3")


def test_a_keycap_is_one_symbol_term_in_prose_and_alone() -> None:
    """1️⃣ was no term: a digit starts it, so it was no pictograph cluster, and the query kept
    only its digit (found every summary with a "1"). Its term is the keycap's, the presentation
    selector dropped (1⃣ is 1️⃣); two keycaps share no term."""
    for cap in KEYCAPS:
        term = symbol_terms(cap)
        assert len(term) == 1, cap
        assert term == symbol_terms(f"step {cap} done"), cap
        assert set(term) <= set(segment_for_index(f"step {cap} done").split()), cap
    assert symbol_terms("1\ufe0f\u20e3") == symbol_terms("1\u20e3")
    assert not set(symbol_terms("1\ufe0f\u20e3")) & set(symbol_terms("2\ufe0f\u20e3"))
    assert symbol_terms("1\ufe0f\u20e32\ufe0f\u20e3") == [*symbol_terms("1\u20e3"), *symbol_terms("2\u20e3")]
    assert symbol_terms("step 1 done") == [] and symbol_terms("#1 done") == []


@pytest.mark.parametrize(("text", "wrong"), [
    ("标签：#\ufe0f\u20e3 完成", "zsym3ax23"), ("步骤（*\ufe0f\u20e3）重启", "zsym28x2a"),
    ("看**#\ufe0f\u20e3**", "zsym2ax23"), ("done?#\u20e3 next", "zsym3fx23")])
def test_a_keycap_after_a_punctuation_mark_is_still_its_own_term(text: str, wrong: str) -> None:
    """A mark before a # or * keycap (a Chinese colon or bracket, NFKC's ``:`` ``(``) was read
    as a run with the keycap's ``#``: "：#️⃣" indexed ``:#`` and no keycap, so #️⃣ did not
    find it. The keycap is its term, and the mark takes no part of it into a run."""
    cap = "#\u20e3" if "#" in text else "*\u20e3"
    assert set(symbol_terms(cap)) <= set(symbol_terms(text)), text
    assert set(symbol_terms(cap)) <= set(segment_for_index(text).split()), text
    assert wrong not in symbol_terms(text), text


def test_a_toned_or_gendered_emoji_is_indexed_by_its_base_too_the_query_is_its_cluster_only() -> None:
    """A search for the base emoji finds its skin-tone, gender and hair variants (as "run" finds
    "run" in a sentence); a search for one variant finds only it. Only those modifiers are taken
    off: a rainbow flag is not its white flag, an astronaut not a person."""
    variants = [("👍🏽", ["👍"]), ("🏃\u200d♀\ufe0f", ["🏃"]), ("👩\u200d🦰", ["👩"]),
                ("🏃🏽\u200d♀\ufe0f", ["🏃", "🏃🏽", "🏃\u200d♀"]),
                ("🧑🏿\u200d🚀", ["🧑\u200d🚀"]), ("👩🏽\u200d🤝\u200d👨🏿", ["👩\u200d🤝\u200d👨"])]
    for variant, bases in variants:
        indexed = set(segment_for_index(f"we {variant} met").split())
        for base in bases:
            assert set(symbol_terms(base)) <= indexed, (variant, base)
            assert not set(symbol_terms(variant)) & set(segment_for_index(f"we {base} met").split())
        assert len(symbol_terms(variant)) == 1          # the query: the variant's own term
    assert not set(symbol_terms("👍🏿")) & set(segment_for_index("we 👍🏽 met").split())
    for whole, part in [("🏳\ufe0f\u200d🌈", "🏳"), ("🧑\u200d🚀", "🧑")]:
        assert not set(symbol_terms(part)) & set(segment_for_index(f"we {whole} met").split())


def test_a_word_spelled_like_a_symbol_s_term_is_not_indexed_as_that_symbol() -> None:
    """An identifier is indexed whole too, so a summary that wrote ``zsym1f680`` (or planted it)
    was found by every search for 🚀; its parts are still indexed, so the text is findable."""
    for text in ("note zsym1f680", "zsym2764", "call zsym1F680 now", "ZSYM3F?"):
        terms = segment_for_index(text).split()
        assert not set(terms) & set(symbol_terms("🚀❤?")), text
        assert "zsym" in terms
    assert segment_for_index("zsymbolic zsymmetry").split()[-2:] == ["zsymbolic", "zsymmetry"]


def test_the_tokenizer_key_names_the_fold_config_and_the_installed_opencc_and_jieba() -> None:
    from importlib import metadata

    key = tok.tokenizer_key()
    assert key.startswith(f"{tok.TOKENIZER_VERSION}+{tok.HAN_FOLD_CONFIG}+")
    assert f"opencc-{metadata.version('opencc')}" in key and f"jieba-{metadata.version('jieba')}" in key
    assert tok.tokenizer_key() == key     # the same libraries: the same key on every call


@pytest.mark.parametrize(("traditional", "simplified"), [
    ("查詢通話記錄", "查询通话记录"),   # tw2sp would read 查找 联系历史: no skill's words
    ("查看我的行程", "查看我的行程"),   # a trip, not a process (tw2sp: 进程)
    ("編輯這份文件", "编辑这份文件"),   # tw2sp: 文档
])
def test_a_common_word_folds_to_its_own_simplified_spelling_not_to_a_taiwan_synonym(
        traditional: str, simplified: str) -> None:
    assert tok.to_simplified(traditional) == simplified
    assert tok.to_simplified(simplified) == simplified   # simplified text is never rewritten


def test_a_nickname_meets_itself_in_either_script() -> None:
    # OpenCC writes 昵 as 暱 (s2t) but leaves 暱 as it is (t2s)
    assert tok.to_simplified("暱稱") == tok.to_simplified("昵称") == "昵称"
    assert tokenize("修改我的暱稱") == tokenize("修改我的昵称")


def test_every_character_the_simplified_to_traditional_table_writes_folds_back_to_its_source() -> None:
    import opencc

    s2t, t2s = opencc.OpenCC("s2t"), opencc.OpenCC("t2s")
    kept = []
    for cp in [*range(0x3400, 0x4DC0), *range(0x4E00, 0xA000)]:
        c = chr(cp)
        t = s2t.convert(c)
        if t != c and len(t) == 1 and t2s.convert(t) == t:   # t2s has no way back from t
            kept.append(t)
            assert tok.to_simplified(t) == tok.to_simplified(c), (c, t)
    assert "暱" in kept


@pytest.mark.parametrize("tail", ["\U0001F3FD", "\u0301", "\U000E0067", "\u200d🚀"])
def test_an_emoji_cluster_s_term_is_bounded_and_the_same_text_still_finds_it(tail: str) -> None:
    """An emoji and 100,000 skin tones, combining marks, tag letters or ZWJ links is one grapheme
    cluster: its term was 400-600 KB long. A term keeps the cluster's first
    ``MAX_CLUSTER_POINTS`` code points, so the same hostile text searched still finds it."""
    hostile = "👍" + tail * 100_000
    terms = symbol_terms(f"x {hostile}", bases=True)
    assert max(map(len, terms)) < 120
    assert set(symbol_terms(hostile)) <= set(segment_for_index(f"we {hostile} met").split())
    assert not set(symbol_terms(hostile)) & set(symbol_terms("👍" + tail))   # no ordinary one


@pytest.mark.parametrize("whole", [
    "🧑\U0001F3FB\u200d\u2764\ufe0f\u200d💋\u200d🧑\U0001F3FC",        # kiss, two tones: 10 points
    "👨\U0001F3FB\u200d👩\U0001F3FC\u200d👧\U0001F3FD\u200d👦\U0001F3FE",  # a toned family: 11
    "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"])   # Scotland: 7
def test_an_ordinary_emoji_sequence_is_kept_whole_under_the_bound(whole: str) -> None:
    assert symbol_terms(whole) == [tok._symbol_term(whole.translate(tok._PRESENTATION))]


PROFESSIONS = [("👩\u200d💻", "💻"), ("🧑\u200d🚀", "🚀"), ("👨\U0001F3FE\u200d🍳", "🍳"),
               ("🧑\u200d🦽", "🦽")]
SCOTLAND = "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
WALES = "🏴\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"


def test_an_object_finds_the_profession_made_of_it_the_profession_only_itself() -> None:
    """👩‍💻 is a person, ZWJ and an object (Unicode's "role" sequences): 💻 found no technologist.
    The object is indexed too; the query is the profession's own term, so 👩‍💻 finds neither
    a laptop nor 👨‍💻. Hair is no object."""
    for role, obj in PROFESSIONS:
        assert set(symbol_terms(obj)) <= set(segment_for_index(f"we {role} met").split()), role
        assert not set(symbol_terms(role)) & set(segment_for_index(f"we {obj} met").split())
        assert len(symbol_terms(role)) == 1
    assert not set(symbol_terms("👩\u200d💻")) & set(segment_for_index("we 👨\u200d💻 met").split())
    assert not set(symbol_terms("🦰")) & set(segment_for_index("we 👩\u200d🦰 met").split())


GROUPS_AND_FLAGS = [   # (sequence, the parts the emoji data names it by)
    ("👨\u200d👩\u200d👧", ["👨", "👩", "👧"]), ("👩\u200d👩\u200d👧\u200d👦", ["👩", "👧", "👦"]),
    ("👨\u200d👦", ["👨", "👦"]), ("🧑\u200d🧒", ["🧑", "🧒"]),
    ("👨\U0001F3FB\u200d👩\U0001F3FC\u200d👧\U0001F3FD", ["👩", "👧"]),   # a toned family
    ("👩\u200d\u2764\ufe0f\u200d👨", ["👩", "👨", "\u2764"]),             # a couple with heart
    ("👩\u200d\u2764\ufe0f\u200d💋\u200d👨", ["👩", "👨", "💋"]),          # a kiss
    ("🏳\ufe0f\u200d🌈", ["🌈"]), ("🏳\ufe0f\u200d\u26a7\ufe0f", ["\u26a7"])]


@pytest.mark.parametrize(("whole", "parts"), GROUPS_AND_FLAGS)
def test_a_family_couple_or_flag_is_found_by_the_parts_its_name_says_and_itself_only_by_itself(
        whole: str, parts: list[str]) -> None:
    """👩 found no 👩‍👩‍👧 and 🌈 no 🏳️‍🌈: a group of people or a flag had no parts (161).
    A part is indexed when the emoji data's name for the sequence says it (family: man, woman,
    girl; rainbow flag: rainbow; couple with heart: heart); the whole is searched as itself, so
    the family finds no lone 👩 nor another family."""
    indexed = set(segment_for_index(f"we {whole} met").split())
    for part in parts:
        assert set(symbol_terms(part)) <= indexed, (whole, part)
        assert not set(symbol_terms(whole)) & set(segment_for_index(f"we {part} met").split())
    assert len(symbol_terms(whole)) == 1
    assert not set(symbol_terms(whole)) & set(segment_for_index("we 👨\u200d👩\u200d👦 met").split())


@pytest.mark.parametrize(("whole", "part"), [
    ("🏳\ufe0f\u200d🌈", "🏳"), ("🏴\u200d\u2620\ufe0f", "🏴"),
    ("👨\u200d👩\u200d👧", "\u200d"), ("👩\u200d\u2764\ufe0f\u200d💋\u200d👨", "\u2764")])
def test_a_part_the_sequence_s_name_does_not_say_does_not_find_it(whole: str, part: str) -> None:
    """A rainbow flag is no white flag, a pirate flag no black one, a kiss no heart: only the
    parts the data names the sequence by, a flag's emblem and a group's people are indexed."""
    assert not set(symbol_terms(part)) & set(segment_for_index(f"we {whole} met").split())


def test_a_black_flag_finds_a_subdivision_flag_which_finds_only_itself() -> None:
    """🏴󠁧󠁢󠁳󠁣󠁴󠁿 is 🏴 and tag letters (a tag sequence; shown as 🏴 where the flag is unknown):
    🏴 found no Scottish flag. The base is indexed too; Scotland does not find Wales nor 🏴."""
    indexed = set(segment_for_index(f"go {SCOTLAND} team").split())
    assert set(symbol_terms("🏴")) <= indexed
    assert not set(symbol_terms(SCOTLAND)) & set(segment_for_index(f"go {WALES} team").split())
    assert not set(symbol_terms(SCOTLAND)) & set(segment_for_index("go 🏴 team").split())
    assert len(symbol_terms(SCOTLAND)) == 1


def test_base_terms_do_not_crowd_out_a_text_s_own_emoji() -> None:
    """A toned emoji's bases counted toward ``MAX_SYMBOL_TERMS``: a summary with 33 toned emoji
    indexed 32 of them. Each emoji of the text keeps its term, its bases capped apart."""
    bases = [*range(0x1F446, 0x1F451), *range(0x1F470, 0x1F479), *range(0x1F9D1, 0x1F9DE)]
    emoji = [chr(c) + "\U0001F3FD" for c in bases]         # 33 toned emoji, 66 terms with bases
    assert len(emoji) == 33
    indexed = set(segment_for_index("we " + " ".join(emoji) + " met").split())
    for e in emoji:
        assert set(symbol_terms(e)) <= indexed, e
        assert set(symbol_terms(e[0])) <= indexed, e
    assert len(symbol_terms(" ".join(emoji), bases=True)) <= 2 * tok.MAX_SYMBOL_TERMS


def _indexes(whole: str, part: str) -> bool:
    """Whether a search for ``part`` (its query term) finds a text holding ``whole``."""
    return set(symbol_terms(part)) <= set(segment_for_index(f"we {whole} met").split())


@pytest.mark.parametrize(("whole", "parts"), [
    ("🐻\u200d❄\ufe0f", ["🐻", "❄"]), ("🐈\u200d⬛", ["🐈", "⬛"]), ("❤\ufe0f\u200d🔥", ["❤", "🔥"]),
    ("🐕\u200d🦺", ["🐕", "🦺"]), ("😶\u200d🌫\ufe0f", ["😶", "🌫"]), ("🫱🏿\u200d🫲🏻", ["🫱", "🫲"]),
    ("🏃\u200d➡\ufe0f", ["🏃"]), ("🧑\u200d🦯\u200d➡\ufe0f", ["🧑\u200d🦯", "🦯"]),
    ("🏃🏽\u200d♀\ufe0f\u200d➡\ufe0f", ["🏃", "🏃🏽", "🏃\u200d♀", "🏃\u200d➡"])])
def test_a_listed_zwj_sequence_is_found_by_its_emoji_parts_and_the_whole_only_by_itself(
        whole: str, parts: list[str]) -> None:
    """❄ did not find 🐻‍❄️, 🐈 no 🐈‍⬛, 🔥 no ❤️‍🔥, 🏃 no 🏃‍➡️ (each an emoji of its own, whose
    parts were not indexed). A sequence Unicode lists (the ``emoji`` package's data) is indexed by
    each emoji it joins, a direction variant by what faces; the whole's query is its own term."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1
    assert not _indexes(whole, "➡")          # a direction, like a gender sign, is no part


def test_parts_a_group_or_flag_s_name_does_not_say_and_unlisted_chains_yield_no_part() -> None:
    """A family, couple or flag has only the parts its name says (a kiss no ❤, a pirate flag no
    🏴); a ZWJ chain Unicode does not list (typed, or planted) is no sequence with parts to find."""
    for whole, part in [("👩\u200d❤\ufe0f\u200d💋\u200d👨", "❤"), ("🏴\u200d☠\ufe0f", "🏴"),
                        ("🐻\u200d🔥", "🔥"), ("🔥\u200d🐻", "🐻")]:
        assert not _indexes(whole, part), (whole, part)


@pytest.mark.parametrize(("whole", "parts"), [
    ("🏴\u200d\u2620\ufe0f", ["\u2620"]),                       # pirate flag: skull and crossbones
    ("🧑\u200d🤝\u200d🧑", ["🧑", "🤝"]),                        # people holding hands: person, handshake
    ("👨\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", ["👨", "🤝"]),     # men holding hands
    ("👩\U0001F3FC\u200d🤝\u200d👩\U0001F3FE", ["👩", "🤝"]),     # women holding hands
    ("👩\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", ["👩", "👨", "🤝"])])
def test_a_flag_s_emblem_and_a_group_s_people_and_link_are_found_though_named_otherwise(
        whole: str, parts: list[str]) -> None:
    """The data names ☠ "skull and crossbones", not "pirate"; 🧑 "person", 👨 "man", not "people"
    or "men"; 🤝 "handshake", not "hands": a search for them found no pirate flag and no people
    holding hands. A flag is found by what is on it, a group by each person in it and by a link
    its name says in the plural (hands: handshake); the whole finds none of them."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)


def test_every_listed_zwj_sequence_stays_within_the_term_bounds() -> None:
    """Each fully-qualified ZWJ sequence of the ``emoji`` data: one query term, and its index
    terms are its own and at most one base per code point it holds."""
    import emoji

    for seq, data in emoji.EMOJI_DATA.items():
        if "\u200d" not in seq or data["status"] != emoji.STATUS["fully_qualified"]:
            continue
        assert len(symbol_terms(seq)) == 1, seq
        indexed = symbol_terms(seq, bases=True)
        assert indexed[0] == symbol_terms(seq)[0] and len(indexed) <= 1 + len(seq), seq


@pytest.mark.parametrize("text", ["部署🐻\u200d❄\ufe0f完成", "部署👩\u200d💻了", "deploy 🐈\u200d⬛ done",
                                  "部署\u200d完成", "步骤1\ufe0f\u20e3完成"])
def test_a_zwj_or_selector_beside_words_is_no_indexed_word(text: str) -> None:
    """The word scan read a ZWJ or a presentation selector between words as a word of its own
    ("部署🐻‍❄️完成" -> 部署, U+200D, U+FE0F, 完成): FTS5 drops it, but it was written into every
    index row and took a query's term slots. Every indexed word has a letter or a digit."""
    words = [t for t in segment_for_index(text).split() if not t.startswith(tok.SYMBOL_MARK)]
    assert words and all(any(c.isalnum() for c in w) for w in words), words


def test_a_text_to_index_is_normalised_once_for_its_words_and_its_symbols(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # tokenize and symbol_terms each took the text's NFKC: the second, on text already in NFKC,
    # CPython's quick check, a scan of the whole text that finds nothing to do
    text = "Ｄｅｐｌｏｙ ｆａｉｌｅｄ？？ 🚀 PostgreSQL 1️⃣ 部署完成"
    whole: list[str] = []
    real = unicodedata.normalize

    def counting(form: str, value: str) -> str:
        if form == "NFKC" and len(value) >= len(text) - 2:   # the whole text, not one word of it
            whole.append(value)
        return real(form, value)  # type: ignore[arg-type]

    monkeypatch.setattr(unicodedata, "normalize", counting)
    got = segment_for_index(text)
    assert len(whole) == 1
    monkeypatch.undo()
    words = [t for t in tokenize(text, keep_whole=True) if tok.is_word(t)]
    assert got == " ".join([*words, *symbol_terms(text, bases=True)])


_PIECES = [*"aZé ._-?？！!:)(\u200d\ufe0f\u20e31Ｄｆ部署完成數據🚀👍🏽🐻❄ﬁ㎏①",
           "zsym1f680", "PostgreSQL", "queryViolation", "🏴\U000e0067\U000e007f"]
_MIXED = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_MIXED)
def test_a_text_to_index_is_its_words_and_symbol_terms_each_read_as_written(text: str) -> None:
    """Normalising the text once for both halves gives what each public function gives by
    itself (NFKC is idempotent)."""
    words = [t for t in tokenize(text, keep_whole=True) if tok.is_word(t)
             and not (t.startswith(tok.SYMBOL_MARK) and tok._SYMBOL_TERM.fullmatch(t))]
    assert segment_for_index(text) == " ".join([*words, *symbol_terms(text, bases=True)])


_JOINED = st.lists(st.sampled_from([*"aZ部署1 -", "\u200d", "\u200c", "\ufe0f", "\u0301", "\u203f",
                                    "🐻", "ന്"]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_JOINED, st.booleans(), st.booleans())
def test_no_token_is_a_lone_joiner_selector_or_mark(text: str, fold: bool, keep_whole: bool) -> None:
    """The word scan reads a ZWJ, a selector, a combining mark or a connector (‿) as a word
    character, so one between two words, after an emoji or at a word's start was a token of its
    own ("a‍b" -> a, U+200D, b): a term that only texts holding one share, in every BM25 and
    routing vocabulary. Every token has a letter or a digit and starts with one (a mark belongs
    to the character before it: "🐻️a" is no U+FE0F a); one written inside a word keeps it."""
    tokens = tokenize(text, fold=fold, keep_whole=keep_whole)
    assert all(tok.is_word(t[0]) for t in tokens), tokens
    assert tokenize("a\u200db 部署\u200d完成") == ["a", "b", "部署", "完成"]
    assert tokenize("ന്\u200d") == ["ന്\u200d"]      # a chillu written with ZWJ: one word


@pytest.mark.parametrize(("text", "words"), [
    ("✅\ufe0fdone", ["done"]), ("⚠️warning", ["warning"]), ("❤️любовь", ["любовь"]),
    ("🐻\u200dनमस्ते", ["नमस्ते"]), ("🚀\ufe0fdeploy now", ["deploy", "now"]),
    ("部署\u0301done", ["部署", "done"])])
def test_an_emoji_s_selector_or_joiner_is_no_part_of_the_word_after_it(
        text: str, words: list[str]) -> None:
    """A mark, selector or joiner belongs to the character before it: after an emoji (✅️ is ✅
    and U+FE0F) it was read as the start of the next lower-case word ("✅️done" -> U+FE0F done),
    a term no search for "done" meets, in every BM25 and routing vocabulary. The word is its own
    (as FTS5 reads it), whole or split, with or without ``keep_whole``."""
    for keep_whole in (False, True):
        assert tokenize(text, keep_whole=keep_whole) == words, keep_whole
    assert tokenize(text, split_camel=False) == words
    assert tokenize("1\ufe0f\u20e3abc") == ["1", "abc"]     # a keycap's marks: none of abc's


@pytest.mark.parametrize("letter", ["🅰\ufe0f", "🅱", "🅾\ufe0f", "🅿\ufe0f", "🅐", "🆉"])
def test_an_enclosed_letter_emoji_is_still_a_token(letter: str) -> None:
    """🅰️ 🅱️ 🅾️ 🅿️ (and 🅐 .. 🆉) are symbols Unicode calls alphabetic: the word scan reads
    them as letters and NFKC keeps them, so they were the skill index's only emoji terms
    (BM25 reads no symbol terms); a token needs a letter or digit dropped them."""
    bare = letter.removesuffix("\ufe0f")
    assert tokenize(f"find {letter} parking") == ["find", bare, "parking"]
    assert tokenize(letter, split_camel=False) == [bare]


@pytest.mark.parametrize(("text", "token"), [
    ("🅿\ufe0f", "🅿"), ("🅿\ufe0e", "🅿"), ("🈁\ufe0f", "ココ"), ("🈂\ufe0f", "サ"), ("1\ufe0f", "1")])
def test_a_token_keeps_no_presentation_selector(text: str, token: str) -> None:
    """A selector says how to draw the character before it, text or emoji: 🅿️ was a token of
    its own beside 🅿 (and 🈁️ one beside ココ), so skill search met one spelling and not the
    other. Dropped as a token is read, as the memory index's symbol term drops it."""
    for fold in (True, False):
        assert tokenize(f"find {text} now", fold=fold) == ["find", token, "now"], fold


#: Chinese names as an ideographic variation sequence spells them (U+E0100.. after a Han
#: character: a registered glyph of 葛, 辻, 邊) or a standardised one (U+FE00, U+FE0F after it).
IVS_NAMES = [("葛\U000E0100城", "葛城"), ("辻\U000E0100本", "辻本"), ("邊\U000E0101志明", "邊志明"),
             ("王\ufe00小明", "王小明"), ("张\U000E0100伟", "张伟"), ("祇\ufe0f園", "祇園")]


@pytest.mark.parametrize(("written", "plain"), IVS_NAMES)
def test_a_variation_selector_after_a_han_character_breaks_no_word(written: str, plain: str) -> None:
    """A selector says which glyph of the character before it to draw (a family name's own
    form of 葛 or 辻): 葛󠄀城 was cut at the selector into 葛, 城 where 葛城 is one word, so a
    memory of the name written one way was not found by the other (the selector, no CJK
    character, ended the run jieba reads). Dropped as tokens are read, as a presentation
    selector is."""
    for fold in (True, False):
        assert tokenize(f"和{written}开会", fold=fold) == tokenize(f"和{plain}开会", fold=fold), fold
    assert segment_for_index(f"和{written}开会") == segment_for_index(f"和{plain}开会")
    assert tok.normalize(written) == tok.normalize(plain)


#: Groups Unicode gives one code point (its untoned form; a mixed-tone form is a ZWJ sequence
#: named as it is): the people and link those sequences are found by.
SINGLE_GROUPS = [
    ("👬", ["👨", "🤝"]),                       # men holding hands
    ("👭", ["👩", "🤝"]),                       # women holding hands
    ("👫", ["👩", "👨", "🤝"]),                 # woman and man holding hands
    ("👬\U0001F3FD", ["👨", "🤝", "👬"]),       # toned: one code point and a skin tone
    ("💏", ["🧑", "💋"]),                       # kiss: person, person (no ❤, as a kiss sequence)
    ("💑", ["🧑", "\u2764"]),                   # couple with heart: person, person
    ("🤝", ["🫱", "🫲"])]                       # handshake: its mixed-tone form is 🫱‍🫲


@pytest.mark.parametrize(("whole", "parts"), SINGLE_GROUPS)
def test_a_group_of_one_code_point_is_found_by_its_people_and_link_as_its_sequences_are(
        whole: str, parts: list[str]) -> None:
    """👨 found 👨🏻‍🤝‍👨🏿 (men holding hands with two skin tones, a ZWJ sequence) but not 👬,
    the same group untoned, one code point. The data names both alike: a single emoji whose name
    starts a sequence's Unicode lists only toned has that sequence's parts; the whole finds only
    itself (and its toned forms)."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1


@pytest.mark.parametrize(("toned", "single"), [
    ("👨\U0001F3FB\u200d🤝\u200d👨\U0001F3FF", "👬"), ("👩\U0001F3FC\u200d🤝\u200d👨\U0001F3FE", "👫"),
    ("🧑\U0001F3FB\u200d\u2764\ufe0f\u200d💋\u200d🧑\U0001F3FF", "💏"),
    ("🫱\U0001F3FB\u200d🫲\U0001F3FF", "🤝")])
def test_a_mixed_tone_sequence_is_found_by_the_single_emoji_it_is_a_toned_form_of(
        toned: str, single: str) -> None:
    """👬 found 👬🏽 (a tone on it) but not 👨🏻‍🤝‍👨🏿, its form with two tones, which only a
    keyboard's tone picker writes: a search for the emoji found one toned form and not the other."""
    assert _indexes(toned, single)
    assert not _indexes(single, toned)


@pytest.mark.parametrize(("whole", "part"), [
    ("👬", "👩"), ("👭", "👨"), ("💏", "\u2764"), ("👪", "🤝"), ("👪", "\u2764"), ("🤝", "👨")])
def test_a_single_group_has_no_part_its_sequences_do_not(whole: str, part: str) -> None:
    """Men holding hands are no woman, a kiss no heart (as its sequences), a family no link."""
    assert not _indexes(whole, part)


#: Groups of one code point whose gendered forms Unicode lists as sequences named as the group
#: and then their people ("family: man, woman, girl" of 👪 "family"; "kiss: woman, man" of 💏).
LISTED_GROUPS = [
    ("👪", ["👨", "👩", "👦", "👧", "🧑", "🧒"]),
    ("💏", ["👩", "👨"]), ("💑", ["👩", "👨"])]


@pytest.mark.parametrize(("whole", "parts"), LISTED_GROUPS)
def test_a_group_of_one_code_point_is_found_by_the_people_of_its_listed_forms(
        whole: str, parts: list[str]) -> None:
    """👪 "family" had no parts (it takes no skin tone, so no two-tone sequence named it): 👨
    found 👨‍👩‍👧 but not 👪. Its forms are the listed families ("family: man, woman, girl"),
    whose people find it, as 👬's are its two-tone sequence's."""
    for part in parts:
        assert _indexes(whole, part), (whole, part)
        assert not _indexes(part, whole), (whole, part)
    assert len(symbol_terms(whole)) == 1


@pytest.mark.parametrize(("form", "single"), [
    ("👨\u200d👩\u200d👧", "👪"), ("👩\u200d👦\u200d👦", "👪"), ("🧑\u200d🧑\u200d🧒", "👪"),
    ("👨\u200d\u2764\ufe0f\u200d💋\u200d👨", "💏"), ("👩\u200d\u2764\ufe0f\u200d👨", "💑")])
def test_a_listed_form_of_a_group_is_found_by_the_group_s_single_emoji(
        form: str, single: str) -> None:
    """A search for 👪 found no family a keyboard spells with its people; nor the other way."""
    assert _indexes(form, single)
    assert not _indexes(single, form)


def test_every_single_emoji_with_parts_is_read_for_them() -> None:
    """Only an emoji that takes a skin tone, or the family (which Unicode gives none), has parts
    of its own: what the segmenter checks (a class of ``regex``'s) before it reads the ``emoji``
    data for a lone code point, so indexing 🚀 or ✅ imports nothing. A release giving another
    untoned emoji parts fails here, not silently."""
    singles = [k for k in tok._listed_parts() if len(k) == 1]
    assert {"👬", "👭", "👫", "💏", "💑", "🤝", "👪"} <= set(singles)
    assert all(tok._HAS_GROUP.fullmatch(k) for k in singles), singles


#: Emoji NFKC reads as one letter (ℹ "information" is i, Ⓜ "circled M" m, 🈶 有): as a word
#: each is a stopword or any text's letter.
LETTER_EMOJI = ["\u2139", "\u24c2", "\U0001F236", "\U0001F237"]


@pytest.mark.parametrize("symbol", LETTER_EMOJI)
def test_an_emoji_nfkc_reads_as_one_letter_is_a_term_of_its_own(symbol: str) -> None:
    """ℹ️ and Ⓜ️ were i and m after NFKC (both stopwords of a query), so no form of either
    was found, and 🈶 was 有: each is its own term, with or without its selector; the letter
    stays a word as before, and a text of the letter alone is not found by the emoji."""
    forms = [symbol, symbol + "\ufe0f"]
    for text in forms:
        for query in forms:
            assert symbol_terms(query) == symbol_terms(symbol) != [], (text, query)
            assert _indexes(text, query), (text, query)
    letter = unicodedata.normalize("NFKC", symbol)
    assert not _indexes(letter, symbol)
    assert tokenize(f"see {symbol} here")[1] == letter.casefold()


@pytest.mark.parametrize("text", ["Ａ", "𝐀", "ⓐ", "\u2122", "\u203c", "ﬁ"])
def test_a_letter_nfkc_folds_is_no_symbol_term(text: str) -> None:
    """Fullwidth, mathematical and circled letters (no emoji) and ™ (two letters, a word) keep
    folding to their letters only; ‼ stays the run of marks it was."""
    assert symbol_terms(f"see {text} here") == symbol_terms(f"see {unicodedata.normalize('NFKC', text)} here")


@pytest.mark.parametrize("symbol", ["↔", "↕", "◻", "◼", "◽", "◾", "⤴", "⤵", "〰", "〽"])
def test_an_emoji_unicode_files_as_a_math_sign_or_punctuation_is_a_term_in_either_presentation(
        symbol: str) -> None:
    """↔ ◼ ⤴ 〰 are emoji (Extended_Pictographic) that Unicode files as math signs or punctuation,
    not as symbols: in a text with words each was a lone mark, no term, and a query of one with a
    selector ("↔️") had no term at all. Each is an emoji's term, its selector left out."""
    forms = [symbol, symbol + "\ufe0f", symbol + "\ufe0e"]
    for text in forms:
        for query in forms:
            assert symbol_terms(query) == symbol_terms(symbol) != [], (text, query)
            assert _indexes(text, query), (text, query)
    assert symbol_terms("a → b") == [] == symbol_terms("x ↑ y")     # arrows that are no emoji


def test_indexing_an_emoji_that_takes_no_skin_tone_imports_no_emoji_data() -> None:
    """The ``emoji`` data (60-220 ms to import) is read for a ZWJ sequence or an emoji that
    takes a skin tone, what may have parts; a summary with 🚀 ✅ ↔️ reads none of it."""
    import subprocess
    import sys

    code = ("import sys\nfrom hermes_core.tokenize import segment_for_index\n"
            "segment_for_index('deploy 🚀 ✅ \\u2194\\ufe0f done')\nprint('emoji' in sys.modules)\n"
            "segment_for_index('we 👬 met')\nprint('emoji' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(tok.__file__).parents[1])})
    assert out.stdout.split() == ["False", "True"]


#: Groups Unicode gives a gender variant (👯‍♂️ "men with bunny ears", a ZWJ sequence of one
#: emoji and a sign) whose mixed-tone form is a sequence of two people (👨🏻‍🐰‍👨🏿, Emoji 17):
#: the same group, as 👬 and 👨🏻‍🤝‍👨🏿 are.
GENDERED_GROUPS = [
    ("👨\U0001F3FB\u200d🐰\u200d👨\U0001F3FF", "👯\u200d\u2642\ufe0f", "👨"),
    ("👩\U0001F3FC\u200d🐰\u200d👩\U0001F3FE", "👯\u200d\u2640\ufe0f", "👩"),
    ("👨\U0001F3FB\u200d\U0001FAEF\u200d👨\U0001F3FF", "🤼\u200d\u2642\ufe0f", "👨"),
    ("👩\U0001F3FD\u200d\U0001FAEF\u200d👩\U0001F3FB", "🤼\u200d\u2640\ufe0f", "👩")]


@pytest.mark.parametrize(("toned", "variant", "person"), GENDERED_GROUPS)
def test_a_gendered_group_and_its_mixed_tone_sequence_find_each_other(
        toned: str, variant: str, person: str) -> None:
    """👯 found 🧑🏻‍🐰‍🧑🏿 and 👯‍♂️, but neither 👯 nor 👯‍♂️ found 👨🏻‍🐰‍👨🏿 (men with bunny
    ears in two tones), and 👨 found that sequence but not 👯‍♂️: only a group of one code point
    was matched to its mixed-tone form, not one a gender sign makes."""
    base, sign = variant.split("\u200d")
    assert _indexes(toned, variant) and _indexes(toned, base), (toned, variant)
    assert _indexes(variant, person) and _indexes(f"{base}\U0001F3FD\u200d{sign}", person)
    assert not _indexes(variant, toned) and not _indexes(person, variant)


# The cache folder sits at a name anyone can guess in a shared /tmp, and jieba unmarshals the
# dictionary it finds there: a folder another user made first (or planted as a symlink) would
# hand them our tokeniser, so it is used only when ours (or root's) and writable by us alone.

def _st(mode: int, uid: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


_DIR, _LINK = 0o040000, 0o120000


@pytest.mark.parametrize("link, target, me, refused", [
    (_st(_DIR | 0o700, 1000), _st(_DIR | 0o700, 1000), 1000, None),
    (_st(_DIR | 0o755, 0), _st(_DIR | 0o755, 0), 1000, None),            # root's: trusted
    (_st(_LINK | 0o777, 1000), _st(_DIR | 0o700, 1000), 1000, None),     # the user's own link
    (_st(_DIR | 0o700, 1001), _st(_DIR | 0o700, 1001), 1000, "owned by uid 1001"),
    (_st(_DIR | 0o777, 1000), _st(_DIR | 0o777, 1000), 1000, "writable by others"),
    (_st(_DIR | 0o775, 1000), _st(_DIR | 0o775, 1000), 1000, "writable by others"),
    (_st(_DIR | 0o1777, 0), _st(_DIR | 0o1777, 0), 0, "writable by others"),   # /tmp itself
    (_st(_LINK | 0o777, 1001), _st(_DIR | 0o700, 0), 0, "owned by uid 1001"),  # planted link
    (_st(_LINK | 0o777, 1001), _st(_DIR | 0o700, 0), 1000, "owned by uid 1001"),
    (_st(0o100644, 1000), _st(0o100644, 1000), 1000, "not a folder"),
])
def test_a_cache_folder_is_trusted_only_when_ours_and_closed_to_others(
        link: os.stat_result, target: os.stat_result, me: int, refused: str | None) -> None:
    reason = tok.untrusted_folder(link, target, me)
    assert reason == refused if refused is None else (reason is not None and refused in reason)


def _default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import tempfile

    from hermes_core.config import jieba_cache_dir_setting

    monkeypatch.delenv("HERMES_JIEBA_CACHE", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return Path(jieba_cache_dir_setting())


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
@pytest.mark.parametrize("plant", ["world-writable folder", "symlink to a world-writable folder"])
def test_a_cache_folder_planted_in_the_temp_dir_is_not_used(
        plant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None,
        caplog: pytest.LogCaptureFixture) -> None:
    planted = _default_folder(tmp_path, monkeypatch)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(0o777)
    (theirs / "jieba.cache").write_bytes(b"not a dictionary")   # what a planter would leave
    if plant.startswith("symlink"):
        planted.symlink_to(theirs)
    else:
        theirs.rename(planted)
    with caplog.at_level(logging.WARNING, logger="hermes_core.tokenize"):
        used = tok.jieba_cache_dir()
    assert used is not None   # None is jieba's /tmp/jieba.cache: anyone may plant that one too
    assert Path(used).resolve() not in (planted.resolve(), theirs.resolve())
    mode = os.stat(used)
    assert mode.st_uid == os.getuid() and mode.st_mode & 0o077 == 0
    assert str(planted) in caplog.text and "writable by others" in caplog.text
    assert tok.jieba_available() and "违章" in tok.tokenize("查询违章记录")


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_the_default_cache_folder_is_made_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _default_folder(tmp_path, monkeypatch)
    assert tok.jieba_cache_dir() == str(folder)
    assert folder.stat().st_mode & 0o077 == 0


def test_no_cache_folder_at_all_still_tokenises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None) -> None:
    # a read-only temp dir: neither our folder nor a private one can be made
    import tempfile

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(blocker))

    def read_only(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    assert tok.jieba_cache_dir() is None


@pytest.mark.parametrize("lock", ["ours", "jieba's"])
def test_a_child_forked_while_a_thread_was_loading_jieba_segments_chinese(
        lock: str, monkeypatch: pytest.MonkeyPatch,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A warm-up thread of a preloaded app loading jieba's dictionary (about a second, the first
    Chinese text) when the server forked its workers: inside our loader's lock, and inside
    jieba's own while it initialises."""
    jieba = pytest.importorskip("jieba")
    monkeypatch.setattr(tok, "_jieba", None)
    assert tok.jieba_available()                            # jieba imported as the loader does
    monkeypatch.setattr(tok, "_jieba", None)                # ... and not yet initialised
    monkeypatch.setattr(jieba.dt, "initialized", False)
    held = tok._jieba_lock if lock == "ours" else jieba.dt.lock
    with held_by_a_thread(held):
        assert in_forked_child(lambda: tok.cjk_words("我喜欢吃苹果")) == ("我", "喜欢", "吃", "苹果")


def test_a_child_forked_while_a_thread_was_building_a_converter_folds_han(
        monkeypatch: pytest.MonkeyPatch, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    monkeypatch.setattr(tok, "_t2s", {})                    # none built yet
    with held_by_a_thread(tok._t2s_lock):
        assert in_forked_child(lambda: tok.opencc_converter().convert("漢語")) == "汉语"
