"""Fingerprints of code, so a cache file made by other code is told from one made by this code.

The restart caches keep what some code derived (keys, tokens, terms, scores) for the next
process. A release number written by hand in the code is forgotten at the next edit; so a
cache's header holds a SHA-256 of the code that derived it instead: each function's bytecode,
constants and names, its default arguments' values and what it closes over, and a module's
upper-case constants. Every value enters by :func:`stable_repr`, the same text in every process
(a set's order follows the process's string hashing; an object's ``repr`` its address). Kept
apart from the stores so that the lowest of them (the token file) can fingerprint its deriving
code without importing the stores above it.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import inspect
import re
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import Any


def _code_id(code: types.CodeType, h: Any) -> None:
    h.update(code.co_code)
    for c in code.co_consts:   # a nested function's code by its own bytes, never its address
        if isinstance(c, types.CodeType):
            _code_id(c, h)
        else:   # `x in {"a", "b"}` keeps a frozenset here
            h.update(stable_repr(c).encode("utf-8", "surrogatepass"))
    h.update(repr(code.co_names).encode())


def stable_repr(value: object) -> str:
    """``value`` as the same text in every process, for a fingerprint: plain values by ``repr``, a
    set's items and a dict's entries in sorted order (a set of strings lists them in the order of
    the process's string hashing, which differs from one process to the next), a function by its
    name and code (a dataclass field's ``default_factory`` is often a lambda), a pattern by its
    text and flags, a class by its name, anything else by its type (its ``repr`` may hold its
    address, which would change the fingerprint at every start)."""
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return repr(value)
    if isinstance(value, tuple | list | frozenset | set):
        inner = [stable_repr(v) for v in value]
        if isinstance(value, tuple | list):
            return f"({', '.join(inner)},)" if isinstance(value, tuple) else f"[{', '.join(inner)}]"
        return "{" + ", ".join(sorted(inner)) + "}"
    if isinstance(value, types.FunctionType):
        code = hashlib.sha256()
        _code_id(value.__code__, code)
        return f"{value.__module__}.{value.__qualname__}:{code.hexdigest()}"
    if isinstance(value, dict):
        items = sorted(f"{stable_repr(k)}: {stable_repr(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, re.Pattern):
        return f"re({value.pattern!r}, {value.flags})"
    name = getattr(value, "__qualname__", None)
    if isinstance(name, str):
        return f"{getattr(value, '__module__', '?')}.{name}"
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _cell(cell: types.CellType) -> object:
    """What a closure's cell holds; an empty cell (a name not yet bound) as itself, by its type."""
    try:
        return cell.cell_contents
    except ValueError:
        return cell


def hash_functions(h: Any, functions: Sequence[Callable[..., Any]]) -> None:
    """Feed ``h`` the code of each function with its default arguments' values and the values it
    closes over (a dataclass's field defaults are its ``__init__``'s defaults, their
    ``default_factory`` functions what that ``__init__`` closes over)."""
    for f in functions:
        h.update(f"\x00{f.__module__}.{f.__qualname__}\x00".encode())
        _code_id(f.__code__, h)
        cells = tuple(_cell(c) for c in f.__closure__ or ())
        defaults = (stable_repr(f.__defaults__ or ()), stable_repr(f.__kwdefaults__ or {}),
                    stable_repr(cells))
        h.update("\x00".join(defaults).encode("utf-8", "surrogatepass"))


def _unwrapped(value: Any) -> Any:
    """The function behind a decorator that keeps it as ``__wrapped__`` (``functools.lru_cache``,
    ``functools.cache``, ``functools.wraps``): the wrapper is no plain function, yet the wrapped
    code decides what it returns (the tokenizer's segmentation, BM25's stemming)."""
    return inspect.unwrap(value) if callable(value) and hasattr(value, "__wrapped__") else value


def defined(module: types.ModuleType) -> list[Any]:
    """The functions ``module`` defines, and its classes' methods, in name order (a cached or
    otherwise wrapped one by the function it wraps)."""
    out: list[Any] = []
    for _name, value in sorted(vars(module).items()):
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(fn := _unwrapped(value)):
            out.append(fn)
        elif inspect.isclass(value):
            for _attr, member in sorted(vars(value).items()):
                fn = member.__func__ if isinstance(member, classmethod | staticmethod) else member
                if inspect.isfunction(fn := _unwrapped(fn)):
                    out.append(fn)
    return out


def modules_id(modules: Sequence[types.ModuleType], salt: str = "") -> str:
    """A fingerprint of ``modules``: every function and method they define (:func:`hash_functions`)
    and their upper-case constants, after ``salt`` (e.g. the releases of libraries they call)."""
    h = hashlib.sha256(salt.encode("utf-8", "surrogatepass"))
    for module in modules:
        consts = {k: v for k, v in vars(module).items()
                  if k.isupper() and isinstance(v, int | float | str | tuple | frozenset)}
        listed = "\x00".join(f"{k}={stable_repr(v)}" for k, v in sorted(consts.items()))
        h.update(f"\x00{module.__name__}\x00{listed}".encode("utf-8", "surrogatepass"))
    inner = hashlib.sha256()
    hash_functions(inner, [f for m in modules for f in defined(m)])
    h.update(inner.hexdigest().encode())
    return h.hexdigest()


def imported_releases(modules: Sequence[types.ModuleType]) -> str:
    """The releases of the libraries ``modules`` import by name (``import simplemma``), outside the
    standard library and this package: their code decides results as much as ours (BM25's
    stemming lemmatises through simplemma), yet is not in :func:`modules_id`. A salt for it.

    The same text whatever this process ran before asking: a library one of their functions
    imports (tokenize loads jieba when Chinese is first segmented, and keeps it in a global) is
    in the salt from the start, by its installed distribution's release whether or not loaded
    yet; otherwise a file saved after a Chinese query was refused by the next process. A library
    a function loads by a name written in it (``importlib.import_module("jieba")``,
    ``__import__("jieba")``) is read alike; a name computed at run time is seen once bound."""
    lazy = {n for m in modules for n in _imported_by_functions(m)}
    names = lazy | {v.__name__.partition(".")[0] for m in modules for v in vars(m).values()
                    if isinstance(v, types.ModuleType)}
    names -= {*sys.stdlib_module_names, __name__.partition(".")[0]}
    return "\x00".join(f"{n}={_installed(n) if n in lazy else _release(n)}" for n in sorted(names))


_IMPORT_NAME, _EXTENDED_ARG = dis.opmap["IMPORT_NAME"], dis.EXTENDED_ARG


_LOADERS = frozenset({"import_module", "__import__"})   # a library loaded by a name in a call


def _loaded_by_name(code: types.CodeType) -> set[str]:
    """The names ``code`` passes as written to ``import_module`` or ``__import__``: the first
    string constant loaded after the loader is (its argument; a computed name has none)."""
    found: set[str] = set()
    loader = False
    for ins in dis.get_instructions(code):
        if ins.opname.startswith("LOAD_") and isinstance(ins.argval, str) and ins.argval in _LOADERS:
            loader = True
        elif loader and ins.opname == "LOAD_CONST":
            if isinstance(ins.argval, str):
                found.add(ins.argval.partition(".")[0])
            loader = False
        elif loader and ins.opname.startswith("CALL"):
            loader = False
    return found


@functools.cache
def _imported_by_functions(module: types.ModuleType) -> frozenset[str]:
    """The top-level names the functions and methods ``module`` defines import (``import jieba``
    in a function body, or ``importlib.import_module("jieba")``), read from their bytecode once
    a process (a function edited in place is not seen, as in :func:`token_store.derive_id`)."""
    found: set[str] = set()
    codes = [f.__code__ for f in defined(module)]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        if not _LOADERS.isdisjoint(code.co_names):
            found |= _loaded_by_name(code)
        raw = code.co_code
        if _IMPORT_NAME not in raw[::2]:   # most functions import nothing: no loop in Python
            continue
        ext = 0
        for i in range(0, len(raw), 2):
            op, arg = raw[i], raw[i + 1] | ext
            ext = arg << 8 if op == _EXTENDED_ARG else 0
            if op == _IMPORT_NAME:
                found.add(code.co_names[arg].partition(".")[0])
    found.discard("")   # ``from . import x``
    return frozenset(found)


def _release(name: str) -> str:
    """A library's release: its ``__version__`` (free), else its installed distribution's."""
    version = getattr(sys.modules.get(name), "__version__", None)
    return version if isinstance(version, str) else _installed(name)


@functools.cache
def _installed(name: str) -> str:
    """The installed release of the library imported as ``name`` (a few ms to look up; not
    upgraded under a running process): its distribution's version when the distribution has
    its name, else each distribution providing that import with its version (pyahocorasick
    installs ``ahocorasick``), ``-`` when none does."""
    try:
        return metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        pass
    found = []
    for dist in providers(name):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except (metadata.PackageNotFoundError, ValueError):
            continue
    return "+".join(sorted(found)) or "-"


def providers(name: str) -> list[str]:
    """The installed distributions that provide the top-level import ``name``, by
    ``importlib.metadata``: first by the ``top_level.txt`` most wheels carry, else by
    ``packages_distributions``, which reads every distribution's file list (0.6 s on this
    machine's venv: paid only when no ``top_level.txt`` names it). Each is read once a process,
    however many imports are looked up."""
    listed = [d.metadata["Name"] for d in _top_levels().get(name, ())]
    return list(dict.fromkeys(listed)) or list(_packages().get(name, []))


@functools.cache
def _top_levels() -> dict[str, list[metadata.Distribution]]:
    """Each top-level import the installed distributions' ``top_level.txt`` name -> those
    distributions (one small read each, ~10 ms in all)."""
    found: dict[str, list[metadata.Distribution]] = {}
    for dist in metadata.distributions():
        try:
            top = dist.read_text("top_level.txt")
        except (OSError, UnicodeDecodeError):
            top = None
        for name in (top or "").split():
            found.setdefault(name, []).append(dist)
    return found


@functools.cache
def _packages() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()
