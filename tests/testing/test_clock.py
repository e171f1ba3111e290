"""FakeClock: time moves only when told, sleeps are recorded, threads see one reading."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from pathlib import Path

from hermes_core.testing import FakeClock


def test_monotonic_call_and_t_agree_and_move_only_when_told() -> None:
    clock = FakeClock(50.0)
    assert clock() == clock.monotonic() == clock.t == 50.0
    clock.t += 2.5
    assert clock.monotonic() == 52.5
    assert clock.advance(1.5) == 54.0
    assert clock.advance(-10.0) == 54.0          # never backward
    assert clock.sleeps == []                    # advancing is not sleeping


def test_wall_time_moves_in_step_with_monotonic_time() -> None:
    clock = FakeClock(10.0, wall_start=1_700_000_000.0)
    assert clock.time() == 1_700_000_000.0
    clock.sleep(30.0)
    assert clock.time() == 1_700_000_030.0
    assert clock.monotonic() == 40.0


def test_sleep_records_and_advances_and_a_negative_request_advances_nothing() -> None:
    clock = FakeClock(0.0)
    clock.sleep(1.0)
    clock.sleep(0.25)
    clock.sleep(-3.0)
    assert clock.sleeps == [1.0, 0.25, -3.0]
    assert clock() == 1.25


def test_async_sleep_advances_and_yields_to_the_loop() -> None:
    clock = FakeClock(0.0)
    order: list[str] = []

    async def sleeper() -> None:
        await clock.asleep(5.0)
        order.append("sleeper")

    async def other() -> None:
        order.append("other")

    async def main() -> None:
        await asyncio.gather(sleeper(), other())

    asyncio.run(main())
    assert clock() == 5.0 and clock.sleeps == [5.0]
    assert order == ["other", "sleeper"]


def test_sleeps_from_many_threads_all_count() -> None:
    clock = FakeClock(0.0)

    def work() -> None:
        for _ in range(1000):
            clock.sleep(0.001)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(clock.sleeps) == 8000
    assert abs(clock() - 8.0) < 1e-6


def test_repr_shows_the_reading() -> None:
    assert "t=3.0" in repr(FakeClock(3.0))


def test_step_wall_moves_wall_time_alone_either_way() -> None:
    clock = FakeClock(10.0, wall_start=1_000.0)
    clock.step_wall(-300.0)
    assert clock.time() == 700.0 and clock.monotonic() == 10.0
    clock.advance(5.0)
    clock.step_wall(+100.0)
    assert clock.time() == 805.0 and clock.monotonic() == 15.0


def test_now_is_the_wall_time_as_a_datetime_so_a_prompt_s_date_line_can_be_pinned(
        hermes_home: Path) -> None:
    """The prompt builder's clock gives a datetime and FakeClock gave only seconds: a test of
    the exact per-turn context could not hold its date line still. ``clock.now`` is that clock."""
    from hermes_core import Agent, PromptBuilder
    from hermes_core.config import load_settings
    from hermes_core.testing import FakeProvider

    clock = FakeClock(wall_start=datetime(2031, 7, 4, 12, 30, tzinfo=UTC).timestamp())
    assert clock.now() == datetime(2031, 7, 4, 12, 30, tzinfo=UTC)
    settings = load_settings({"home": str(hermes_home)}, env={})
    fake = FakeProvider(["hi", "again"])
    agent = Agent(settings, provider=fake, session_id="s1",
                  prompt_builder=PromptBuilder(hermes_home, settings, clock=clock.now))
    agent.chat("hello")
    assert "Current date and time: 2031-07-04 12:30 UTC (Friday) | session: s1" in \
        fake.last_request.context
    clock.advance(86_400)
    agent.chat("and tomorrow?")
    assert "2031-07-05 12:30 UTC (Saturday)" in fake.last_request.context
