"""Tests of ``hermes_core/agent/pool/window.py``: the sliding window answers as the plain list of
requests does, whatever is appended, pruned and removed."""

from __future__ import annotations

import random

import pytest

from hermes_core.agent.pool.state import tokens_free_at, window_free_at
from hermes_core.agent.pool.window import SlidingWindow


def test_window_answers_exactly_as_the_summed_list_does() -> None:
    rng = random.Random(9)
    win = SlidingWindow()
    plain: list[tuple[float, int]] = []
    now = 0.0
    for _ in range(3_000):
        now += rng.uniform(0.0, 0.3)
        cutoff = now - 10.0
        win.prune(cutoff)
        plain = [e for e in plain if e[0] > cutoff]
        assert len(win) == len(plain) and list(win) == plain
        assert win.used == sum(t for _, t in plain)
        limit, need = rng.randint(1, 2_000), rng.randint(0, 600)
        assert tokens_free_at(win, limit, need, 10.0) == tokens_free_at(plain, limit, need, 10.0)
        rpm = rng.randint(1, 50)
        assert window_free_at(win, rpm, 10.0) == window_free_at(plain, rpm, 10.0)
        if rng.random() < 0.7:
            entry = (now, rng.randint(0, 300))
            win.append(entry)
            plain.append(entry)
        if plain and rng.random() < 0.3:   # a request ends: its entry leaves (to be re-stamped)
            gone = plain[rng.randrange(max(0, len(plain) - 20), len(plain))]
            win.remove(gone)
            plain.remove(gone)


def test_window_removes_entries_a_clock_step_back_left_out_of_order() -> None:
    win = SlidingWindow()
    for entry in [(5.0, 10), (6.0, 20), (4.0, 30), (7.0, 0), (6.5, 40)]:   # the clock stepped back
        win.append(entry)
    win.remove((4.0, 30))
    win.remove((7.0, 0))
    assert list(win) == [(5.0, 10), (6.0, 20), (6.5, 40)] and win.used == 70
    assert tokens_free_at(win, 60, 5, 10.0) == tokens_free_at(list(win), 60, 5, 10.0) == 16.0
    with pytest.raises(ValueError):
        win.remove((4.0, 30))


def test_empty_window_and_indexing() -> None:
    win = SlidingWindow()
    assert not win and win.used == 0 and tokens_free_at(win, 10, 50, 60.0) is None
    win.append((1.0, 5))
    win.append((2.0, 7))
    assert win[0] == (1.0, 5) and win[-1] == (2.0, 7) and win[0:1] == [(1.0, 5)]
    win.prune(1.0)
    assert len(win) == 1 and win[0] == (2.0, 7) and win.used == 7
    # a single request larger than the limit waits for the window to empty, then goes through
    assert tokens_free_at(win, 5, 10, 60.0) == 62.0
