"""Tests of ``hermes_core/config.py``: the ``llm.routing`` section checked at load. A model no
listing provider serves, a provider listed twice, a window or a model name no provider could take
are errors naming the key and line; a model a provider lists or maps, any model for a provider that
lists none, a Chinese model name and a ten-million-token window load."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import load_settings, parse_yaml
from hermes_core.errors import ConfigError


@pytest.mark.parametrize(("routing", "key", "line"), [
    ("    fast_model: gpt-4o-mnii\n", "llm.routing.fast_model", 3),
    ("    rules: [{condition: 'turn_count > 3', model: gtp-4.1}]\n", "llm.routing.rules[0].model", 3),
])
def test_a_model_no_listing_provider_serves_is_an_error_naming_its_key(
        tmp_path: Path, routing: str, key: str, line: int) -> None:
    p = tmp_path / "config.yaml"
    p.write_text("llm:\n  routing:\n" + routing + "    providers:\n"
                 "      - {name: openai, models: [gpt-4o, gpt-4o-mini, gpt-4.1]}\n"
                 "      - {name: anthropic, models: [claude-haiku],"
                 " equivalents: {gpt-4o: claude-haiku}}\n")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    assert e.value.key_path == key and e.value.line == line
    assert "no provider lists it" in str(e.value) and "gpt-4o-mini" in str(e.value)


@pytest.mark.parametrize("routing", [
    "    fast_model: claude-haiku\n",                     # listed by one provider
    "    code_model: gpt-4o\n",                           # an equivalent of another
    "    rules: [{condition: 'turn_count > 3', model: fast_model}]\n",   # a slot, not a model
])
def test_models_a_provider_lists_or_maps_load(tmp_path: Path, routing: str) -> None:
    p = tmp_path / "config.yaml"
    p.write_text("llm:\n  routing:\n" + routing + "    providers:\n"
                 "      - {name: openai, models: [gpt-4o-mini]}\n"
                 "      - {name: anthropic, models: [claude-haiku],"
                 " equivalents: {gpt-4o: claude-haiku}}\n")
    assert load_settings(p).llm.routing.providers


def test_a_provider_listing_no_models_serves_any_model(tmp_path: Path) -> None:
    p = tmp_path / "config.yaml"
    p.write_text("llm:\n  routing:\n    fast_model: house-model\n    providers:\n"
                 "      - {name: openai, models: [gpt-4o]}\n"
                 "      - {name: local, endpoint: 'http://127.0.0.1:9/v1'}\n")
    assert load_settings(p).llm.routing.fast_model == "house-model"


@pytest.mark.parametrize(("providers", "key", "line"), [
    ("      - {name: openai}\n      - {name: anthropic}\n      - {name: openai}\n",
     "llm.routing.providers[2].name", 7),
    ("      - name: openai\n        priority: 1\n      - priority: 2\n        name: openai\n",
     "llm.routing.providers[1].name", 8),
])
def test_a_provider_listed_twice_is_an_error_at_the_second_entrys_line(
        tmp_path: Path, providers: str, key: str, line: int) -> None:
    p = tmp_path / "config.yaml"
    p.write_text("llm:\n  routing:\n    default_model: gpt-4o\n    providers:\n" + providers)
    with pytest.raises(ConfigError) as e:
        load_settings(p, env={})
    assert e.value.key_path == key and e.value.line == line
    assert "'openai' is listed twice" in str(e.value) and "providers[0]" in str(e.value)


# --------------------------------------------------------------------------- routing edges

_ROUTING_EDGE = """
llm:
  routing:
    default_model: gpt-4o
{extra}
"""


@pytest.mark.parametrize(("extra", "key"), [
    ("    context_windows: {gpt-4o: 0}", "llm.routing.context_windows.gpt-4o"),
    ("    context_windows: {gpt-4o: -8192}", "llm.routing.context_windows.gpt-4o"),
    ("    context_windows: {gpt-4o: 500000000}", "llm.routing.context_windows.gpt-4o"),
    ("    fast_model: ''", "llm.routing.fast_model"),
    ("    code_model: 'gpt 4.1'", "llm.routing.code_model"),
    ("    long_context_model: \"gpt-4.1\\t\"", "llm.routing.long_context_model"),
    ("    rules: [{condition: 'chars > 9', model: \"gpt-4o\\u200b\"}]", "llm.routing.rules[0].model"),
    ("    providers: [{name: openai, models: ['gpt-4o', ' gpt-4o-mini']}]",
     "llm.routing.providers[0].models[1]"),
    ("    providers: [{name: openai, equivalents: {gpt-4o: 'gpt 4o'}}]",
     "llm.routing.providers[0].equivalents.gpt-4o"),
])
def test_a_routing_window_or_model_name_no_provider_could_take_is_an_error_naming_its_key(
        extra: str, key: str) -> None:
    with pytest.raises(ConfigError) as ei:
        parse_yaml(_ROUTING_EDGE.format(extra=extra), file="c.yaml")
    assert ei.value.key_path == key, str(ei.value)
    assert ei.value.line == 5 and "c.yaml" in str(ei.value)


def test_a_model_named_in_chinese_and_a_ten_million_token_window_load() -> None:
    routing = parse_yaml(_ROUTING_EDGE.format(extra=(
        "    fast_model: 通义千问-turbo\n    context_windows: {llama-4-scout: 10000000}\n"
        "    providers: [{name: local, endpoint: 'http://127.0.0.1:8000/v1', "
        "models: [gpt-4o, 通义千问-turbo]}]"))).llm.routing
    assert routing.fast_model == "通义千问-turbo"
    assert routing.context_windows == {"llama-4-scout": 10_000_000}
