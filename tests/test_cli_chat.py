"""``hermes-core chat`` end to end: offline, scripted over a pipe, and against a local HTTP server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing.server import KeyBehaviour, MockLLMServer

SECRET = "sk-local-SECRET-abcdef0123456789"


def run_chat(args: list[str], stdin: str, env_extra: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", "chat", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    (h / "SOUL.md").write_text("You are Testy, the SOUL-MARKER persona.", encoding="utf-8")
    return h


def test_offline_without_key_says_so_once(home: Path):
    res = run_chat(["--home", str(home)], "hello\nsecond\n/exit\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("no API key configured") == 1
    assert "your message: 'hello'" in res.stdout and "your message: 'second'" in res.stdout


def test_local_server_reply_soul_sent_and_no_key_printed(home: Path, tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    with MockLLMServer(reply="pong from local server") as srv:
        cfg.write_text(f"""
llm:
  stream: false
  routing:
    default_model: local-model
    providers:
      - name: openai
        endpoint: "{srv.url}/v1"
        models: [local-model]
credentials:
  openai:
    keys:
      - key: "${{LOCAL_KEY}}"
""", encoding="utf-8")
        res = run_chat(["--home", str(home), "--config", str(cfg)], "hello\n/exit\n",
                       {"LOCAL_KEY": SECRET})
        assert res.returncode == 0, res.stderr
        assert "pong from local server" in res.stdout
        assert SECRET not in res.stdout + res.stderr
        sent = srv.requests[0].body
        assert "SOUL-MARKER" in sent["messages"][0]["content"]
        assert "hello" in str(sent["messages"][-1])
        # at the end of the chat the session is summarised through the same provider and stored
        assert "SUMMARY" in srv.requests[-1].body["messages"][0]["content"]
        assert (home / "sessions.db").is_file()


@pytest.mark.parametrize("status", [401, 429])
def test_provider_errors_are_one_line_and_repl_survives(home: Path, tmp_path: Path, status: int):
    cfg = tmp_path / "config.yaml"
    with MockLLMServer(reply="fine") as srv:
        srv.set_key(SECRET, KeyBehaviour(status=status))
        cfg.write_text(f"""
llm:
  stream: true
  deadline_s: 5     # the 429 says Retry-After 30: beyond the deadline, so the turn fails at once
  routing:
    providers: [{{name: openai, endpoint: "{srv.url}/v1"}}]
credentials: {{openai: {{keys: [{{key: "{SECRET}"}}]}}}}
""", encoding="utf-8")
        res = run_chat(["--home", str(home), "--config", str(cfg)], "one\ntwo\n/exit\n")
    assert res.returncode == 0
    errors = [ln for ln in res.stdout.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2  # both turns answered with one line each; the REPL kept going
    assert "Traceback" not in res.stdout + res.stderr
    assert SECRET not in res.stdout + res.stderr


def test_endpoint_refusing_connections(home: Path, tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("""
llm:
  stream: false
  request_timeout_s: 5
  routing:
    providers: [{name: openai, endpoint: "http://127.0.0.1:9/v1"}]
credentials: {openai: {keys: [{key: "sk-whatever-0123456789abcdef"}]}}
""", encoding="utf-8")
    res = run_chat(["--home", str(home), "--config", str(cfg)], "hi\n/exit\n")
    assert res.returncode == 0
    assert any(ln.startswith("error:") and "connect" in ln for ln in res.stdout.splitlines())


@pytest.mark.parametrize("content,needle", [
    ("llm: [unclosed\n", "invalid YAML"),
    ("llm:\n  routing:\n    providers: [{name: mystery}]\n", "unknown provider 'mystery'"),
    ("llm:\n  bogus_key: 1\n", "unknown key"),
])
def test_bad_config_is_one_clear_line(home: Path, tmp_path: Path, content: str, needle: str):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(content, encoding="utf-8")
    res = run_chat(["--home", str(home), "--config", str(cfg)], "hi\n")
    assert res.returncode == 1
    assert needle in res.stderr and str(cfg) in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_missing_config_file(home: Path, tmp_path: Path):
    res = run_chat(["--home", str(home), "--config", str(tmp_path / "nope.yaml")], "hi\n")
    assert res.returncode == 1 and "config file not found" in res.stderr
