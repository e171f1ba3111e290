"""The sliding RPM/TPM window keeps running totals and answers as summing the window would."""

from __future__ import annotations

import random

from hermes_core.agent.pool.state import SlidingWindow, tokens_free_at, window_free_at


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
