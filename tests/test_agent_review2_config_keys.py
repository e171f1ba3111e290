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


def test_credentials_for_a_provider_not_in_routing_are_named(tmp_path: Path, caplog):
    # Keys under a provider the routing does not list were dropped without a word, and the chat
    # then said "no API key configured" although the file holds one.
    import logging

    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  routing:\n    providers:\n      - name: openai\n"
                   "credentials:\n  anthropic:\n    keys:\n      - key: sk-ant-test-0123456789abcdef\n",
                   encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hermes_core.config"):
        load_settings(cfg)
    (msg,) = [r.getMessage() for r in caplog.records if "anthropic" in r.getMessage()]
    assert f"{cfg}:7" in msg   # the line of its value, like every config message
    assert "llm.routing.providers" in msg and "openai" in msg
    assert "sk-ant-test" not in msg


def test_credentials_for_default_providers_need_no_routing_entry(tmp_path: Path, caplog):
    import logging

    cfg = tmp_path / "config.yaml"
    cfg.write_text("credentials:\n  anthropic:\n    keys:\n      - key: sk-ant-test-0123456789abcdef\n",
                   encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hermes_core.config"):
        load_settings(cfg)
    assert not [r for r in caplog.records if "routing" in r.getMessage()]


def test_unused_credentials_warned_once_per_load(tmp_path: Path, caplog):
    import logging

    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  routing:\n    providers:\n      - name: openai\n"
                   "credentials:\n  anthropic:\n    keys:\n      - key: sk-ant-test-0123456789abcdef\n",
                   encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hermes_core.config"):
        s = load_settings(cfg, home=tmp_path)             # home: a with_overrides copy
        s.with_overrides(**{"llm.stream": False})
    assert len([r for r in caplog.records if "unused" in r.getMessage()]) == 1
