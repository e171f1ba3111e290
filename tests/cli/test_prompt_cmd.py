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


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.sampled_from(["role", "content", "messages", "tool_calls",
                                                        "id", "name", "function", "arguments",
                                                        "tool_call_id"]), inner, max_size=5),
                     max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_any_json_history_loads_or_is_one_prompt_input_error(tmp_path_factory, data) -> None:
    import json

    path = tmp_path_factory.mktemp("h") / "h.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        messages = load_history(path)
    except PromptInputError as e:
        assert str(path) in str(e)
    else:
        assert all(m.role in ("user", "assistant", "tool", "system") for m in messages)
