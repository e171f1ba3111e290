"""Tests of ``hermes_core/config_home.py``: which homes are refused, and how the refusal reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import load_settings
from hermes_core.config_home import check_home
from hermes_core.errors import ConfigError


@pytest.fixture
def through_a_file(tmp_path: Path) -> Path:
    """``<tmp>/notes.txt/sub``: a path that runs through a regular file."""
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    return tmp_path / "notes.txt" / "sub"


def test_home_flag_through_a_file_names_the_file_as_not_a_folder(through_a_file: Path) -> None:
    with pytest.raises(ConfigError) as e:
        check_home(through_a_file, env={})
    assert "notes.txt" in str(e.value) and "is a file, not a folder" in str(e.value)
    assert "does not exist" not in str(e.value)


def test_hermes_home_through_a_file_names_the_file_as_not_a_folder(through_a_file: Path) -> None:
    with pytest.raises(ConfigError) as e:
        check_home(None, env={"HERMES_HOME": str(through_a_file)})
    assert "HERMES_HOME" in str(e.value) and "is a file, not a folder" in str(e.value)
    assert "does not exist" not in str(e.value)


def test_home_key_in_the_config_through_a_file_names_the_file_as_not_a_folder(
        through_a_file: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_settings({"home": str(through_a_file)}, env={})
    assert "notes.txt" in str(e.value) and "is a file, not a folder" in str(e.value)
    assert "does not exist" not in str(e.value)


def test_home_under_a_missing_folder_still_says_it_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        check_home(tmp_path / "nope" / "sub", env={})


@pytest.mark.parametrize("via", ["--home", "HERMES_HOME"])
def test_a_home_name_too_long_for_the_file_system_is_a_config_error(via: str) -> None:
    """A folder name of 300 characters (ENAMETOOLONG) escaped check_home as an OSError traceback
    from every command; the config's ``home:`` key already said it plainly."""
    named = "a" * 300
    with pytest.raises(ConfigError) as info:
        if via == "--home":
            check_home(named, env={})
        else:
            check_home(None, env={"HERMES_HOME": named})
    assert info.value.key_path == "home" and via in str(info.value)
    assert "too long" in str(info.value)
