"""A tool function's type hints, resolved where the function can see its names.

Why: under ``from __future__ import annotations`` every hint is text, and ``typing.get_type_hints``
looks it up in the module's names only, so a class defined inside a function (a test's, a
factory's) is not found and Python says no more than "name 'Leg' is not defined". A name the
function's body refers to is in its closure and is looked up there; the author may pass further
names (``make_tool(fn, localns={"Leg": Leg})``). A return hint plays no part in a tool's schema,
so one that cannot be resolved is left out rather than refusing the tool. A parameter's that
cannot is an error naming the parameter, the text and the two ways out, redacted: a hint that
names a variable holding a key (``token: GITHUB_TOKEN`` for ``token: str = GITHUB_TOKEN``) is
read as the key's text, and Python's error quotes it.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from hermes_core.redact import redact


def read(fn: Callable[..., Any], names: Mapping[str, Any]) -> dict[str, Any]:
    """``fn``'s hints with their extras (``Annotated`` bounds kept), each name looked up in
    ``names`` (:func:`local_names`: ``localns`` over ``fn``'s closure; the caller reads a
    TypedDict's keys with them too), then ``fn``'s module; raises ``ValueError`` naming the
    first parameter whose hint cannot be resolved."""
    try:
        return typing.get_type_hints(fn, localns=names or None, include_extras=True)
    except Exception as whole:   # each hint alone, to name the one at fault
        annotations = dict(getattr(fn, "__annotations__", None) or {})
        if not annotations or isinstance(fn, type):
            raise ValueError(redact(f"cannot read its type hints ({whole})")) from None
        module = getattr(inspect.unwrap(fn), "__globals__", {})
        hints: dict[str, Any] = {}
        for name, text in annotations.items():
            try:
                hints.update(typing.get_type_hints(_Hinted({name: text}, module),
                                                   localns=names or None, include_extras=True))
            except Exception as e:
                if name != "return":
                    raise ValueError(redact(_unresolved(fn, name, text, e))) from None
        return hints


def local_names(fn: Callable[..., Any], localns: Mapping[str, Any] | None) -> dict[str, Any]:
    """The names ``fn``'s hints are read with beyond its module: its closure, then ``localns``
    over it."""
    return {**_closure(fn), **(localns or {})}


class _Hinted:
    """One annotation with the module names it is read in, as ``get_type_hints`` reads a
    function's."""

    def __init__(self, annotations: dict[str, Any], module: dict[str, Any]) -> None:
        self.__annotations__ = annotations
        self.__globals__ = module


def _closure(fn: Callable[..., Any]) -> dict[str, Any]:
    """The names ``fn`` (a function, a bound method, a wrapper's wrapped) closes over."""
    inner: Any = inspect.unwrap(fn)
    inner = getattr(inner, "__func__", inner)
    code, cells = getattr(inner, "__code__", None), getattr(inner, "__closure__", None) or ()
    out: dict[str, Any] = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=False):
        try:
            out[name] = cell.cell_contents
        except ValueError:   # a name the function will close over, not yet bound
            continue
    return out


def _unresolved(fn: Callable[..., Any], param: str, text: Any, error: Exception) -> str:
    missing = getattr(error, "name", None) if isinstance(error, NameError) else None
    shown = text if isinstance(text, str) else getattr(text, "__forward_arg__", repr(text))
    if not missing or missing not in str(shown):   # a name the hint's value spelt, not its text
        return f"parameter {param!r}: its type hint {shown!r} cannot be resolved ({error})"
    own = getattr(fn, "__name__", "fn")
    return (f"parameter {param!r}: its type hint {shown!r} names nothing {own} can see "
            f"({missing!r} is not defined in its module). Under `from __future__ import "
            "annotations` a hint is text looked up in the module, where a class defined inside "
            f"a function is not: define {missing} at module level, or pass it: "
            f"make_tool({own}, localns={{{missing!r}: {missing}}}) or "
            f"@tool(localns={{{missing!r}: {missing}}})")
