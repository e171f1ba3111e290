"""REPL input that is not clean UTF-8 or breaks a command: one clear line, the chat goes on."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(EXAMPLE_HOME, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache"))
    return dst


def offline_agent(home: Path) -> Agent:
    return Agent.from_config({"home": str(home), "skill_utils": {"enabled": False}}, offline=True)


def test_strict_utf8_stdin_with_invalid_bytes_does_not_crash(home: Path):
    stdin = io.TextIOWrapper(io.BytesIO(b"caf\xe9 au lait\nsecond line\n/exit\n"),
                             encoding="utf-8", errors="strict")
    out = io.StringIO()
    agent = offline_agent(home)
    assert Repl(agent, stdin=stdin, stdout=out, stream=False).run() == 0
    assert "caf\ufffd au lait" in out.getvalue() and "second line" in out.getvalue()
    assert [m.content for m in agent.history if m.role == "user"] == ["caf\ufffd au lait",
                                                                      "second line"]


def test_invalid_bytes_on_piped_stdin_end_to_end(home: Path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "chat", "--home", str(home),
                          "--offline"], input=b"hello \xff\xfe there\n/exit\n",
                         capture_output=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in res.stderr
    assert "hello \ufffd\ufffd there" in res.stdout.decode("utf-8")
    # the session was recorded (its summary keeps what the user said)
    listing = subprocess.run([sys.executable, "-m", "hermes_core.cli", "memory", "search",
                              "hello there", "--home", str(home)],
                             capture_output=True, timeout=120, env=env, text=True)
    assert listing.returncode == 0, listing.stderr
    assert "hello" in listing.stdout
