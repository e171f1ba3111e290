"""The id of the request a provider (or the proxy in front of it) answered, as its headers state
it: what the provider's support asks for when a call failed, and what a person looks up in the
provider's console. Read from headers already scrubbed of secrets (see :mod:`hermes_core.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: Headers naming the request, the provider's own first: OpenAI's, Anthropic's, Azure API
#: Management's, then a CDN's ray id, which names only the proxy's hop (a Cloudflare 502 page
#: carries no provider id, and its ray is what the proxy's operator asks for).
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "apim-request-id", "cf-ray")
#: A header value longer than this is no id a server means (a proxy's junk): named by its head.
MAX_ID_CHARS = 100


def stated_request_id(headers: Mapping[str, str | Sequence[str]] | None
                      ) -> tuple[str, str] | None:
    """``(header, id)`` for the first of :data:`REQUEST_ID_HEADERS` the answer states, or None.
    Names match whatever their case; a header sent twice is one text, as httpx joins it."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in REQUEST_ID_HEADERS:
        value = lowered.get(name)
        text = (value if isinstance(value, str) else ", ".join(map(str, value or ()))).strip()
        if text:
            # one line of printable text: a header is shown inside an error's one-line message
            text = "".join(c for c in text if c.isprintable())[:MAX_ID_CHARS]
            return name, text
    return None
