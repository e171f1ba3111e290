"""A sealed cache file reads back as written, or as None with a warning: never altered."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from hermes_core.retrieval.gate_store import read_checked, read_sealed, write_sealed

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


def _decode_ids(header: object, arrays: dict[str, np.ndarray]) -> list[int]:
    ids = arrays["ids"]
    if (ids < 0).any():
        raise ValueError("a negative id")
    return [int(i) for i in ids.tolist()]


def test_a_checked_read_gives_what_the_decoder_makes_of_a_file_whose_header_is_ours(tmp_path: Path) -> None:
    path = tmp_path / "state.npz"
    write_sealed(path, 1, {"key": "k"}, ARRAYS, "test state")
    got = read_checked(path, 1, "test state", again="computing it again",
                       ours=lambda h: h.get("key") == "k", decode=_decode_ids)
    assert got == [0, 1, 2, 3, 4]


def test_a_checked_read_of_another_key_is_none_without_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "state.npz"
    write_sealed(path, 1, {"key": "other"}, ARRAYS, "test state")
    with caplog.at_level(logging.WARNING):
        assert read_checked(path, 1, "test state", again="computing it again",
                            ours=lambda h: h.get("key") == "k", decode=_decode_ids) is None
    assert not caplog.records


def test_a_sealed_file_the_decoder_finds_inconsistent_is_none_with_one_warning_naming_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "state.npz"
    write_sealed(path, 1, {"key": "k"}, {**ARRAYS, "ids": -ARRAYS["ids"] - 1}, "test state")
    with caplog.at_level(logging.WARNING):
        assert read_checked(path, 1, "test state", again="computing it again",
                            ours=lambda h: True, decode=_decode_ids) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"test state {path} is inconsistent (a negative id); computing it again"]
