"""What a tool's docstring says: its summary, each parameter's words, and entries that name no
parameter.

Read with ``docstring_parser`` (Google, NumPy, Sphinx and Epydoc styles). An entry naming no
parameter (``:param qurey:`` for ``query``) is told to the author as a
:class:`ToolDocstringWarning` when the tool is defined: its words would otherwise be dropped in
silence, and the model would get the parameter undescribed.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import docstring_parser


class ToolDocstringWarning(UserWarning):
    """A tool's docstring describes a parameter the function does not have.

    A warning, not an error: the tool is still right (its schema and validation come from the
    signature), only a description is lost, and a wrapped function's docstring may not be the
    author's to edit. To make it fatal in a test suite: ``-W error::...ToolDocstringWarning``
    or pytest's ``filterwarnings``."""


@dataclass(frozen=True, slots=True)
class DocstringWords:
    """The summary, each documented parameter's words, and every name the docstring documents
    as a parameter (in order)."""

    summary: str
    params: dict[str, str]
    documented: tuple[str, ...]


#: docstring_parser's section kinds that are not parameters (a class's ``Attributes:``)
_NOT_PARAMETERS = frozenset({"attribute"})


def read(doc: str | None) -> DocstringWords:
    if not doc:
        return DocstringWords("", {}, ())
    parsed = docstring_parser.parse(doc)
    summary = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    params: dict[str, str] = {}
    for p in parsed.params:
        if p.args and p.args[0] in _NOT_PARAMETERS:
            continue
        # NumPy's ``x, y : float`` describes both; ``*args`` is documented with its stars
        for name in (n.strip().lstrip("*") for n in p.arg_name.split(",")):
            if name:
                params.setdefault(name, (p.description or "").strip())
    return DocstringWords(summary.strip(), params, tuple(params))


def warn_strays(tool_name: str, words: DocstringWords, parameters: Collection[str],
                where: Callable[..., Any], also_documented: Collection[str] = ()) -> None:
    """One :class:`ToolDocstringWarning` per documented name that is not in ``parameters`` (nor
    in ``also_documented``: a callable object's constructor parameters), placed at ``where``'s
    definition (where the author fixes it, not in this library)."""
    for name in words.documented:
        if name in parameters or name in also_documented:
            continue
        near = difflib.get_close_matches(name, list(parameters), n=1, cutoff=0.6)
        hint = (f"did you mean {near[0]!r}?" if near
                else f"its parameters: {', '.join(parameters) or 'none'}")
        message = (f"tool {tool_name!r}: its docstring describes {name!r}, which is not one of "
                   f"its parameters ({hint}); that text is not sent to the model")
        code = getattr(where, "__code__", None)
        if code is None:
            warnings.warn(message, ToolDocstringWarning, stacklevel=4)
            continue
        module = getattr(where, "__globals__", {})
        warnings.warn_explicit(message, ToolDocstringWarning, code.co_filename,
                               code.co_firstlineno, module=module.get("__name__"),
                               registry=module.setdefault("__warningregistry__", {}))
