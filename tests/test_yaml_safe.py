"""Tests of ``hermes_core/yaml_safe.py``: hostile YAML is one YamlLimitError, cheaply.

The libyaml loader reads a megabyte in milliseconds; the pure-Python one takes seconds. The
fallback to it exists for the escapes libyaml refuses (half a surrogate pair), not for every
malformed file: a 1 MB config must be rejected in well under a second.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from hermes_core import yaml_safe
from hermes_core.yaml_safe import YamlLimitError, load_yaml

needs_libyaml = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")


@pytest.fixture
def loaders_used(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    used: list[Any] = []
    real = yaml.parse

    def spy(text: str, Loader: Any) -> Any:
        used.append(Loader)
        return real(text, Loader=Loader)

    monkeypatch.setattr(yaml, "parse", spy)
    return used


@needs_libyaml
@pytest.mark.parametrize("text", ["k" * 5000 + ": 1\n", "a: [1\n", "a: b: c\n", "- a\nb: 1\n"])
def test_malformed_yaml_is_not_parsed_again_by_the_slow_loader(loaders_used: list[Any], text: str) -> None:
    with pytest.raises(YamlLimitError, match="invalid YAML"):
        load_yaml(text)
    assert yaml.SafeLoader not in loaders_used


@needs_libyaml
def test_an_escape_libyaml_refuses_is_read_by_the_pure_python_loader(loaders_used: list[Any]) -> None:
    data, _ = load_yaml('a: "half an emoji \\ud83d"\n')
    assert data == {"a": "half an emoji \ud83d"} and yaml.SafeLoader in loaders_used


def test_a_number_of_thousands_of_digits_is_named_as_such_not_with_pythons_advice() -> None:
    with pytest.raises(YamlLimitError) as info:
        load_yaml("llm:\n  max_tokens: " + "9" * 5000 + "\n")
    assert "5000 digits" in info.value.reason and "integer string conversion" not in info.value.reason
    assert info.value.line == 2 and info.value.path == ("llm", "max_tokens")


def test_an_error_at_the_end_of_the_file_names_a_line_of_the_file() -> None:
    with pytest.raises(YamlLimitError) as info:
        load_yaml("llm:\n  max_tokens: 5\n  stream: [\n")
    assert info.value.line is not None and 1 <= info.value.line <= 3


def test_a_short_text_is_parsed_once_into_data_without_a_node_tree(loaders_used: list[Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # no node tree is built and walked: data comes from the events; a text too short to hold more
    # entries than allowed is not counted first either
    def no_tree(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a node tree was built")

    monkeypatch.setattr(yaml, "compose", no_tree)
    data, lines = load_yaml("a: &x [1, 'b', {c: 2}]\nd: *x\n")
    assert data == {"a": [1, "b", {"c": 2}], "d": [1, "b", {"c": 2}]}
    assert data["a"] is not data["d"] and lines["d"] == 2 and lines["a[2].c"] == 1
    assert len(loaders_used) == 1


@pytest.mark.parametrize("text,why", [
    ("a: &x 1\nb: &x 2\n", "duplicate anchor"), ("a: *nowhere\n", "undefined alias"),
    ("a: 1\n---\nb: 2\n", "single document"), ("a: &x [1, *x]\n", "recursive alias"),
    ("a: !!map x\n", "unreadable value"), ("<<: {a: 1}\n", "merge keys"),
])
def test_what_a_node_tree_would_refuse_is_refused_with_its_line(text: str, why: str) -> None:
    with pytest.raises(YamlLimitError, match=why) as info:
        load_yaml(text)
    assert info.value.line is not None


def test_a_long_text_over_the_entry_limit_is_refused_before_anything_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_build(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("data was built")

    monkeypatch.setattr(yaml_safe._Builder, "run", no_build)
    text = "".join(f"k{i}: {i}\n" for i in range(30))
    with pytest.raises(YamlLimitError, match="more than 20 entries"):
        load_yaml(text, max_nodes=20)


def test_a_control_character_is_refused_naming_its_line() -> None:
    """The reader's error carries a character position, not a line: the message named none."""
    with pytest.raises(YamlLimitError) as info:
        load_yaml('a: 1\nb: 2\nc: "x\x1b[2Jy"\n')
    assert info.value.line == 3 and "control characters" in info.value.reason


def test_a_tab_in_the_indentation_is_named_as_a_tab() -> None:
    """"found character that cannot start any token" does not say which: editors show a tab as
    spaces, so the person looking at line 2 saw nothing wrong."""
    with pytest.raises(YamlLimitError) as info:
        load_yaml("llm:\n\tmax_tokens: 100\n")
    assert info.value.line == 2 and "tab" in info.value.reason and "spaces" in info.value.reason


@pytest.mark.parametrize(("text", "line", "path"), [
    ("llm:\n\trouting:\n", 2, ("llm",)),
    ("llm:\n  routing:\n    providers: [a, b\n", 3, ("llm", "routing", "providers")),
    ("llm:\n  routing:\n    fast_model: a\n    x\n", 4, ("llm", "routing")),
    ("credentials:\n  openai:\n    keys:\n      - key: a\n      - [b\n", 5,
     ("credentials", "openai", "keys", 1)),
    ("\tllm: 1\n", 1, ()),
])
def test_a_syntax_error_names_the_key_path_the_parser_was_in(
        text: str, line: int, path: tuple[Any, ...]) -> None:
    """A tab, an unclosed list or a line with no colon inside a section said only the line: it
    names the section the parser was reading (a top-level one, nothing more to name)."""
    with pytest.raises(YamlLimitError) as info:
        load_yaml(text)
    assert (info.value.line, info.value.path) == (line, path), info.value


@pytest.mark.parametrize(("text", "line", "path"), [
    # the tab line is dense's, not bm25's: a value that began on its key's line is no key path
    # for the lines after it (YAML reads the tab as no indentation at all)
    ("skill_utils:\n  weights:\n    bm25: 1\n\tdense: 2\n", 4, ("skill_utils", "weights")),
    ("llm:\n  model: gpt\n    more words\n\tx: 1\n", 4, ("llm",)),
    ("llm:\n  model: \"gpt\"\n\tx: 1\n", 3, ("llm",)),
    ("llm:\n  model: 'gpt'\n\tx: 1\n", 3, ("llm",)),
    ("llm:\n  model: &m gpt\n\tx: 1\n", 3, ("llm",)),
    ("llm:\n  routing:\n    fast: a\n  other: 1\n\tx: 2\n", 5, ("llm",)),
    ("credentials:\n  openai:\n    keys:\n      - key: a\n        label: b\n\t- key: c\n", 6,
     ("credentials", "openai", "keys", 0)),
    # as with a comment or an alias ending the value, which the parser had already given
    ("llm:\n  model: gpt # the default\n\tx: 1\n", 3, ("llm",)),
    # nothing after the key on its line, or a block scalar: the next lines are its value
    ("llm:\n  model:\n\tx: 1\n", 3, ("llm", "model")),
    ("llm:\n  model: # the default\n\tx: 1\n", 3, ("llm", "model")),
    ("llm:\n  system: |\n    hello\n\tx\n", 4, ("llm", "system")),
    ("llm:\n  system: >-\n    hello\n\tx\n", 4, ("llm", "system")),
    # the error on the key's own line: it is that key's
    ("llm:\n  model: a: b\n", 2, ("llm",)),
    ("llm:\n  model: \"a\\qb\"\n", 2, ("llm", "model")),
    ("llm:\n  routing:\n    fast_model: \"abc\n", 3, ("llm", "routing", "fast_model")),
])
def test_a_line_after_a_value_begun_on_its_key_s_line_is_named_by_the_mapping_not_the_key(
        text: str, line: int, path: tuple[Any, ...]) -> None:
    """``bm25: 1`` then a tab-indented ``dense: 2`` named bm25 for dense's line: the parser had
    not given the value (it looks one line ahead for a ``:``), so bm25 was still open. A value
    that began on its key's line does not own the lines after it: the mapping holding the key
    is named, as when a comment ends the value."""
    with pytest.raises(YamlLimitError) as info:
        load_yaml(text)
    assert (info.value.line, info.value.path) == (line, path), info.value
