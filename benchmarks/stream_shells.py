"""What folding ``stream``/``astream`` into one body would cost a streamed reply, chunk by chunk.

Each adapter's two streaming shells differ only in their I/O (open, ``with``/``async with``,
``for``/``async for``); per chunk both make one shared pure call (Anthropic: ``event_deltas`` of
``_StreamState.feed``). One body for both (as :mod:`hermes_core.providers.steps` does for a whole
call) must yield two kinds of thing, the I/O it needs and the deltas it made, so its driver tells
them apart at every chunk. This times, over the same N real Anthropic SDK events, R rounds:

* ``shell``: the loop the shells ran before decision 163 (``yield from event_deltas(...)`` inline);
* ``driven``: one body yielding a step for the next event and then the event's deltas, behind a
  driver that calls each step, sends its result back, and passes the deltas on;
* ``stepped``: the loop they run now: each shell keeps its own ``for``/``async for`` and feeds
  each event to the state machine's one per-event step (``_StreamState.step``).

Prints medians per chunk, ``ratio = driven / shell`` and ``stepped_ratio = stepped / shell``.

    python benchmarks/stream_shells.py --json [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from hermes_core.cli.argtypes import positive_int
from hermes_core.providers._sdk import event_deltas
from hermes_core.providers.anthropic import _StreamState
from hermes_core.testing import anthropic_stream
from hermes_core.types import Delta

ROUNDS = 50   # streams read per timed sample


def sdk_events(n: int) -> list[Any]:
    """The stream's events as the SDK hands them to the adapter (its own pydantic models)."""
    body = anthropic_stream(tuple(f"word{i} " for i in range(n)))
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    return [adapter.validate_python(json.loads(line[6:])) for line in body.split(b"\n")
            if line.startswith(b"data: ")]


def shell(events: list[Any]) -> Iterator[Delta]:
    state = _StreamState("anthropic")
    for event in events:
        yield from event_deltas("anthropic", state.feed(event))


def stepped(events: list[Any]) -> Iterator[Delta]:
    """The loop the shells run since decision 163: the state machine's own per-event step."""
    state = _StreamState("anthropic")
    for event in events:
        yield from state.step(event)


class _Step:
    __slots__ = ("call",)

    def __init__(self, call: Callable[[], Any]) -> None:
        self.call = call


_END = object()


def body(chunks: Iterator[Any]) -> Generator[Any, Any, None]:
    """The shared body: asks for each event as a step, yields its deltas."""
    state = _StreamState("anthropic")
    step = _Step(lambda: next(chunks, _END))
    while (event := (yield step)) is not _END:
        yield from event_deltas("anthropic", state.feed(event))


def driven(events: list[Any]) -> Iterator[Delta]:
    """The sync driver: a step is called and its result sent back; anything else is a delta."""
    steps = body(iter(events))
    try:
        item = next(steps)
        while True:
            if type(item) is _Step:
                item = steps.send(item.call())
            else:
                yield item
                item = next(steps)
    except StopIteration:
        return


def per_chunk_us(read: Callable[[list[Any]], Iterator[Delta]], events: list[Any]) -> float:
    t = time.perf_counter()
    for _ in range(ROUNDS):
        for _delta in read(events):
            pass
    return (time.perf_counter() - t) * 1e6 / (ROUNDS * len(events))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=positive_int, default=200)
    ap.add_argument("--repeat", type=positive_int, default=9)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    events = sdk_events(args.events)
    assert ([d.text for d in shell(events)] == [d.text for d in driven(events)]
            == [d.text for d in stepped(events)])
    reads = (("shell", shell), ("driven", driven), ("stepped", stepped))
    for _, read in reads:   # warm up
        per_chunk_us(read, events)
    samples: dict[str, list[float]] = {name: [] for name, _ in reads}
    for _ in range(args.repeat):
        for name, read in reads:   # interleaved
            samples[name].append(per_chunk_us(read, events))
    med = {name: statistics.median(v) for name, v in samples.items()}
    out = {"events": len(events), "repeat": args.repeat, "rounds": ROUNDS,
           "shell_us_per_chunk_p50": round(med["shell"], 3),
           "driven_us_per_chunk_p50": round(med["driven"], 3),
           "dispatch_us_per_chunk": round(med["driven"] - med["shell"], 3),
           "ratio": round(med["driven"] / med["shell"], 3),
           "stepped_us_per_chunk_p50": round(med["stepped"], 3),
           "stepped_ratio": round(med["stepped"] / med["shell"], 3)}
    print(json.dumps(out) if args.json else out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
