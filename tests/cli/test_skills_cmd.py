"""``skills list`` on a missing or empty home says where it looked."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli.main import main


def test_skills_list_with_a_missing_home_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing"
    assert main(["skills", "list", "--home", str(missing)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "does not exist" in err and not missing.exists()


def test_skills_list_on_a_home_without_skills_says_so(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "list", "--home", str(tmp_path), "--no-embeddings"]) == 0
    err = capsys.readouterr().err
    assert f"no skills: {tmp_path / 'skills'} does not exist" in err
