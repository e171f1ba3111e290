"""The README's "Using the library" snippet runs as written (offline, on a copy of the example
home). It used to open "config.yaml", which a fresh checkout does not have."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import copy_example_home

README = Path(__file__).parent.parent / "README.md"


def test_using_the_library_snippet_runs(tmp_path: Path):
    section = README.read_text(encoding="utf-8").split("## Using the library", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    copy_example_home(tmp_path / "examples" / "home")
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    env["HF_HUB_OFFLINE"] = "1"
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "git-rebase-conflicts" in res.stdout      # reply.retrieval.names
    assert "offline reply" in res.stdout
    assert (tmp_path / "examples" / "home" / "sessions.db").is_file()   # the chat was recorded
