"""Tests of ``hermes_core/cli/entry.py``: a Ctrl-C at any moment of ``hermes-core``'s start-up
ends quietly with exit 130, through the console script and through ``python -m hermes_core.cli``.

Start-up is half a second of imports (config, pydantic, the command modules). The child process
is stopped inside one chosen import by a sitecustomize hook and gets SIGINT exactly there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = Path(__file__).with_name("startup_hook")


def console_script() -> list[str]:
    """The wrapper pip writes for the ``hermes-core`` entry point pyproject declares."""
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][
        "hermes-core"]
    module, func = target.split(":")
    return [sys.executable, "-c",
            f"import re, sys\nfrom {module} import {func}\nif __name__ == '__main__':\n"
            f"    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
            f"    sys.exit({func}())\n"]


LAUNCHERS = {"console_script": console_script,
             "python_m": lambda: [sys.executable, "-m", "hermes_core.cli"]}


def _sigint_as_at_a_terminal() -> None:
    """The child gets SIGINT's default action, as a command typed at a terminal does. A test run
    started in the background by a non-interactive shell (``cmd &``, CI runners) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler: the child would sleep through
    the signal, which is right for a background job but is not what this test is about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted_during(launcher: str, module: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    read_fd, write_fd = os.pipe()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HOOK), str(ROOT)]),
           "HERMES_TEST_BLOCK_IMPORT": module, "HERMES_TEST_READY_FD": str(write_fd),
           "HOME": str(tmp_path), "HERMES_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([*LAUNCHERS[launcher](), "chat", "--offline"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, pass_fds=(write_fd,),
                            preexec_fn=_sigint_as_at_a_terminal)
    os.close(write_fd)
    try:
        reached = os.read(read_fd, 1)    # the child is inside the import now (EOF: it never was)
    finally:
        os.close(read_fd)
    if reached:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert reached, f"the child never imported {module}: {err}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("module", [
    "hermes_core.types",          # what `import hermes_core` used to load first
    "hermes_core.config",         # pydantic, yaml: most of the half second
    "pydantic",
    "hermes_core.cli.main",
    "hermes_core.cli.chat_cmd",   # the command modules (handled by main() already)
])
def test_ctrl_c_at_any_moment_of_start_up_exits_130_without_a_traceback(
        launcher: str, module: str, tmp_path: Path) -> None:
    done = interrupted_during(launcher, module, tmp_path)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.stdout == ""


def test_importing_hermes_core_loads_no_config_or_pydantic() -> None:
    """The library stays cheap to import: the names it exports load on first use, so nothing
    stands between the console script's first line and its Ctrl-C handling."""
    code = ("import sys, hermes_core; heavy = [m for m in ('hermes_core.config', 'pydantic', "
            "'yaml', 'hermes_core.types') if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert done.stdout.strip() == "[]"


BUG_LINE = ("hermes-core: internal error (a bug in hermes-core or its installation): "
            "RuntimeError: {}; rerun with -v to see the traceback and report it")


def broken_start(launcher: str, module: str, message: str, *args: str,
                 **popen: object) -> subprocess.CompletedProcess[str]:
    """The command started with ``module``'s import failing. Its streams are buffered, as a
    person's are: no PYTHONUNBUFFERED, no LANG or PYTHONIOENCODING from the checkout's shell."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONUNBUFFERED", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING")}
    env.update(PYTHONPATH=os.pathsep.join([str(HOOK), str(ROOT)]),
               HERMES_TEST_BREAK_IMPORT=module, HERMES_TEST_BREAK_MESSAGE=message)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([*LAUNCHERS[launcher](), *args, "route", "hi"], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                          timeout=120, check=False, **popen)  # type: ignore[call-overload]


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("module", ["hermes_core.cli.main", "hermes_core.cli.argtypes",
                                    "hermes_core.config"])
def test_a_bug_while_the_command_loads_is_reported_as_one_and_exits_70(
        launcher: str, module: str) -> None:
    """A failure while ``cli/main.py`` and what it imports load was the interpreter's traceback
    and exit 1, which a script takes for an error in its input."""
    done = broken_start(launcher, module, "the module is broken")
    assert done.returncode == 70, done.stderr
    assert done.stderr == BUG_LINE.format("the module is broken") + "\n"
    assert done.stdout == ""


def test_a_bug_while_loading_answers_json_and_shows_its_traceback_with_v() -> None:
    done = broken_start("python_m", "hermes_core.cli.main", "boom", "-v", "--json")
    assert done.returncode == 70
    assert json.loads(done.stdout) == {"error": "hermes-core: internal error: RuntimeError: boom",
                                       "kind": "bug", "exit_code": 70}
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert done.stderr.endswith(BUG_LINE.format("boom") + "\n")


def test_a_bug_while_loading_shows_no_key_no_control_character_and_a_long_text_by_its_head(
        ) -> None:
    key = "sk-proj-Abc123Def456Ghi789Jkl0MnoPqr"
    message = f"cannot read\x1b]52;c;{key}\x07 " + "x" * 300
    done = broken_start("console_script", "hermes_core.cli.main", message, "-v", "--json")
    assert done.returncode == 70
    assert key[:12] not in done.stderr and key[:12] not in done.stdout
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    line = done.stderr.splitlines()[-1]
    assert line.startswith("hermes-core: internal error") and len(line) < 300
    assert "characters)" in line


def test_a_bug_while_loading_the_redactor_shows_no_message_it_could_not_scrub() -> None:
    done = broken_start("python_m", "hermes_core.redact", "sk-proj-Abc123Def456Ghi789Jkl0Mno")
    assert done.returncode == 70
    assert "sk-proj" not in done.stderr
    assert done.stderr.startswith("hermes-core: internal error (a bug in hermes-core or its "
                                  "installation): RuntimeError; rerun with -v")


def test_a_bug_while_loading_keeps_exit_70_when_stderr_refuses_its_line() -> None:
    with open("/dev/full", "w") as full:
        done = broken_start("python_m", "hermes_core.cli.main", "boom", "--json", stderr=full)
    assert done.returncode == 70
    assert json.loads(done.stdout)["kind"] == "bug"


def test_a_bug_while_loading_the_redactor_shows_no_message_in_its_v_traceback_either() -> None:
    """With ``-v`` the traceback was printed unscrubbed when the redactor itself failed to load:
    its last line (and any chained error's) is the message nothing could take the key out of."""
    key = "sk-proj-Abc123Def456Ghi789Jkl0Mno"
    done = broken_start("python_m", "hermes_core.redact", key, "-v", "--json")
    assert done.returncode == 70
    assert "sk-proj" not in done.stderr and "sk-proj" not in done.stdout
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert "\nRuntimeError\n" in done.stderr   # its class, without the text
