"""Partial objects of a streamed structured reply (:meth:`Agent.stream_output`).

Both providers hold a structured reply until it is whole (a stream cut inside its JSON is asked
again unseen), and meanwhile pass its pieces on as drafts (``Delta.draft``); the call loop says
when the drafts shown are void because their attempt failed and is tried again
(``Delta.redraft``), as the provider does when a tool call begins after them (a tool round's
words, a guess, shown while nothing said the round was one). Here the drafts so far are
validated leniently by the output model's own validator in pydantic's partial mode
(``allow_partial="trailing-strings"``: the fields present so far, the last string as far as it
came, an unfinished last list item or object left out); the reply's final object is validated
strictly by the agent, as ``chat(output=...)`` does, and only that one is ever
:attr:`OutputStream.output`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from typing import Generic, TypeVar

from pydantic import BaseModel

from hermes_core.agent.reply import Reply
from hermes_core.agent.tools.structured import parse_draft
from hermes_core.redact import StreamRedactor
from hermes_core.types import Delta

T = TypeVar("T", bound=BaseModel)

#: The drafts are read again once they have grown by 1/_STEP of their length: each read parses
#: the whole JSON so far, and reading at every piece cost O(n^2) (a 2.3 KB reply in 5-character
#: pieces: 105 ms of validation; read so, 22 reads instead of 472). The length counts from the
#: first ``{``: prose before the object (a reply after "Here is the plan:") holds no draft, and
#: counted in, a long one left the object after it few reads or none.
_STEP = 32


class Drafts(Generic[T]):
    """The drafts of one structured reply as ``output`` instances. :meth:`feed` is given every
    delta of the stream and says whether it made a new partial object (:attr:`latest`).

    The drafts pass through ``scrub`` (a fresh :class:`StreamRedactor` a reply, the agent's, so
    its registered keys too) before they are read, as the text does: a key the model writes into
    the JSON never reaches a partial object, and the tail that could still become one waits."""

    def __init__(self, output: type[T],
                 scrub: Callable[[], StreamRedactor] = StreamRedactor) -> None:
        self.output = output
        self._new_scrub = scrub
        self._scrub = scrub()
        self._parts: list[str] = []
        self._size = self._read = 0   # characters drafted, and when they were last read
        self._start: int | None = None   # where the first "{" was drafted (see _STEP)
        self._shown: T | None = None
        self.latest: T | None = None   # the newest partial object not yet taken
        self.voids = 0   # how many times partial objects made were voided (see restart)

    def feed(self, d: Delta) -> bool:
        if d.redraft:   # the attempt that sent them failed: the next drafts start anew
            self.restart()
            return False
        if not d.draft or not (shown := self._scrub.feed(d.draft)):
            return False
        if self._start is None and (brace := shown.find("{")) >= 0:
            self._start = self._size + brace
        self._parts.append(shown)
        self._size += len(shown)
        if self._size - self._read < (self._size - (self._start or 0)) // _STEP:
            return False   # read again once it has grown by a part of itself (see _STEP)
        self._read = self._size
        text = "".join(self._parts)
        self._parts[:] = [text]   # held as one string: a small str per piece costs ~11x its text
        if self._start is None:   # no object begun: nothing a draft could be read as
            return False
        # unwrapped as the final reply is (a fence, a sentence before it), so a reply whose
        # final object parses shows its partial ones too
        value = parse_draft(text, self.output)
        if value is None or value == self._shown:
            return False
        self._shown = self.latest = value
        return True

    def restart(self) -> None:
        """A new reply begins (a retried attempt, the repair round): earlier drafts are void, and
        with them the partial objects they made (counted in ``voids``)."""
        if self._shown is not None:
            self.voids += 1
        self._parts.clear()
        self._scrub = self._new_scrub()
        self._size = self._read = 0
        self._start = None
        self._shown = self.latest = None

    def take(self) -> T | None:
        value, self.latest = self.latest, None
        return value


class OutputStream(Generic[T]):
    """A structured reply as it streams: iterating yields ``output`` instances, each superseding
    the one before, partial (validated leniently, see the module's note) until the last, which is
    the reply's final object validated strictly; it alone is :attr:`output` (with :attr:`reply`).

    A retried attempt, a tool round's answer or the repair round starts its partial objects
    afresh (the next one may hold less); a tool round's own words show as partial objects until
    its first call begins. A stream that ends without a valid object raises from
    the iteration (the call loop's ``AllProvidersFailed`` for a cut stream,
    ``StructuredOutputError`` for a reply that did not validate after its repair round), and
    :attr:`output` stays None. ``close()`` (or dropping it) cancels the call; the turn then
    leaves no trace in the history.

    :attr:`voids` tells the void apart from an object that grew: it counts the times the partial
    objects so far were voided, so a display that keeps what it showed (a list rendered item
    by item) clears it when the count read beside an object has changed since the last one.
    """

    def __init__(self, drafts: Drafts[T], pieces: Generator[str, None, Reply]) -> None:
        self._drafts = drafts
        self._pieces = pieces
        self._objects = self._run()
        self.output: T | None = None
        self.reply: Reply | None = None

    def __iter__(self) -> Iterator[T]:
        return self._objects

    @property
    def voids(self) -> int:
        """How many times the partial objects yielded so far were voided (a retried attempt, a
        tool round's words, the repair round): read beside each object, a change since the
        last says the objects before it are no part of the answer."""
        return self._drafts.voids

    def _run(self) -> Generator[T, None, None]:
        reply = yield from _partials(self._drafts, self._pieces)
        self.reply, self.output = reply, reply.output
        yield reply.output

    def close(self) -> None:
        self._objects.close()
        self._pieces.close()


def _partials(drafts: Drafts[T], pieces: Generator[str, None, Reply]) -> Generator[T, None, Reply]:
    while True:
        try:
            next(pieces)
        except StopIteration as done:
            reply: Reply = done.value
            return reply
        if (value := drafts.take()) is not None:
            yield value


class AsyncOutputStream(Generic[T]):
    """:class:`OutputStream` for async code (:meth:`Agent.astream_output`): ``pieces`` is the
    async text stream, after which ``last`` gives the reply it recorded (the object validated)."""

    def __init__(self, drafts: Drafts[T], pieces: AsyncGenerator[str, None],
                 last: Callable[[], Reply | None]) -> None:
        self._drafts = drafts
        self._pieces = pieces
        self._last = last
        self._objects = self._run()
        self.output: T | None = None
        self.reply: Reply | None = None

    def __aiter__(self) -> AsyncIterator[T]:
        return self._objects

    @property
    def voids(self) -> int:
        """See :attr:`OutputStream.voids`."""
        return self._drafts.voids

    async def _run(self) -> AsyncGenerator[T, None]:
        async for _ in self._pieces:
            if (value := self._drafts.take()) is not None:
                yield value
        reply = self._last()
        assert reply is not None   # the stream ran to its end: the turn recorded its reply
        self.reply, self.output = reply, reply.output
        yield reply.output

    async def aclose(self) -> None:
        await self._objects.aclose()
        await self._pieces.aclose()
