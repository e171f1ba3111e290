"""What the call loop hears from an answer besides its body: the rate-limit headers of a 200, and
what a stream has been billed so far.

Real providers state a key's limit, what remains of it and when it resets on every answer
(``x-ratelimit-*``, ``anthropic-ratelimit-*``), not only on the 429 that refuses. The SDKs hide the
headers of a success behind ``with_raw_response``; both SDK clients are built on the transports of
:mod:`hermes_core.providers.deadline`, which hand every response's rate-limit headers to the
:func:`capture` block around the call (a context variable, so it reaches the transport through the
SDK, sync and async, without touching its signatures). Outside such a block nothing is kept.

A stream abandoned mid-answer (the user's Ctrl-C, a cancelled task, a closed reply stream) ends in
no provider error that could carry its usage, yet the provider billed the prompt and what it had
generated. A streaming adapter therefore hands the :func:`capture` block around its first event
a way to ask what it has been billed so far (:func:`bill`), which the call loop asks when the
attempt is aborted.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx2

from hermes_core.request_ids import REQUEST_ID_HEADERS
from hermes_core.types import Usage


@dataclass
class Heard:
    """The rate-limit and request-id headers of the last response received inside
    :func:`capture`, and what the stream begun there has been billed so far (None: nothing
    known, or no stream)."""

    headers: dict[str, str] = field(default_factory=dict)
    billed: Callable[[], Usage | None] | None = None


_HEARD: contextvars.ContextVar[Heard | None] = contextvars.ContextVar("hermes_heard",
                                                                    default=None)


class capture:
    """Responses received inside this block leave their rate-limit headers on ``heard`` (a new
    :class:`Heard` when not given), which is yielded. A class, not a generator context manager:
    the call loop enters one per attempt."""

    __slots__ = ("_token", "heard")

    def __init__(self, heard: Heard | None = None) -> None:
        self.heard = Heard() if heard is None else heard

    def __enter__(self) -> Heard:
        self._token = _HEARD.set(self.heard)
        return self.heard

    def __exit__(self, *exc: object) -> None:
        _HEARD.reset(self._token)


def bill(billed: Callable[[], Usage | None]) -> None:
    """Called by a streaming adapter as its stream begins: ``billed`` tells, when asked, what the
    stream has been billed so far. Kept when a :func:`capture` block is listening."""
    heard = _HEARD.get()
    if heard is not None:
        heard.billed = billed


#: The headers a response states its request id in: kept too, the attempt that answered names
#: it in its audit line as a failed one does.
_ID_KEYS = frozenset(name.encode() for name in REQUEST_ID_HEADERS)


def note(headers: httpx2.Headers) -> None:
    """Called by the transports for every response: keeps its rate-limit and request-id headers
    (lower-cased) when a :func:`capture` block is listening, else does nothing. Reads the raw
    bytes and decodes only the few that match: ``Headers.items()`` decodes every header (and
    first tries every one of them to pick an encoding), a cost paid on every answer."""
    heard = _HEARD.get()
    if heard is None:
        return
    kept: dict[str, str] = {}
    for raw_key, raw_value in headers.raw:
        key = raw_key.lower()
        if b"ratelimit" not in key and key not in _ID_KEYS:
            continue
        name, value = key.decode("latin-1"), _text(raw_value)
        kept[name] = f"{kept[name]}, {value}" if name in kept else value
    heard.headers = kept


def _text(value: bytes) -> str:
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        return value.decode("utf-8", "replace")
