"""Fixtures and helpers of the end-to-end tests.

* ``pty_env()``: the environment a chat child runs in: no provider key, no HERMES_HOME, the model
  hub offline, a dumb terminal, unbuffered output.
* ``spawn_python``: starts ``python ARGS`` on a pseudo-terminal (pexpect) in the test's folder,
  with SIGINT's default action as at a terminal; every child it started is closed after the test,
  whatever the test did.
* ``new_home``: an empty HERMES_HOME, ``tmp_path / "home"``.
* ``press_ctrl_c_at_the_prompt(child)``: Ctrl-C once the chat's main thread waits for a key.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest


def pty_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1"})
    env.pop("HERMES_HOME", None)
    env.update(extra)
    return env


def _sigint_as_at_a_terminal() -> None:
    """SIGINT's default action in the child, as for a command typed at a terminal: a suite run in
    the background by a non-interactive shell (CI) passes SIGINT on ignored, and a chat started
    that way rightly sleeps through Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: The system calls CPython's readline waits for a key in (select, pselect6, poll, ppoll).
_WAITS_FOR_A_KEY = {"x86_64": {23, 270, 7, 271}, "aarch64": {72, 73}}.get(platform.machine(), set())


def press_ctrl_c_at_the_prompt(child: pexpect.spawn, *, within_s: float = 60.0) -> None:
    """Ctrl-C at the chat's prompt, once its main thread waits for a key, as a person's press.

    CPython's readline looks at signals only when one interrupts its wait for a key: a Ctrl-C
    that comes between the prompt's (or an echo's) last byte and that wait only sets a flag, and
    the press is lost until the next key. No person presses within that moment, but
    ``sendintr`` (which skips pexpect's delay before a send) did, on a machine busy embedding
    the skills, in the clean-clone CI. So the press waits until ``/proc`` shows the child's
    main thread blocked in such a call (past ``within_s``, or where /proc cannot say, it
    presses anyway: the test then fails on what follows, not here)."""
    deadline = time.monotonic() + within_s
    while _WAITS_FOR_A_KEY and time.monotonic() < deadline:
        try:
            with open(f"/proc/{child.pid}/syscall", encoding="ascii") as f:
                call = f.read().split(" ", 1)[0]
        except OSError:
            break
        if not call.isdigit():   # "running": not in a system call
            time.sleep(0.005)
            continue
        if int(call) in _WAITS_FOR_A_KEY:
            break
        time.sleep(0.005)
    child.sendintr()


@pytest.fixture
def spawn_python(tmp_path: Path) -> Iterator[Callable[..., pexpect.spawn]]:
    children: list[pexpect.spawn] = []

    def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
        child = pexpect.spawn(sys.executable, list(args), env=env or pty_env(),
                              encoding="utf-8", timeout=120, cwd=str(tmp_path),
                              preexec_fn=_sigint_as_at_a_terminal)
        children.append(child)
        return child

    yield spawn
    for child in children:
        child.close(force=True)


@pytest.fixture
def new_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home
