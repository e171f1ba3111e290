"""Tests of ``hermes_core/testing/pytest_plugin.py``.

The pytest plugin's network guard: on by default, lifted by ``@pytest.mark.allow_network``; and
its private default home: a suite never writes into the user's real ``~/.hermes``.
"""

from __future__ import annotations

import os
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
