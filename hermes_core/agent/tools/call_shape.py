"""Parameters a model cannot fill by keyword, and the call that puts its arguments back.

A model sends one JSON object of named values; Python's other parameter kinds are mapped onto
it and back, each to what the schema can say faithfully:

* a positional-only parameter (``def f(query, /)``) is named to the model like any other and
  passed in its place;
* ``*paths: str`` is one array parameter under its own name (``paths``), spread into the call;
  the parameters before it are then passed by position, as Python requires;
* ``**labels: int`` is the schema's ``additionalProperties``, typed by the annotation (pydantic's
  typed ``__pydantic_extra__``), each further name passed as a keyword;
* ``**opts: Unpack[Paging]`` is Paging's keys, each a property as a keyword-only parameter
  would be (required as the TypedDict says), passed as keywords: only the keys sent.

Where no schema says what the function takes (``*args: *Ts``, ``Unpack`` of no TypedDict)
the tool is refused naming the parameter and what to write instead (a ``ValueError`` whose
text completes "tool 'x': ...", made the definition error by the caller). The schemas themselves are
pydantic's: this module only chooses the type each star parameter stands for.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import typing_extensions
from pydantic import Field

_UNPACK = (typing.Unpack, typing_extensions.Unpack)
#: What a TypedDict key's annotation may be wrapped in: said of the key, not of its type.
_REQUIRED: frozenset[Any] = frozenset({typing.Required, typing_extensions.Required})
_NOT_REQUIRED: frozenset[Any] = frozenset({typing.NotRequired, typing_extensions.NotRequired})
_QUALIFIERS = _REQUIRED | _NOT_REQUIRED | {typing_extensions.ReadOnly}


@dataclass(frozen=True, slots=True)
class CallShape:
    """How validated arguments (by the function's own parameter names, plus any further names
    for ``**kwargs``) become the call: ``positional`` in order, then ``spread``'s items, the
    rest by keyword. The default shape calls by keyword only, as every tool was called."""

    positional: tuple[str, ...] = ()
    spread: str | None = None

    def call(self, fn: Callable[..., Any], args: Mapping[str, Any]) -> Any:
        pos = [args[name] for name in self.positional]
        if self.spread is not None:
            pos.extend(args[self.spread])
        taken = {*self.positional, self.spread}
        return fn(*pos, **{k: v for k, v in args.items() if k not in taken})


def shape_of(params: Sequence[inspect.Parameter]) -> CallShape:
    """The call shape of a signature's parameters (a partial's fixed ones already left out)."""
    spread = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    kind = inspect.Parameter
    by_position = {kind.POSITIONAL_ONLY} | ({kind.POSITIONAL_OR_KEYWORD} if spread else set())
    return CallShape(tuple(p.name for p in params if p.kind in by_position), spread)


def _unpacked(hint: Any) -> Any | None:
    """What ``Unpack[X]`` or ``*X`` unpacks (the hints read ``*X`` as ``Unpack[X]``), else None."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) in _UNPACK else None


def spread_field(name: str, hint: Any) -> tuple[Any, Any]:
    """``*name: hint`` as an array field: (its type, its default). ``*xs: int`` is a list of
    ints, empty when not sent; ``*xs: *tuple[int, str]`` that exact tuple, required."""
    inner = _unpacked(hint)
    if inner is None:
        return list[hint], Field(default_factory=list)
    if typing.get_origin(inner) is not tuple:
        raise ValueError(f"*{name}: a TypeVarTuple cannot be described to a model (its length "
                         "and types are the caller's); take a list[...] parameter")
    items = typing.get_args(inner)
    open_ended = items == () or (len(items) == 2 and items[1] is Ellipsis)
    return inner, Field(default_factory=tuple) if open_ended else ...


@dataclass(frozen=True, slots=True)
class Key:
    """One key of an unpacked TypedDict: its name, its type (qualifiers removed, ``Annotated``
    kept) and whether a call must hold it."""

    name: str
    hint: Any
    required: bool


def unpacked_keys(name: str, hint: Any) -> tuple[Key, ...] | None:
    """The keys ``**name: Unpack[TD]`` takes, in the TypedDict's order; None for any other
    ``**`` annotation.

    Why its keys: PEP 692 says the function takes exactly those keywords, so they are the
    parameters a model must see (a ``dict`` of further names would accept any). Required-ness
    is the TypedDict's own (``__required_keys__``: totality and inheritance), overridden by a
    ``Required``/``NotRequired`` found once the hints are evaluated: under ``from __future__
    import annotations`` Python 3.11 reads a quoted ``NotRequired[...]`` as required, as
    pydantic also corrects."""
    inner = _unpacked(hint)
    if inner is None:
        return None
    own = getattr(inner, "__name__", str(inner))
    if not typing_extensions.is_typeddict(inner):
        raise ValueError(f"**{name}: Unpack[{own}] unpacks no TypedDict, so no keys say what "
                         "it takes; unpack a TypedDict, or annotate the value type "
                         f"(**{name}: int)")
    hints = typing_extensions.get_type_hints(inner, include_extras=True)
    keys = []
    for key, h in hints.items():
        required = key in inner.__required_keys__
        while (qualifier := typing_extensions.get_origin(h)) in _QUALIFIERS:
            if qualifier in _REQUIRED or qualifier in _NOT_REQUIRED:
                required = qualifier in _REQUIRED
            h = typing_extensions.get_args(h)[0]
        keys.append(Key(key, h, required))
    return tuple(keys)


def key_type(hint: Any) -> Any:
    """A TypedDict key's hint without ``Required``, ``NotRequired`` or ``ReadOnly`` around it."""
    while typing_extensions.get_origin(hint) in _QUALIFIERS:
        hint = typing_extensions.get_args(hint)[0]
    return hint


def extra_type(name: str, hint: Any, described: str | None) -> Any:
    """``**name: hint`` as the type of every further property the model may send: pydantic's
    ``__pydantic_extra__`` annotation, which both validates them and is the schema's
    ``additionalProperties``. The docstring's words for it describe each such value."""
    if described:
        hint = typing.Annotated[hint, Field(description=described)]
    return dict[str, hint]
