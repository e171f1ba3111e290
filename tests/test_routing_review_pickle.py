"""The classifier file is a pickle, and unpickling runs code: a file not written by
``hermes-core route train`` (a downloaded .pkl, a tampered one) is refused before any of it is
unpickled."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from hermes_core.agent.routing.classifier import FORMAT, Example, RouteClassifier
from hermes_core.errors import ConfigError


class _Payload:
    """Unpickling this creates ``marker`` (stands in for arbitrary code)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, int]]:
        return (os.open, (self.marker, os.O_CREAT | os.O_WRONLY))


def _examples() -> list[Example]:
    return [Example(f"write python code {i}", "code") for i in range(6)] + \
           [Example(f"hello how are you {i}", "chat") for i in range(6)]


def test_foreign_pickle_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "clf.pkl"
    evil.write_bytes(pickle.dumps({"format": FORMAT, "labels": ["x"], "pipeline": _Payload(str(marker))}))
    with pytest.raises(ConfigError, match="cannot read classifier") as ei:
        RouteClassifier.load(evil, key_path="llm.routing.classifier.path")
    assert str(evil) in str(ei.value)
    assert not marker.exists()


def test_tampered_file_is_refused_without_running_it(tmp_path: Path) -> None:
    path = tmp_path / "clf.pkl"
    RouteClassifier.train(_examples()).save(path)
    good = path.read_bytes()
    marker = tmp_path / "pwned"
    header, _ = good.split(b"\n", 1)
    path.write_bytes(header + b"\n" + pickle.dumps(_Payload(str(marker))))
    with pytest.raises(ConfigError, match="checksum"):
        RouteClassifier.load(path)
    assert not marker.exists()


def test_saved_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "clf.pkl"
    RouteClassifier.train(_examples()).save(path)
    label, conf = RouteClassifier.load(path).predict("write python code please")
    assert label == "code" and 0.0 <= conf <= 1.0


def test_cli_train_to_unwritable_path_is_a_clear_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_core.cli.main import main

    data = tmp_path / "train.jsonl"
    data.write_text("".join(f'{{"text": "{e.text}", "label": "{e.label}"}}\n' for e in _examples()))
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    out = blocker / "clf.pkl"
    assert main(["route", "train", str(data), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot write classifier" in err and str(out) in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"
