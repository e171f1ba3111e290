"""``prompt --history``: a hostile history file is refused with one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli.main import main
from hermes_core.cli.prompt_cmd import load_history
from hermes_core.errors import PromptInputError


@pytest.mark.parametrize("text,why", [
    ('[{"role": "user", "content": "hi", "id": ' + "9" * 5000 + "}]", "5000 digits"),
    ('{"messages": [{"role": "assistant", "content": "x", "tool_calls": [{"id": ' + "1" * 4400
     + ', "name": "f"}]}]}', "digits"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_history_that_would_break_the_parser_is_refused(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "h.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PromptInputError) as info:
        load_history(path)
    assert str(path) in str(info.value) and why in str(info.value)


def test_prompt_command_says_one_line_for_a_huge_integer(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.json"
    path.write_text('[{"role": "user", "content": ' + "7" * 4301 + "}]", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    assert main(["prompt", "hello", "--home", str(home), "--history", str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
