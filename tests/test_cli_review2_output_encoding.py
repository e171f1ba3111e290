"""A reply with characters the output encoding lacks (a Latin-1 terminal, Windows' cp1252 when
redirected, PYTHONIOENCODING=ascii) is shown with replacements: it used to fail the turn with a
UnicodeEncodeError, and a streamed turn was then lost from the history."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider


@pytest.mark.parametrize("stream", [True, False])
def test_reply_outside_the_output_encoding_is_shown_with_replacements(tmp_path: Path, stream: bool):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    agent = Agent(settings, provider=FakeProvider(["café 你好… done"]))
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1", errors="strict", write_through=True)
    Repl(agent, stdin=io.StringIO("hello\n/exit\n"), stdout=out, stream=stream).run()
    shown = raw.getvalue().decode("latin-1")
    assert "error" not in shown, shown
    assert "café ??? done" in shown
    assert [m.content for m in agent.history] == ["hello", "café 你好… done"]


def test_commands_print_chinese_to_an_ascii_stdout_without_a_traceback(tmp_path: Path):
    import os
    import subprocess
    import sys

    from helpers import copy_example_home

    home = copy_example_home(tmp_path / "home")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "ascii"})
    env.pop("HERMES_HOME", None)
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "skills", "search", "帮我查快递",
                          "--home", str(home), "--no-embeddings"], capture_output=True, text=True,
                         encoding="ascii", errors="replace", timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "??" in res.stdout   # the skill's Chinese description, replaced
