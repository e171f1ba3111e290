"""The SDK-accurate builders: what they build reads as the real servers' answers read."""

from __future__ import annotations

import time

import pytest

from hermes_core.errors import parse_retry_after
from hermes_core.testing import retry_after_headers


@pytest.mark.parametrize("form", ["http-date", "anthropic-reset"])
def test_an_absolute_wait_is_stated_on_the_server_s_clock_however_late_it_is_read(
        form: str) -> None:
    """A wait stated as a time (an HTTP date, Anthropic's RFC 3339 reset) came without the
    ``Date`` a server sends beside it, so it was read against the reader's clock: a test on a
    loaded machine that read it seconds after building it saw a shorter wait, and failed."""
    built = time.time() - 5.0     # read five seconds after it was made
    headers = retry_after_headers(form, 30, now=built)
    assert parse_retry_after(headers) == 30.0
    assert parse_retry_after(headers, now=built + 3600) == 30.0   # whatever the reader's clock
