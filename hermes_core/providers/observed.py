"""What the call loop hears from an answer besides its body: the rate-limit headers of a 200.

Real providers state a key's limit, what remains of it and when it resets on every answer
(``x-ratelimit-*``, ``anthropic-ratelimit-*``), not only on the 429 that refuses. The SDKs hide the
headers of a success behind ``with_raw_response``; both SDK clients are built on the transports of
:mod:`hermes_core.providers.deadline`, which hand every response's rate-limit headers to the
:func:`capture` block around the call (a context variable, so it reaches the transport through the
SDK, sync and async, without touching its signatures). Outside such a block nothing is kept.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Heard:
    """The rate-limit headers of the last response received inside :func:`capture`."""

    headers: dict[str, str] = field(default_factory=dict)


_HEARD: contextvars.ContextVar[Heard | None] = contextvars.ContextVar("hermes_heard",
                                                                    default=None)


@contextmanager
def capture(heard: Heard | None = None) -> Iterator[Heard]:
    """Responses received inside this block leave their rate-limit headers on ``heard`` (a new
    :class:`Heard` when not given), which is yielded."""
    heard = Heard() if heard is None else heard
    token = _HEARD.set(heard)
    try:
        yield heard
    finally:
        _HEARD.reset(token)


def note(headers: Mapping[str, str]) -> None:
    """Called by the transports for every response: keeps its rate-limit headers (lower-cased)
    when a :func:`capture` block is listening, else does nothing."""
    heard = _HEARD.get()
    if heard is None:
        return
    heard.headers = {k.lower(): v for k, v in headers.items() if "ratelimit" in k.lower()}
