"""A config whose credentials section has the wrong shape must not echo the key in its error."""

from __future__ import annotations

import pytest

from hermes_core.config import parse_yaml
from hermes_core.errors import ConfigError

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
