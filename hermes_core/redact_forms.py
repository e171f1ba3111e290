"""The forms a secret takes on its way out of the process, so the redactor knows them all.

A key rarely leaves as written: a proxy that wants it in the URL gets it percent-encoded, a JSON
body escapes its quotes and non-ASCII letters, a bytes repr in a traceback shows its UTF-8 as
``\\xNN``, and a Basic ``Authorization`` header carries ``base64(user:key)``, where the key's
letters depend on how long the user name is. Each form is registered beside the key and shown
as the key's fingerprint, so the one redactor scrubs them all with the same substring search.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import urllib.parse
from collections.abc import Callable

_HEX = re.compile(r"%[0-9A-F]{2}")


def _lower_hex(text: str) -> str:
    return _HEX.sub(lambda m: m.group(0).lower(), text)


def _base64_cores(raw: bytes, encode: Callable[[bytes], bytes]) -> set[str]:
    """The base64 letters that encode ``raw`` alone, at each of the three alignments it can
    have inside a longer value (``user:key``): the letters that also hold a neighbour's bits
    depend on that neighbour, so they are left out."""
    cores = set()
    for shift in range(3):
        text = encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        start = -(-8 * shift // 6)                  # first letter made of the key's bits only
        end = 8 * (shift + len(raw)) // 6           # past the last such letter
        cores.add(text[start:end])
    return cores


@functools.lru_cache(maxsize=1024)
def encoded_forms(secret: str) -> frozenset[str]:
    """``secret`` and the encodings of it a writer may print; empty strings left out.

    The base64 forms of a key of fewer than eight bytes are its whole encodings only (a shifted
    core of three or four letters is found inside ordinary base64 by chance)."""
    forms = {secret}
    for safe in ("", "!'()*"):                      # Python's quote, JavaScript's encodeURIComponent
        for quoted in (urllib.parse.quote(secret, safe=safe),
                       urllib.parse.quote_plus(secret, safe=safe)):
            forms.update((quoted, _lower_hex(quoted)))
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        forms.update((escaped, escaped.replace("/", "\\/")))
        # escaped twice: a JSON text inside a JSON string (a structured reply sent as one string)
        forms.update(json.dumps(escaped, ensure_ascii=outer)[1:-1] for outer in (True, False))
    forms.add(repr(secret)[1:-1])
    forms.add(repr(secret.encode("utf-8"))[2:-1])
    raw = secret.encode("utf-8")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms.update((whole, whole.rstrip("=")))
        if len(raw) >= 8:
            forms.update(_base64_cores(raw, encode))
    return frozenset(f for f in forms if f)
