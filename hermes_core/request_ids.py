"""The id of the request a provider (or the proxy in front of it) answered, as its headers state
it: what the provider's support asks for when a call failed, and what a person looks up in the
provider's console. An id is scrubbed *before* it is cut (:func:`hermes_core.redact.clip`): a
proxy may echo the key into it, and a key across the cut is no longer whole, so no scrubber
after the cut knows its head.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from hermes_core.redact import clip

if TYPE_CHECKING:
    from hermes_core.errors import ProviderError

#: Headers naming the request, the provider's own first: OpenAI's, Anthropic's, Azure API
#: Management's, then a CDN's ray id, which names only the proxy's hop (a Cloudflare 502 page
#: carries no provider id, and its ray is what the proxy's operator asks for).
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "apim-request-id", "cf-ray")
#: A header value longer than this is no id a server means (a proxy's junk): named by its head.
MAX_ID_CHARS = 100


def stated_request_id(headers: Mapping[str, str | Sequence[str]] | None,
                      secrets: Iterable[str] = ()) -> tuple[str, str] | None:
    """``(header, id)`` for the first of :data:`REQUEST_ID_HEADERS` the answer states, or None.
    Names match whatever their case; a header sent twice is one text, as httpx joins it. The id
    is scrubbed of ``secrets`` and every registered one, then cut (:func:`_one_line`)."""
    if not headers:
        return None
    secrets = tuple(secrets)
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in REQUEST_ID_HEADERS:
        value = lowered.get(name)
        text = (value if isinstance(value, str) else ", ".join(map(str, value or ()))).strip()
        if text and (shown := _one_line(text, secrets)):   # not one of controls alone
            return name, shown
    return None


def _one_line(text: str, secrets: Iterable[str] = ()) -> str:
    """One line of printable text, scrubbed of ``secrets`` and every registered one, then cut
    to :data:`MAX_ID_CHARS` (never inside a redaction marker): an id is shown inside an error's
    one-line message. Scrubbed first: cut first, a key across the cut was shown by its head."""
    return clip(printable(text), MAX_ID_CHARS, secrets)


def printable(text: str) -> str:
    """``text`` without what is not printed as itself: line breaks, tabs, terminal escapes
    (ESC, the one-byte CSI), bidi overrides. A server's words (a request id, a page's title)
    shown in an error must not clear the screen it is printed on, nor reverse what follows."""
    return "".join(c for c in text if c.isprintable())


def shown_id(stated: str | None, secrets: Iterable[str] = ()) -> str | None:
    """The request id a response stated, as it is shown and kept: scrubbed of ``secrets`` and
    every registered one (a proxy may echo the key into it), one printable line, cut to
    :data:`MAX_ID_CHARS`; None when blank. An answered request's id is printed
    (``Reply.request_ids``) and quoted in tickets as a failed one's is."""
    if not stated or not stated.strip():
        return None
    return _one_line(stated.strip(), secrets) or None


def naming(error: ProviderError, header: str, stated: str | None,
           secrets: Iterable[str] = ()) -> ProviderError:
    """``error`` naming the request ``header`` stated as ``stated`` (on the error and in its
    words), unless it names one already. For a stream that failed after its headers (cut short,
    gone silent, a malformed event): the error is built from no answer of its own, but the
    provider answered that request all the same. The id is scrubbed of ``secrets`` and every
    registered one (a proxy may echo the key into it), then cut."""
    if error.request_id is None and (shown := shown_id(stated, secrets)):
        error.request_id = shown
        if error.args and isinstance(error.args[0], str):
            error.args = (f"{error.args[0]} ({header} {shown})", *error.args[1:])
    return error
