"""Every example runs, offline, as a user would run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core.tokenize import cjk_ratio, has_cjk

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


# The examples an agent author copies end cleanly: no warning printed at exit.

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


# Checks the shipped example HERMES_HOME (examples/home).
#
# The example home is what demos, benchmarks and new users start from, so its skills must parse with a
# plain YAML loader and respect the limits the retriever relies on (name/description length, list-typed
# triggers and synonyms, unique names), and the set must stay bilingual so Chinese retrieval is exercised.

HOME = Path(__file__).resolve().parents[2] / "examples" / "home"
SKILL_FILES = sorted((HOME / "skills").glob("*/SKILL.md"))

NAME_MAX = 64
DESCRIPTION_MAX = 1024


def split_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """Return (front matter mapping, body) of a SKILL.md; fail with the file name on bad layout."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines and lines[0].strip() == "---", f"{path}: line 1 must be '---'"
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        pytest.fail(f"{path}: front matter is not closed by a '---' line")
    meta = yaml.safe_load("\n".join(lines[1:end]))
    assert isinstance(meta, dict), f"{path}: front matter must be a mapping, got {type(meta).__name__}"
    return meta, "\n".join(lines[end + 1 :])


def is_string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def test_home_has_core_files() -> None:
    for name in ("SOUL.md", "MEMORY.md", "USER.md"):
        text = (HOME / name).read_text(encoding="utf-8")
        assert text.strip(), f"{name} is empty"
    memory_entries = [ln for ln in (HOME / "MEMORY.md").read_text(encoding="utf-8").splitlines()
                      if ln.startswith("- ")]
    user_entries = [ln for ln in (HOME / "USER.md").read_text(encoding="utf-8").splitlines()
                    if ln.startswith("- ")]
    assert len(memory_entries) >= 5
    assert len(user_entries) >= 4


def test_at_least_fourteen_skills() -> None:
    assert len(SKILL_FILES) >= 14, [p.parent.name for p in SKILL_FILES]


@pytest.mark.parametrize("path", SKILL_FILES, ids=lambda p: p.parent.name)
def test_skill_front_matter_is_valid(path: Path) -> None:
    meta, body = split_front_matter(path)

    name = meta.get("name")
    assert isinstance(name, str) and name.strip(), f"{path}: 'name' missing"
    assert len(name) <= NAME_MAX, f"{path}: name longer than {NAME_MAX}"
    assert name == path.parent.name, f"{path}: name {name!r} differs from its directory"

    description = meta.get("description")
    assert isinstance(description, str) and description.strip(), f"{path}: 'description' missing"
    assert len(description) <= DESCRIPTION_MAX, f"{path}: description longer than {DESCRIPTION_MAX}"

    triggers = meta.get("triggers")
    assert is_string_list(triggers), f"{path}: 'triggers' must be a list of strings"
    assert 1 <= len(triggers) <= 4, f"{path}: expected 1-4 triggers, got {len(triggers)}"
    synonyms = meta.get("synonyms")
    assert is_string_list(synonyms), f"{path}: 'synonyms' must be a list of strings"
    assert 2 <= len(synonyms) <= 6, f"{path}: expected 2-6 synonyms, got {len(synonyms)}"
    assert is_string_list(meta.get("tags")), f"{path}: 'tags' must be a list of strings"
    assert isinstance(meta.get("category"), str), f"{path}: 'category' must be a string"

    if cjk_ratio(description) > 0.5:
        # Chinese skills must be reachable by Chinese trigger phrases; one CJK char is too ambiguous.
        for trigger in triggers:
            assert has_cjk(trigger) and len(trigger.strip()) >= 2, f"{path}: weak Chinese trigger {trigger!r}"

    body_lines = [ln for ln in body.splitlines() if ln.strip()]
    assert 15 <= len(body_lines) <= 40, f"{path}: body has {len(body_lines)} non-empty lines"


def test_skill_names_unique() -> None:
    names = [split_front_matter(p)[0]["name"] for p in SKILL_FILES]
    assert len(names) == len(set(names)), names


def test_skills_are_bilingual() -> None:
    descriptions = [split_front_matter(p)[0]["description"] for p in SKILL_FILES]
    chinese = [d for d in descriptions if cjk_ratio(d) > 0.5]
    english = [d for d in descriptions if not has_cjk(d)]
    assert len(chinese) >= 5, f"only {len(chinese)} Chinese skills"
    assert len(english) >= 5, f"only {len(english)} English skills"
