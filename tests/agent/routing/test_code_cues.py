"""Tests of ``hermes_core/agent/routing/code_cues.py``: where a text names something technical."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from hermes_core.agent.routing.code_cues import technical_starts


def _named(text: str) -> list[str]:
    """The words at each place ``technical_starts`` finds, for a readable failure."""
    return [text[i:i + 12] for i in technical_starts(text, text.lower())]


# Go, R and C where a program goes, in English, Chinese and Japanese; malloc and a program's
# timeout. Each was found nowhere before (the lower-cased text holds no capitalised Go/R/C).
@pytest.mark.parametrize("text", [
    "his Go program runs all night",
    "they rewrote the service in Go.",
    "she still uses R for her analysis",
    "he wrote the driver in C",
    "an R script every morning",
    "an R package",
    "用Go重写了后端",
    "学C语言",
    "Goで書いた",
    "R言語を使う",
    "he called malloc twice",
    "they keep hitting timeouts",
    "a connection timeout",
    "set the timeout to 30 seconds",
])
def test_a_capitalised_language_in_context_or_a_systems_word_is_technical(text: str) -> None:
    assert _named(text), text


def test_a_japanese_unit_test_is_technical() -> None:
    # the first-letter look had Chinese 单/單, not Japanese 単: 単体テスト was found nowhere
    assert _named("単体テストが落ちた")


# The same letters as ordinary words: a verb, a music genre, a plan, a grade, a vitamin, a key,
# a person's timeout.
@pytest.mark.parametrize("text", [
    "He will Go home early",
    "She loves R&B",
    "They chose Plan C",
    "he got a C in maths",
    "vitamin C every day",
    "he wrote the song in C",
    "he got a timeout in the game",
    "she was put in timeout",
    "喜欢R&B",
    "プランCを選んだ",
])
def test_go_r_or_c_as_an_ordinary_word_and_a_person_s_timeout_are_not_technical(text: str) -> None:
    assert _named(text) == [], text


# A window's end is no word's end: "shellfish" cut after "shell" named a shell, "make
# installation" a command, "the song in Cmaj" a language, so the cue read alone (which looks for
# them) and the router's (which had found none in the whole text) disagreed. Each was found
# before; a thing starting inside the window is judged by the text after it.
@pytest.mark.parametrize(("text", "cut"), [
    ("he ate the shellfish at dinner", "shell"),
    ("she read about the make installation guide", "make install"),
    ("he was terminally bored", "terminal"),
    ("he wrote it in Cmaj", "in C"),
])
def test_a_word_cut_by_the_window_s_end_is_read_whole(text: str, cut: str) -> None:
    end = text.index(cut) + len(cut)
    assert technical_starts(text, text.lower(), 0, end) == [], text


def test_a_technical_thing_starting_inside_the_window_is_found_though_it_ends_past_it() -> None:
    text = "he hit a segmentation fault again"
    assert technical_starts(text, text.lower(), 0, text.index("fault") + 2) == [9]


# Porting, migrating or transpiling to Go, R or C names the language as writing in it does.
# Found nowhere before (transpiling, until the pattern's first-letter look took a "t"); a melody
# taken to C is a key.
@pytest.mark.parametrize(("text", "named"), [
    ("they ported the whole backend to Go.", True),
    ("we migrated the service to Go", True),
    ("why did they port it to C?", True),
    ("she migrated her analysis to R.", True),
    ("we transpiled the whole thing to Go.", True),
    ("Transpile it into C", True),
    ("he converted 50 F to C", False),
    ("he ported the melody to C", False),
    ("they migrated the herd to the north", False),
])
def test_a_program_ported_or_migrated_to_go_r_or_c_is_technical(text: str, named: bool) -> None:
    assert bool(_named(text)) is named, text


# A phrase naming Go, R or C goes on past it as it does after "used": "in C instead of Rust",
# "in Go because of speed"; Go chosen over or for something. Found nowhere before; a quiz's
# answer C picked, a key sung in, stay words.
@pytest.mark.parametrize(("text", "named"), [
    ("they wrote the firmware in C instead of Rust", True),
    ("she rewrote it in Go because of speed", True),
    ("they chose Go over Rust", True),
    ("they picked Go for the backend", True),
    ("he picked C on the quiz", False),
    ("why did she choose C?", False),
    ("he sang it in C and then in D", False),
])
def test_go_r_or_c_written_in_or_chosen_with_the_phrase_going_on_is_technical(
        text: str, named: bool) -> None:
    assert bool(_named(text)) is named, text


# Every CJK word the technical words name, found with the one-step first-letter look as without
# it (the look is hand-kept: a word whose first letter it lacked would be found nowhere).
@pytest.mark.parametrize("word", [
    "代码", "程式碼", "正则", "单元测试", "單元測試", "単体テスト", "函数", "算法", "演算法", "接口",
    "脚本", "腳本", "関数", "コード", "スクリプト", "ユニットテスト", "テストコード", "报错", "報錯",
    "段错误", "内存泄漏", "內存洩漏", "記憶體洩漏", "空指针", "编译错误", "編譯失敗", "エラー",
    "セグフォ", "メモリリーク", "コンパイル", "ビルド", "bug", "SQL", "请求超时", "請求超時",
    "连接超时", "連接超時", "读取超时", "响应超时", "网络超时", "網絡超時", "服务超时", "數據庫超時",
    "数据库超时", "调用超时", "調用超時", "超时错误", "服务器", "伺服器", "线程", "線程", "執行緒",
    "堆内存", "堆溢出", "タイムアウト", "サーバー", "スレッドプール", "マルチスレッド", "メインスレッド",
    "ワーカースレッド", "シングルスレッド", "ヒープ",
])
def test_each_cjk_technical_word_passes_the_first_letter_look(word: str) -> None:
    from hermes_core.agent.routing.code_cues import CJK_WORD_OPENS, TECHNICAL_WORD

    unguarded = re.compile(TECHNICAL_WORD.pattern.replace(f"(?=[{CJK_WORD_OPENS}])", ""),
                           re.IGNORECASE)
    text = f"他说{word}了"
    assert TECHNICAL_WORD.search(text) is not None, word
    assert [m.start() for m in TECHNICAL_WORD.finditer(text)] == \
        [m.start() for m in unguarded.finditer(text)]


# Words shared with a person's day, found in a program's context only.
@pytest.mark.parametrize(("text", "found"), [
    ("the API rate limit", True), ("calls the API twice", True), ("API students", False),
    ("CPU usage at 100%", True), ("CPU占用", True), ("a new CPU", False),
    ("the web server", True), ("the server crashed", True), ("restarted the server", True),
    ("a slow server", False), ("the waiter's server", False),
    ("a heap overflow", True), ("a heap of laundry", False),
    ("a thread pool", True), ("the main thread", True), ("a forum thread", False),
    ("请求超时", True), ("考试超时", False), ("服务器", True), ("服务员", False),
    ("タイムアウトした", True), ("タイムアウトを取った", False),
    ("サーバーを再起動", True), ("ビールサーバー", False), ("サーバント", False),
    ("スレッドプール", True), ("掲示板のスレッド", False),
])
def test_a_word_shared_with_a_person_s_day_is_technical_only_in_a_program_s_context(
        text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A word shared with a person's day in a person's sense still, beside a word the context rules
# read: a tip of 100 dollars is no status code, a waiter returns or responds, the main thread of
# a story and a sheet's thread count are prose, a coffee or beer server (ビアサーバー) pours, a
# serval (サーバル) is a cat, a coach takes a timeout twice (タイムアウトを2回取った); and a
# program's words in its context found still.
@pytest.mark.parametrize(("text", "found"), [
    ("tipped the server 100 dollars", False), ("tipped the server 200 bucks", False),
    ("left before the server returned", False), ("the server returned with the bill", False),
    ("the server responded rudely", False), ("the server returns to the table", False),
    ("missed the main thread of the argument", False), ("the main thread of the story", False),
    ("sheets with a 1000 thread count", False), ("cares about thread count", False),
    ("コーヒーサーバーを買った", False), ("ビアサーバーを買った", False), ("お茶サーバー", False),
    ("サーバルを飼っている", False), ("タイムアウトを2回取った", False),
    ("タイムアウトを申請した", False),
    ("the server returned a 500", True), ("the server returns 404", True),
    ("the server responded with a 503 error", True), ("a server 502", True),
    ("the main thread of the app", True), ("blocks the main thread", True),
    ("サーバールームが暑い", True), ("サーバが落ちた", True), ("タイムアウトを設定すると", True),
    ("请求老是超时", True), ("请求总超时", True), ("请求都超时了", True), ("网络老超时", True),
    ("请求会超时", True), ("服务员上菜超时", False),
])
def test_a_shared_word_in_a_person_s_sense_beside_a_context_word_is_not_technical(
        text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# Each hand-kept first-letter look holds every letter its words can start with, as the standard
# library's parse of the pattern reads them: a word added without its letter is found nowhere.
def test_each_first_letter_look_holds_every_letter_its_pattern_can_start_with(
        first_letters: Callable[[str, int], set[str] | None]) -> None:
    from hermes_core.agent.routing import code_cues as cc

    cjk = first_letters(f"(?:{cc._ZH_CODE_NOUN}|{cc._JA_CODE_NOUN}|{cc._CJK_FAULT}"
                        f"|{cc._CJK_SHARED})", re.IGNORECASE)
    assert cjk is not None
    assert cjk - set(cc.CJK_WORD_OPENS) == set()
    shared = first_letters(cc._SHARED_IN_CONTEXT.removeprefix("(?=[acdhmrst])"), re.IGNORECASE)
    assert shared is not None
    assert {c.lower() for c in shared} - set("acdhmrst") == set()
    ascii_words = first_letters(f"(?:{cc._EN_CODE_NOUN}|{cc._NAMED_LANGS}|{cc._FAULT}"
                                f"|{cc._SYSTEMS}|{cc._SHARED_IN_CONTEXT})", re.IGNORECASE)
    assert ascii_words is not None
    assert {c.lower() for c in ascii_words} - set("abcdefghijklmnopqrstuvwxyz") == set()
    opens = cc.LANGUAGE_IN_CONTEXT.pattern[len("(?="):cc.LANGUAGE_IN_CONTEXT.pattern.index(")")]
    languages = first_letters(cc.LANGUAGE_IN_CONTEXT.pattern.removeprefix(f"(?={opens})"), 0)
    assert languages is not None
    assert languages - set(opens.strip("[]")) == set()
