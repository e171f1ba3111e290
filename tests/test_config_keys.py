"""Tests of ``hermes_core/config.py``: the keys a config holds. Read from the file or the
environment (stripped, interpolated, skipped and named when a variable is unset, refused where a
header cannot carry them), warned about when no provider uses them, and never shown: not in an
error, a warning, a repr or an error's context, wherever a key is pasted; a Redis URL's or an
endpoint's password is a secret too. The rest of the loading is in ``test_config.py``."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from hermes_core.config import load_settings, parse_yaml
from hermes_core.errors import ConfigError


def test_key_not_in_validation_error():
    with pytest.raises(ConfigError) as info:
        parse_yaml('credentials:\n  openai:\n    keys:\n      - key: "sk-secret-0123456789abcdef"\n'
                   '        weight: heavy\n', file="c.yaml", env={})
    assert "sk-secret" not in str(info.value)


# A config whose credentials section has the wrong shape must not echo the key in its error.

KEY = "tg-0123456789abcdef0123456789abcdef"   # not key-shaped for the redaction patterns


@pytest.mark.parametrize("yaml_text, key_path", [
    (f"credentials:\n  openai: {KEY}\n", "credentials.openai"),
    (f"credentials:\n  openai:\n    keys: {KEY}\n", "credentials.openai.keys"),
    (f"credentials:\n  openai:\n    keys: [{KEY}]\n", "credentials.openai.keys[0]"),
    (f"credentials:\n  together:\n    keys:\n      - {{key: {KEY}, weight: x}}\n",
     "credentials.together.keys[0].weight"),
])
def test_wrong_credential_shape_names_the_key_path_but_not_the_secret(yaml_text: str,
                                                                       key_path: str):
    with pytest.raises(ConfigError) as info:
        parse_yaml(yaml_text, file="c.yaml")
    text = str(info.value)
    assert KEY not in text and KEY[:12] not in text
    assert info.value.key_path == key_path and "c.yaml" in text and info.value.line is not None


def test_wrong_type_outside_credentials_still_shows_the_value():
    with pytest.raises(ConfigError) as info:
        parse_yaml("llm:\n  max_tokens: lots\n", file="c.yaml")
    assert "lots" in str(info.value)


# A key pasted with a trailing newline or CR (a CRLF .env file, ``echo`` into a variable) is used
# without it: the HTTP client refused the header and the chat failed as "connection_error".

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


@pytest.mark.parametrize("var", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])
@pytest.mark.parametrize("value", ["${VAR}", "correct-horse-battery-staple"])
def test_config_errors_never_echo_a_provider_key_held_in_the_environment(var, value):
    """The pool uses OPENAI_API_KEY / ANTHROPIC_API_KEY when the file names no key: a proxy's key
    of no recognisable shape, misplaced (or referenced under the wrong setting), is still a secret."""
    secret = "correct-horse-battery-staple"
    text = f"llm:\n  max_tokens: {value.replace('VAR', var)}\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={var: secret})
    assert secret not in str(info.value) and "llm.max_tokens" in str(info.value)


def test_unset_variable_in_a_credential_is_named(caplog):
    text = "credentials:\n  openai:\n    keys:\n      - key: ${MY_OPENAI_KEY}\n"
    with caplog.at_level(logging.WARNING):
        parse_yaml(text, file="c.yaml", env={})
    assert "${MY_OPENAI_KEY}" in caplog.text and "c.yaml:4" in caplog.text


@pytest.mark.parametrize("value", ['"${ORG_ID}:${ORG_TOKEN}"', '"sk-${KEY_SUFFIX}"',
                                   '"${SET_PART}${UNSET_PART}"'])
def test_a_credential_with_any_unset_variable_is_skipped_and_named(caplog, value):
    """A key built from several variables, one of them unset, is not a key: sending the rest
    ("-", "sk-", half a token) would fail as a 401 blamed on a key the user never wrote."""
    text = f"credentials:\n  openai:\n    keys:\n      - key: {value}\n"
    with caplog.at_level(logging.WARNING):
        s = parse_yaml(text, file="c.yaml", env={"SET_PART": "abcdef0123456789"})
    assert not [c for c in s.credentials_for("openai") if c.secret in (":", "sk-", "abcdef0123456789")]
    unset = [n for n in ("ORG_ID", "ORG_TOKEN", "KEY_SUFFIX", "UNSET_PART") if n in value]
    assert all("${" + n + "}" in caplog.text for n in unset) and "c.yaml:4" in caplog.text
    assert "abcdef0123456789" not in caplog.text


@pytest.mark.parametrize("url, secret", [
    ("redis://:s3cret-redis-pw@cache.internal:6379/0", "s3cret-redis-pw"),
    ("redis://app:s3cret-redis-pw@cache.internal:6379/0", "s3cret-redis-pw"),
    ("redis://cache.internal:6379/0?password=s3cret-redis-pw", "s3cret-redis-pw"),
])
def test_the_redis_url_password_is_a_secret_never_shown(url: str, secret: str) -> None:
    settings = load_settings({"credential_pool": {"backend": "redis", "redis_url": url}}, env={})
    assert secret in settings.secret_values()
    assert secret not in repr(settings.credential_pool) and secret not in repr(settings)
    assert secret not in settings.redactor()(f"could not reach {url}")
    assert settings.credential_pool.redis_url == url      # still there for the backend to use


# ------------------------------------------------------------------ no secret echoed, anywhere

_SECRET_SLOTS = ["llm.max_tokens", "llm.stream", "llm.routing.default_model", "llm.routing.providers",
                 "credential_pool.rotation", "home", "credentials.openai.keys", "credentials.openai",
                 "skill_utils.folders", "prompt.compaction.high_water", "context_engine.max_results",
                 "llm.routing.context_windows", "llm.prices", "nosuch", "llm.nosuch",
                 "llm.routing.providers.0.name", "llm.routing.providers.0.models",
                 "credentials.openai.keys.0.weight", "credentials.openai.rotation_strategy"]
_NO_SHAPE_KEY = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.",
                        min_size=20, max_size=40).filter(
    lambda s: s[0].isalnum() and any(c.isdigit() for c in s) and any(c.isupper() for c in s)
    and any(c.islower() for c in s))


def _nested(path: str, value: object, as_key: bool) -> object:
    head, _, rest = path.partition(".")
    inner = (_nested(rest, value, as_key) if rest else ({value: 1} if as_key else value))
    return [inner] if head.isdigit() else {head: inner}


@hsettings(max_examples=150, deadline=None)
@given(path=st.sampled_from(_SECRET_SLOTS), secret=_NO_SHAPE_KEY, as_key=st.booleans(),
       wrap=st.sampled_from(["{}", "key {}", "https://user:{}@proxy.example/v1",
                             "https://proxy.example/v1?api_key={}"]))
def test_no_config_error_echoes_a_key_put_in_the_wrong_place(path: str, secret: str, as_key: bool,
                                                             wrap: str) -> None:
    """A key of no recognisable shape pasted into any setting, alone, after a word, as a URL's
    password or as a YAML key: the message names the place, never the key (it was echoed when it
    shared the value with other words, sat in a URL, or was a provider's name)."""
    import yaml

    text = yaml.safe_dump(_nested(path, wrap.format(secret), as_key))
    try:
        parse_yaml(text, file="c.yaml", env={})
    except ConfigError as e:
        assert secret not in str(e) and secret[:12] not in str(e), str(e)


@pytest.mark.parametrize("ref", ["${OPENAI_KEY", "${}", "${MY-KEY}", "pre-${ 1BAD}"])
def test_a_malformed_variable_reference_in_a_credential_is_an_error_naming_it(ref: str) -> None:
    """A typo in ``${VAR}`` (unclosed, empty, a name with a hyphen) was taken literally: the text
    "${OPENAI_KEY" became the key and was sent to the provider."""
    text = f"credentials:\n  openai:\n    keys:\n      - key: \"{ref}\"\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={"OPENAI_KEY": "zq9Horse7battery.Staple-42"})
    msg = str(info.value)
    assert "c.yaml:4" in msg and "credentials.openai.keys[0].key" in msg
    assert "${NAME}" in msg and "zq9Horse" not in msg


def test_a_very_short_configured_key_is_warned_about_once_without_showing_it(caplog) -> None:
    import logging

    text = "credentials:\n  openai:\n    keys:\n      - key: Zq7x2\n"
    with caplog.at_level(logging.WARNING, logger="hermes_core.config"):
        s = parse_yaml(text, file="c.yaml", env={})
        s.with_overrides(**{"llm.stream": False})
        parse_yaml(text, file="c.yaml", env={})
    short = [r.getMessage() for r in caplog.records if "characters" in r.getMessage()]
    assert len(short) == 1 and "credentials.openai.keys[0]" in short[0] and "c.yaml:4" in short[0]
    assert "Zq7x2" not in caplog.text


@pytest.mark.parametrize("endpoint", [
    "https://team:s3cret-proxy-pw@llm-proxy.internal/v1",
    "https://llm-proxy.internal/v1?password=s3cret-proxy-pw",
])
def test_a_provider_endpoint_password_is_a_secret_never_shown(endpoint: str) -> None:
    """A proxy behind basic auth is configured as a URL with its password in it."""
    settings = load_settings({"llm": {"routing": {"default_model": "m", "providers": [
        {"name": "proxy", "type": "openai", "endpoint": endpoint, "models": ["m"]}]}}}, env={})
    assert "s3cret-proxy-pw" in settings.secret_values()
    assert "s3cret-proxy-pw" not in repr(settings)
    assert "s3cret-proxy-pw" not in settings.redactor()(f"could not reach {endpoint}")


def test_a_provider_key_variable_that_is_not_utf8_is_an_error_naming_it(tmp_path):
    """A key variable set from a file in another encoding arrives surrogate-escaped: the key's
    fingerprint encoded it as UTF-8 and every command ended in a UnicodeEncodeError traceback."""
    bad = "sk-\udcff\udcfeabcdefghijklmnopqrstuvwx"
    with pytest.raises(ConfigError) as info:
        load_settings({}, home=tmp_path, env={"OPENAI_API_KEY": bad})
    assert "OPENAI_API_KEY" in str(info.value) and "UTF-8" in str(info.value)
    assert "abcdefghijklmnop" not in str(info.value)


def test_an_interpolated_variable_that_is_not_utf8_is_an_error_naming_it():
    bad = "tok-\udcffabcdefghijklmnopqrstuvwx"
    text = "credentials:\n  custom:\n    keys:\n      - key: ${CUSTOM_KEY}\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={"CUSTOM_KEY": bad})
    err = info.value
    assert "${CUSTOM_KEY}" in str(err) and "UTF-8" in str(err) and err.line == 4
    assert "abcdefghijklmnop" not in str(err)


@pytest.mark.parametrize("key", ["clé-sécrète-ü9Ω", "tab\tin-the-key-123", "密钥abcdefgh12"])
def test_a_key_an_http_header_cannot_carry_is_an_error_naming_its_place(key: str) -> None:
    """A key travels in a header (Authorization, x-api-key), which holds ASCII only: a key with
    'é' failed at the first request with a UnicodeEncodeError whose args held the whole header,
    key included, and ended the chat."""
    import json as _json

    text = f"credentials:\n  custom:\n    keys:\n      - key: {_json.dumps(key)}\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml")
    err = info.value
    assert err.key_path == "credentials.custom.keys[0].key" and err.line == 4
    shown = f"{err} {err!r} {err.args!r}"
    assert "HTTP header" in shown
    for piece in (key, key[:6], _json.dumps(key)[1:7]):
        assert piece not in shown


def test_a_provider_key_variable_an_http_header_cannot_carry_is_an_error_naming_it(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_settings({}, home=tmp_path, env={"OPENAI_API_KEY": "sk-clé-abcdefghijklmnop"})
    assert "OPENAI_API_KEY" in str(info.value) and "HTTP header" in str(info.value)
    assert "abcdefghijklmnop" not in repr(info.value)


def test_a_key_with_spaces_is_still_a_key() -> None:
    settings = parse_yaml("credentials:\n  custom:\n    keys:\n      - key: 'my secret key 42'\n")
    assert settings.credentials["custom"].keys[0].key == "my secret key 42"


def test_a_key_under_the_wrong_setting_is_not_kept_in_the_errors_context() -> None:
    """Raised ``from None``, the ConfigError still carried pydantic's error as its
    ``__context__``, whose text quotes the input value: the key, for an error reporter or a
    ``repr`` that walks the chain."""
    key = "Zq7 odd-key-xyz"
    text = f"credentials:\n  custom:\n    keys: [{{key: '{key}', weight: '{key}'}}]\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml")
    err = info.value
    chain = [err.__context__, err.__cause__]
    assert all(key not in repr(c) and key not in str(c) for c in chain)
