"""Pytest plugin that seals a test suite for offline LLM tests.

Load it early, before respx's own plugin imports httpx::

    [tool.pytest.ini_options]
    addopts = "-p hermes_core.testing.pytest_plugin"

What it does, at import time (so it runs before other plugins import httpx):

* ``httpx2.alias_httpx()``: ``import httpx`` resolves to httpx2, the library the openai and
  anthropic SDKs send through, so the ``respx_mock`` fixture intercepts both SDKs.
* ``HF_HUB_OFFLINE=1`` and friends: nothing reaches a model hub.

And per test session: real network is blocked (only loopback and Unix sockets may connect), API-key
variables are removed from the environment, ``HOME`` points at an empty folder of the session's
own (so the default ``~/.hermes`` a test reaches without ``hermes_home`` is never the user's real
one; ini ``hermes_isolate_home = false`` turns it off), and ``hermes_home`` gives each test a
private home and a private working directory (project context files are discovered from the cwd).
Ini ``hermes_strict_scripts = true`` makes every test double built without ``default=`` fail a
request past its script instead of answering "ok".
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2

httpx2.alias_httpx()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

SECRET_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY_2", "OPENAI_BASE_URL",
              "ANTHROPIC_BASE_URL", "HERMES_HOME", "HERMES_REDIS_URL_UNUSED")


class NetworkBlocked(RuntimeError):
    """A test tried to open a connection to a non-loopback address."""


def _is_local(address: Any) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and the like
    host = address[0]
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise NetworkBlocked(f"real network is blocked in tests (tried {address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise NetworkBlocked(f"real network is blocked in tests (tried {address!r})")
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name not in (None, "localhost") and not _is_local((name,)):
        raise NetworkBlocked(f"real network is blocked in tests (tried to resolve {name!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


def block_network() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo


def unblock_network() -> None:
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _real_getaddrinfo


@pytest.fixture(autouse=True)
def _network_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """Lift the guard for a test marked ``allow_network`` only, and put it back afterwards."""
    if request.node.get_closest_marker("allow_network") is None:
        yield
        return
    unblock_network()
    try:
        yield
    finally:
        block_network()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("hermes_isolate_home", type="bool", default=True,
                  help="point HOME at an empty folder for the session, so no test writes into "
                       "the real ~/.hermes (default: true)")
    parser.addini("hermes_strict_scripts", type="bool", default=False,
                  help="a test double built without default= fails a request past its script "
                       "instead of answering 'ok' (default: false)")


#: The session's change of ``HOME`` (and the folder it points at) while the default home is
#: isolated; pytest's own MonkeyPatch keeps what it replaced and puts it back.
_ISOLATED: list[tuple[pytest.MonkeyPatch, str]] = []


def isolate_default_home() -> str:
    """Point ``HOME`` at a new empty folder and return it.

    The default home is ``~/.hermes`` expanded when used, so a test that builds settings without a
    home (an Agent, a call loop's audit log, the embedding cache) would write into the user's real
    one. Caches found through ``HOME`` (a Hugging Face or torch hub model already downloaded) stay
    where they are: ``XDG_CACHE_HOME`` is pinned to the real cache folder first, unless set.
    """
    patch = pytest.MonkeyPatch()
    if "XDG_CACHE_HOME" not in os.environ:
        patch.setenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    fake = tempfile.mkdtemp(prefix="hermes-test-home-")
    patch.setenv("HOME", fake)
    _ISOLATED.append((patch, fake))
    return fake


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_network: do not block real network for this test")
    block_network()
    for name in SECRET_ENV:
        os.environ.pop(name, None)
    if config.getini("hermes_isolate_home"):
        isolate_default_home()
    if config.getini("hermes_strict_scripts"):
        from hermes_core.testing.fakes import strict_scripts  # the doubles load only when asked
        _STRICT_BEFORE.append(strict_scripts(True))


#: The rule for doubles without ``default=`` before this session made it strict.
_STRICT_BEFORE: list[bool] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    while _STRICT_BEFORE:
        from hermes_core.testing.fakes import strict_scripts
        strict_scripts(_STRICT_BEFORE.pop())
    while _ISOLATED:
        patch, fake = _ISOLATED.pop()
        patch.undo()
        shutil.rmtree(fake, ignore_errors=True)


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private, empty HERMES_HOME for one test, and a private, empty working directory.

    Project context (AGENTS.md, HERMES.md, ...) is discovered from the current directory up to its
    git root, so a test run inside a repository would otherwise find that repository's AGENTS.md
    in every prompt's system text.
    """
    home = tmp_path / "hermes-home"
    home.mkdir()
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.chdir(work)
    yield home
