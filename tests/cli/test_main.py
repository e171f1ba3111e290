"""The ``hermes-core`` shell: whatever a command or argparse prints, a key never reaches the terminal.

A key pasted into the wrong place on the command line (after the message, as ``--model``, as a file
name) comes back in argparse's usage errors, in "file not found" lines and in the routing report;
the shell scrubs both streams, so none of them shows it.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-proj-Abc123Def456Ghi789Jkl0Mno"


@pytest.mark.parametrize("argv", [
    ["prompt", "hi", KEY],                       # argparse: unrecognized arguments
    [KEY],                                       # argparse: invalid choice of command
    ["prompt", "hi", "--provider", KEY],         # argparse: invalid choice
    ["prompt", "hi", "--history", KEY],          # hermes-core: <file>: file not found
    ["prompt", "hi", "--config", KEY],           # hermes-core: <file>: config file not found
    ["prompt", "hi", "--model", KEY],            # the request header names the model
    ["route", "hi", "--model", KEY],             # model: / candidates:
])
def test_a_key_typed_in_the_wrong_place_is_never_echoed(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        main(argv)
    except SystemExit:
        pass
    out, err = capsys.readouterr()
    assert out or err                           # the command did say something
    assert KEY not in out + err and KEY[:16] not in out + err


@pytest.mark.parametrize("var", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])
@pytest.mark.parametrize("argv", [
    ["prompt", "hi", "correct-horse-battery-staple"],   # unrecognized arguments
    ["correct-horse-battery-staple"],                    # invalid choice of command
    ["prompt", "hi", "--provider", "correct-horse-battery-staple"],
])
def test_a_provider_key_of_any_shape_from_the_environment_is_never_echoed_by_argparse(
        var: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """argparse answers before any config is read, so the key's shape is all the scrubber knew:
    a proxy's key of no recognisable shape, pasted after the message, came back verbatim."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv(var, "correct-horse-battery-staple")
    with pytest.raises(SystemExit):
        main(argv)
    out, err = capsys.readouterr()
    assert err and "correct-horse-battery-staple" not in out + err


def test_the_streams_are_given_back_after_a_command(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)   # route reads the project's context files from the cwd
    before = (sys.stdout, sys.stderr)
    main(["route", "hi"])
    assert (sys.stdout, sys.stderr) == before


@pytest.mark.parametrize("command", [["prompt", "x"], ["chat", "--offline"], ["skills", "list"],
                                     ["route", "x"], ["keys", "status"]])
def test_a_mistyped_home_in_the_config_file_is_an_error_naming_file_line_and_key(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Like a mistyped --home, a mistyped ``home:`` in config.yaml created that folder with a
    sessions.db and an audit log, and answered with the default persona."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("hi\n/exit\n"))
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  stream: false\nhome: ./hmoe\n", encoding="utf-8")
    assert main([*command, "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert f"{cfg}:3" in err and "key 'home'" in err and "hmoe" in err and "Traceback" not in err
    assert not (tmp_path / "hmoe").exists()


def test_a_configured_key_across_a_shortened_echo_leaves_no_piece_of_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The offline reply shows the first 200 characters of the message, '/memory' the first 60 of
    the query: cut first, then scrubbed, a key across the cut was no longer whole and its head
    ('correct-horse-') reached the terminal."""
    key = "correct-horse-battery-staple-42"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"credentials:\n  openai:\n    keys:\n      - key: {key}\n",
                                      encoding="utf-8")
    lines = ["x" * 185 + f" {key} end", "/memory " + "y" * 45 + f" {key}", "/exit"]
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("\n".join(lines) + "\n"))
    assert main(["chat", "--home", str(home), "--offline", "--no-stream"]) == 0
    out, err = capsys.readouterr()
    assert "offline reply" in out and "no past session matches" in out
    assert key[:10] not in out + err


def test_ctrl_c_while_the_commands_load_ends_quietly_with_130(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Importing the command modules takes a second or two (the agent, numpy, the SDKs): a Ctrl-C
    then ended in a traceback through importlib instead of the 130 a Ctrl-C in a command gets."""
    import hermes_core.cli.main as cli_main

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "build_parser", interrupted)
    assert main(["route", "hello"]) == 130
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["skills"], ["keys"], ["memory"]])
def test_a_missing_command_prints_its_usage_on_stderr_with_exit_2(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 is a usage error and goes to stderr as argparse's own errors do (`memory` did);
    `hermes-core`, `skills` and `keys` printed their help on stdout, into a pipe or a file."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: hermes-core" in err


def test_a_bug_ends_in_a_redacted_traceback_on_stderr_not_a_raw_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An unexpected exception (a bug, or a library's error quoting its input, as pydantic's
    ``input_value=...`` does) escaped main(): the interpreter printed its traceback to the real
    stderr after the redacting one was put back, key and all."""
    secret = "zq-bug-0123456789abcdef"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"credentials:\n  custom:\n    keys: [{{key: '{secret}'}}]\n", encoding="utf-8")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"unexpected input_value='{secret}'")

    monkeypatch.setattr("hermes_core.agent.smart_routing.Router.from_settings", broken)
    assert main(["-v", "route", "hello", "--config", str(cfg), "--home", str(tmp_path)]) == 70
    out, err = capsys.readouterr()
    assert secret not in out + err
    assert "Traceback" in err and "RuntimeError: unexpected input_value='[key-" in err


@pytest.mark.parametrize("argv", [["route", "hi"], ["keys", "status"], ["skills", "list"],
                                  ["prompt", "hi"]])
def test_a_closed_stdout_discards_the_output_as_print_does(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``hermes-core ... >&-`` starts Python with ``sys.stdout`` None: print() then writes
    nothing, but the scrubbing wrapper called ``None.write`` and every command ended in an
    AttributeError traceback."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdout", None)
    assert main(argv) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["chat", "--offline"], ["prompt", "-"]])
def test_a_closed_stdin_reads_as_an_empty_input(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``hermes-core chat <&-`` (cron, a detached service) has ``sys.stdin`` None: the chat asked
    it ``isatty()`` and ``prompt -`` read it, both an AttributeError traceback."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setattr("sys.stdin", None)
    assert main(argv) == 0
    assert "Traceback" not in capsys.readouterr().err


def _run_cli(argv: list[str], home: Path, **popen: object) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process run in ``home``: ``route``, ``prompt`` and ``chat`` read the
    project's context files from the working folder up to its git root, and one flagged there
    (a repository's own AGENTS.md quoting an injection) adds a warning to stderr."""
    # PYTHONUNBUFFERED would hide what Python's flush at exit does with a buffered stream
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONUNBUFFERED")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *argv], env=env, cwd=home,
                          stdin=subprocess.DEVNULL, text=True, timeout=120, check=False,
                          **popen)  # type: ignore[call-overload]


@pytest.mark.parametrize("argv", [["route", "hi"], ["chat", "--offline"], ["--help"]])
def test_output_that_cannot_be_written_is_one_line_on_stderr_and_exit_1(
        argv: list[str], tmp_path: Path) -> None:
    """A full disk under a redirect (``> /dev/full``): the chat's first line ended in an OSError
    traceback; other commands exited 120 with Python's "Exception ignored" at shutdown."""
    with open("/dev/full", "w") as full:
        done = _run_cli(argv, tmp_path, stdout=full)
    assert done.returncode == 1
    assert done.stderr.strip() == ("hermes-core: cannot write the output: "
                                   "No space left on device")


def test_a_reader_that_went_away_ends_the_chat_quietly(tmp_path: Path) -> None:
    """``hermes-core chat < questions | head -c 1``: once the reader had gone, the rest of the
    output, flushed at exit, failed there: exit 120 and "Exception ignored ... BrokenPipeError"."""
    questions = tmp_path / "questions.txt"
    questions.write_text("another question, please\n" * 3_000, encoding="utf-8")  # >> 64 KB out
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONUNBUFFERED")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    with questions.open("rb") as stdin:
        proc = subprocess.Popen([sys.executable, "-m", "hermes_core.cli", "chat", "--offline",
                                 "--no-stream"], env=env, cwd=tmp_path, stdin=stdin,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(1)   # as head -c 1 does: one byte read, then the pipe is closed
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=120), err) == (0, "")


def test_a_usage_error_on_a_full_stderr_keeps_its_exit_2(tmp_path: Path) -> None:
    """argparse swallows the failed write of its usage message and exits 2; Python's flush at
    exit then failed again and turned the 2 into 120."""
    with open("/dev/full", "w") as full:
        done = _run_cli(["--no-such-option"], tmp_path, stdout=subprocess.PIPE, stderr=full)
    assert done.returncode == 2


@pytest.mark.parametrize("argv", [
    ["z" * 10_000],                                      # invalid choice of command
    ["memory", "z" * 10_000],                            # invalid choice of action
    ["skills", "search", "q", "--fusion", "z" * 10_000],  # unrecognized arguments
    ["prompt", "hi", "--provider", "z" * 10_000],        # invalid choice of an option
])
def test_an_argument_of_10000_characters_in_a_usage_error_is_shown_by_its_head_and_length(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err
    assert "zzzz" in err and "characters)" in err
    assert "z" * 200 not in err


def test_an_error_naming_a_hostile_path_shows_its_escape_sequences_never_sends_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one-line error quotes the path (or value) it is about; a name holding ESC [2J cleared
    the user's screen as the error was printed."""
    home = tmp_path / "typo\x1b[2J\x1b]0;pwned\x07"
    assert main(["memory", "stats", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "typo\\x1b[2J" in err


def test_a_warning_naming_a_hostile_skill_folder_shows_its_escapes_never_sends_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cloned repository's skill folder named with ESC [2J: the warning naming it went to the
    terminal raw."""
    import logging
    home = tmp_path / "home"
    bad = home / "skills" / "x\x1b[2J\x1b]0;pwned\x07"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: [\n---\n", encoding="utf-8")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = []
    try:
        assert main(["skills", "list", "--home", str(home), "--no-embeddings"]) == 0
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert "SKILL.md" in err and "\x1b" not in err and "x\\x1b[2J" in err


@pytest.mark.parametrize("argv", [
    ["prompt", "hi", "--config", "{long}"],
    ["prompt", "hi", "--cwd", "{long}"],
    ["skills", "search", "x", "--catalog", "{long}", "--no-embeddings"],
    ["memory", "stats", "--db", "{long}"],
    ["route", "train", "{long}"],
])
def test_a_path_too_long_for_the_file_system_is_one_line_naming_it(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A 300-character file name (ENAMETOOLONG) escaped as an OSError traceback from the first
    stat of --config, --cwd, --catalog, --db or a training file."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    long = "a" * 300
    assert main([a.format(long=long) for a in argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "too long" in err and "aaaa" in err and len(err) < 400


def test_a_bug_s_traceback_shows_the_escapes_its_message_quotes_never_sends_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A library error quoting its input (a file's text with ESC [2J) ended main() in a traceback
    printed raw: the screen was cleared as the bug was reported."""
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("unexpected input_value='预发布\x1b[2J'")

    monkeypatch.setattr("hermes_core.agent.smart_routing.Router.from_settings", broken)
    assert main(["-v", "route", "hello", "--home", str(tmp_path)]) == 70
    err = capsys.readouterr().err
    assert "RuntimeError: unexpected input_value='预发布\\x1b[2J'" in err and "\x1b" not in err


@pytest.mark.parametrize(("argv", "code"), [
    (["prompt", "hi", "--json", "--history", "missing.json"], 1),     # a HermesError
    (["memory", "search", "x", "--json", "--home", "no-such-home"], 1),
    (["keys", "status", "--json", "--config", "no-such.yaml"], 1),
    (["route", "hi", "--json", "--turn", "abc"], 2),                   # a usage error
    (["skills", "search", "--json"], 2),                               # the query missing
    (["route", "hi", "--js", "--turn", "-1"], 2),                      # argparse's abbreviation
])
def test_json_output_on_an_error_is_one_json_object_naming_it_and_the_exit_code(
        argv: list[str], code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A script reading ``--json`` got nothing on stdout when the command failed (``jq`` then
    says "unexpected end of input"): the error is one object there too, and the line a person
    reads stays on stderr."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        got = main(argv)
    except SystemExit as done:
        got = done.code
    out, err = capsys.readouterr()
    assert got == code
    reply = json.loads(out)
    assert reply["exit_code"] == code and reply["error"] and reply["error"] in err


def test_an_error_without_json_prints_nothing_on_stdout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["prompt", "hi", "--history", "missing.json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "missing.json" in err


@pytest.mark.parametrize("argv", [["skills", "list", "--json"], ["prompt", "查快递", "--json"],
                                  ["skills", "search", "帮我查快递", "--json", "--no-embeddings"]])
def test_json_output_to_an_ascii_stdout_keeps_the_chinese(argv: list[str], copy_example_home,
                                                           tmp_path: Path) -> None:
    """``PYTHONIOENCODING=ascii`` (or a Latin-1 terminal): text output shows Chinese as "?", and
    ``--json`` did the same, valid JSON holding "????" for 快递查询. It escapes instead."""
    home = copy_example_home(tmp_path / "home")
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT), PYTHONIOENCODING="ascii",
               HF_HUB_OFFLINE="1")
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", *argv, "--home", str(home)],
                         env=env, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    text = res.stdout.decode("ascii")
    shown = json.dumps(json.loads(text), ensure_ascii=False)
    assert any(word in shown for word in ("快递查询", "查快递", "周报"))


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_command_s_help_says_what_it_does_and_shows_an_example_of_itself() -> None:
    """``chat --help``, ``skills --help``, ``keys status --help`` and eleven more printed only
    their options: not what the command does, nor one command line to start from."""
    commands = list(_commands(build_parser()))
    assert len(commands) > 15
    for path, parser in commands:
        text = parser.format_help()
        assert parser.description, path
        if path and parser.get_default("handler") is not None and not any(
                isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            assert "examples:" in text, path
            assert f"  hermes-core {' '.join(path)}" in text, path


def test_the_top_level_help_documents_each_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for code in ("0 ", "1 ", "2 ", "70 ", "130 ", "143 "):   # 143: tests/e2e/test_signals.py
        assert f"\n  {code}" in text, code
    assert "129" in text and "SIGHUP" in text   # chat ended by a closed terminal: 128 + 1
    assert "\\uXXXX" in text   # what becomes of a character stdout's encoding lacks


BUG_SECRET = "zq-bug-0123456789abcdef"
_BROKEN_ROUTER = f"""
import sys
from hermes_core.agent.smart_routing import Router
def broken(*args, **kwargs):
    raise RuntimeError("unexpected input_value='{BUG_SECRET}'\\nsecond line")
Router.from_settings = broken
from hermes_core.cli.entry import main
sys.argv[0] = "hermes-core"
sys.exit(main())
"""


def _run_with_a_bug(argv: list[str], tmp_path: Path,
                    **popen: object) -> subprocess.CompletedProcess[str]:
    """The real entry point in a child process, with a bug planted where ``route`` calls."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"credentials:\n  openai:\n    keys: [{{key: '{BUG_SECRET}'}}]\n",
                   encoding="utf-8")
    # buffered streams, as a terminal user has them (PYTHONUNBUFFERED hid a failed flush at exit)
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONUNBUFFERED")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    return subprocess.run([sys.executable, "-c", _BROKEN_ROUTER, *argv, "--config", str(cfg),
                           "--home", str(tmp_path)], env=env, text=True, encoding="utf-8",
                          timeout=120, check=False, **popen)  # type: ignore[call-overload]


def test_a_bug_exits_70_with_one_line_naming_it_and_how_to_see_the_traceback(
        tmp_path: Path) -> None:
    """A bug in hermes-core and an ordinary error (a missing file) both exited 1, the bug with a
    traceback a user cannot act on: a script could not tell "fix your input" from "report this"."""
    res = _run_with_a_bug(["route", "hello"], tmp_path)
    assert res.returncode == 70, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert "RuntimeError" in lines[0] and "-v" in lines[0] and "Traceback" not in res.stderr
    assert BUG_SECRET not in res.stdout + res.stderr and res.stdout == ""


def test_a_bug_under_v_shows_its_traceback_and_still_exits_70(tmp_path: Path) -> None:
    res = _run_with_a_bug(["-v", "route", "hello"], tmp_path)
    assert res.returncode == 70, res.stderr
    assert "Traceback" in res.stderr and "RuntimeError" in res.stderr
    assert BUG_SECRET not in res.stdout + res.stderr


def test_a_bug_under_json_is_an_error_object_of_its_own_kind(tmp_path: Path) -> None:
    res = _run_with_a_bug(["route", "hello", "--json"], tmp_path)
    assert res.returncode == 70, res.stderr
    reply = json.loads(res.stdout)
    assert reply["exit_code"] == 70 and reply["kind"] == "bug"
    assert "RuntimeError" in reply["error"] and BUG_SECRET not in res.stdout + res.stderr


def test_a_bug_on_a_stderr_that_refuses_its_line_still_exits_70_with_its_json(
        tmp_path: Path) -> None:
    """``2>/dev/full`` (or ``2>&1 | head -c0``): the bug's line failed to write, that OSError
    escaped main(), and the command exited 1 with no JSON object: a bug taken for an error."""
    for argv in (["route", "hello", "--json"], ["-v", "route", "hello", "--json"]):
        with open("/dev/full", "w") as full:
            res = _run_with_a_bug(argv, tmp_path, stderr=full)
        assert res.returncode == 70, argv
        reply = json.loads(res.stdout)
        assert (reply["kind"], reply["exit_code"]) == ("bug", 70)


@pytest.mark.parametrize(("argv", "code", "kind"), [
    (["prompt", "hi", "--json", "--history", "missing.json"], 1, "error"),
    (["route", "hi", "--json", "--turn", "abc"], 2, "usage"),
])
def test_an_ordinary_error_keeps_its_code_and_says_its_kind_under_json(
        argv: list[str], code: int, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    try:
        got = main(argv)
    except SystemExit as done:
        got = done.code
    reply = json.loads(capsys.readouterr().out)
    assert got == code and reply["exit_code"] == code and reply["kind"] == kind


def test_an_error_naming_chinese_on_a_strict_ascii_stderr_is_the_error_not_a_bug(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """main() called with a stderr of its caller's (strict ASCII, not the interpreter's own,
    which escapes): "快递.json: file not found" failed to encode and was reported as a bug,
    exit 70 "UnicodeEncodeError"; stdout was made to escape, stderr was not."""
    import io

    monkeypatch.chdir(tmp_path)
    raw = io.BytesIO()
    monkeypatch.setattr("sys.stderr", io.TextIOWrapper(raw, encoding="ascii"))
    assert main(["prompt", "hi", "--history", "快递.json", "--home", str(tmp_path)]) == 1
    sys.stderr.flush()
    said = raw.getvalue().decode("ascii")
    assert "\\u5feb\\u9012.json" in said and "UnicodeEncodeError" not in said, said


def test_text_output_to_an_ascii_stdout_writes_what_it_cannot_encode_as_escapes(
        copy_example_home, tmp_path: Path) -> None:
    """``PYTHONIOENCODING=ascii`` (or ``LANG=C`` on a Python that does not coerce it) with the
    output piped to a file: each Chinese character was written as "?", lost for good."""
    home = copy_example_home(tmp_path / "home")
    env = {k: v for k, v in os.environ.items() if k not in (
        "HERMES_HOME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT), PYTHONIOENCODING="ascii",
               HF_HUB_OFFLINE="1")
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "skills", "search", "帮我查快递",
                          "--home", str(home), "--no-embeddings"], env=env, capture_output=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    text = res.stdout.decode("ascii")
    assert "??" not in text and "\\u5feb\\u9012" in text   # 快递, readable back
    assert "快递" in text.encode("ascii").decode("unicode_escape")


@pytest.mark.parametrize("where", ["build_parser", "configure_logging"])
def test_ctrl_c_before_the_command_runs_answers_json_with_the_error_object_too(
        where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while the command modules load (a second or two of imports) or before the command
    starts is caught outside the command: it exited 130 with nothing on stdout, where ``--json``
    promises one object for every failure."""
    import hermes_core.cli.main as cli_main

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, where, interrupted)
    assert main(["route", "hello", "--json"]) == 130
    assert json.loads(capsys.readouterr().out) == {"error": "hermes-core: interrupted",
                                                   "kind": "interrupted", "exit_code": 130}


class _GoneReader:
    """An unbuffered stdout whose reader went away (``PYTHONUNBUFFERED=1 ... | head -c0``, or an
    error object longer than the pipe's buffer): every write fails at once."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(("argv", "code", "named"), [
    (["prompt", "hi", "--json", "--history", "missing.json"], 1, "missing.json"),  # HermesError
    (["route", "hi", "--json", "--turn", "abc"], 2, "--turn"),                     # usage error
])
def test_a_failed_command_whose_json_reader_went_away_keeps_its_exit_status(
        argv: list[str], code: int, named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The error object's write failed and the broken pipe was taken for ``| head`` after a
    command that worked: exit 0, so a script saw a failure as success."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdout", _GoneReader())
    try:
        got = main(argv)
    except SystemExit as done:
        got = done.code
    assert got == code
    assert named in capsys.readouterr().err   # the line for a person still says it


def test_a_failed_command_whose_stderr_reader_went_away_keeps_its_exit_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hermes-core ... 2>&1 | head -c0``: the error line's write failed and was taken for a
    reader gone after a command that worked: exit 0."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stderr", _GoneReader())
    assert main(["prompt", "hi", "--history", "missing.json"]) == 1
