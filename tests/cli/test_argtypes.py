"""Tests of ``hermes_core/cli/argtypes.py``: the value types of the command-line options."""

from __future__ import annotations

import argparse
import io
import sys

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from hermes_core.cli.argtypes import (
    MAX_DIGITS,
    Parser,
    non_negative_int,
    positive_int,
    shorten,
    whole_number,
)


@pytest.mark.parametrize("parse", [positive_int, non_negative_int, whole_number])
def test_a_number_of_thousands_of_digits_is_too_large_not_a_non_number(parse) -> None:
    """int() refuses over 4,300 digits with a ValueError: the option then said "not a whole
    number" (it is one) and echoed all 5,000 digits back."""
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse("9" * 5000)
    message = str(info.value)
    assert "too large" in message and "5000 digits" in message and len(message) < 80


@pytest.mark.parametrize("parse", [positive_int, non_negative_int, whole_number])
def test_a_long_non_number_is_shown_by_its_head(parse) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse("x" * 5000)
    message = str(info.value)
    assert "not a whole number" in message and len(message) < 80


def test_the_bounds_of_each_kind() -> None:
    assert (positive_int("1"), non_negative_int("0"), whole_number("-3")) == (1, 0, -3)
    for parse, text in ((positive_int, "0"), (non_negative_int, "-1")):
        with pytest.raises(argparse.ArgumentTypeError, match="must be at least"):
            parse(text)


@hsettings(max_examples=200, deadline=None)
@given(st.text(max_size=6000) | st.from_regex(r"[+-]?\d{1,6000}", fullmatch=True))
def test_any_text_is_a_number_or_one_short_usage_message(text: str) -> None:
    """Whatever is typed after an option, each parser answers a number in range or a short
    ArgumentTypeError argparse shows as a usage error; never another exception."""
    for parse, low in ((positive_int, 1), (non_negative_int, 0), (whole_number, None)):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as e:
            assert len(str(e)) < 80
        else:
            assert low is None or value >= low
            assert len(str(abs(value))) <= MAX_DIGITS


def test_shorten_keeps_a_short_value_and_cuts_a_long_one_to_its_head_and_length() -> None:
    assert shorten("gpt-4o") == "gpt-4o"
    long = "x" * 10_000
    assert shorten(long).startswith("x" * 20) and shorten(long).endswith("... (10000 characters)")
    assert len(shorten(long)) < 100


@pytest.mark.parametrize("tail", ["sk-proj-Abc123Def456Ghi789Jkl0Mno and more", "\U0001f1e8\U0001f1f3" * 60,
                                  "e\u0301" * 120])
def test_a_bug_line_over_200_characters_shows_whole_markers_and_characters(tail: str) -> None:
    """main's bug line: a text over 200 characters is shown by its first 100. The cut fell inside
    the key's "[REDACTED]" or between the halves of a flag or a letter and its accent."""
    for at in range(93, 100):
        shown = shorten("x" * at + tail + "y" * 200, 200)
        head = shown.split("... (")[0]
        assert "[REDACTED]" in head or "[RED" not in head, head
        assert "sk-proj" not in shown
        assert head.endswith("x") or head.endswith(("]", "\U0001f1e8\U0001f1f3", "e\u0301")), head
        assert head[-1] != "e" or head.endswith("\u0301") or head.endswith("x")


class _FullStream(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def test_a_usage_error_on_a_stream_that_refuses_it_still_exits_2(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian's Python 3.11.2 argparse lets a failed write of the usage text out before exit(2),
    so ``hermes-core --typo 2>/dev/full`` ended 1 instead of 2 (3.11.7 swallows it itself)."""
    monkeypatch.setattr(sys, "stderr", _FullStream())
    parser = Parser(prog="hermes-core")
    with pytest.raises(SystemExit) as done:
        parser.parse_args(["--no-such-option"])
    assert done.value.code == 2


def test_pad_fills_terminal_columns_shows_escapes_and_never_cuts() -> None:
    from hermes_core.cli.argtypes import pad
    assert pad("阿里云", 8) == "阿里云  "            # three characters, six columns
    assert pad("x\x1b[2J", 8) == "x\\x1b[2J"       # escaped: eight columns, nothing to add
    assert pad("openai-compatible", 6) == "openai-compatible"


def _dash_parser() -> Parser:
    parser = Parser(prog="hermes-core")
    commands = parser.add_subparsers(dest="command", parser_class=Parser)
    search = commands.add_parser("search")
    search.add_argument("--json", action="store_true")
    search.add_argument("query", metavar="QUERY")
    return parser


@pytest.mark.parametrize("argv", [["search", "-rebase"], ["search", "--json", "-网络"]])
def test_a_value_that_starts_with_a_dash_is_told_to_follow_a_double_dash(argv, capsys) -> None:
    """``memory search -rebase`` said only "the following arguments are required: QUERY": the
    query was there, read as an unknown option. The message names the word and the way to pass
    it."""
    with pytest.raises(SystemExit) as info:
        _dash_parser().parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    word = argv[-1]
    assert f"'{word}' was read as an option" in err
    assert f"hermes-core search -- {word}" in err


def test_a_lone_dash_and_a_double_dash_value_parse_as_values() -> None:
    assert _dash_parser().parse_args(["search", "-"]).query == "-"
    assert _dash_parser().parse_args(["search", "--", "-rebase"]).query == "-rebase"


def test_a_missing_value_without_a_dashed_word_keeps_argparse_s_message(capsys) -> None:
    with pytest.raises(SystemExit):
        _dash_parser().parse_args(["search", "--json"])
    err = capsys.readouterr().err
    assert "the following arguments are required: QUERY" in err
    assert "was read as an option" not in err


def test_an_abbreviated_option_is_not_taken_for_a_dashed_value(capsys) -> None:
    with pytest.raises(SystemExit):
        _dash_parser().parse_args(["search", "--js"])
    assert "was read as an option" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["chat", "prompt", "route"])
def test_a_model_option_with_control_or_invisible_characters_is_a_usage_error(
        command: str, capsys) -> None:
    """``--model "gpt 4o"`` or a name with an escape sequence was sent as written, for a 404 a
    turn later (the REPL's /model refuses the same names)."""
    from hermes_core.cli.main import main

    with pytest.raises(SystemExit) as info:
        main([command, "--model", "gpt-4o\x1b[2J", "hello"] if command != "chat"
             else [command, "--model", "gpt-4o\x1b[2J"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "is not a model name: it has spaces, control or invisible characters" in err
    assert "\x1b" not in err
