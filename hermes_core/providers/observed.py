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
from dataclasses import dataclass, field

import httpx2


@dataclass
class Heard:
    """The rate-limit headers of the last response received inside :func:`capture`."""

    headers: dict[str, str] = field(default_factory=dict)


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


def note(headers: httpx2.Headers) -> None:
    """Called by the transports for every response: keeps its rate-limit headers (lower-cased)
    when a :func:`capture` block is listening, else does nothing. Reads the raw bytes and decodes
    only the few that match: ``Headers.items()`` decodes every header (and first tries every one
    of them to pick an encoding), a cost paid on every answer."""
    heard = _HEARD.get()
    if heard is None:
        return
    kept: dict[str, str] = {}
    for raw_key, raw_value in headers.raw:
        key = raw_key.lower()
        if b"ratelimit" not in key:
            continue
        name, value = key.decode("latin-1"), _text(raw_value)
        kept[name] = f"{kept[name]}, {value}" if name in kept else value
    heard.headers = kept


def _text(value: bytes) -> str:
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        return value.decode("utf-8", "replace")
