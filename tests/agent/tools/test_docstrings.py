"""A tool's docstring: its words reach the schema, and an entry naming no parameter is told."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import pytest

from hermes_core.agent.tools.docstrings import ToolDocstringWarning
from hermes_core.agent.tools.schema import make_tool, tool


def _sphinx(query: str, limit: int = 5) -> str:
    """Search the notes.

    :param qurey: what to look for
    :param limit: how many notes
    """
    return query


def _google(query: str, limit: int = 5) -> str:
    """Search the notes.

    Args:
        qurey (str): what to look for
        limit: how many notes
    """
    return query


def _numpy(query: str, limit: int = 5) -> str:
    """Search the notes.

    Parameters
    ----------
    qurey : str
        what to look for
    limit : int
        how many notes
    """
    return query


@pytest.mark.parametrize("fn", [_sphinx, _google, _numpy], ids=["sphinx", "google", "numpy"])
def test_a_docstring_entry_naming_no_parameter_is_a_warning_naming_the_nearest_one(fn: Any) -> None:
    """``:param qurey:`` for ``query`` was dropped in silence: the model got no description of
    the query, and the author never learnt why. Told when the tool is defined, at the function's
    own line, naming the tool, the entry and the parameter it most likely means."""
    with pytest.warns(ToolDocstringWarning) as seen:
        t = make_tool(fn)
    (w,) = seen
    assert str(w.message) == (
        f"tool {fn.__name__!r}: its docstring describes 'qurey', which is not one of its "
        "parameters (did you mean 'query'?); that text is not sent to the model")
    assert (w.filename, w.lineno) == (__file__, fn.__code__.co_firstlineno)
    assert "description" not in t.parameters["properties"]["query"]
    assert t.parameters["properties"]["limit"]["description"] == "how many notes"


def test_an_entry_like_no_parameter_lists_the_parameters_there_are() -> None:
    def lookup(city: str) -> str:
        """Look a city up.

        Args:
            verbose: say more
        """
        return city

    with pytest.warns(ToolDocstringWarning, match=r"'verbose'.*\(its parameters: city\)"):
        make_tool(lookup)


def test_entries_that_are_not_stray_are_not_warned_about() -> None:
    """A class's ``Attributes:`` (a callable object's docstring) are not parameters, nor are its
    constructor's ``Args:`` warned about; a keyword a partial fixed is still the function's, and
    NumPy's ``x, y : float`` describes both."""
    class Scale:
        """Scale a point.

        Attributes:
            factor: how much

        Args:
            x: across
        """

        def __call__(self, x: float) -> float:
            return x

    class Shift:
        """Shift a point (Google style: the class's Args are its constructor's).

        Args:
            by: how far
        """

        def __init__(self, by: float) -> None:
            self.by = by

        def __call__(self, x: float) -> float:
            return x + self.by

    def move(x: float, y: float, unit: str) -> str:
        """Move to a point.

        Parameters
        ----------
        x, y : float
            the point
        unit : str
            the unit
        """
        return unit

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_tool(Scale())
        make_tool(Shift(1.0))
        props = make_tool(move).parameters["properties"]
        make_tool(functools.partial(move, unit="m"))
    assert props["x"]["description"] == props["y"]["description"] == "the point"


def test_a_method_tool_is_warned_about_once_not_on_each_instance() -> None:
    with pytest.warns(ToolDocstringWarning) as defined:
        class Notes:
            @tool
            def search(self, query: str) -> str:
                """Search.

                Args:
                    qurey: what
                """
                return query

    assert len(defined) == 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            Notes().search("x")
    assert seen == []


def test_sphinx_docstring_params_are_read() -> None:
    def convert(amount: float, currency: str) -> str:
        """Convert money.

        :param amount: how much
        :param currency: ISO code, e.g. EUR
        """
        return ""

    props = make_tool(convert).parameters["properties"]
    assert props["amount"]["description"] == "how much"
    assert props["currency"]["description"] == "ISO code, e.g. EUR"
