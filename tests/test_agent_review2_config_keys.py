"""A key pasted with a trailing newline or CR (a CRLF .env file, ``echo`` into a variable) is used
without it: the HTTP client refused the header and the chat failed as "connection_error"."""

from __future__ import annotations

from pathlib import Path

from hermes_core.config import load_settings


def test_env_key_is_stripped():
    s = load_settings({}, env={"OPENAI_API_KEY": "sk-test-abcdef123456\r\n"})
    (cred,) = s.credentials_for("openai")
    assert cred.secret == "sk-test-abcdef123456"


def test_yaml_key_is_stripped(tmp_path: Path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text('credentials:\n  openai:\n    keys:\n      - key: " ${K}"\n', encoding="utf-8")
    s = load_settings(cfg, env={"K": "sk-test-abcdef123456\n"})
    (cred,) = s.credentials_for("openai")
    assert cred.secret == "sk-test-abcdef123456"


def test_utf16_config_is_named_as_such(tmp_path: Path):
    # PowerShell's ">" writes UTF-16 with a BOM; "binary file, not YAML" sent users looking for
    # a corrupt file instead of an encoding to change.
    import pytest

    from hermes_core.errors import ConfigError

    cfg = tmp_path / "config.yaml"
    cfg.write_bytes("llm:\n  max_tokens: 5\n".encode("utf-16"))
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert "UTF-16" in str(info.value) and "UTF-8" in str(info.value)
    assert str(cfg) in str(info.value)
