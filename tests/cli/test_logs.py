"""The log lines ``-v``/``-vv`` print: what a path or a file holds is shown, never sent raw."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "家目录\x1b[2J\x1b]0;pwned\x07\x9b31m"   # ESC [2J clears the screen, OSC 0 retitles it


def _cli(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env.update(HOME=str(home.parent), PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *argv], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          encoding="utf-8", timeout=120, check=False)


@pytest.mark.parametrize("verbose", ["-v", "-vv"])
def test_a_log_line_naming_a_hostile_home_shows_its_escapes_and_keeps_its_chinese(
        verbose: str, tmp_path: Path) -> None:
    """``-v memory add`` in a home named with ESC [2J: the INFO line naming the new database
    cleared the screen (the command's own lines were already escaped, its log lines were not)."""
    home = tmp_path / HOSTILE
    home.mkdir()
    done = _cli([verbose, "memory", "add", "--session-id", "s1", "--summary", "部署到预发布环境",
                 "--home", str(home)], home)
    assert done.returncode == 0, done.stderr
    assert "applied memory schema migrations" in done.stderr
    assert "家目录\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m" in done.stderr
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in done.stderr + done.stdout


def test_a_traceback_logged_at_debug_shows_the_escapes_its_exception_quotes(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A ``-vv`` traceback (a slash command that failed) quotes its exception's message, which
    may hold a file's text: every line of it is escaped, the Chinese in it kept."""
    import logging

    from hermes_core.cli.logs import configure_logging
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = []
    try:
        configure_logging(2, sys.stderr)
        try:
            raise ValueError("坏文件 \x1b]52;c;cm0gLXJmIH4=\x07")
        except ValueError:
            logging.getLogger("hermes_core.cli.repl").debug("/%s failed", "save", exc_info=True)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert "DEBUG hermes_core.cli.repl: /save failed" in err
    assert "ValueError: 坏文件 \\x1b]52;c;cm0gLXJmIH4=\\x07" in err and "\x1b" not in err


def test_a_tool_error_quoting_the_models_arguments_is_logged_escaped_at_debug(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Model output reaches a ``-vv`` line when a tool fails on the arguments the model sent (the
    runner logs the exception): an OSC 52 clipboard write and a screen clear in a file name the
    model made up are shown as ``\\x1b``, the Chinese kept."""
    import logging

    from hermes_core import Agent
    from hermes_core.cli.logs import configure_logging
    from hermes_core.config import load_settings
    from hermes_core.testing import FakeProvider
    from hermes_core.testing.fakes import tool_call, tool_calls

    def read_notes(path: str) -> str:
        """Read a notes file."""
        raise FileNotFoundError(f"no notes at {path}")

    hostile = "笔记\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J.txt"
    fake = FakeProvider([tool_calls(tool_call("read_notes", {"path": hostile})), "done"])
    settings = load_settings({"home": str(tmp_path), "context_engine": {"enabled": False},
                              "skill_utils": {"enabled": False}}, env={})
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = []
    try:
        configure_logging(2, sys.stderr)
        agent = Agent(settings, provider=fake, tools=[read_notes])
        reply = agent.chat("read my notes")
        agent.close()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert reply.text == "done" and "tool read_notes raised" in err, err[-2000:]
    assert "no notes at 笔记\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J.txt" in err
    assert "\x1b" not in err and "\x07" not in err


def test_a_record_of_any_logger_is_one_line_on_the_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``-v`` shows every logger's records (a user's tool's own, a library's): a value with a
    newline, a NEL or U+2028 in it cannot print what looks like a second record."""
    import logging

    from hermes_core.cli.logs import configure_logging
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = []
    try:
        configure_logging(1, sys.stderr)
        forged = "ok\nWARNING hermes_core.agent: forged\x85ERROR x: y\u2028z"
        logging.getLogger("myapp.tools").warning("fetched %s", forged)
        try:
            raise OSError(forged)
        except OSError:
            logging.getLogger("myapp.tools").warning("failed", exc_info=True)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert ("WARNING myapp.tools: fetched ok\\nWARNING hermes_core.agent: forged\\x85ERROR x: "
            "y\\u2028z\n") in err
    assert not any(line.startswith(("WARNING hermes_core", "ERROR")) for line in err.split("\n"))
    assert "\x85" not in err and "\u2028" not in err
