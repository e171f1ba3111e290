"""Every example runs, offline, as a user would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """The examples folder copied, so running them writes nothing into the repository."""
    import shutil

    dst = tmp_path / "examples"
    shutil.copytree(EXAMPLES, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache",
                                                                   "__pycache__"))
    return dst


def test_basic_agent(example_copy: Path):
    res = _run([str(example_copy / "basic_agent.py"), "--offline"], example_copy)
    assert res.returncode == 0, res.stderr
    assert "rebase" in res.stdout and "offline reply" in res.stdout
    assert (example_copy / "home" / "sessions.db").is_file()  # the session was recorded


def test_hook_context(example_copy: Path):
    res = _run([str(example_copy / "hook_context.py")], example_copy)
    assert res.returncode == 0, res.stderr
    assert "OPS-112" in res.stdout


def test_failover_demo(example_copy: Path):
    res = _run([str(example_copy / "failover_demo.py")], example_copy)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "via primary" in lines[0] and "via secondary" in lines[1] and "via secondary" in lines[2]
    assert "sk-demo" not in res.stdout + res.stderr


def test_prompt_unit_test_example(example_copy: Path):
    res = _run(["-m", "pytest", "-p", "hermes_core.testing.pytest_plugin", "-q",
                str(example_copy / "test_prompt_offline.py")], example_copy)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 passed" in res.stdout


def test_retrieval_explain(example_copy: Path):
    res = _run([str(example_copy / "retrieval_explain.py")], example_copy)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "trigger: TriggerHit(skill='kubernetes-pod-crashloop'" in out
    assert "sql-query-optimization" in out and "dense +" in out  # per-layer contributions shown
    assert "tell me a joke\n  gated: no skill fits" in out
