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

from hermes_core import tokenize as tok
from hermes_core.tokenize import tokenize


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


def test_a_child_forked_while_jieba_wrote_its_first_cache_segments_chinese(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        in_forked_child: Callable[[Callable[[], object]], object],
        stopped_after_call: Callable[..., Any]) -> None:
    """The first Chinese text on a machine: jieba builds its dictionary and writes the cache
    under a lock of its own (``jieba.DICT_WRITING``), which a worker forked meanwhile found held
    by a thread it does not have, at its own first Chinese text."""
    jieba = pytest.importorskip("jieba")
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(tmp_path / "jieba"))   # no cache there yet
    monkeypatch.setattr(tok, "_jieba", None)
    monkeypatch.setattr(jieba.dt, "initialized", False)
    monkeypatch.setattr(jieba.dt, "tmp_dir", jieba.dt.tmp_dir)          # put back afterwards
    with stopped_after_call(jieba, "dump", lambda: tok.cjk_words("我喜欢吃苹果")):
        assert jieba.DICT_WRITING                          # the thread is writing the cache
        assert in_forked_child(lambda: tok.cjk_words("我喜欢吃苹果")) == ("我", "喜欢", "吃", "苹果")


def test_a_child_forked_while_a_thread_was_building_a_converter_folds_han(
        monkeypatch: pytest.MonkeyPatch, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    monkeypatch.setattr(tok, "_t2s", {})                    # none built yet
    with held_by_a_thread(tok._t2s_lock):
        assert in_forked_child(lambda: tok.opencc_converter().convert("漢語")) == "汉语"
