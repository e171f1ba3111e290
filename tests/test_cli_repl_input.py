"""REPL input that is not clean UTF-8 or breaks a command: one clear line, the chat goes on."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import copy_example_home

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    copy_example_home(dst)
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


def _run(agent: Agent, text: str) -> str:
    out = io.StringIO()
    assert Repl(agent, stdin=io.StringIO(text), stdout=out, stream=False).run() == 0
    return out.getvalue()


def test_save_into_an_existing_directory_writes_the_transcript_there(home: Path, tmp_path: Path):
    target = tmp_path / "transcripts"
    target.mkdir()
    agent = offline_agent(home)
    out = _run(agent, f"hello\n/save {target}\n/exit\n")
    saved = target / f"{agent.session_id}.json"
    assert f"saved 2 messages to {saved}" in out
    assert json.loads(saved.read_text(encoding="utf-8"))["messages"][0]["content"] == "hello"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "transcripts"]  # no .tmp litter


def test_a_failing_save_leaves_no_temp_file_and_the_chat_goes_on(home: Path, tmp_path: Path):
    target = tmp_path / "out"
    agent = offline_agent(home)
    blocker = target / f"{agent.session_id}.json"      # a directory where the file would go
    (blocker / "inside").mkdir(parents=True)
    out = _run(agent, f"hello\n/save {target}\nstill here\n/exit\n")
    assert "error: cannot save to" in out and "still here" in out
    assert [p.name for p in target.iterdir()] == [blocker.name]


def test_save_to_a_name_with_a_nul_byte_is_one_line(home: Path):
    agent = offline_agent(home)
    out = _run(agent, "hello\n/save bad\x00name.json\nafter the error\n/exit\n")
    assert "error: cannot save to" in out and "Traceback" not in out
    assert [m.content for m in agent.history if m.role == "user"] == ["hello", "after the error"]


class _BrokenRetriever:
    skills = ()

    def retrieve(self, query: str):
        raise OSError("model file truncated")


def test_a_command_hitting_an_unexpected_error_is_one_line_not_a_crash(home: Path):
    agent = offline_agent(home)
    with agent.override(retriever=_BrokenRetriever()):
        out = _run(agent, "/skills docker\nafter the error\n/exit\n")
    assert "error: OSError: model file truncated" in out and "Traceback" not in out
    assert [m.content for m in agent.history if m.role == "user"] == ["after the error"]
