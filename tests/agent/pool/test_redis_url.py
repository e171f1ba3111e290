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


@pytest.mark.parametrize(("url", "shown"), [
    # the scheme forgotten (a console's "user:password@host:port" pasted as is), or mistyped:
    # urlsplit finds no user info, and redis-py's refusal quoted the password whole
    ("default:s3cret@redis.internal:6379/0", "***@redis.internal:6379/0"),
    (":s3cret@10.0.0.5:6379", "***@10.0.0.5:6379"),
    ("redis:/:s3cret@cache:6379", "***@cache:6379"),
    ("redis//:s3cret@cache", "***@cache"),
    ("user:p@ss:s3cret@cache:6379", "***@cache:6379"),
    # no user info: nothing to hide
    ("cache:6379", "cache:6379"),
    ("u:s3cret@", "***@"),
    ("u:s3cret@cache/0?password=s3cret", "***@cache/0?password=***"),
])
def test_a_redis_url_without_its_scheme_still_hides_its_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_a_redis_url_without_its_scheme_is_refused_without_its_password() -> None:
    from hermes_core.agent.pool.redis import RedisPoolState
    from hermes_core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"invalid Redis URL '\*\*\*@redis\.internal") as got:
        RedisPoolState("default:s3cret@redis.internal:6379/0")
    assert "s3cret" not in str(got.value) and "s3cret" not in repr(got.value)
