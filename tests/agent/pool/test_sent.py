"""Tests of ``hermes_core/agent/pool/sent.py``: the lists of requests a worker hands back to
Redis, an entry found by name and moved to its end, one entry a request."""

from __future__ import annotations

from collections import deque

import pytest

from hermes_core.agent.pool.lua_recovery import Sent
from hermes_core.agent.pool.sent import besides, ended, latest, take


def test_take_finds_a_name_in_the_first_list_holding_it_and_removes_it_there() -> None:
    first: deque[Sent] = deque([(1.0, 0, 60.0, "a")])
    second: list[Sent] = [(2.0, 5, 60.0, "b"), (3.0, 0, 60.0, "c")]
    found = take((first, second), "b")
    assert found is not None and found[0] is second and found[1] == (2.0, 5, 60.0, "b")
    assert second == [(3.0, 0, 60.0, "c")] and list(first) == [(1.0, 0, 60.0, "a")]


@pytest.mark.parametrize("name", ["", "x"])
def test_take_finds_nothing_for_no_name_or_an_unknown_one(name: str) -> None:
    entries: list[Sent] = [(1.0, 0, 60.0, "")]
    assert take((entries,), name) is None and len(entries) == 1


@pytest.mark.parametrize(("refused", "name"), [(False, "a"), (True, "r:a")])
def test_an_ended_request_is_at_its_end_and_marked_if_refused(refused: bool, name: str) -> None:
    assert ended((1.0, 7, 60.0, "a"), 9.0, refused) == (9.0, 7, 60.0, name)


def test_latest_keeps_one_entry_a_request_at_its_end_and_drops_the_expired() -> None:
    got = latest([(1.0, 0, 60.0, "a"), (8.0, 0, 60.0, "r:a"), (2.0, 0, 60.0, "b"),
                  (2.0, 0, 60.0, "b"), (-70.0, 0, 60.0, "old")], now=10.0)
    assert got == [(2.0, 0, 60.0, "b"), (8.0, 0, 60.0, "r:a")]


def test_besides_takes_out_each_handed_entry_once() -> None:
    same: Sent = (1.0, 0, 60.0, "")
    assert besides([same, same, (2.0, 0, 60.0, "b")], [same]) == [same, (2.0, 0, 60.0, "b")]
