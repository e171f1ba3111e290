"""A sealed cache file reads back as written, or as None with a warning: never altered."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval.gate_store import read_sealed, write_sealed

ARRAYS = {"ids": np.arange(5, dtype=np.int64), "vals": np.linspace(0.0, 1.0, 10).reshape(2, 5)}


def test_arrays_and_header_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "s" / "state.npz"
    assert write_sealed(path, 3, {"keys": ["a", "b"]}, ARRAYS, "test state")
    got = read_sealed(path, 3, "test state")
    assert got is not None
    header, arrays = got
    assert header == {"keys": ["a", "b"], "version": 3}
    assert arrays.keys() == ARRAYS.keys()
    for name, a in ARRAYS.items():
        assert arrays[name].dtype == a.dtype
        np.testing.assert_array_equal(arrays[name], a)


def test_no_file_is_none_without_a_word(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert read_sealed(tmp_path / "absent.npz", 1, "test state") is None
    assert not caplog.records


@pytest.mark.parametrize("damage", ["version", "array", "header", "torn", "not-a-zip"])
def test_a_file_of_another_version_or_changed_since_it_was_sealed_is_refused_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str) -> None:
    path = tmp_path / "state.npz"
    write_sealed(path, 1, {"n": 5}, ARRAYS, "test state")
    if damage in ("array", "header"):   # rewritten by something that does not seal: old digest
        with np.load(path) as z:
            saved = {name: np.asarray(z[name]) for name in z.files}
        if damage == "array":
            saved["vals"] = saved["vals"] + 1e-12
        else:
            saved["header"] = np.frombuffer(b'{"n": 6, "version": 1}', dtype=np.uint8)
        with open(path, "wb") as f:
            np.savez(f, **saved)
    elif damage == "torn":
        path.write_bytes(path.read_bytes()[:200])
    elif damage == "not-a-zip":
        path.write_text("hello", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert read_sealed(path, 2 if damage == "version" else 1, "test state") is None
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert str(path) in caplog.records[0].getMessage()
