"""A tool's return value as the text the model reads.

Strings as they are, bytes as their UTF-8 text or their size, anything else as its JSON form
(pydantic's encoder, then :func:`_json_form` for what it does not know), a generator's items as
they are drawn; NaN and infinity written ``null`` with a note naming their places; the whole cut
at :data:`MAX_OUTPUT_CHARS` with a note, scrubbed of keys only as far as it is kept. A value with
no text form raises :class:`Unrenderable`, which the runner makes that call's error.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import (
    AsyncGenerator,
    Callable,
    Generator,
    ItemsView,
    KeysView,
    Mapping,
    Sequence,
    Set,
    ValuesView,
)
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from hermes_core.finite_json import dumps
from hermes_core.types import clean_text

#: The most of one tool result handed to the model (about 25k tokens).
MAX_OUTPUT_CHARS = 100_000


def text_of(e: BaseException) -> str:
    """``str(e)``, or a note when the exception's own ``__str__`` raises: describing a tool's
    failure must not become a failure of the turn."""
    try:
        return str(e)
    except Exception:
        return "(its message cannot be shown)"


class Unrenderable(Exception):
    """The tool's return value cannot become text (its ``__str__`` or serializer raised)."""


@dataclass(slots=True)
class Drawn:
    """What a generator tool yielded, as the JSON text of each item, kept until the answer is
    past ``limit`` characters (the most the model is shown); ``more``: it had more when drawing
    stopped; ``nulled``: the places of NaNs and infinities written null.

    Each item is encoded once, as it is drawn: its text measures the answer and is the answer
    (the list was encoded again whole to write it, every item's serializer run twice)."""

    limit: int = MAX_OUTPUT_CHARS
    texts: list[str] = field(default_factory=list)
    size: int = 0
    more: bool = False
    nulled: list[str] = field(default_factory=list)

    def take(self, item: Any) -> bool:
        """Keep ``item``; False once the answer is full (the item left, drawing to stop)."""
        self.more = self.size > self.limit
        if not self.more:
            text = _json_text(item, self.nulled, f"$[{len(self.texts)}]")
            self.texts.append(text)
            self.size += len(text) + 2
        return not self.more

    @property
    def text(self) -> str:
        """The items as one JSON array, spaced as ``json.dumps`` spaces a list."""
        return f"[{', '.join(self.texts)}]"


def draw(items: Generator[Any, Any, Any]) -> Drawn:
    """``items`` drawn until the answer is full, then closed (its ``finally`` runs). Drawn
    whole, a generator without end (tailing a log) never let the turn end and grew until memory
    ran out."""
    drawn = Drawn()
    with contextlib.closing(items):
        all(map(drawn.take, items))   # stops at the first False
    return drawn


async def adraw(items: AsyncGenerator[Any, Any]) -> Drawn:
    """:func:`draw` for an ``async def`` that yields."""
    drawn = Drawn()
    async with contextlib.aclosing(items):
        async for item in items:
            if not drawn.take(item):
                break
    return drawn


def render_output(value: Any, limit: int = MAX_OUTPUT_CHARS,
                  scrub: Callable[[str], str] | None = None) -> str:
    """A tool's return value as the text the model reads: strings as they are, bytes as their
    UTF-8 text or their size, anything else as its JSON form (see :func:`_json_text`); cut at
    ``limit`` with a note. A value with no JSON form raises ``Unrenderable`` (the call's error).

    ``scrub`` (the redactor) runs *before* the cut: cut first, a key across the cut is no longer
    whole, nothing downstream knows its head, and it reaches the model and the audit log.

    A float NaN or infinity is written ``null`` (JSON has neither, and strict servers refuse the
    ``NaN`` Python writes), the places named in a note after the answer."""
    more = isinstance(value, Drawn) and value.more
    nulled: list[str] = []
    if isinstance(value, Drawn):
        text, nulled = value.text, value.nulled
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bytes | bytearray | memoryview):
        text = _bytes_text(bytes(value))
    else:
        text = _json_text(value, nulled)
    # a lone surrogate (a file name os.listdir could not decode) cannot be encoded: the request
    # body carrying it would fail to build
    text, note = clean_text(text), clean_text(_nulled_note(nulled))
    total = len(text)
    if scrub is not None:   # the note too: it names the answer's keys
        (text, total), note = scrubbed(text, limit, scrub), scrub(note)
    if more:   # a generator stopped once past the limit: its whole length is not known
        return (f"{text[:limit]}\n[... truncated: the first {limit} characters; the tool yielded "
                f"more, not drawn]{note}")
    return cut(text, limit, total) + note


#: How far past a cut a text is scrubbed: a key that begins before the cut is whole in the head.
_SCRUB_MARGIN = 1024


def scrubbed(text: str, limit: int, scrub: Callable[[str], str]) -> tuple[str, int]:
    """``scrub(text)`` as far as a cut at ``limit`` keeps it, and the length to report cut:
    the text's own once only a head was scrubbed. Scrubbed whole, 5 MB took 1.3 s of regexes
    for text the model never sees. The head runs :data:`_SCRUB_MARGIN` past the cut, doubled
    while markers shortened it below that (as :func:`hermes_core.redact.clip` does)."""
    cut = limit + _SCRUB_MARGIN
    if len(text) <= cut:
        whole = scrub(text)
        return whole, len(whole)
    head = scrub(text[:cut])
    while cut < len(text) and len(head) < limit + _SCRUB_MARGIN:
        cut *= 2
        head = scrub(text[:cut])
    return head, (len(text) if cut < len(text) else len(head))


def _nulled_note(places: Sequence[str], shown: int = 5) -> str:
    """The line saying which values of an answer stand as ``null`` for a NaN or an infinity
    (the first ``shown`` of them): told only ``null``, the model would take an unbounded
    radius or an undefined mean for a missing one."""
    if not places:
        return ""
    more = f", and {len(places) - shown} more" if len(places) > shown else ""
    return (f"\n[note: JSON has no NaN or Infinity; null stands for {', '.join(places[:shown])}"
            f"{more}]")


def cut(text: str, limit: int = MAX_OUTPUT_CHARS, total: int | None = None) -> str:
    """``text`` cut at ``limit`` with a note naming ``total`` (default: its length)."""
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}\n[... truncated: the first {limit} of "
            f"{len(text) if total is None else total} characters]")


def _bytes_text(data: bytes) -> str:
    """Bytes a tool returned: their text when they are UTF-8, else their size. The repr of binary
    data is four characters of escapes a byte, none of which the model can use."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"[binary data: {len(data)} bytes, not shown]"


class _NoJSONForm(Exception):
    """A value inside a tool's result that has neither a JSON form nor a text of its own."""

    def __init__(self, value: object) -> None:
        kind = type(value)
        where = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
        super().__init__(f"{where}{kind.__qualname__} has no JSON form; return a str, a dict, "
                         "a dataclass or a pydantic model")


def _json_text(value: Any, nulled: list[str] | None = None, at: str = "$") -> str:
    """``value`` as JSON text, through pydantic's encoder: models, dataclasses, enums, sets,
    datetimes, UUIDs, paths, also nested, are data, not the Python reprs ``str`` gives
    ("Unit.C", "Place(city='Oslo')"). What the encoder does not know goes to
    :func:`_json_form`; a value with no form at all is an error, never its repr. A NaN or an
    infinity is written ``null``, its place (``at`` being ``value``'s) added to ``nulled``."""
    try:
        # the dump too: an int past Python's 4,300-digit str limit fails only there
        text, places = dumps(to_jsonable_python(value, fallback=_json_form), at)
    except _NoJSONForm as e:
        raise Unrenderable(str(e)) from None
    except UnicodeDecodeError:
        # bytes inside the result: the encoder sends them as UTF-8 text or refuses; their raw
        # escapes are nothing a model can use (and their size alone only for a top-level value)
        raise Unrenderable("it holds bytes that are not UTF-8 text; return them alone to have "
                            "their size named, or leave them out") from None
    except Exception as e:   # a cycle; a model's own serializer or a __str__ that raises
        if isinstance(e, ValueError) and "Circular reference" in str(e):
            raise Unrenderable("it holds itself (a cycle)") from None
        raise Unrenderable(f"{type(e).__name__}: {text_of(e)}") from None
    if nulled is not None:
        nulled.extend(places)
    return text


def _json_form(value: Any) -> Any:
    """What pydantic's encoder does not know: numpy's values as their Python ones (``tolist``),
    mappings and sequences, sets and views as objects and arrays, an object whose class writes its own
    ``__str__`` (a ``Fraction``, an exception) as that text. Anything else raises: its ``str``
    is its repr ("<Report object at 0x7f..>"), which tells the model nothing."""
    numpy = sys.modules.get("numpy")   # not loaded: the value cannot be numpy's
    if numpy is not None and isinstance(value, numpy.generic | numpy.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence | Set | KeysView | ValuesView | ItemsView):
        return list(value)   # range, deque, a dict's views
    if getattr(type(value), "__str__", None) is not object.__str__:
        return str(value)
    raise _NoJSONForm(value)
