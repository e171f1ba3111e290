"""The README's promises: Quick start has exactly two fenced commands, and its test snippets run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_has_two_commands():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    assert all(len(b.strip().splitlines()) == 1 for b in blocks)
    assert "hermes-core chat --home examples/home" in blocks[0]
    assert "pytest" in blocks[1] and "[dev" in blocks[1]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1].strip() in ci  # CI runs the README's test command verbatim


def test_readme_python_snippets_run(request):
    text = README.read_text(encoding="utf-8")
    section = text.split("## Testing your prompts offline", 1)[1].split("\n## ", 1)[0]
    snippets = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(snippets) == 4   # persona, summary requests, respx, a stream cut and a 429
    for code in snippets:
        ns: dict = {}
        exec(compile(code, "README.md", "exec"), ns)
        tests = [v for k, v in ns.items() if k.startswith("test_")]
        assert tests
        for fn in tests:   # each gets the fixtures it names, as pytest would hand them
            names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
            fn(*[request.getfixturevalue(name) for name in names])


def _run_section_snippet(section: str, home_copier, tmp_path: Path, tail: str = ""):
    """Run the one python snippet of the README's ``section`` as a script from a fresh checkout's
    root (a copy of the example home at examples/home), offline and with no API key."""
    text = README.read_text(encoding="utf-8").split(f"## {section}", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", text.split("\n## ", 1)[0], re.S)
    home_copier(tmp_path / "examples" / "home")
    script = tmp_path / "snippet.py"
    script.write_text(code + tail, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("HERMES_HOME", None)
    env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)


# The README's "Using the library" snippet runs as written (offline, on a copy of the example
# home). It used to open "config.yaml", which a fresh checkout does not have.

def test_using_the_library_snippet_runs(copy_example_home, tmp_path: Path):
    res = _run_section_snippet("Using the library", copy_example_home, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "git-rebase-conflicts" in res.stdout      # reply.retrieval.names
    assert "offline reply" in res.stdout
    assert (tmp_path / "examples" / "home" / "sessions.db").is_file()   # the chat was recorded


# The "Tools" snippet runs as written on a fresh checkout (offline: no tool is called, nothing
# is priced). It used to open "config.yaml", which a fresh checkout does not have.

def test_tools_snippet_runs(copy_example_home, tmp_path: Path):
    res = _run_section_snippet("Tools", copy_example_home, tmp_path, tail="agent.close()\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[] $0.0000"     # offline: no tool result, no cost


def test_the_readme_s_test_command_ends_with_the_pass_and_fail_counts(tmp_path: Path) -> None:
    """CI's reader (and anyone adding the habitual ``-q``) needs "1 failed, 1 passed in 0.1s":
    with ``-q`` in pyproject's addopts, a second ``-q`` made it ``-qq``, which prints no counts
    line. Run with this repository's pytest configuration on two tests, one failing, once: the
    README's arguments with ``-x -q`` added, the quietest a reader makes it (each ``-q`` only
    lowers the verbosity, so the command as written prints at least as much)."""
    command = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    pytest_args = [a for a in command[1].split("-m pytest", 1)[1].split() if a]
    (tmp_path / "test_two.py").write_text(
        "def test_passes():\n    assert 1 + 1 == 2\n\n\ndef test_fails():\n    assert 1 + 1 == 3\n",
        encoding="utf-8")
    root = README.parent
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, "-x", "-q", "-c", str(root / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", str(tmp_path / "test_two.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)})
    assert run.returncode == 1, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert re.search(r"\b1 failed, 1 passed\b", last), run.stdout
