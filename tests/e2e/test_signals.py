"""SIGTERM or SIGHUP (``kill``, a closed terminal window) end the chat like Ctrl-D: the session is
recorded into episodic memory. The default handlers killed the process outright and the whole
conversation was lost.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    return env


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_records_the_session(tmp_path: Path, sig: signal.Signals):
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "config.yaml"
    cfg.write_text("skill_utils:\n  embeddings: false\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "hermes_core.cli", "chat", "--home", str(home),
                             "--config", str(cfg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("remember the zebra migration plan\n/stats\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while "turns 1" not in proc.stdout.readline():   # the turn was answered
            assert time.monotonic() < deadline and proc.poll() is None
        proc.send_signal(sig)          # stdin still open: the REPL is waiting for the next line
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err, err
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "memory", "search", "zebra",
                          "--home", str(home), "--json"], capture_output=True, text=True,
                         env=_env(), timeout=60)
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout)
    assert len(found) == 1 and "zebra" in found[0]["summary"]
