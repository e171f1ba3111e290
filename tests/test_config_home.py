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


def test_a_named_home_that_does_not_exist_is_an_error_and_is_not_created(tmp_path):
    from hermes_core.config_home import check_home

    missing = tmp_path / "nosuch" / "typo"
    with pytest.raises(ConfigError) as info:
        check_home(missing, env={})
    assert str(missing) in str(info.value) and not missing.exists()
    with pytest.raises(ConfigError) as info:
        check_home(None, env={"HERMES_HOME": str(missing)})
    assert "HERMES_HOME" in str(info.value) and not (tmp_path / "nosuch").exists()
    assert check_home(tmp_path, env={}) == tmp_path


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_home_is_an_error_not_the_current_folder(empty, tmp_path, monkeypatch):
    """``--home "$HERMES_DIR"`` with the variable unset, or ``home: ""`` in config.yaml, named
    the empty path: Path("") is the current folder, which exists, so sessions.db, the embedding
    cache and the audit log were written wherever the command happened to run."""
    from hermes_core.config_home import check_home

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="--home is empty") as info:
        check_home(empty, env={})
    assert info.value.key_path == "home"
    with pytest.raises(ConfigError, match="--home is empty"):
        load_settings(None, home=empty, env={})
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f'llm:\n  stream: false\nhome: "{empty}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="home is empty") as info:
        load_settings(cfg, env={})
    assert (info.value.file, info.value.line, info.value.key_path) == (str(cfg), 3, "home")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


def test_load_settings_refuses_a_named_home_that_does_not_exist(tmp_path):
    missing = tmp_path / "nosuch" / "typo"
    with pytest.raises(ConfigError) as info:
        load_settings(None, home=missing, env={})
    assert str(missing) in str(info.value) and "--home" in str(info.value)
    with pytest.raises(ConfigError) as info:
        load_settings({}, env={"HERMES_HOME": str(missing)})
    assert str(missing) in str(info.value) and "HERMES_HOME" in str(info.value)
    assert not (tmp_path / "nosuch").exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ConfigError, match="file, not a folder"):
        load_settings({}, home=tmp_path / "afile", env={})


def test_load_settings_accepts_an_existing_named_home(tmp_path):
    assert load_settings(None, home=tmp_path, env={}).home_path == tmp_path
    assert load_settings({}, env={"HERMES_HOME": str(tmp_path)}).home_path == tmp_path
    assert load_settings({"home": str(tmp_path)}, env={}).home_path == tmp_path


def test_a_yaml_home_that_does_not_exist_is_an_error_naming_file_line_and_key(tmp_path):
    """A mistyped ``home:`` in config.yaml created that folder (a sessions.db, an audit log) and
    answered with the default persona, as a mistyped --home once did."""
    typo = tmp_path / "nosuch" / "hmoe"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm:\n  stream: false\nhome: {typo}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    err = info.value
    assert (err.file, err.line, err.key_path) == (str(cfg), 3, "home")
    assert str(typo) in str(err) and "does not exist" in str(err)
    assert not (tmp_path / "nosuch").exists()
    (tmp_path / "afile").write_text("x")
    cfg.write_text(f"home: {tmp_path / 'afile'}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="file, not a folder"):
        load_settings(cfg, env={})


def test_a_home_named_by_a_dict_or_an_override_must_exist_too(tmp_path):
    typo = tmp_path / "created-later"
    with pytest.raises(ConfigError) as info:
        load_settings({"home": str(typo)}, env={})
    assert info.value.key_path == "home" and str(typo) in str(info.value)
    with pytest.raises(ConfigError):
        load_settings({}, env={}, overrides={"home": str(typo)})
    assert not typo.exists()


def test_a_yaml_home_overridden_by_the_command_line_or_environment_is_not_checked(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("home: /nosuch/never-used\n", encoding="utf-8")
    assert load_settings(cfg, home=tmp_path, env={}).home_path == tmp_path
    assert load_settings(cfg, env={"HERMES_HOME": str(tmp_path)}).home_path == tmp_path


def test_only_the_default_home_is_created_on_first_use(tmp_path, monkeypatch):
    """``home: ~/.hermes`` (the default, written out) is the one home created on first use."""
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = tmp_path / "config.yaml"
    cfg.write_text("home: ~/.hermes\n", encoding="utf-8")
    assert load_settings(cfg, env={}).home_path == tmp_path / ".hermes"
    assert load_settings({}, env={}).home_path == tmp_path / ".hermes"


def test_default_home_inside_a_missing_user_home_is_an_error(tmp_path, monkeypatch):
    from hermes_core.config_home import check_home

    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    with pytest.raises(ConfigError) as info:
        check_home(None, env={})
    assert "HOME" in str(info.value) and not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("home", ["sk-proj-Abc123Def456Ghi789Jkl0Mno", "${OPENAI_API_KEY}", "x" * 5000])
def test_a_missing_home_error_never_echoes_a_key_or_a_huge_name(home, tmp_path):
    """A key pasted as the home (of any shape), or a name too long for the file system, is
    described, not shown; the too-long name is no OSError traceback."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"home: {home}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={"OPENAI_API_KEY": "correct-horse-battery-staple"})
    text = str(info.value)
    assert info.value.key_path == "home" and info.value.line == 1 and len(text) < 400
    assert "sk-proj" not in text and "correct-horse" not in text


def test_a_home_that_is_a_file_is_one_clear_error(tmp_path, capsys):  # type: ignore[no-untyped-def]
    from hermes_core.agent.agent import Agent
    from hermes_core.cli.main import main
    from hermes_core.errors import ConfigError

    home = tmp_path / "not-a-folder"
    home.write_text("oops", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        Agent.from_config(home=home, offline=True)
    assert str(home) in str(info.value) and "not a folder" in str(info.value)
    code = main(["chat", "--home", str(home), "--offline"])
    err = capsys.readouterr().err
    assert code != 0 and "not a folder" in err and "Traceback" not in err
