"""Review 2: a ``--history`` file nested too deeply for the JSON parser is bad input like any other:
an error naming the file, exit 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli.main import main
from hermes_core.cli.prompt_cmd import PromptInputError, load_history


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"messages": ' + "[" * 5_000 + "]" * 5_000 + "}",
                                  '[{"role": "user", "content": "x", "tool_calls": '
                                  + '{"a":' * 5_000 + "1" + "}" * 5_000 + "}]"])
def test_deeply_nested_history_is_a_clear_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "history.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PromptInputError, match="nested too deeply") as info:
        load_history(path)
    assert str(path) in str(info.value)


def test_cli_exits_1_without_a_traceback(tmp_path: Path, hermes_home: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["prompt", "hi", "--home", str(hermes_home), "--history", str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
