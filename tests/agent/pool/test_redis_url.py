"""Tests of ``hermes_core/agent/pool/redis_url.py``: a Redis URL as logs may show it."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.redis_url import redact_url


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:s3cret@10.0.0.5:6379/0", "redis://***@10.0.0.5:6379/0"),
    ("redis://user:s3cret@cache/1", "redis://***@cache/1"),
    ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    # redis-py also reads the password from the query string
    ("redis://10.0.0.5:6379/0?password=s3cret", "redis://10.0.0.5:6379/0?password=***"),
    ("redis://u:p@cache/0?socket_timeout=1&Password=s3cret",
     "redis://***@cache/0?socket_timeout=1&Password=***"),
])
def test_redis_url_redaction(url: str, shown: str) -> None:
    assert redact_url(url) == shown
