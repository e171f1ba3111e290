"""The streams :meth:`CallLoop.stream` and :meth:`CallLoop.astream` hand back: the generator that
runs the request's attempts, with what a caller reads beside the deltas (the attempts so far, the
request id, the prompt as the streaming attempt sent it). Kept apart from the loop, which is long
enough; the loop's per-request state is read through :class:`StreamRun`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Generic, Protocol, TypeVar

from hermes_core.errors import Attempt
from hermes_core.types import Delta, Prompt

G = TypeVar("G")


class StreamRun(Protocol):
    """What a stream reads of its request's run (``resilience_run._Run``)."""

    attempts: list[Attempt]
    request_id: str
    sent: Prompt | None


class _RunView(Generic[G]):
    """What both streams hold: the generator that runs the request (``G``, sync or async) and
    what they show of their run (``attempts`` fills in as it runs). Only the two iterator
    protocols stay apart below (next and close, sync and awaited): a shared body would need a
    flag or a wrapper per call on the hot path, longer than the few lines it saves."""

    def __init__(self, run: StreamRun, gen: G) -> None:
        self.attempts = run.attempts
        self.request_id = run.request_id
        self._run = run
        self._gen = gen

    @property
    def prompt(self) -> Prompt | None:
        """The request exactly as sent by the attempt that streamed (None before one starts)."""
        return self._run.sent


class CallStream(_RunView[Iterator[Delta]], Iterator[Delta]):
    """A resilient stream (:meth:`CallLoop.stream`)."""

    def __iter__(self) -> CallStream:
        return self

    def __next__(self) -> Delta:
        return next(self._gen)

    def close(self) -> None:
        close = getattr(self._gen, "close", None)
        if close is not None:
            close()


class AsyncCallStream(_RunView[AsyncIterator[Delta]], AsyncIterator[Delta]):
    """:class:`CallStream` for ``astream``."""

    def __aiter__(self) -> AsyncCallStream:
        return self

    async def __anext__(self) -> Delta:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        aclose = getattr(self._gen, "aclose", None)
        if aclose is not None:
            await aclose()


def close_quietly(it: Any) -> None:
    """Close a provider's stream the loop is leaving (a failover, the caller gone): its own error
    on closing says nothing the loop has not already decided."""
    close = getattr(it, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            pass


async def aclose_quietly(it: Any) -> None:
    """:func:`close_quietly` for an async stream."""
    aclose = getattr(it, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            pass
