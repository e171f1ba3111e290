"""Tests of ``hermes_core/config_messages.py``: a config error in the config's words (what was
expected, what was found), the nearest known key suggested for an unknown one, and no value that
is or looks like a secret shown, in an error or in the load's warnings."""

from __future__ import annotations

import logging

import pytest

from hermes_core.config import parse_yaml
from hermes_core.errors import ConfigError


@pytest.mark.parametrize("text,hint", [
    ("llm:\n  max_token: 5\n", "llm.max_tokens"),
    ("llm:\n  providers: []\n", "llm.routing.providers"),
    ("credentials:\n  openai:\n    kyes: []\n", "credentials.openai.keys"),
    # a setting of each item of a list, named without an item: the suggestion shows where it goes
    ("credentials:\n  openai:\n    max_rpm: 5\n", "credentials.openai.keys[i].max_rpm"),
])
def test_unknown_key_suggests_the_nearest_known_one(text, hint):
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert f"did you mean '{hint}'" in str(info.value)


@pytest.mark.parametrize("text,hint", [
    ("llm:\n  model: gpt-4o\n", "llm.routing.default_model"),      # not a routing rule's model
    ("model: gpt-4o\n", "llm.routing.default_model"),
    ("llm:\n  routing:\n    model: gpt-4o\n", "llm.routing.default_model"),
    ("llm:\n  routing:\n    models: [gpt-4o]\n", "llm.routing.providers[i].models"),
    ("prompt:\n  max_tokens: 5\n", "llm.max_tokens"),
    ("skill_utils:\n  model: x\n", "skill_utils.embedding_model"),
    ("llm:\n  prompt: {}\n", "prompt"),
    ("compaction: {}\n", "prompt.compaction"),
])
def test_a_key_at_the_wrong_level_suggests_its_full_right_path(text, hint):
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert f"did you mean '{hint}'?" in str(info.value)


@pytest.mark.parametrize("key,hint", [
    # names other clients give the same setting: the suggestion is the setting, never the
    # list the key sits in ("did you mean 'llm.routing.providers[0]'?" for `kind`)
    ("kind", "llm.routing.providers[0].type"),
    ("base_url", "llm.routing.providers[0].endpoint"),
    ("api_base", "llm.routing.providers[0].endpoint"),
    ("url", "llm.routing.providers[0].endpoint"),
    ("api_key", "credentials.NAME.keys[i].key"),
])
def test_a_provider_setting_named_as_other_clients_name_it_suggests_ours(key, hint):
    text = f"llm:\n  routing:\n    providers:\n      - name: custom\n        {key}: x\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert f"did you mean '{hint}'?" in str(info.value)


@pytest.mark.parametrize("loc", [("skill_utils", "format"), ("context_engine", "host"),
                                 ("prompt", "format"), ("skill_utils", "url"), ("llm", "token")])
def test_a_plain_word_outside_the_provider_settings_is_not_read_as_another_clients_name(loc):
    """"format", "host", "url", "token" are other clients' names only where our setting lives:
    `skill_utils.format` or `context_engine.host` is no provider's type or endpoint."""
    from hermes_core.config import Settings
    from hermes_core.config_messages import suggest_key

    got = suggest_key(Settings, loc)
    assert got is None or not got.startswith(("llm.routing.providers", "credentials")), (loc, got)


def test_no_suggestion_is_the_path_that_holds_the_unknown_key():
    from hermes_core.config import Settings
    from hermes_core.config_messages import suggest_key

    for loc in [("llm", "routing", "providers", 0, "zzz"), ("llm", "routing", "zzz"), ("prompt", "zz")]:
        got = suggest_key(Settings, loc)
        here = ".".join(str(p) for p in loc[:-1])
        assert got is None or not here.startswith(got.replace("[0]", ".0")), (loc, got)


def test_every_known_setting_named_at_another_level_suggests_a_path_of_that_name():
    """Each settable name, put at every other level and in every other section, is answered with
    the full path of a setting of that name (the one path when the name is unique). The other
    answers allowed: a sibling whose name is that one mistyped (``model`` among ``models``), and
    for a name that is only a list item's field (``model``, ``timeout_s``) the setting that
    qualifies it (``default_model``, ``busy_timeout_s``)."""
    import re
    from collections import Counter

    from hermes_core.config import Settings
    from hermes_core.config_messages import _list_paths, known_paths, suggest_key

    paths = [p for p in known_paths(Settings) if "*" not in p]
    names = Counter(p[-1] for p in known_paths(Settings))
    lists = _list_paths(Settings)
    sections = [()] + [p for p in known_paths(Settings) if "*" not in p and any(
        q[:len(p)] == p and len(q) > len(p) for q in paths) and not any(
        q[:len(p) + 1] == (*p, "*") for q in known_paths(Settings))]
    assert len(sections) > 8
    field_only = {p[-1] for p in paths} - {p[-1] for p in paths
                                          if not any(".".join(p).startswith(f"{lp}.") for lp in lists)}
    checked = 0
    for path in paths:
        for place in {path[:i] for i in range(len(path) - 1)} | set(sections):
            loc = (*place, path[-1])
            if loc in paths or (path[:len(place)] == place and len(place) == len(path) - 1):
                continue
            got = suggest_key(Settings, loc)
            assert got is not None, loc
            got_path = re.sub(r"\[\w+\]", "", got)
            if path[-1] in field_only and got_path.split(".")[-1].endswith("_" + path[-1]):
                continue
            if got_path.rpartition(".")[0] == ".".join(place) and got_path != ".".join(path):
                continue   # a near sibling's name is a typo of it (providers: model -> models)
            if names[path[-1]] == 1:
                assert got_path == ".".join(path), (loc, got)
            else:
                assert got_path.split(".")[-1] == path[-1], (loc, got)
            checked += 1
    assert checked > 1000


def test_type_errors_speak_the_configs_language():
    text = "llm:\n  routing:\n    providers:\n      - name: openai\n        models: openai\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert "expected a list of model names, got the string 'openai'" in str(info.value)
    assert "Input should" not in str(info.value)


def test_an_unknown_key_inside_a_list_is_suggested_with_its_index():
    text = "credentials:\n  custom:\n    keys:\n      - key: abc\n        wieght: 1\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert "did you mean 'credentials.custom.keys[0].weight'?" in str(info.value)


@pytest.mark.parametrize("value,shown", [("[a, b]", "a list of 2 items"), ("5", "the number 5"),
                                         ("true", "the boolean true")])
def test_credentials_of_the_wrong_container_type(value, shown):
    with pytest.raises(ConfigError) as info:
        parse_yaml(f"credentials: {value}\n", file="c.yaml", env={})
    e = info.value
    assert (e.key_path, e.line) == ("credentials", 1)
    assert "expected a mapping of provider name" in str(e) and shown in str(e)


@pytest.mark.parametrize(("provider", "key", "shown"), [
    ("sk-ant-api03-" + "Q7x" * 14, "abc", "credentials for '<secret-looking key>' are unused"),
    ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "abd", "credentials.<secret-looking key>"),
    ("q9w8e7r6t5y4u3i2o1p0zxcv", "q9w8e7r6t5y4u3i2o1p0zxcv", "<secret-looking key>")],
    ids=["key-shaped", "token-shaped", "a-key-of-no-shape-also-its-value"])
def test_a_key_pasted_as_a_provider_s_name_is_not_echoed_by_the_load_s_warnings(
        caplog, provider: str, key: str, shown: str) -> None:
    """The warnings of a load (keys under a provider nothing routes to, a key too short) name
    the provider: one named by a pasted key is masked as an error's key path is. A library's
    logging has no redacting filter, and the CLI's knows a key of no shape only after the load."""
    body = f"credentials:\n  {provider}:\n    keys: [{{key: {key}}}]\n"
    with caplog.at_level(logging.WARNING, logger="hermes_core.config"):
        parse_yaml(body, file="c.yaml", env={})
    said = caplog.text
    assert "are unused" in said and shown in said, said
    assert provider not in said and provider[:16] not in said, said


@pytest.mark.parametrize("secret", ["sk-abcdefghijklmnopqrstuvwxyz123",
                                    "Zk38fj3kd92jfk3lsd0qpwe8XQ", "ghp_9f8e7d6c5b4a39281726354"])
def test_config_errors_never_echo_a_secret(secret):
    for text in (f"llm:\n  max_tokens: {secret}\n", f"credentials:\n  openai: {secret}\n",
                 f"credentials:\n  openai:\n    keys:\n      - key: {secret}\n        weight: x\n"):
        with pytest.raises(ConfigError) as info:
            parse_yaml(text, file="c.yaml", env={})
        assert secret not in str(info.value) and secret[:12] not in str(info.value)


@pytest.mark.parametrize("text", [
    "credentials:\n  openai:\n    keys:\n      - key: 7301948562019384\n",
    "credentials:\n  openai:\n    keys:\n      - 7301948562019384\n",
    "credentials:\n  openai:\n    keys:\n      - key: 0x19f0a7c3e5b2d4\n",
])
def test_a_number_in_a_keys_place_is_not_echoed(text):
    """An all-digit token (YAML reads it as a number) is still the key: the message says what
    was expected, not the value."""
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    message = str(info.value)
    assert "credentials.openai.keys[0]" in message and "number" in message
    assert "7301948562019384" not in message and str(0x19f0a7c3e5b2d4) not in message
