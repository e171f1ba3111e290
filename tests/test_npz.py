"""Tests of ``hermes_core/npz.py``: one guarded read of an ``.npz`` archive, every array parsed
under the AST guard; one guarded read of a single ``.npy`` array, an archive refused."""

from __future__ import annotations

import ast
import gc
import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.npz import read_npy, read_npz


def _archive(path: Path) -> Path:
    np.savez_compressed(path, name=np.array("m"), a=np.arange(6, dtype=np.float32).reshape(2, 3),
                        n=np.int64(4))
    return path


@pytest.mark.parametrize("given", ["path", "str", "bytes"])
def test_every_array_is_read_from_a_path_or_bytes(given: str, tmp_path: Path) -> None:
    path = _archive(tmp_path / "w.npz")
    source: Any = {"path": path, "str": str(path), "bytes": path.read_bytes()}[given]
    got = read_npz(source)
    assert sorted(got) == ["a", "n", "name"]
    assert str(got["name"][()]) == "m" and int(got["n"]) == 4
    assert got["a"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether collection was held off at each ``.npy`` header parse (``ast.literal_eval``)."""
    seen: list[bool] = []
    real = ast.literal_eval

    def literal_eval(node: Any) -> Any:
        seen.append(not gc.isenabled())
        return real(node)

    monkeypatch.setattr(ast, "literal_eval", literal_eval)
    return seen


def test_every_header_is_parsed_under_the_ast_guard(tmp_path: Path,
                                                    guarded: list[bool]) -> None:
    """An ``NpzFile`` parses each array's ``.npy`` header with ``ast.literal_eval`` when the array
    is taken out, not at ``np.load``: every one is read inside the guard (collection held off)."""
    path = _archive(tmp_path / "w.npz")
    assert gc.isenabled()
    read_npz(path)
    assert guarded == [True, True, True]
    assert gc.isenabled()


def test_a_single_npy_array_is_not_an_archive(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3))
    with pytest.raises(ValueError, match=r"not an \.npz archive"):
        read_npz(buffer.getvalue())


def test_a_pickled_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.npz"
    np.savez(path, o=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ValueError):
        read_npz(path)


def test_a_missing_file_raises_as_opening_it_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_npz(tmp_path / "none.npz")


def _array_bytes(array: np.ndarray[Any, Any]) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("given", ["path", "str", "bytes"])
def test_a_single_array_is_read_from_a_path_or_bytes_its_header_under_the_ast_guard(
        given: str, tmp_path: Path, guarded: list[bool]) -> None:
    path = tmp_path / "v.npy"
    path.write_bytes(_array_bytes(np.arange(4, dtype=np.float32)))
    source: Any = {"path": path, "str": str(path), "bytes": path.read_bytes()}[given]
    got = read_npy(source)
    assert got.dtype == np.float32 and got.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert guarded == [True]
    assert gc.isenabled()


def test_an_archive_where_one_array_belongs_is_not_one_array(tmp_path: Path) -> None:
    """A stray ``.npz`` under a ``.npy``'s name loads as an archive: refused (and closed)."""
    path = _archive(tmp_path / "v.npy.npz")
    with pytest.raises(ValueError, match=r"an \.npz archive, not one \.npy array"):
        read_npy(path)
    with pytest.raises(ValueError, match="the bytes given"):
        read_npy(path.read_bytes())


def test_a_pickled_single_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "o.npy"
    np.save(path, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        read_npy(path)


@pytest.mark.parametrize("given", ["path", "bytes"])
def test_a_header_with_a_backslash_is_refused_without_a_warning(given: str, tmp_path: Path) -> None:
    """A flipped byte can put ``\\,`` in a vector file's header; numpy's ``ast.literal_eval`` of it
    warned (DeprecationWarning "invalid escape sequence", from ``<unknown>``) before refusing, so a
    damaged cache file printed a warning (failed before). No header numpy writes holds a backslash:
    such a header is refused before it is parsed."""
    good = _array_bytes(np.ones(8, dtype=np.float32))
    bad = good.replace(b"'<f4'", b"'\\,4'")
    assert bad != good
    path = tmp_path / "v.npy"
    path.write_bytes(bad)
    source: Any = {"path": path, "bytes": bad}[given]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="backslash"):
            read_npy(source)
    assert [str(w.message) for w in seen] == []
