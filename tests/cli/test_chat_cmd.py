"""Tests of ``hermes_core/cli/chat_cmd.py``: ``hermes-core chat`` options."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hermes_core.cli.main import main


def test_chat_model_flag_names_an_unknown_model_once_and_still_chats(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n/exit\n"))
    assert main(["chat", "--home", str(home), "--offline", "--no-stream", "--model", "claude-sonet-4-5"]) == 0
    out, err = capsys.readouterr()
    assert "offline reply" in out
    assert err.count("no provider lists 'claude-sonet-4-5'") == 1
    assert "did you mean 'claude-sonnet-4-5'?" in err


def test_chat_model_flag_is_quiet_for_a_dated_release_of_a_known_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr("sys.stdin", io.StringIO("/exit\n"))
    assert main(["chat", "--home", str(home), "--offline", "--no-stream",
                 "--model", "claude-sonnet-4-5-20250929"]) == 0
    assert "no provider lists" not in capsys.readouterr().err


def test_chat_model_flag_of_10000_characters_is_noted_by_its_head_and_length(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr("sys.stdin", io.StringIO("/exit\n"))
    assert main(["chat", "--home", str(home), "--offline", "--no-stream", "--model", "m" * 10_000]) == 0
    err = capsys.readouterr().err
    assert "no provider lists 'mmmm" in err
    assert "(10000 characters)" in err
    assert "m" * 200 not in err


def test_chat_model_flag_holding_a_key_is_refused_before_any_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``--model`` given a key (pasted in the wrong place) chatted with the key as the model
    name, sent in the body of every request."""
    home = tmp_path / "home"
    home.mkdir()
    key = "sk-proj-Abc123Def456Ghi789Jkl0Mno"
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n/exit\n"))
    assert main(["chat", "--home", str(home), "--offline", "--no-stream", "--model", key]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == ("hermes-core: chat: --model looks like a key, not a model name; "
                           "nothing was sent")
    assert "offline reply" not in out and key not in out + err
