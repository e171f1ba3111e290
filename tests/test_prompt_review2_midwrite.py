"""Review 2: a context file caught half-written (an editor that truncates and rewrites in place)
must be read again, not skipped for the turn as "not valid UTF-8" or "binary": the stat after the
read shows it moved, and that has to be checked before the bytes are judged."""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.prompt import files as context_files
from hermes_core.agent.prompt.files import read_context_file
from hermes_core.agent.prompt_builder import PromptBuilder

FINAL = "Café owners: Zoë and Jürgen. Menü prices in €.\n"


def _caught_mid_write(monkeypatch: pytest.MonkeyPatch, path: Path, partial: bytes,
                      times: int = 1) -> list[int]:
    """The first ``times`` opens of ``path`` see ``partial`` while the writer finishes the file."""
    real_open = builtins.open
    calls = [0]

    def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if Path(file) == path and "b" in mode and calls[0] < times:
            calls[0] += 1
            # the writer completes (new size and ctime) while we hold the partial bytes
            st = os.stat(path)
            with real_open(path, "wb") as fh:
                fh.write(FINAL.encode() + b" " * calls[0])
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + calls[0] * 1_000_000))
            return io.BytesIO(partial)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(context_files, "open", fake_open, raising=False)
    return calls


@pytest.mark.parametrize("partial", [FINAL.encode()[:4],             # cut inside "é"
                                     b"Caf\x00\x00\x00\x00",           # zeroed, not yet written
                                     ], ids=["mid-character", "zero-filled"])
def test_half_written_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         partial: bytes) -> None:
    path = tmp_path / "USER.md"
    path.write_text("old\n", encoding="utf-8")
    calls = _caught_mid_write(monkeypatch, path, partial)
    loaded = read_context_file(path)
    assert calls[0] == 1
    assert loaded.status == "ok", loaded.events
    assert loaded.text.startswith("Café owners") and loaded.reads == 2
    assert not loaded.events


def test_builder_keeps_the_file_in_the_prompt(hermes_home: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = hermes_home / "USER.md"
    path.write_text("old\n", encoding="utf-8")
    _caught_mid_write(monkeypatch, path, FINAL.encode()[:4])
    system = PromptBuilder(hermes_home, cwd=tmp_path).build("hi").system
    assert "Zoë and Jürgen" in system


def test_a_file_that_never_settles_is_skipped_this_turn_and_retried(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "USER.md"
    path.write_text("old\n", encoding="utf-8")
    _caught_mid_write(monkeypatch, path, FINAL.encode()[:4], times=10)
    loaded = read_context_file(path)
    assert loaded.status == "skipped" and loaded.fingerprint is None  # re-read next turn
    assert any("kept changing" in e.reason for e in loaded.events)
    assert not any("UTF-8" in e.reason or "empty" in e.reason for e in loaded.events)


def test_a_really_binary_file_is_still_skipped(tmp_path: Path) -> None:
    path = tmp_path / "USER.md"
    path.write_bytes(b"\x00\x01\x02 not text")
    loaded = read_context_file(path)
    assert loaded.status == "skipped" and loaded.fingerprint is not None
    assert any("binary" in e.reason for e in loaded.events)
