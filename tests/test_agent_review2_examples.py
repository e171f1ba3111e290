"""The examples an agent author copies end cleanly: no warning printed at exit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_hook_context_exits_without_a_dense_layer_warning(tmp_path: Path):
    # The example used to exit with the agent open: interpreter shutdown cut the background model
    # load off, printing "dense layer ... unavailable: cannot schedule new futures ...".
    dst = tmp_path / "examples"
    shutil.copytree(EXAMPLES, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache",
                                                                   "__pycache__", "audit.jsonl"))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    env["HF_HUB_OFFLINE"] = "1"
    res = subprocess.run([sys.executable, str(dst / "hook_context.py")], capture_output=True,
                         text=True, timeout=300, env=env, cwd=dst)
    assert res.returncode == 0, res.stderr
    assert "OPS-112" in res.stdout
    assert "unavailable" not in res.stderr and "Traceback" not in res.stderr, res.stderr
