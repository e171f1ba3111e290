"""Tests of ``hermes_core/jsonl.py``: one strict reader for labelled JSONL files."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.jsonl import read_jsonl


def test_a_line_separator_inside_a_string_does_not_split_the_line(tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text('\ufeff{"query": "a\u2028b"}\n\n{"query": "c"}\n', encoding="utf-8")
    assert list(read_jsonl(f)) == [(1, {"query": "a\u2028b"}), (3, {"query": "c"})]


@pytest.mark.parametrize("raw, reason, line", [
    (b'{"a": 1}\n{oops\n', "not valid JSON", 2),
    (b'{"a": 1}\n{"a": 2}\n{"q": "caf\xe9"}\n', "not valid UTF-8", 3),
    (b'\xef\xbb\xbf{"a": 1}\n\n{"q": "\xff"}\n', "not valid UTF-8", 3),
    (b'{"a": 1}\r{"a": 2}\r\n{"q": "\xff"}\r', "not valid UTF-8", 3),
    (b'{"a": ' + b"9" * 5000 + b"}\n", "unreadable JSON", 1),
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "unreadable JSON", 1),
])
def test_a_bad_line_is_one_config_error_naming_file_and_line(tmp_path: Path, raw: bytes,
                                                              reason: str, line: int) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_bytes(raw)
    with pytest.raises(ConfigError) as info:
        list(read_jsonl(f))
    assert reason in str(info.value) and info.value.line == line and str(f) in str(info.value)


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_any_line_end_a_text_file_uses_separates_lines(tmp_path: Path, end: bytes) -> None:
    f = tmp_path / "q.jsonl"
    f.write_bytes(b'{"query": "a"}' + end + end + b'{"query": "b"}' + end)
    assert list(read_jsonl(f)) == [(1, {"query": "a"}), (3, {"query": "b"})]


def test_unreadable_files_name_the_file(tmp_path: Path) -> None:
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        list(read_jsonl(binary))
    with pytest.raises(ConfigError, match="cannot read queries"):
        list(read_jsonl(tmp_path / "missing.jsonl", what="queries"))


def test_a_pipe_or_a_folder_is_refused_by_name_never_read(tmp_path: Path) -> None:
    """A FIFO would block the read forever and ``/dev/zero`` never ends: neither is opened."""
    import os
    fifo = tmp_path / "queries.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file") as info:
        list(read_jsonl(fifo, what="queries"))
    assert str(fifo) in str(info.value)
    with pytest.raises(ConfigError, match="not a regular file"):
        list(read_jsonl("/dev/zero"))
    with pytest.raises(ConfigError, match="is a directory") as info:
        list(read_jsonl(tmp_path))
    assert str(tmp_path) in str(info.value)


def test_a_line_over_the_limit_is_refused_naming_it_before_it_is_parsed(tmp_path: Path) -> None:
    from hermes_core.jsonl import MAX_LINE_BYTES
    f = tmp_path / "q.jsonl"
    f.write_bytes(b'{"query": "a"}\n{"query": "' + b"x" * MAX_LINE_BYTES + b'"}\n{"query": "b"}\n')
    with pytest.raises(ConfigError, match="line is over") as info:
        list(read_jsonl(f))
    assert info.value.line == 2 and str(f) in str(info.value)


def test_a_file_over_the_size_limit_is_refused_without_reading_it(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_core.jsonl as jsonl
    monkeypatch.setattr(jsonl, "MAX_FILE_BYTES", 100)
    f = tmp_path / "q.jsonl"
    f.write_bytes(b'{"query": "a"}\n' * 10)
    with pytest.raises(ConfigError, match="too large") as info:
        list(read_jsonl(f))
    assert str(f) in str(info.value)


# --------------------------------------------------------------------------- property: any file

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LINE = st.sampled_from(['{"a": 1}', "[", "]" * 3, "[" * 2000, "9" * 5000, '"\\ud800"', "NaN", "{",
                         "\ufeff", "\u2028", "null", '{"q": "x"}']) | st.text(max_size=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, max_size=6))
def test_any_jsonl_text_is_values_or_one_config_error_naming_its_line(tmp_path: Path,
                                                                    lines: list[str]) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    try:
        rows = list(read_jsonl(path))
    except ConfigError as e:
        assert str(path) in str(e)
    else:
        assert all(isinstance(n, int) and n >= 1 for n, _ in rows)
