"""JSON with no NaN or Infinity, for what the package writes for a provider.

Python's ``json`` writes a float NaN or infinity as ``NaN``/``Infinity``, which is not JSON: the
official SDKs refuse such a request body before it leaves (``allow_nan=False``, a bare
``ValueError`` that ended the turn), and servers and proxies with strict parsers (llama.cpp,
Go and Rust gateways) refuse a tool call's arguments or a tool's answer that holds one. JSON
has a value for "no number", ``null``; which value stood there is told beside it (the callers
say how: a note after a tool's answer, a description beside a schema's default), so nothing is
lost in silence. Each non-finite value is named by its path (``$.stats.mean``), in JavaScript's
spelling (``NaN``, ``Infinity``, ``-Infinity``), which every model knows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")   # a JavaScript name


def spelled(number: float) -> str:
    """A non-finite float as JavaScript writes it: ``NaN``, ``Infinity``, ``-Infinity``."""
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def step(path: str, key: object) -> str:
    """``path`` one level down: ``.key`` for a plain name, ``[3]`` for an index, else the key
    quoted (``["a b"]``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    text = str(key)
    return f"{path}.{text}" if _PLAIN_KEY.match(text) else f"{path}[{json.dumps(text)}]"


def non_finite(value: Any, path: str = "$") -> Iterator[tuple[str, float]]:
    """Each non-finite float in ``value`` (dicts, lists and tuples of JSON's values), with its
    path, in document order."""
    if isinstance(value, float):
        if not math.isfinite(value):
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from non_finite(item, step(path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from non_finite(item, step(path, i))


def nulled(value: Any) -> Any:
    """``value`` with each non-finite float as None (a copy where something changed)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: nulled(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [nulled(item) for item in value]
    return value


def dumps(value: Any, path: str = "$") -> tuple[str, tuple[str, ...]]:
    """``value`` (already JSON's types) as strict JSON text, spaced as ``json.dumps`` spaces it,
    and the places where a non-finite float was written as ``null`` (``"$.mean (NaN)"``).
    The common case costs one ``dumps``: the walk runs only when it refuses."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False), ()
    except ValueError as e:
        if "Out of range float" not in str(e):
            raise
    where = tuple(f"{at} ({spelled(x)})" for at, x in non_finite(value, path))
    return json.dumps(nulled(value), ensure_ascii=False, allow_nan=False), where


def strict_text(text: str) -> str:
    """JSON text as it may be sent on: unchanged unless it holds ``NaN`` or an ``Infinity``
    (which Python's parser takes), then written again with ``null`` there. A model's or a
    server's tool-call arguments are echoed back in the next request; text that does not parse
    is left as it is (what is wrong with it is the tool call's answer, not the echo's)."""
    if "NaN" not in text and "Infinity" not in text:
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if next(non_finite(value), None) is None:   # the words were inside strings
        return text
    return dumps(value)[0]
