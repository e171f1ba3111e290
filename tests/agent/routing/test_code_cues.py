"""Tests of ``hermes_core/agent/routing/code_cues.py``: where a text names something technical,
and what reading a long text costs. Requests for code as people type them are in
``test_code_cues_requests.py``."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from hermes_core.agent.routing.code_cues import technical_starts

from .conftest import CpuOf


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


# A bare shell, terminal or bash among a person's words (an airport, a flight, a birthday) is
# theirs, as the rules read it for a shell command; a longer technical thing (a bash script) or a
# computer's word beside it (ssh, a prompt) is technical still.
@pytest.mark.parametrize(("text", "found"), [
    ("I'm at the airport terminal, why is my flight late?", False),
    ("why did he leave the terminal at the airport", False),
    ("We had a bash for her birthday", False), ("a hermit crab's shell on the beach", False),
    ("why did he send me a QR code", False), ("the dress code for the party", False),
    ("my terminal at the airport cannot ssh", True), ("a bash script for her birthday", True),
    ("a shell script at the airport", True), ("why does the terminal say permission denied", True),
    ("write code for a QR scanner", True),
])
def test_a_bare_shell_word_among_a_person_s_words_or_a_token_s_code_is_not_technical(
        text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# Each hand-kept first-letter look holds every letter its words can start with, as the standard
# library's parse of the pattern reads them: a word added without its letter is found nowhere.
def test_each_first_letter_look_holds_every_letter_its_pattern_can_start_with(
        first_letters: Callable[[str, int], set[str] | None]) -> None:
    from hermes_core.agent.routing import code_cues as cc
    from hermes_core.agent.routing import status_cues as sc

    cjk = first_letters(f"(?:{cc._ZH_CODE_NOUN}|{cc._JA_CODE_NOUN}|{cc._CJK_FAULT}"
                        f"|{cc._CJK_SHARED}|{sc.CJK_STATUS})", re.IGNORECASE)
    assert cjk is not None
    assert cjk - set(cc.CJK_WORD_OPENS) == set()
    shared = first_letters(cc._SHARED_IN_CONTEXT.removeprefix("(?=[cdhmrst])"), re.IGNORECASE)
    assert shared is not None
    assert {c.lower() for c in shared} - set("cdhmrst") == set()
    part_opens = sc.STATUS_AFTER_PART[len("(?=["):sc.STATUS_AFTER_PART.index("]")]
    after_part = first_letters(sc.STATUS_AFTER_PART.removeprefix(f"(?=[{part_opens}])"),
                               re.IGNORECASE)
    assert after_part is not None
    assert {c.lower() for c in after_part} - set(part_opens) == set()
    ascii_words = first_letters(f"(?:{cc._EN_CODE_NOUN}|{cc._NAMED_LANGS}|{cc._FAULT}"
                                f"|{cc._SYSTEMS}|{cc._SHARED_IN_CONTEXT})", re.IGNORECASE)
    assert ascii_words is not None
    assert {c.lower() for c in ascii_words} - set("abcdefghijklmnopqrstuvwxyz") == set()
    opens = cc.LANGUAGE_IN_CONTEXT.pattern[len("(?="):cc.LANGUAGE_IN_CONTEXT.pattern.index(")")]
    languages = first_letters(cc.LANGUAGE_IN_CONTEXT.pattern.removeprefix(f"(?={opens})"), 0)
    assert languages is not None
    assert languages - set(opens.strip("[]")) == set()


# An HTTP status number beside a part of a running system (a 502 from the server, the gateway
# returned 504, 502错误, 网关返回502, 502エラー) is a program's; a number beside the same words
# in a person's sense (a $500 tip from the server, 400 people at the site, room 502, a score) is
# not. Decision 214.
@pytest.mark.parametrize(("text", "found"), [
    ("why is she seeing a 502 from the server", True), ("a 503 from the proxy", True),
    ("keeps getting 504 from the gateway", True), ("a 500 from the backend", True),
    ("got a 429 from the API", True), ("a 404 from the website", True),
    ("a 401 from our load balancer", True), ("a 500 error on checkout", True),
    ("the gateway returned 504", True), ("the proxy gives a 502", True),
    ("the page returns 404 again", True), ("the site shows a 503 error", True),
    ("the backend threw a 500", True), ("502 Bad Gateway", True),
    ("a 503 Service Unavailable", True), ("500 Internal Server Error", True),
    ("为什么他一直报502", True), ("网站出现502错误", True), ("网关返回504", True),
    ("页面显示404", True), ("接口502了", True), ("代理一直503", True),
    ("なぜ彼のサイトは502エラーになるの", True), ("ゲートウェイが504を返す", True),
    ("ページが404になる", True), ("503ステータスが返ってくる", True),
    ("a $500 tip from the server", False), ("tipped 500 dollars to the server", False),
    ("400 people at the site", False), ("made 400 errors on the test", False),
    ("wrote 500 on the page", False), ("500 at the service", False),
    ("the site shows 400 people", False), ("the page shows 500 words", False),
    ("room 502 from the lobby", False), ("the 502 bus from the station", False),
    ("a 400 from the judges", False), ("scored 500 on the page", False),
    ("他为什么住502房间", False), ("返回502房间", False), ("考了502分", False),
    ("页面显示500人报名", False), ("报了502个名额", False),
    ("彼はなぜ502号室にいるの", False), ("ページ数が404になる", False),
    ("400点が返ってきた", False), ("500円を返す", False),
])
def test_an_http_status_number_beside_a_system_part_is_technical(text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A Latin acronym only a network or program has, glued to Chinese or Japanese (他为什么RPC超时,
# TCP连不上, DB超时), is a program's as it is spelled apart; an acronym of a person's day glued
# to 超时 (KTV, PPT, DDL, VIP: a room, slides, a deadline, a membership) is not. Decision 214.
@pytest.mark.parametrize(("text", "found"), [
    ("他为什么RPC超时", True), ("他为什么RPC超时了", True), ("她为什么gRPC调用超时", True),
    ("他为什么TCP连不上", True), ("他为什么UDP丢包", True), ("他为什么DNS解析失败", True),
    ("他为什么SSH登不上去", True), ("他为什么HTTP请求失败", True), ("她为什么DB超时", True),
    ("他为什么IO超时", True), ("他为什么CDN超时", True), ("他为什么Redis超时", True),
    ("他为什么MySQL连接超时", True), ("他为什么socket超时", True), ("他为什么VPN一直超时", True),
    ("他為什麼RPC超時", True), ("彼はなぜRPCがタイムアウトしたの", True), ("彼はなぜTCP接続が切れたの", True),
    ("彼はなぜDBタイムアウトになったの", True), ("why does he get an RPC timeout", True),
    ("why did he open a TCP socket", True),
    ("他为什么KTV超时", False), ("他为什么PPT超时", False), ("他为什么DDL超时", False),
    ("她为什么VIP超时", False), ("他为什么MV超时", False), ("他为什么考试超时", False),
    ("他为什么停车超时", False), ("他为什么外卖超时", False), ("他为什么演讲超时", False),
    ("他为什么OT超时", False), ("他为什么NBA暂停", False), ("他为什么IQ很高", False),
    ("她为什么DIY超时", False), ("他为什么CEO开会超时", False), ("彼はなぜKTVで延長したの", False),
    ("他为什么GPA很低", False), ("他为什么ID超时", False), ("他为什么UP主直播超时", False),
    ("他为什么AA制", False), ("他为什么打DOTA超时", False),
])
def test_a_technical_acronym_glued_to_cjk_is_technical(text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A game's timeout in Japanese: during it (中, の間), out of it (明け, 直後), a team's strategy
# timeout (作戦タイムアウト), a volleyball technical timeout, one called or left; with a coach, a
# bench, a player beside it. A program's timeout (接続タイムアウト, タイムアウトした, set, retried
# after) stays one. Decision 214.
@pytest.mark.parametrize(("text", "found"), [
    ("なぜ監督はタイムアウトを取ったの？", False), ("彼女はなぜタイムアウト中に泣いたの", False),
    ("彼はなぜタイムアウト明けに交代したの？", False), ("彼はなぜタイムアウトの間に水を飲んだの？", False),
    ("監督はなぜタイムアウトを取らなかったの？", False), ("彼はなぜ作戦タイムアウトを使ったの？", False),
    ("彼はなぜタイムアウトを使い切ったの？", False), ("彼はなぜタイムアウト明けに笑ったの？", False),
    ("彼女はなぜタイムアウト中に監督と話したの？", False), ("彼はなぜタイムアウト直後に得点したの？", False),
    ("彼はなぜタイムアウトをコールしたの？", False), ("彼はなぜテクニカルタイムアウトで怒ったの？", False),
    ("彼はなぜタイムアウトでベンチに戻ったの？", False), ("彼はなぜ試合のタイムアウトで叫んだの？", False),
    ("彼はなぜタイムアウト中に作戦を変えたの？", False), ("彼はなぜタイムアウトを残したの？", False),
    ("彼はなぜタイムアウト明けにミスしたの？", False), ("コーチはなぜタイムアウトで選手を叱ったの", False),
    ("彼はなぜタイムアウトで監督と話したの？", False), ("彼はなぜ2回目のタイムアウトを取ったの", False),
    ("彼はなぜタイムアウトしたの？", True), ("彼はなぜ接続タイムアウトになったの？", True),
    ("彼はなぜタイムアウトエラーが出たの？", True), ("彼はなぜタイムアウト後にリトライしたの？", True),
    ("彼はなぜタイムアウトを30秒に設定したの？", True), ("彼はなぜタイムアウト値を変えたの？", True),
    ("彼はなぜリクエストがタイムアウトするの？", True), ("彼はなぜDBのタイムアウトを延ばしたの？", True),
    ("彼はなぜ読み取りタイムアウトが起きたの？", True), ("なぜセッションがタイムアウトするの", True),
    ("彼はなぜタイムアウトで接続が切れたの？", True), ("APIがタイムアウトで落ちた", True),
])
def test_a_game_s_timeout_in_japanese_is_not_a_program_s(text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# "Apis" cased so is the honeybees' genus, the Egyptian bull or a name; an API in capitals, a
# programmer's lower case or "Api" before an API's word is a program's. Decision 214.
@pytest.mark.parametrize(("text", "found"), [
    ("why does he keep Apis mellifera", False), ("the genus Apis", False),
    ("Apis cerana in his garden", False), ("his dog Apis", False), ("Apis, the bull god", False),
    ("why did he name the cat Apis", False), ("Apis bees swarm", False),
    ("he studies Apis dorsata", False), ("蜜蜂属Apis", False), ("ミツバチ属Apis", False),
    ("Apis was worshipped at Memphis", False),
    ("why did he call the APIs", True), ("why does he call the API twice", True),
    ("the REST APIs are slow", True), ("why does he hit the apis so often", True),
    ("calls the api twice", True), ("the Api key leaked", True), ("他为什么调API", True),
    ("彼はなぜAPIを叩いたの", True), ("他为什么调用APIs", True), ("the APIS are down", True),
    ("Apis endpoint returns 500", True),
])
def test_apis_cased_as_a_genus_or_name_is_not_an_api(text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A status or error code named as one ("status 404", "error 500", 状态码404, 错误码是500) is a
# program's; a number after "status" or "error" going on as a count is not. A count word after a
# CJK status-shaped number (500万, 500多人, 400美元, 400ドル, 400枚) is money or a tally, not a
# status. Decision 214 (After review).
@pytest.mark.parametrize(("text", "found"), [
    ("why does he get status 404", True), ("why does she keep getting error 500", True),
    ("status: 503 on every call", True), ("the status code is 502", True),
    ("error 429 again", True), ("HTTP status 500", True), ("got error 401.", True),
    ("他为什么状态码404", True), ("他为什么错误码500", True), ("他为什么返回码是500", True),
    ("为什么响应码是502", True), ("狀態碼503", True),
    ("his status 400 followers", False), ("made error 500 times", False),
    ("a margin of error of 500 votes", False), ("status 500 points", False),
    ("他为什么返回500万", False), ("他为什么返回500多人", False), ("他为什么报500多个名额", False),
    ("他为什么返回500美元", False), ("他为什么返回400萬", False), ("她为什么返回400余人", False),
    ("彼女はなぜサイトで400ドルのバッグを買ったの？", False), ("なぜサイトは500万PVもあるの", False),
    ("彼はなぜページが400枚もある本を読んだの", False), ("彼はなぜサイトで500ポイント貯めたの", False),
])
def test_a_status_code_named_is_technical_and_a_count_after_a_cjk_number_is_not(
        text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A program's timeout named as one (接続タイムアウト, 読み取りタイムアウト, セッションタイムアウト)
# is a program's during it or after it too; only a bare or a game's timeout (作戦タイムアウト中)
# is read as a game's by 中, 明け, 直後, の間. Decision 214 (After review).
@pytest.mark.parametrize(("text", "found"), [
    ("彼はなぜ接続タイムアウト中にログを見たの", True),
    ("彼はなぜ読み取りタイムアウト直後に再送したの", True),
    ("彼はなぜセッションタイムアウトの間に作業したの", True),
    ("なぜ通信タイムアウト明けに再接続するの", True),
    ("彼はなぜリクエストタイムアウト中に待ったの", True),
    ("彼はなぜ応答タイムアウトの間に止まったの", True),
    ("彼はなぜネットワークタイムアウト中に泣いたの", True),
    ("彼はなぜ書き込みタイムアウト直後に落ちたの", True),
    ("彼はなぜ作戦タイムアウト中に泣いたの", False),
    ("彼女はなぜタイムアウト中に泣いたの", False),
    ("彼はなぜタイムアウト明けに交代したの？", False),
    ("彼はなぜテクニカルタイムアウト明けに笑ったの", False),
])
def test_a_program_s_named_timeout_stays_a_program_s_during_and_after_it(
        text: str, found: bool) -> None:
    assert bool(_named(text)) is found, _named(text)


# A near miss of each request shape, repeated to 80,000 characters, costs about four times what
# 20,000 do (a pattern splitting a run n² ways would cost sixteen): no request stalls a turn.
@pytest.mark.parametrize("unit", [
    "implement ", "write a recursive ", "write ", "write about ", "binary search ",
    "binary search in ", "please sort ", ". sort ", "sort the list in ", "regex ", "make this ",
    "convert this to ", "how to reverse a ", "implement a ", "java program ", "python ",
    "dockerfile ", "quick sort ", "write" + " " * 50, "binary" + " " * 80, ".\n ", "Go ", "C R ",
    "İmplement ", "İ sort in ",
    "实现", "二分查找", "给我一个", "写一个JS", "转成", "用Python", "用SQL", "链表", "快排",
    ". find a hotel ", ". sort in java ", ". find a hotel in java ", "快排的段", "写快排，",
    "how do i find a hotel ", "how to in java ", "rewrite the chorus ",
    "reverse ", "reverse linked ", "two sum ", "leetcode ", "write a stack ", "make a Python ",
    "make a Go http ", "with pandas ", ". read with pandas ", "qr code ", "generate a qr code ",
    "in C++ ", "two sum in C++ ", "C 言語 ", "qrコードを作って", "django model ", "二分探索",
    "スタック", "クイックソートの記事", "バーベキュー",
])
def test_a_long_run_of_a_near_miss_is_read_in_linear_time(unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.code_cues import asks_for_code

    small, large = cpu_of(asks_for_code, unit, 20_000), cpu_of(asks_for_code, unit, 80_000)
    assert large < 8 * small + 0.05, (small, large)


# One long run of blanks after a judge's problem number ("LeetCode 1" in a pasted table): the
# number's blanks were split two ways around an optional dot, n² steps (10,000 took 8 s).
@pytest.mark.parametrize("head", ["leetcode 1", "leetcode problem 1", "hackerrank #12"])
@pytest.mark.parametrize("blank", [" ", "\t"])
def test_one_long_run_of_blanks_after_a_judge_s_problem_number_is_read_in_linear_time(
        head: str, blank: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.code_cues import asks_for_code

    def read(text: str) -> object:
        return asks_for_code(head + text)

    small, large = cpu_of(read, blank, 1_000), cpu_of(read, blank, 4_000)
    assert large < 8 * small + 0.05, (small, large)



# A bare shell word beside a person's words, repeated (every match looks at its neighbours):
# 80,000 characters cost about four times what 20,000 do, as the near misses above.
@pytest.mark.parametrize("unit", [
    "shell beach ", "terminal is terminal ", "bash party" + " " * 50, "shell" + " " * 70 + "beach\n",
    "shell beach ls ",
])
def test_a_bare_shell_word_among_a_person_s_words_is_read_in_linear_time(unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.code_cues import names_a_shell

    small, large = cpu_of(names_a_shell, unit, 20_000), cpu_of(names_a_shell, unit, 80_000)
    assert large < 8 * small + 0.05, (small, large)


# The same runs through technical_starts, which reads each bare word's neighbours as
# names_a_shell does (the reasoning cue's vocabulary), and a why about a person beside them.
@pytest.mark.parametrize("unit", [
    "shell beach ", "terminal is terminal ", "bash party" + " " * 50, "shell" + " " * 70 + "beach\n",
    "shell beach ls ", "why did he leave the terminal at the airport? ", "İ terminal flight ",
])
def test_a_bare_shell_word_among_a_person_s_words_is_read_in_linear_time_as_a_technical_word(
        unit: str, cpu_of: CpuOf) -> None:
    def read(text: str) -> object:
        return technical_starts(text, text.lower())

    small, large = cpu_of(read, unit, 20_000), cpu_of(read, unit, 80_000)
    assert large < 8 * small + 0.05, (small, large)
