"""Ctrl-C held back while a finished turn is recorded, so a turn is kept whole or not at all.

Recording a turn is several steps (the user's message, the tool rounds and the reply into the
history; the counters, usage and cost; the compactor's calibration; ``last_reply``). Python raises
KeyboardInterrupt between any two of them, and a Ctrl-C pressed just as a reply finished
streaming left the user's message in the history without its reply: every later request then
carried two user messages in a row and counters that disagreed with the history.

:func:`held_interrupts` keeps SIGINT's handler from running inside the block and runs it, once,
right after: the turn is then recorded whole and the interrupt still reaches the caller. Only the
main thread receives signals, so elsewhere (and when SIGINT is ignored or not Python's) the block
runs as is.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def held_interrupts() -> Iterator[None]:
    """Run the block with SIGINT held back; a SIGINT that arrived meanwhile is handled on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):   # ignored, the default action, or a handler not set from Python
        yield
        return
    held: list[FrameType | None] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(frame)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(signal.SIGINT, held[0])
