"""The token counts a provider reports, read as whole numbers of tokens or refused.

Both APIs report usage in the body (OpenAI's ``usage``, Anthropic's ``message_start`` and
``message_delta``), and the SDK models keep whatever the body held: a proxy or a compatible server
may send a negative count, a fraction, NaN, text, or a usage that is no object. A count read here
is a bill; one that is no count leaves the reply counted as one that reported nothing is.
"""

from __future__ import annotations

from typing import Any

#: More tokens than any request is billed (the largest windows hold about ten million): a count
#: above it is a lie, not a bill.
MOST_TOKENS = 10**9


def not_an_object(usage: Any) -> bool:
    """Whether a usage report the SDK kept as it came is a value, not an object of counts (text,
    a number, a list): it cannot be read, though every count looked up on it is left out."""
    return isinstance(usage, str | bytes | int | float | list | tuple)


def token_count(obj: Any, name: str, *, required: bool = False) -> int | None:
    """The count ``name`` of a usage report ``obj`` (an SDK model, which keeps whatever the body
    held): 0 when the report leaves it out (``required``: None), else a whole number of tokens
    from 0 to :data:`MOST_TOKENS`, given as a number or the text of one ("12"); None for
    anything else (a negative, fractional or non-finite number, ``true``, text that is no whole
    number, a list): a report holding it cannot be read, and the reply is counted as one that
    reported nothing is. Taken as it came, -9 input tokens billed a refund, 12.5 was billed as
    12, and "abc" or NaN raised a bare ValueError out of the call."""
    value = getattr(obj, name, None) if obj is not None else None
    if value is None:
        return None if required else 0
    if isinstance(value, str) and len(value) <= 40 and value.strip().isascii() \
            and value.strip().isdigit():   # int() refuses text of over 4,300 digits
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MOST_TOKENS else None
