"""Tests of ``hermes_core/agent/pool/redis_reply.py``: the scripts' replies read into the pool's
types, as text or as the bytes of a client built without ``decode_responses``."""

from __future__ import annotations

import pytest

from hermes_core.agent.pool.breaker import BreakerState
from hermes_core.agent.pool.quarantine import Standing
from hermes_core.agent.pool.redis_reply import (
    breaker,
    key_reports,
    opt_float,
    provider_snapshot,
    release_result,
    text,
)
from hermes_core.agent.pool.state import KeySpec, ReleaseResult


@pytest.mark.parametrize(("value", "read"), [("a", "a"), (b"a", "a"), (3, "3"),
                                             ("键".encode(), "键")])
def test_a_reply_item_reads_as_text(value: object, read: str) -> None:
    assert text(value) == read


@pytest.mark.parametrize(("value", "read"), [("", None), (b"", None), ("1.5", 1.5),
                                             (b"1e+20", 1e20)])
def test_the_empty_string_is_no_number(value: object, read: float | None) -> None:
    assert opt_float(value) == read


def test_a_breaker_reads_mode_failures_and_opening() -> None:
    assert breaker(b"open|3|1700.5") == BreakerState("open", 3, 1700.5)


def _acquire_reply(*keys: list[str]) -> list[str]:
    head = ["a", "", "0", "1000", "", "e1"]
    return head + [x for k in keys for x in k] + [""]


def test_each_key_s_part_of_an_acquire_reply_is_read() -> None:
    raw = _acquire_reply(["1010", "0", "", "2|4|999:10", "0", "closed|0|0"],
                         ["0", "1", "1e+20", "0|0|", "2", "open|5|990"])
    got = key_reports(raw, 2)
    assert [(r.blocked_until, r.removed, r.learned_rpm, r.window) for r in got] == [
        (1010.0, False, None, "2|4|999:10"), (0.0, True, 10**20, "0|0|")]
    assert got[1].standing == Standing(2, BreakerState("open", 5, 990.0), True)


def test_an_acquire_reply_without_the_keys_part_reads_as_none() -> None:
    assert key_reports(["", "1005", "0", "1000", "", "e1"], 2) == []


def test_a_release_reply_is_the_result_and_the_key_s_standing() -> None:
    res, standing = release_result([b"1", b"1030", b"0", b"0", b"", b"1", b"half_open|2|1001"])
    assert res == ReleaseResult(True, 1030.0, False, None, False)
    assert standing == Standing(1, BreakerState("half_open", 2, 1001.0), False)


def test_a_snapshot_reply_reads_the_provider_then_each_key() -> None:
    provider = ["1000", "open", "2", "990"]
    raw = [*provider, "1", "1010", "1", "3", "40", "closed", "0", "0", "", ""]
    snap = provider_snapshot("p", [KeySpec("a")], raw)
    assert snap.provider == "p" and snap.now == 1000.0
    assert snap.breaker == BreakerState("open", 2, 990.0)
    key, = snap.keys
    assert (key.fingerprint, key.removed, key.blocked_until, key.in_flight, key.requests_in_window,
            key.tokens_in_window, key.learned_rpm, key.auth_strikes) == (
        "a", True, 1010.0, 1, 3, 40, None, 0)
