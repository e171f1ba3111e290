"""``hermes-core chat`` end to end: offline, scripted over a pipe, and against a local HTTP server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing.server import KeyBehaviour, MockLLMServer

SECRET = "sk-local-SECRET-abcdef0123456789"


#: A guard against a hung chat, not a speed goal: a cold start (torch, the skill index) under a
#: loaded CI machine took over 60 s.
HANG_S = 300


def run_chat(args: list[str], stdin: str, env_extra: dict[str, str] | None = None,
             timeout: float = HANG_S) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", "chat", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def soul_home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    (h / "SOUL.md").write_text("You are Testy, the SOUL-MARKER persona.", encoding="utf-8")
    return h


def test_offline_without_key_says_so_once(soul_home: Path):
    res = run_chat(["--home", str(soul_home)], "hello\nsecond\n/exit\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("no API key configured") == 1
    assert "your message: 'hello'" in res.stdout and "your message: 'second'" in res.stdout


def test_local_server_reply_soul_sent_and_no_key_printed(soul_home: Path, tmp_path: Path):
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
        res = run_chat(["--home", str(soul_home), "--config", str(cfg)], "hello\n/exit\n",
                       {"LOCAL_KEY": SECRET})
        assert res.returncode == 0, res.stderr
        assert "pong from local server" in res.stdout
        assert SECRET not in res.stdout + res.stderr
        sent = srv.requests[0].body
        assert "SOUL-MARKER" in sent["messages"][0]["content"]
        assert "hello" in str(sent["messages"][-1])
        # at the end of the chat the session is summarised through the same provider and stored
        assert "SUMMARY" in srv.requests[-1].body["messages"][0]["content"]
        assert (soul_home / "sessions.db").is_file()


@pytest.mark.parametrize("status", [401, 429])
def test_provider_errors_are_one_line_and_repl_survives(soul_home: Path, tmp_path: Path, status: int):
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
        res = run_chat(["--home", str(soul_home), "--config", str(cfg)], "one\ntwo\n/exit\n")
    assert res.returncode == 1  # piped input whose every turn failed: a script can tell
    errors = [ln for ln in res.stdout.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2  # both turns answered with one line each; the REPL kept going
    assert "Traceback" not in res.stdout + res.stderr
    assert SECRET not in res.stdout + res.stderr


def test_endpoint_refusing_connections(soul_home: Path, tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("""
llm:
  stream: false
  request_timeout_s: 5
  routing:
    providers: [{name: openai, endpoint: "http://127.0.0.1:9/v1"}]
credentials: {openai: {keys: [{key: "sk-whatever-0123456789abcdef"}]}}
""", encoding="utf-8")
    res = run_chat(["--home", str(soul_home), "--config", str(cfg)], "hi\n/exit\n")
    assert res.returncode == 1  # the only turn failed: a script can tell
    assert any(ln.startswith("error:") and "connect" in ln for ln in res.stdout.splitlines())


@pytest.mark.parametrize("content,needle", [
    ("llm: [unclosed\n", "invalid YAML"),
    ("llm:\n  routing:\n    providers: [{name: mystery}]\n", "unknown provider 'mystery'"),
    ("llm:\n  bogus_key: 1\n", "unknown key"),
])
def test_bad_config_is_one_clear_line(soul_home: Path, tmp_path: Path, content: str, needle: str):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(content, encoding="utf-8")
    res = run_chat(["--home", str(soul_home), "--config", str(cfg)], "hi\n")
    assert res.returncode == 1
    assert needle in res.stderr and str(cfg) in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_missing_config_file(soul_home: Path, tmp_path: Path):
    res = run_chat(["--home", str(soul_home), "--config", str(tmp_path / "nope.yaml")], "hi\n")
    assert res.returncode == 1 and "config file not found" in res.stderr


def test_repl_failover_with_hidden_limits_and_revoked_key(soul_home: Path, tmp_path: Path):
    """The failover scenario through the REPL: hidden per-minute limits (429 + Retry-After 30) and a
    revoked key on the primary; every turn answered, the 401 key tried once, no blocked key
    retried, turns failing over to the second provider."""
    keys = {"PRIMARY_KEY_1": "sk-revoked-0000000000000000", "PRIMARY_KEY_2": "sk-limited-111111111111111",
            "SECONDARY_KEY": "sk-second-22222222222222222"}
    with MockLLMServer(reply="from primary") as primary, MockLLMServer(reply="from secondary") as second:
        primary.set_key(keys["PRIMARY_KEY_1"], KeyBehaviour(status=401))
        primary.set_key(keys["PRIMARY_KEY_2"], KeyBehaviour(rpm=2, retry_after=30))
        second.set_key(keys["SECONDARY_KEY"], KeyBehaviour(rpm=100))
        env = {**keys, "PRIMARY_URL": primary.url + "/v1", "SECONDARY_URL": second.url + "/v1"}
        config = Path(__file__).resolve().parents[2] / "examples" / "failover.yaml"
        turns = "".join(f"question {i}\n" for i in range(6)) + "/exit\n"
        res = run_chat(["--home", str(soul_home), "--config", str(config)], turns, env)
        assert res.returncode == 0, res.stderr
        answers = [ln for ln in res.stdout.splitlines() if ln.startswith("from ")]
        assert len(answers) == 6 and "error:" not in res.stdout  # every turn answered
        assert answers[:2] == ["from primary", "from primary"]
        assert set(answers[2:]) == {"from secondary"}
        statuses = [(r.key_fingerprint, r.status) for r in primary.requests]
        revoked = [s for fp, s in statuses if s == 401]
        assert len(revoked) == 1                       # the 401 key is tried once, then removed
        assert [s for _, s in statuses].count(429) == 1  # a blocked key is not tried again
        assert all(v not in res.stdout + res.stderr for v in keys.values())


def test_streamed_reply_never_prints_a_key_split_across_chunks(soul_home: Path, tmp_path: Path):
    """The offline provider echoes the message line by line; a key in it must not reach stdout."""
    key = "sk-proj-StreamedKey0123456789abcdef"
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  stream: true\n", encoding="utf-8")
    res = run_chat(["--home", str(soul_home), "--config", str(cfg)], f"my key is {key} ok\n/exit\n")
    assert res.returncode == 0, res.stderr
    assert key not in res.stdout + res.stderr and "[REDACTED]" in res.stdout


# MockLLMServer is documented for end-to-end tests of the command line, whose chat streams by
# default: it must answer ``stream: true`` requests with SSE, not a JSON body the SDKs read as an
# empty stream (the chat then printed nothing).

@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_default_streaming_chat_prints_the_servers_reply(tmp_path: Path, kind: str):
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "config.yaml"
    with MockLLMServer(reply="pong, 流式回复 from local server") as srv:
        endpoint = f"{srv.url}/v1" if kind == "openai" else srv.url
        cfg.write_text(f"""
llm:
  routing:
    default_model: local-model
    providers:
      - name: local
        type: {kind}
        endpoint: "{endpoint}"
credentials:
  local:
    keys:
      - key: "${{LOCAL_KEY}}"
""", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["LOCAL_KEY"] = SECRET
        res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "chat", "--home", str(home),
                              "--config", str(cfg)], input="hello\n/stats\n/exit\n",
                             capture_output=True, text=True, timeout=HANG_S, env=env)
        assert res.returncode == 0, res.stderr
        assert "pong, 流式回复 from local server" in res.stdout
        assert srv.requests[0].body.get("stream") is True
        assert "output 0;" not in res.stdout   # usage arrived with the stream
        assert SECRET not in res.stdout + res.stderr
