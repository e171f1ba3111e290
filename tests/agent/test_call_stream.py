"""The stream shells the call loop hands back: deltas through, the run's attempts and prompt as
they stand when read, closing reaching the generator, and quiet closes of a provider's stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import pytest

from hermes_core.agent.call_stream import AsyncCallStream, CallStream, aclose_quietly, close_quietly
from hermes_core.errors import Attempt
from hermes_core.types import Delta, Message, Prompt


@dataclass
class _Run:
    attempts: list[Attempt] = field(default_factory=list)
    request_id: str = "0123456789abcdef"
    sent: Prompt | None = None


PROMPT = Prompt("s", (Message("user", "hi"),))


def test_a_stream_passes_deltas_and_reads_attempts_and_prompt_as_the_run_fills_them() -> None:
    run = _Run()

    def gen() -> Iterator[Delta]:
        run.sent = PROMPT
        run.attempts.append(Attempt("p", "m", None, "ok", 1.0))
        yield Delta(text="a")
        yield Delta(text="b")

    stream = CallStream(run, gen())
    assert stream.prompt is None and stream.attempts == [] and stream.request_id == run.request_id
    assert [d.text for d in stream] == ["a", "b"]
    assert stream.prompt is PROMPT and [a.status for a in stream.attempts] == ["ok"]


def test_closing_a_stream_runs_the_generator_s_cleanup() -> None:
    closed: list[bool] = []

    def gen() -> Iterator[Delta]:
        try:
            yield Delta(text="a")
            yield Delta(text="b")
        finally:
            closed.append(True)

    stream = CallStream(_Run(), gen())
    assert next(stream).text == "a"
    stream.close()
    assert closed == [True]
    with pytest.raises(StopIteration):
        next(stream)


def test_an_async_stream_passes_deltas_and_its_close_runs_the_generator_s_cleanup() -> None:
    closed: list[bool] = []
    run = _Run()

    async def gen() -> AsyncIterator[Delta]:
        try:
            run.sent = PROMPT
            yield Delta(text="a")
            yield Delta(text="b")
        finally:
            closed.append(True)

    async def main() -> list[str]:
        stream = AsyncCallStream(run, gen())
        first = await stream.__anext__()
        await stream.aclose()
        assert stream.prompt is PROMPT
        return [first.text]

    assert asyncio.run(main()) == ["a"] and closed == [True]


def test_quiet_closes_swallow_a_provider_stream_s_error_on_closing_and_skip_what_cannot_close() -> None:
    class Failing:
        def close(self) -> None:
            raise RuntimeError("connection reset while closing")

        async def aclose(self) -> None:
            raise RuntimeError("connection reset while closing")

    close_quietly(Failing())
    close_quietly(object())
    asyncio.run(aclose_quietly(Failing()))
    asyncio.run(aclose_quietly(object()))

    class Counting:
        n = 0

        def close(self) -> None:
            Counting.n += 1

    close_quietly(Counting())
    assert Counting.n == 1
