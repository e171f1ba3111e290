"""Strict JSON for what goes to a provider: NaN and infinities as null, each place named."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_core.finite_json import dumps, non_finite, strict_text

# JSON's values as Python holds them, any float included (NaN, both infinities), nested
_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
VALUES = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=24)


def _strict(text: str) -> Any:
    """``text`` read as JSON is written: ``NaN``/``Infinity`` refused, as strict parsers do."""
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _same(a: Any, b: Any) -> bool:
    """Equal, where a non-finite float in ``a`` stands for None in ``b``."""
    if isinstance(a, float) and not math.isfinite(a):
        return b is None
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


@given(VALUES)
def test_any_nested_value_is_written_as_strict_json_with_each_non_finite_float_named(
        value: Any) -> None:
    text, where = dumps(value)
    assert _same(value, _strict(text))
    assert len(where) == sum(1 for _ in non_finite(value))
    if not where:   # nothing to change: exactly what json.dumps writes
        assert text == json.dumps(value, ensure_ascii=False)


@given(VALUES)
def test_echoed_json_text_is_made_strict_and_left_alone_when_it_already_is(value: Any) -> None:
    loose = json.dumps(value, ensure_ascii=False)   # as Python writes it: NaN, Infinity
    assert _same(value, _strict(strict_text(loose)))
    if not any(True for _ in non_finite(value)):
        assert strict_text(loose) == loose


def test_places_are_named_by_path_in_javascript_s_spelling() -> None:
    value = {"stats": {"mean": math.nan, "max": math.inf}, "rows": [1.0, -math.inf],
             "odd key": math.nan}
    text, where = dumps(value)
    assert json.loads(text) == {"stats": {"mean": None, "max": None}, "rows": [1.0, None],
                                "odd key": None}
    assert where == ("$.stats.mean (NaN)", "$.stats.max (Infinity)", "$.rows[1] (-Infinity)",
                     '$["odd key"] (NaN)')


def test_text_that_is_not_json_or_says_nan_only_in_a_string_is_echoed_unchanged() -> None:
    for text in ('{"q": "NaN"}', '{"q": "Infinity and beyond"}', '{"x": NaN', "NaN or not"):
        assert strict_text(text) == text
    assert strict_text('{"x": NaN, "y": [Infinity]}') == '{"x": null, "y": [null]}'
