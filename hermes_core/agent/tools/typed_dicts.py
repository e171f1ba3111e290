"""``typing.TypedDict`` in a tool's hints, read as the ``typing_extensions`` TypedDict it spells.

Why: ``from typing import TypedDict`` is what an author writes, and on Python 3.11 pydantic
refuses it (the class does not keep what ``Required``/``NotRequired`` said of each key), so a tool
taking one was a definition error although ``**kw: Unpack[`` the same class ``]`` worked. The
keys, which of them are required (``__required_keys__``, corrected by a ``Required`` or
``NotRequired`` found once the hints are evaluated: under ``from __future__ import annotations``
3.11 misreads the quoted ones) and the docstring are all a schema needs: each such class is
rebuilt once as a ``typing_extensions.TypedDict`` and substituted wherever it appears in a hint
(``list[Stop]``, ``Stop | None``, one inside another); a generic one given its parameters
(``Page[int]``) is rebuilt with them put in its keys' hints. One that names itself
(``children: list[Node]``), or two that name each other, are rebuilt naming the rebuilt classes,
so the schema is a ``$ref`` to one definition as pydantic writes any recursive type. A value
validated against it is the same plain dict. From Python 3.12 hints are left as they are.
"""

from __future__ import annotations

import builtins
import sys
import threading
import types
import typing
import weakref
from collections.abc import Mapping
from typing import Any

import typing_extensions

from hermes_core.forked import child_lock

#: What a key's annotation may be wrapped in: said of the key, not of its type.
_REQUIRED: frozenset[Any] = frozenset({typing.Required, typing_extensions.Required})
_NOT_REQUIRED: frozenset[Any] = frozenset({typing.NotRequired, typing_extensions.NotRequired})
_QUALIFIERS: frozenset[Any] = _REQUIRED | _NOT_REQUIRED | {typing_extensions.ReadOnly}
#: Classes being rebuilt, each with the class it is becoming: a TypedDict that names itself (a
#: tree's ``children: list[Node]``), or two that name each other, name the new class there, and
#: pydantic writes the cycle as a ``$ref`` to one definition.
_BUILDING: dict[tuple[Any, tuple[Any, ...]], Any] = {}
# free in a forked child (one a thread held at the fork hung the child's first use)
_LOCK = child_lock(threading.RLock())
#: While ``portable`` runs (under ``_LOCK``): the names the tool's own hints were read with
#: beyond their module (its closure, ``localns=``), for a class whose keys its module cannot read.
_SCOPE: list[Mapping[str, Any]] = [{}]
#: Each class rebuilt, by the parameters it was given, held no longer than the class itself (a
#: factory defining its tool's TypedDict on each call is not kept for the life of the process).
_MADE: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()
#: Classes built during the running ``portable`` call, kept in ``_MADE`` only once it succeeded:
#: one built inside a build that then failed may name that half-built class.
_PENDING: list[dict[tuple[Any, tuple[Any, ...]], Any]] = [{}]


def portable(hint: Any, names: Mapping[str, Any] | None = None) -> Any:
    """``hint`` with every ``typing.TypedDict`` in it a ``typing_extensions`` one (Python < 3.12;
    later, ``hint`` itself). ``names``: what a class defined in a function may name in its keys
    (itself, another local class) that its module does not define; a name its module does define
    means the module's class there, whatever ``names`` says. Raises ``NameError`` for a key's
    hint that names nothing either defines."""
    if sys.version_info >= (3, 12):
        return hint
    with _LOCK:   # a class another thread is half-way through building is not handed out
        _SCOPE[0], _PENDING[0] = names or {}, {}
        try:
            out = _rewrite(hint)
            for (cls, given), made in _PENDING[0].items():
                _MADE.setdefault(cls, {})[given] = made
            return out
        finally:
            _SCOPE[0], _PENDING[0] = {}, {}


def _legacy(hint: Any) -> bool:
    return (isinstance(hint, type) and typing_extensions.is_typeddict(hint)
            and type(hint).__module__ == "typing")


def _rewrite(hint: Any) -> Any:
    if _legacy(hint):
        return _BUILDING.get((hint, ())) or _rebuilt(hint)
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if not args or origin is None or origin is typing.Literal:
        return hint
    if _legacy(origin):   # Page[int]: a generic one, given its parameters
        given = tuple(_rewrite(a) for a in args)
        return _BUILDING.get((origin, given)) or _rebuilt(origin, given)
    if origin is typing.Annotated:
        base = _rewrite(args[0])
        return hint if base is args[0] else typing.Annotated[(base, *args[1:])]
    new = tuple(_rewrite(a) for a in args)
    if all(n is a for n, a in zip(new, args, strict=True)):
        return hint
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new]  # noqa: UP007  (a tuple of members: no `|` spelling)
    if isinstance(hint, types.GenericAlias):   # list[Stop], dict[str, Stop]
        return types.GenericAlias(origin, new)
    copy_with = getattr(hint, "copy_with", None)   # typing.List[Stop], Unpack[...]
    return hint if copy_with is None else copy_with(new)


def _given(hint: Any, values: dict[Any, Any]) -> Any:
    """``hint`` with each type variable of ``values`` replaced by its value (``list[T]``, ``T``)."""
    if isinstance(hint, typing.TypeVar):
        return values.get(hint, hint)
    params = getattr(hint, "__parameters__", ())
    return hint[tuple(values.get(p, p) for p in params)] if params else hint


def _rebuilt(cls: Any, given: tuple[Any, ...] = ()) -> Any:
    known = _PENDING[0].get((cls, given)) or _MADE.get(cls, {}).get(given)
    if known is not None:
        return known
    # made first and its keys put in after: a key naming ``cls`` (itself, or through another
    # class) is read while it is being built, and must name the class being made
    made: Any = typing_extensions.TypedDict(cls.__name__, {})  # type: ignore[misc]
    made.__doc__, made.__module__, made.__qualname__ = cls.__doc__, cls.__module__, cls.__qualname__
    _BUILDING[(cls, given)] = made
    values = dict(zip(getattr(cls, "__parameters__", ()), given, strict=False))
    try:
        hints = _key_hints(cls)
        keys: dict[str, Any] = {}
        required_keys: set[str] = set()
        for key, hint in hints.items():
            hint = _given(hint, values)
            required = key in cls.__required_keys__
            while (qualifier := typing_extensions.get_origin(hint)) in _QUALIFIERS:
                if qualifier in _REQUIRED or qualifier in _NOT_REQUIRED:
                    required = qualifier in _REQUIRED
                hint = typing_extensions.get_args(hint)[0]
            hint = _rewrite(hint)
            keys[key] = (typing_extensions.Required[hint] if required
                         else typing_extensions.NotRequired[hint])
            if required:
                required_keys.add(key)
    finally:
        del _BUILDING[(cls, given)]
    made.__annotations__ = keys
    made.__required_keys__ = frozenset(required_keys)
    made.__optional_keys__ = frozenset(keys) - made.__required_keys__
    if hasattr(made, "__mutable_keys__"):   # typing_extensions' own: no key is read-only here
        made.__mutable_keys__ = frozenset(keys)
    _PENDING[0][(cls, given)] = made
    return made


def _key_hints(cls: Any) -> dict[str, Any]:
    """``cls``'s keys' hints, read in its module; failing that, with the tool's names its module
    does not define (a local class's keys naming itself or another local class)."""
    try:
        return typing_extensions.get_type_hints(cls, include_extras=True)
    except NameError:
        module = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
        extra = {k: v for k, v in _SCOPE[0].items() if k not in module and k not in vars(builtins)}
        if not extra:
            raise
        return typing_extensions.get_type_hints(cls, localns=extra, include_extras=True)
