"""Tests of ``hermes_core/testing/pytest_plugin.py``.

The pytest plugin's network guard: on by default, lifted by ``@pytest.mark.allow_network``; and
its private default home: a suite never writes into the user's real ``~/.hermes``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing import pytest_plugin
from hermes_core.testing.pytest_plugin import NetworkBlocked


def test_network_is_blocked_by_default():
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)
    s = socket.socket()
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("192.0.2.1", 443))
    finally:
        s.close()


@pytest.mark.allow_network
def test_allow_network_marker_lifts_the_guard_for_that_test():
    # no connection is made: the real functions are simply back in place for this test
    assert socket.socket.connect is pytest_plugin._real_connect
    assert socket.socket.connect_ex is pytest_plugin._real_connect_ex
    assert socket.getaddrinfo is pytest_plugin._real_getaddrinfo


def test_the_guard_is_back_after_a_marked_test():
    assert socket.socket.connect is pytest_plugin._guarded_connect
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)


# The default home: a suite that loads the plugin never writes into the user's real ~/.hermes.

ROOT = Path(__file__).resolve().parents[2]

INNER_TEST = '''
from hermes_core.config import load_settings


def test_a_turn_writes_its_audit_into_the_default_home():
    home = load_settings({}).home_path      # no home given: the default ~/.hermes
    home.mkdir(parents=True, exist_ok=True)
    (home / "audit.jsonl").write_text("{}\\n")
'''


def run_inner_suite(tmp_path: Path, *args: str) -> Path:
    """Run a one-test suite with pytest in a fresh process whose HOME is a fake user home;
    returns that fake home, to look at what the suite left in it."""
    user = tmp_path / "user"
    user.mkdir()
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_inner.py").write_text(INNER_TEST)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(user)}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--rootdir", str(suite), *args, str(suite)],
                         capture_output=True, text=True, cwd=suite, env=env, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return user


@pytest.mark.parametrize("how", ["plugin", "project config"])
def test_a_suite_with_the_plugin_leaves_the_real_default_home_untouched(tmp_path: Path,
                                                                       how: str) -> None:
    args = (["-p", "hermes_core.testing.pytest_plugin"] if how == "plugin"
            else ["-c", str(ROOT / "pyproject.toml")])   # this project's own suite, as it runs
    user = run_inner_suite(tmp_path, *args)
    assert list(user.iterdir()) == []


def test_isolating_the_default_home_can_be_turned_off(tmp_path: Path) -> None:
    user = run_inner_suite(tmp_path, "-p", "hermes_core.testing.pytest_plugin",
                           "-o", "hermes_isolate_home=false")
    assert (user / ".hermes" / "audit.jsonl").read_text() == "{}\n"


def test_real_network_is_blocked_in_the_suite():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("93.184.216.34", 80))
    finally:
        s.close()
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)


# An author's project set up as the README says, with pytest-asyncio: no warning of ours.

AUTHORS_ASYNC_TEST = '''
import pytest
from hermes_core.testing import FakeProvider
from hermes_core.testing.agents import offline_agent


@pytest.mark.asyncio
async def test_an_async_turn(tmp_path):
    agent = offline_agent(tmp_path, FakeProvider(["hi"], default=None))
    assert (await agent.achat("x")).text == "hi"
    agent.close(wait_warm=False)
'''


def test_an_authors_async_suite_set_up_as_the_readme_says_runs_without_a_warning(
        tmp_path: Path) -> None:
    """The README's ``[tool.pytest.ini_options]`` left pytest-asyncio's
    ``asyncio_default_fixture_loop_scope`` unset, so an author who copied it and wrote one
    ``async def`` test got a PytestDeprecationWarning at every run. It is pytest-asyncio's
    warning, not the plugin's (a project without the plugin gets it too), and the plugin must
    not answer it for the author: "function", the coming default, turns a session-scoped async
    fixture into a ScopeMismatch error. The README names the setting, in a snippet of its own
    (a project without pytest-asyncio would be told "Unknown config option")."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Testing your prompts offline", 1)[1]
    (suite := tmp_path / "suite").mkdir()
    snippets = re.findall(r"```toml\n(.*?)```", section, re.S)
    (suite / "pyproject.toml").write_text(next(t for t in snippets if "asyncio" in t))
    (suite / "test_author.py").write_text(AUTHORS_ASYNC_TEST)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "HF_HUB_OFFLINE": "1"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-W", "error::pytest.PytestDeprecationWarning", str(suite)],
                         capture_output=True, text=True, cwd=suite, env=env, timeout=900)
    assert res.returncode == 0 and "1 passed" in res.stdout, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Warning" not in res.stdout + res.stderr


# A suite that wants every script run out to be an error says so once.

STRICT_TEST = '''
import pytest
from hermes_core.testing import FakeProvider, ScriptedProvider
from hermes_core.testing.agents import offline_agent


@pytest.mark.parametrize("double", [FakeProvider, lambda s: ScriptedProvider("p", script=s)])
def test_a_script_run_out(tmp_path, double):
    agent = offline_agent(tmp_path, double(["one"]), context_engine={"enabled": False})
    assert agent.chat("first").text == "one"
    with pytest.raises(AssertionError) as info:
        agent.chat("second")
    assert "hermes_strict_scripts" in str(info.value), str(info.value)
    agent.close(wait_warm=False)


def test_a_double_s_own_default_still_answers(tmp_path):
    agent = offline_agent(tmp_path, FakeProvider([], default="fine"),
                          context_engine={"enabled": False})
    assert agent.chat("first").text == "fine"
    agent.close(wait_warm=False)
'''


def test_a_suite_can_make_every_script_run_out_an_error_without_touching_a_double(
        tmp_path: Path) -> None:
    """A double's script run out answers ``default``, "ok" unless given: a suite wanting every
    request past a script to fail had to pass ``default=None`` to each double. The ini
    ``hermes_strict_scripts = true`` makes that the default of every double built without
    ``default=``, and the run-out error names the setting (so a reader of the failure knows why
    it is one and where to turn it off)."""
    (suite := tmp_path / "suite").mkdir()
    (suite / "test_strict.py").write_text(STRICT_TEST)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "HF_HUB_OFFLINE": "1"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "hermes_core.testing.pytest_plugin", "--rootdir", str(suite),
                          "-o", "hermes_strict_scripts=true", "-W",
                          "error::pytest.PytestConfigWarning", str(suite)],
                         capture_output=True, text=True, cwd=suite, env=env, timeout=900)
    assert res.returncode == 0 and "3 passed" in res.stdout, res.stdout[-3000:] + res.stderr[-3000:]


def test_the_plugin_leaves_the_jieba_cache_in_the_users_own_folder() -> None:
    # it set a shared /tmp/hermes-core-jieba: a second user's suite met the first one's folder
    # (not writable, or one they planted) where the library itself would use a folder per user
    env = {k: v for k, v in os.environ.items() if k != "HERMES_JIEBA_CACHE"}
    probe = ("import os\nimport hermes_core.testing.pytest_plugin\n"
             "print(os.environ.get('HERMES_JIEBA_CACHE', ''))\n"
             "os.environ.pop('HERMES_JIEBA_CACHE', None)\n"
             "from hermes_core.config import jieba_cache_dir_setting\n"
             "print(jieba_cache_dir_setting())\n")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()
    assert out[0] in ("", out[1])
