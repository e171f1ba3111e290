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

Each loop ends as a shell does, with the state's tail (the usage and finish). The stream holds a
tool call and a structured reply besides its text, and before timing anything the three loops'
whole delta sequences (text, drafts, tool calls, usage, finish) must be equal, else the run stops
naming the first delta that differs: a faster loop that yields something else measures nothing.

Prints medians per chunk, ``ratio = driven / shell``, ``stepped_ratio = stepped / shell`` and
``deltas``: how many deltas of each kind every loop yielded alike.

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
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.testing import anthropic_stream
from hermes_core.types import Delta, ToolCall

ROUNDS = 50   # streams read per timed sample


def sdk_events(n: int) -> list[Any]:
    """The stream's events as the SDK hands them to the adapter (its own pydantic models): ``n``
    pieces of words of a structured request (``hold``: drafts, as a proxy sends them), then the
    output tool (its JSON a draft, then its text) and a tool call of the author's, which makes
    the message a tool round and voids the drafts: every kind of delta the shells pass on."""
    calls = (ToolCall("toolu_1", STRUCTURED_OUTPUT_TOOL, '{"answer": 42}'),
             ToolCall("toolu_2", "lookup", '{"q": "word"}'))
    body = anthropic_stream(tuple(f"word{i} " for i in range(n)), tool_calls=calls)
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    return [adapter.validate_python(json.loads(line[6:])) for line in body.split(b"\n")
            if line.startswith(b"data: ")]


def shell(events: list[Any]) -> Iterator[Delta]:
    state = _StreamState("anthropic", hold=True)
    for event in events:
        yield from event_deltas("anthropic", state.feed(event))
    yield from state.tail(None)


def stepped(events: list[Any]) -> Iterator[Delta]:
    """The loop the shells run since decision 163: the state machine's own per-event step."""
    state = _StreamState("anthropic", hold=True)
    for event in events:
        yield from state.step(event)
    yield from state.tail(None)


class _Step:
    __slots__ = ("call",)

    def __init__(self, call: Callable[[], Any]) -> None:
        self.call = call


_END = object()


def body(chunks: Iterator[Any]) -> Generator[Any, Any, None]:
    """The shared body: asks for each event as a step, yields its deltas."""
    state = _StreamState("anthropic", hold=True)
    step = _Step(lambda: next(chunks, _END))
    while (event := (yield step)) is not _END:
        yield from event_deltas("anthropic", state.feed(event))
    yield from state.tail(None)


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


KINDS: tuple[tuple[str, Callable[[Delta], bool]], ...] = (
    ("text", lambda d: bool(d.text)), ("draft", lambda d: bool(d.draft)),
    ("tool_call", lambda d: d.tool_call is not None), ("usage", lambda d: d.usage is not None))


def same_deltas(reads: tuple[tuple[str, Callable[[list[Any]], Iterator[Delta]]], ...],
                events: list[Any]) -> dict[str, int]:
    """How many deltas of each kind the loops yield, once each loop's whole sequence (every
    field of every delta) is found equal to the first loop's; else ``SystemExit`` naming the
    loop and the first delta that differs. A kind none of them yields is an error too: the
    comparison would not cover it."""
    (first, read), *others = reads
    want = list(read(events))
    for name, other in others:
        got = list(other(events))
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
                      min(len(want), len(got)))
            raise SystemExit(
                f"stream_shells: {name} yields other deltas than {first} ({len(got)} against "
                f"{len(want)}); first difference at #{at}: "
                f"{got[at] if at < len(got) else 'nothing'!r} against "
                f"{want[at] if at < len(want) else 'nothing'!r}")
    counts = {kind: sum(1 for d in want if has(d)) for kind, has in KINDS}
    if not all(counts.values()):
        raise SystemExit(f"stream_shells: the stream yields no delta of some kind: {counts}")
    return counts


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
    reads: tuple[tuple[str, Callable[[list[Any]], Iterator[Delta]]], ...] = (
        ("shell", shell), ("driven", driven), ("stepped", stepped))
    deltas = same_deltas(reads, events)
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
           "stepped_ratio": round(med["stepped"] / med["shell"], 3), "deltas": deltas}
    print(json.dumps(out) if args.json else out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
