"""Tests of ``hermes_core/testing/pytest_plugin.py``.

The pytest plugin's network guard: on by default, lifted by ``@pytest.mark.allow_network``.
"""

from __future__ import annotations

import socket

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
