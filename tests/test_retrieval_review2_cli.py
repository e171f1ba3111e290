"""Review round 2: CLI errors say what is actually wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli.main import main


def test_catalog_that_is_a_directory_is_not_reported_as_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hermes_home: Path) -> None:
    code = main(["skills", "search", "x", "--catalog", str(tmp_path), "--no-embeddings"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{tmp_path}: is a directory, not a JSONL catalog file" in err
    assert "not found" not in err
