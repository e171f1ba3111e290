"""MockLLMServer is documented for end-to-end tests of the command line, whose chat streams by
default: it must answer ``stream: true`` requests with SSE, not a JSON body the SDKs read as an
empty stream (the chat then printed nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing.server import MockLLMServer

SECRET = "sk-local-SECRET-abcdef0123456789"


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
                             capture_output=True, text=True, timeout=60, env=env)
        assert res.returncode == 0, res.stderr
        assert "pong, 流式回复 from local server" in res.stdout
        assert srv.requests[0].body.get("stream") is True
        assert "output 0;" not in res.stdout   # usage arrived with the stream
        assert SECRET not in res.stdout + res.stderr
