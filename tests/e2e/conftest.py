"""Fixtures and helpers of the end-to-end tests.

* ``pty_env()``: the environment a chat child runs in: no provider key, no HERMES_HOME, the model
  hub offline, a dumb terminal, unbuffered output.
* ``spawn_python``: starts ``python ARGS`` on a pseudo-terminal (pexpect) in the test's folder,
  with SIGINT's default action as at a terminal; every child it started is closed after the test,
  whatever the test did.
* ``new_home``: an empty HERMES_HOME, ``tmp_path / "home"``.
"""

from __future__ import annotations

import os
import signal
import sys
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
