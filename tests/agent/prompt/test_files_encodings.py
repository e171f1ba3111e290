"""Tests of ``hermes_core/agent/prompt/files.py``: context files that are not UTF-8 without a mark.

UTF-16/32 with and without a byte-order mark, GBK/GB18030, Big5, EUC-JP and the Windows code
pages are read (and the encoding told) or skipped as binary; a huge one keeps its head and tail,
cut in the policy's encoding. Which reading the guess takes on short lines is pinned in
``test_guess_encoding.py``.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from hermes_core.agent.prompt.files import ReadPolicy, read_context_file, truncate_to_budget
from tests.agent.prompt.conftest import build


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be-bom", "utf-32"])
def test_a_file_saved_as_utf16_or_utf32_with_a_bom_is_read(tmp_path: Path, codec: str) -> None:
    """PowerShell's ``echo ... > USER.md`` and Notepad's "Unicode" write UTF-16 with a byte-order
    mark: the file was skipped as "binary (contains NUL bytes)", and the user's notes left the
    prompt with a warning that sent them looking for a corrupt file."""
    p = tmp_path / "USER.md"
    text = "The user is Zoë, 住在上海, and likes 🎉.\r\nPrefers terse answers.\r\n"
    raw = (codecs.BOM_UTF16_BE + text.encode("utf-16-be") if codec == "utf-16-be-bom"
           else text.encode(codec))
    p.write_bytes(raw)
    got = read_context_file(p, ReadPolicy(data=True))
    assert got.status == "ok" and got.events == ()
    assert got.text == "The user is Zoë, 住在上海, and likes 🎉.\nPrefers terse answers."


def test_a_huge_utf16_file_keeps_its_head_and_tail(tmp_path: Path) -> None:
    p = tmp_path / "MEMORY.md"
    body = "START-MARK\n" + ("filler 🎉 中文 line\n" * 20_000) + "END-MARK\n"
    p.write_bytes(body.encode("utf-16"))
    for cap in (50_001, 50_002, 50_003):       # every alignment of the tail's seek
        r = read_context_file(p, ReadPolicy(token_budget=2_000, max_file_bytes=cap))
        assert r.status == "truncated", r.events
        assert r.text.startswith("START-MARK") and r.text.endswith("END-MARK")
        assert "\ufffd" not in r.text and "\x00" not in r.text


def test_utf16_text_holding_nul_characters_is_still_binary(tmp_path: Path) -> None:
    p = tmp_path / "SOUL.md"
    p.write_bytes("abc\x00def".encode("utf-16"))
    got = read_context_file(p)
    assert got.status == "skipped" and "binary" in got.events[0].reason


THAI_LINE = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์"


def test_a_file_is_cut_to_its_budget_in_the_policys_encoding() -> None:
    """gpt-4's cl100k_base spends ~2.5x o200k_base's tokens on Thai: a budget met in one is
    overrun in the other, so the cut is made in the encoding of the model it is for."""
    from hermes_core.agent.prompt.files import cut_file_text
    from hermes_core.tokens import count_tokens
    original = "\n".join(f"{i}: {THAI_LINE}" for i in range(400))
    for encoding in ("o200k_base", "cl100k_base"):
        policy = ReadPolicy(token_budget=500, encoding=encoding, injection_scan=False)
        text, status, events = cut_file_text(original, policy, name="MEMORY.md", shown="/h/MEMORY.md")
        assert status == "truncated" and "500-token budget" in events[0].reason
        assert 300 <= count_tokens(text, encoding) <= 540     # cut at line breaks; the marker too
    wide, _ = truncate_to_budget(original, 500, name="MEMORY.md")
    assert count_tokens(wide, "cl100k_base") > 2 * 500


@pytest.mark.parametrize(("text", "codec"), [
    ("我叫李明。", "gbk"),
    ("- 用户喜欢简洁的回答", "gbk"),
    ("# 用户\n住在上海，喜欢喝咖啡。\n偏好：简短回答\n", "gbk"),
    ("# 记忆\n项目使用 Python 3.11，部署在服务器上。€\n", "gb18030"),
])
def test_a_gbk_or_gb18030_file_is_read_and_the_encoding_is_told(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, codec: str) -> None:
    """A Chinese Windows saves Notepad files in GBK (code page 936): the user's notes were
    skipped as "not valid UTF-8". Short lines are the hard case (GBK bytes also decode as
    Korean or Japanese code pages); the file is read as GB18030, and a line says so."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode(codec))
    got = read_context_file(p, ReadPolicy(data=True))
    assert got.status == "ok" and got.text == text.strip("\n")
    (ev,) = got.events
    assert ev.file == str(p) and "GB18030" in ev.reason and "UTF-8" in ev.reason
    assert str(p) in caplog.text and "GB18030" in caplog.text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf16_file_without_a_bom_is_read(tmp_path: Path, codec: str) -> None:
    p = tmp_path / "SOUL.md"
    text = "# Soul\nYou are helpful. 你好，Zoë.\n"
    p.write_bytes(text.encode(codec))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert codec.upper()[:6] in got.events[0].reason


@pytest.mark.parametrize("text", ["über\n", "Käse\n", "Öl\n", "- für Tür\n", "müde über Öl\n"])
def test_a_short_latin1_note_that_decodes_as_gbk_is_not_read_as_chinese(tmp_path: Path,
                                                                       text: str) -> None:
    """A Latin-1 accent followed by a letter is a valid GBK pair ("über" -> "黚er"): a short
    German note was read as garbage Chinese in every prompt. Not one of those characters is
    common Chinese (GB2312), as nearly every character of a real GBK file is: not Chinese, but
    the cp1252 it was saved in."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("cp1252"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert got.events[0].file == str(p) and "CP1252" in got.events[0].reason


def test_a_big5_file_is_not_read_as_shift_jis(tmp_path: Path) -> None:
    """A Big5 line the detector ranks Shift-JIS first: its kanji readings are rare ones."""
    p = tmp_path / "MEMORY.md"
    p.write_bytes("這是一個測試，記憶檔案。\n".encode("big5"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == "這是一個測試，記憶檔案。"
    assert "Big5" in got.events[0].reason


def test_nul_bytes_that_decode_as_utf16_control_characters_are_binary(tmp_path: Path) -> None:
    p = tmp_path / "USER.md"
    p.write_bytes(b"\x00\x01\x02\x03 not text at all\x00\x07")
    got = read_context_file(p)
    assert got.status == "skipped" and "binary" in got.events[0].reason


def test_a_huge_gbk_file_keeps_its_head_and_tail(tmp_path: Path) -> None:
    p = tmp_path / "MEMORY.md"
    body = "开始标记\n" + ("用户喜欢简洁的回答，住在上海。\n" * 8_000) + "结束标记\n"
    p.write_bytes(body.encode("gbk"))
    for cap in (50_001, 50_002, 50_003):       # every alignment of the tail's seek
        r = read_context_file(p, ReadPolicy(token_budget=2_000, max_file_bytes=cap))
        assert r.status == "truncated", r.events
        assert r.text.startswith("开始标记") and r.text.endswith("结束标记")
        assert "\ufffd" not in r.text and any("GB18030" in e.reason for e in r.events)


def test_a_gbk_context_file_keeps_the_prefix_byte_identical(hermes_home: Path,
                                                           tmp_path: Path) -> None:
    (hermes_home / "SOUL.md").write_bytes("你是一个有用的助手，请用中文简洁地回答。\n".encode("gbk"))
    b = build(hermes_home, tmp_path)
    first = b.build("你好")
    assert "你是一个有用的助手" in first.system
    reads = b.file_reads
    second = b.build("再见")
    assert second.system.encode() == first.system.encode() and b.file_reads == reads
    assert any("GB18030" in str(e) for e in b.events)


@pytest.mark.parametrize(("text", "codec"), [
    ("café naïve\n", "cp1252"),
    ("# Notes\nLe client préfère des réponses courtes.\n", "cp1252"),
    ("Ich heiße Jürgen, wohne in Köln\n", "cp1252"),
    ("Привет, я помощник\n", "cp1251"),
    ("# Память\nПользователь живёт в Москве.\n", "cp1251"),
    ("Москва\n", "cp1251"),          # bytes that also pair up as rare GB2312 / Hanja characters
    ("Привет!\n", "cp1251"),
    ("Ёлка\n", "cp1251"),            # as Big5: one frequent character of two
    ("Киев\n", "cp1251"),
    ("Καλημέρα κόσμε\n", "cp1253"),  # as cp1251 "КблзмЭсб кьуме"; skipped before cp1253
    ("Děkuji za pomoc\n", "cp1250"),
])
def test_a_western_or_cyrillic_code_page_file_is_read_and_the_encoding_is_told(
        tmp_path: Path, text: str, codec: str) -> None:
    """Notepad on a Western, Russian, Greek or Czech/Polish Windows saves in cp1252 / cp1251 /
    cp1253 / cp1250; the note was skipped. Read when one reading plainly looks like its
    script's text, with a line saying which code page was assumed."""
    p = tmp_path / "MEMORY.md"
    p.write_bytes(text.encode(codec))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    (ev,) = got.events
    assert ev.file == str(p) and codec.upper() in ev.reason and "UTF-8" in ev.reason


@pytest.mark.parametrize("text", ["I don’t know. It’s fine.\n", "“Quoted” …\n",
                                  "“”…\n", "Don’t\n"])
def test_a_cp1252_file_of_smart_quotes_is_read(tmp_path: Path, text: str) -> None:
    """Word's and Notepad's curly quotes are the usual reason a Western file is not UTF-8.
    Their bytes (0x91-0x94, 0x85) are the same characters in cp1251, the detector lists one
    page for the two equal readings, cp1251, which has no Cyrillic: the file was skipped."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("cp1252"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert got.events[0].file == str(p) and "CP1252" in got.events[0].reason


@pytest.mark.parametrize("text", ["Don’t—ever—stop\n", "x’s\n", "“Hi”There\n",
                                  "50°C\n"])
def test_a_cp1252_punctuation_before_a_letter_is_not_read_as_chinese(tmp_path: Path,
                                                                      text: str) -> None:
    """A curly quote or dash (0x80-0x9f) or a degree sign before an ASCII letter is a valid
    GBK/3 or Big5 pair: "Don’t—ever" read as GB18030 "Don抰梕ver", "50°C" as Big5 "50蚓". Every
    character of those readings ends in an ASCII byte, as almost no Chinese text does; the
    cp1252 reading fits, so it is taken."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("cp1252"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert got.events[0].file == str(p) and "CP1252" in got.events[0].reason


@pytest.mark.parametrize(("text", "codec"), [
    ("été\n", "cp1252"),                             # as cp1251 "йтй": too little to tell
])
def test_a_single_byte_file_without_strong_evidence_is_skipped(tmp_path: Path, text: str,
                                                               codec: str) -> None:
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode(codec))
    got = read_context_file(p)
    assert got.status == "skipped" and got.text == ""
    assert got.events[0].file == str(p) and "not valid UTF-8" in got.events[0].reason


def test_a_utf8_file_with_one_stray_byte_is_not_read_as_cp1252(tmp_path: Path) -> None:
    """A UTF-8 note cut mid-character (or with one stray byte) reads as cp1252 mojibake
    ("cafÃ©") in every accent: its bytes are mostly valid UTF-8 sequences, so no guess."""
    p = tmp_path / "USER.md"
    p.write_bytes("café naïve, déjà vu, über\n".encode() + b"\xff\n")
    got = read_context_file(p)
    assert got.status == "skipped" and got.text == ""
    assert got.events[0].file == str(p) and "not valid UTF-8" in got.events[0].reason


@pytest.mark.parametrize("raw", [
    "Hello world 中".encode()[:-1],        # a character cut after two of its three bytes
    "note: 你好".encode()[:-2],             # one whole character, then a cut one
])
def test_a_utf8_file_cut_mid_character_is_not_read_in_a_guessed_encoding(
        tmp_path: Path, raw: bytes) -> None:
    """Valid UTF-8 up to a last character cut short (a copy stopped mid-write, ``head -c``) was
    read as cp1252 ("Hello world ä¸") or GB18030 ("浣犲"): its bytes are UTF-8's, so no guess."""
    p = tmp_path / "USER.md"
    p.write_bytes(raw)
    got = read_context_file(p)
    assert got.status == "skipped" and got.text == ""
    assert got.events[0].file == str(p) and "not valid UTF-8" in got.events[0].reason


@pytest.mark.parametrize("text", ["привет мир, как дела\n", "ПРИВЕТ МИР\n",
                                  "заметки: купить молоко\n"])
def test_a_koi8_r_file_is_not_read_as_cp1251(tmp_path: Path, text: str) -> None:
    """KOI8-R puts small letters where cp1251 has capitals and reorders the alphabet: an
    all-small KOI8-R note read as cp1251 "РТЙЧЕФ НЙТ" (all capitals pass the mixed-case test),
    an all-capital one as "ртйчеф нйт". Those readings have few vowels (about a quarter of the
    letters; Russian has over a third)."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("koi8_r"))
    got = read_context_file(p)
    assert got.status == "skipped" and got.text == ""
    assert got.events[0].file == str(p) and "not valid UTF-8" in got.events[0].reason


def test_binary_bytes_without_nul_are_still_skipped_naming_the_file(tmp_path: Path) -> None:
    p = tmp_path / "SOUL.md"
    p.write_bytes(bytes(range(1, 256)) * 4)
    got = read_context_file(p)
    assert got.status == "skipped" and got.text == ""
    assert got.events[0].file == str(p) and "skipped" in got.events[0].reason


def test_a_huge_cp1251_file_keeps_its_head_and_tail(tmp_path: Path) -> None:
    p = tmp_path / "MEMORY.md"
    body = "Начало\n" + ("Пользователь любит короткие ответы.\n" * 3_000) + "Конец\n"
    p.write_bytes(body.encode("cp1251"))
    r = read_context_file(p, ReadPolicy(token_budget=2_000, max_file_bytes=50_001))
    assert r.status == "truncated", r.events
    assert r.text.startswith("Начало") and r.text.endswith("Конец")
    assert any("CP1251" in e.reason for e in r.events)


@pytest.mark.parametrize("text", ["們說話\n", "說話國語\n"])
def test_a_gbk_file_of_only_rare_traditional_characters_is_read(tmp_path: Path,
                                                                text: str) -> None:
    """GBK/4 holds most traditional characters; a note written only in them had none of the
    common part and was skipped. Read as GB18030 when no Western/Cyrillic reading fits and
    every character past ASCII is a Han character or CJK punctuation."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("gbk"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert "GB18030" in got.events[0].reason


@pytest.mark.parametrize("text", ["こんにちは、元気ですか。\n",
                                  "# メモ\nユーザーは東京に住んでいます。\n",
                                  "日本語の文章です。\n"])
def test_euc_jp_text_with_kana_is_read_as_euc_jp(tmp_path: Path, text: str) -> None:
    """EUC-JP kana sit where GB2312 has them, so a Japanese note also decodes as GB18030 (its
    kanji wrong: "元気" as "傅丹") or as cp949 (all of it wrong). A reading with hiragana or
    katakana is Japanese: EUC-JP is taken when it reads the whole file."""
    p = tmp_path / "USER.md"
    p.write_bytes(text.encode("euc_jp"))
    got = read_context_file(p)
    assert got.status == "ok" and got.text == text.strip("\n")
    assert "EUC-JP" in got.events[0].reason


def test_euc_jp_kanji_without_kana_is_still_read_as_gb18030(tmp_path: Path) -> None:
    """Without kana nothing tells EUC-JP kanji from GB2312 Han: taken as GB18030, warned."""
    p = tmp_path / "USER.md"
    p.write_bytes("東京都\n".encode("euc_jp"))
    got = read_context_file(p)
    assert got.status == "ok" and "GB18030" in got.events[0].reason


def test_the_huge_file_fallback_decodes_the_head_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The guess decoded the head to check it, then the read decoded it again."""
    import codecs as codecs_module

    from hermes_core.agent.prompt import files
    p = tmp_path / "MEMORY.md"
    body = "开始标记\n" + ("用户喜欢简洁的回答，住在上海。\n" * 8_000) + "结束标记\n"
    p.write_bytes(body.encode("gbk"))
    cap = 50_001
    head_len = int(cap * 0.75)
    decoded: list[int] = []
    real = codecs_module.getincrementaldecoder

    def counting(name: str):  # type: ignore[no-untyped-def]
        factory = real(name)

        def make():  # type: ignore[no-untyped-def]
            dec = factory()
            inner = dec.decode

            def decode(data: bytes, final: bool = False) -> str:
                text = inner(data, final)   # counted when it decoded (not a failed probe)
                if len(data) >= head_len - 4:
                    decoded.append(len(data))
                return text
            dec.decode = decode  # type: ignore[method-assign]
            return dec
        return make
    monkeypatch.setattr(files.codecs, "getincrementaldecoder", counting)
    r = read_context_file(p, ReadPolicy(token_budget=2_000, max_file_bytes=cap))
    assert r.status == "truncated" and r.text.startswith("开始标记")
    assert len(decoded) == 1, decoded
