"""Tests of ``hermes_core/config_numbers.py``: the range a number setting past the shared ceiling
is told (its own lower bound, the ceiling, the unit its name declares, its default), at the file,
line and full key path, a mapping's entry included."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel

from hermes_core.config import Settings, load_settings, parse_yaml
from hermes_core.config_messages import _field_model
from hermes_core.config_numbers import _number_kind, allowed_range
from hermes_core.errors import ConfigError

#: The unit each word a number setting's name may end in declares ("" for a count, ratio, weight
#: or score: no unit). A setting whose name ends in a word missing here fails
#: ``test_every_number_setting_s_name_is_a_known_unit_or_a_known_unitless_word``: say which.
UNITS = {"s": " seconds", "bytes": " bytes", "days": " days", "tokens": " tokens",
         "token": " tokens", "window": " tokens", "chars": " characters", "char": " characters",
         "rpm": " requests a minute", "tpm": " tokens a minute"}
UNITLESS = frozenset({
    "temperature", "priority", "confidence", "rounds", "seed", "weight", "retry", "workers",
    "failures", "burst", "key", "provider", "strikes", "results",
    "bias", "week", "month", "quarter", "older", "score", "sessions", "k", "threshold", "max",
    "mean", "ratio", "margin", "cap", "turns", "breakpoints", "slack", "water", "target", "share",
    "memory", "user"})
#: Settings whose name says no unit though they have one (a price is named by the part of the
#: call it prices): the unit their range must say.
DECLARED = {f"llm.prices.*.{name}": " USD per million tokens"
            for name in ("input", "output", "cache_write", "cache_read")}


def _unit_word(name: str) -> str:
    """The word of a setting's name that says its unit: the last, or the one before a last
    ``limit``/``budget`` (``memory_char_limit``, ``file_token_budget``)."""
    words = name.split("_")
    return words[-2] if len(words) > 1 and words[-1] in ("limit", "budget") else words[-1]


def _number_settings() -> list[tuple[tuple[str, ...], Any]]:
    """Every number setting of ``Settings``, its path with ``*`` for a mapping key; lists of
    settings are walked into as their items."""
    out: list[tuple[tuple[str, ...], Any]] = []

    def walk(model: type[BaseModel], prefix: tuple[str, ...]) -> None:
        for name, info in model.model_fields.items():
            sub, how = _field_model(info.annotation)
            if sub is not None:
                walk(sub, (*prefix, name, *(("*",) if how == "*" else ())))
            elif _number_kind(info.annotation) is not None:
                out.append(((*prefix, name), info))
    walk(Settings, ())
    return out


def _number_mappings() -> list[tuple[str, ...]]:
    """Every setting of ``Settings`` that maps a name to a number (``skill_utils.weights``)."""
    out: list[tuple[str, ...]] = []

    def walk(model: type[BaseModel], prefix: tuple[str, ...]) -> None:
        for name, info in model.model_fields.items():
            sub, how = _field_model(info.annotation)
            if sub is not None:
                walk(sub, (*prefix, name, *(("*",) if how == "*" else ())))
            elif typing.get_origin(info.annotation) is dict:
                value = typing.get_args(info.annotation)[1]
                if _number_kind(typing.get_args(value)[0] if typing.get_args(value) else value):
                    out.append((*prefix, name))
    walk(Settings, ())
    return out


def test_every_number_setting_s_name_is_a_known_unit_or_a_known_unitless_word() -> None:
    unknown = sorted(".".join(path) for path, _ in _number_settings()
                     if _unit_word(path[-1]) not in (*UNITS, *UNITLESS)
                     and ".".join(path) not in DECLARED)
    assert not unknown, f"say whether these settings' names declare a unit: {unknown}"


@pytest.mark.parametrize(("path", "field"), _number_settings(),
                         ids=lambda p: ".".join(p) if isinstance(p, tuple) else "")
def test_a_number_setting_s_range_says_the_unit_its_name_declares(
        path: tuple[str, ...], field: Any) -> None:
    """``context_engine.retention_days`` is told days, ``memory_char_limit`` characters,
    ``max_rpm`` requests a minute, a price USD per million tokens: the unit of the ceiling and
    of the default alike."""
    unit = DECLARED.get(".".join(path), UNITS.get(_unit_word(path[-1]), ""))
    said = allowed_range(field.metadata, name=path[-1], default=10)
    assert f"at most 1,000,000,000{unit} (default 10{unit})" in said, said


def _unbounded_number_settings() -> list[tuple[tuple[str, ...], object]]:
    """Every whole-number or number setting reached through plain sections (no mapping key or
    list in its path) that declares no upper bound of its own: the shared ceiling bounds it."""
    out: list[tuple[tuple[str, ...], object]] = []

    def walk(model: type[BaseModel], prefix: tuple[str, ...]) -> None:
        for name, info in model.model_fields.items():
            ann = info.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, (*prefix, name))
            elif _number_kind(ann) is not None and not any(
                    isinstance(m, Le | Lt) for m in info.metadata):
                out.append(((*prefix, name), info))
    walk(Settings, ())
    return out


@pytest.mark.parametrize(("path", "field"), _unbounded_number_settings(),
                         ids=lambda p: ".".join(p) if isinstance(p, tuple) else "")
def test_a_huge_number_setting_is_told_its_own_range_and_default(
        tmp_path: Path, path: tuple[str, ...], field: object) -> None:
    """A size or time of 10**14 is told the range that setting takes (its own lower bound, not
    the shared ceiling's negative one), its unit and its default, at the file, line and key."""
    body = "".join(f"{'  ' * i}{key}:\n" for i, key in enumerate(path[:-1]))
    body += f"{'  ' * (len(path) - 1)}{path[-1]}: 100000000000000\n"
    config = tmp_path / "config.yaml"
    config.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(config, home=tmp_path)
    err = info.value
    assert err.key_path == ".".join(path) and err.line == len(path) and err.file == str(config)
    assert "at most 1,000,000,000" in err.reason, err.reason
    metadata = field.metadata  # type: ignore[attr-defined]
    lower = next((m for m in metadata if isinstance(m, Gt | Ge)), None)
    if lower is not None:
        assert "-1,000,000,000" not in err.reason, err.reason
        said = f"greater than {lower.gt:g}" if isinstance(lower, Gt) else f"at least {lower.ge:g}"
        assert said in err.reason, err.reason
    unit = UNITS.get(_unit_word(path[-1]), "")
    assert f"at most 1,000,000,000{unit}" in err.reason, err.reason
    default = field.default  # type: ignore[attr-defined]
    if isinstance(default, int | float):
        shown = f"{int(default):,}" if float(default).is_integer() else f"{default:g}"
        assert f"default {shown}{unit})" in err.reason, err.reason
    else:   # a setting that defaults to null is told no default
        assert "default" not in err.reason, err.reason
    assert "15 digits" in err.reason


def test_a_huge_stream_size_limit_names_its_key_file_range_and_default(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  max_stream_bytes: 100000000000000\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(config, home=tmp_path)
    said = str(info.value)
    assert said.startswith(f"{config}:2, key 'llm.max_stream_bytes': "), said
    assert "greater than 0 and at most 1,000,000,000 bytes" in said, said
    assert "default 268,435,456 bytes" in said, said


def test_a_huge_retention_in_days_is_told_days(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("context_engine:\n  retention_days: 100000000000000\n", file="c.yaml", env={})
    assert "greater than 0 and at most 1,000,000,000 days; got a number of 15 digits" in str(
        info.value), str(info.value)



@pytest.mark.parametrize("field", ["input", "output", "cache_write", "cache_read"])
def test_a_huge_price_is_told_its_unit_though_its_name_says_none(field: str) -> None:
    """A price's name is the part of the call it prices, not its unit: the range says the unit
    ``PriceSettings`` is in (USD per million tokens), as a timeout's says seconds."""
    prices = {"input": "1", "output": "2", field: "100000000000000"}
    body = "llm:\n  prices:\n    gpt-4o:\n" + "".join(f"      {k}: {v}\n" for k, v in prices.items())
    with pytest.raises(ConfigError) as info:
        parse_yaml(body, file="c.yaml", env={})
    assert info.value.key_path == f"llm.prices.gpt-4o.{field}", str(info.value)
    assert "at least 0 and at most 1,000,000,000 USD per million tokens;" in info.value.reason, (
        info.value.reason)


# A number inside a mapping setting: the YAML written under the mapping's key (the entry named
# ENTRY), and the words the error must hold. Every mapping of numbers in Settings is here
# (test_every_mapping_of_numbers_is_tested_entry_by_entry).
ENTRY = "dense"
_MAPPED = {
    ("skill_utils", "weights"): "skill_utils:\n  weights:\n    bm25: 1\n    {entry}: {value}\n",
    ("skill_utils", "gate_thresholds"):
        "skill_utils:\n  gate_thresholds:\n    lexical: 0.2\n    {entry}: {value}\n",
    ("llm", "routing", "context_windows"):
        "llm:\n  routing:\n    context_windows:\n      gpt-4o: 128000\n      {entry}: {value}\n",
}


def test_every_mapping_of_numbers_is_tested_entry_by_entry() -> None:
    assert sorted(_number_mappings()) == sorted(_MAPPED)


@pytest.mark.parametrize("path", sorted(_MAPPED), ids=".".join)
@pytest.mark.parametrize(("value", "said"), [
    ("100000000000000", "15 digits"), ("-100000000000000", "15 digits"),
    (".inf", "finite"), ("1e400", "finite"), ("true", "the boolean true")])
def test_a_bad_number_in_a_mapping_names_the_entry_s_key_and_line(
        path: tuple[str, ...], value: str, said: str) -> None:
    body = _MAPPED[path].format(entry=ENTRY, value=value)
    with pytest.raises(ConfigError) as info:
        parse_yaml(body, file="c.yaml", env={})
    err = info.value
    if "context_windows" in path and value != "true":   # whole numbers with a bound of their own
        said = {"100000000000000": "less than or equal to 100000000", ".inf": "finite",
                "-100000000000000": "greater than 0"}.get(value, "whole number")
    assert (err.file, err.key_path, err.line) == (
        "c.yaml", ".".join((*path, ENTRY)), body.count("\n")), str(err)
    assert said in err.reason, err.reason


SECRET = "sk-ant-api03-" + "Q7x" * 14


@pytest.mark.parametrize("path", sorted(_MAPPED), ids=".".join)
@pytest.mark.parametrize("value", ["100000000000000", ".inf", "-1", "1"])
def test_a_mapping_entry_named_by_a_secret_is_never_shown(
        path: tuple[str, ...], value: str) -> None:
    """A key pasted as an entry's name is masked in the key path and the message, whatever is
    wrong with the entry (its number, or its name for weights: no layer is called that)."""
    body = _MAPPED[path].format(entry=SECRET, value=value)
    try:
        parse_yaml(body, file="c.yaml", env={})
    except ConfigError as e:
        assert SECRET not in str(e) and SECRET[:20] not in str(e), str(e)
        assert e.key_path == ".".join((*path, "<secret-looking key>")), str(e)
        assert e.line == body.count("\n"), str(e)
    else:   # a threshold of -1 or 1 and a window of 1 are taken: the test needs no error there
        assert value in ("1", "-1") and "weights" not in path


def test_a_weight_below_zero_names_its_entry() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml("skill_utils:\n  weights:\n    bm25: 1\n    dense: -2\n", file="c.yaml",
                   env={})
    err = info.value
    assert (err.key_path, err.line) == ("skill_utils.weights.dense", 4), str(err)
    assert "0 or more" in err.reason, err.reason


def _plain_number_settings() -> list[tuple[str, ...]]:
    """Every number setting reached through plain sections (no mapping key or list on the way),
    bounded or not."""
    return [path for path, _ in _number_settings() if "*" not in path
            and all(not isinstance(Settings.model_fields.get(p), list) for p in path)
            and _yaml_at(path, "1") is not None]


def _yaml_at(path: tuple[str, ...], value: str) -> str | None:
    """``value`` written at ``path`` through nested sections; None for a path through a list."""
    model: Any = Settings
    for key in path[:-1]:
        sub, how = _field_model(model.model_fields[key].annotation)
        if sub is None or how:
            return None
        model = sub
    body = "".join(f"{'  ' * i}{key}:\n" for i, key in enumerate(path[:-1]))
    return body + f"{'  ' * (len(path) - 1)}{path[-1]}: {value}\n"


def _reason_of(body: str) -> tuple[str, str] | None:
    """The refused setting's key path and reason; None if ``body`` loads."""
    try:
        parse_yaml(body, file="c.yaml", env={})
    except ConfigError as e:
        return e.key_path or "", e.reason
    return None


_HUGE_BODIES = [*[(".".join(p), lambda v, p=p: _yaml_at(p, v)) for p in _plain_number_settings()],
                *[(".".join(p), lambda v, p=p: _MAPPED[p].format(entry=ENTRY, value=v))
                  for p in sorted(_MAPPED)],
                ("llm.prices.*.input",
                 lambda v: f"llm:\n  prices:\n    gpt-4o:\n      input: {v}\n      output: 2\n")]


@pytest.mark.parametrize("sign", ["", "-"], ids=["positive", "negative"])
@pytest.mark.parametrize(("path", "body"), _HUGE_BODIES,
                         ids=lambda p: p if isinstance(p, str) else "")
def test_a_number_of_400_digits_is_told_what_one_of_15_digits_is_without_its_digits(
        path: str, body: Any, sign: str) -> None:
    """A weight of 10**399 said "expected a number, got a very large number": a float setting
    cannot hold it, so pydantic refused it before the range was checked. It is told the range
    (and default) a 15-digit one is told, the size in digits, never the digits."""
    # 10**14 (10**30 for the seed, which takes 64 bits) is refused by the range it is told
    refused = _reason_of(body(sign + "1" + "0" * 14)) or _reason_of(body(sign + "1" + "0" * 30))
    assert refused is not None
    key, said = refused
    key400, said400 = _reason_of(body(sign + "1" + "0" * 399)) or ("", "")
    assert key400 == key, (key, key400)
    assert said400.rpartition("got ")[0] == said.rpartition("got ")[0], (said, said400)
    assert said400.endswith(f"got a {'negative ' * bool(sign)}number of 400 digits"), said400


@pytest.mark.parametrize(("yaml_body", "key"), [
    ("context_engine:\n  busy_timeout_s: .inf\n", "busy_timeout_s"),
    ("context_engine:\n  recency_bias: .inf\n", "recency_bias"),
    ("context_engine:\n  recency_bias: .nan\n", "recency_bias"),
    ("context_engine:\n  recency_weights:\n    week: .inf\n", "week"),
])
def test_non_finite_context_engine_numbers_are_config_errors(tmp_path: Path, yaml_body: str,
                                                              key: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml_body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, home=tmp_path)
    assert key in str(info.value) and str(path) in str(info.value)


def test_finite_values_still_load(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("context_engine:\n  busy_timeout_s: 86400\n  recency_bias: 2.5\n", encoding="utf-8")
    s = load_settings(path, home=tmp_path)
    assert (s.context_engine.busy_timeout_s, s.context_engine.recency_bias) == (86400, 2.5)


@pytest.mark.parametrize(("body", "key_path"), [
    ("llm:\n  request_timeout_s: 1e400\n", "llm.request_timeout_s"),
    ("llm:\n  request_timeout_s: .inf\n", "llm.request_timeout_s"),
    ("llm:\n  deadline_s: .nan\n", "llm.deadline_s"),
    ("llm:\n  temperature: .nan\n", "llm.temperature"),
    ("llm:\n  max_tokens: 1000000000000000000000000\n", "llm.max_tokens"),
    ("credential_pool:\n  max_wait_s: .inf\n", "credential_pool.max_wait_s"),
    ("credential_pool:\n  retry_budget: 99999999999999999999\n", "credential_pool.retry_budget"),
    ("credential_pool:\n  backoff_max_s: 1e300\n", "credential_pool.backoff_max_s"),
    ("credentials:\n  openai:\n    keys:\n      - key: abcdefgh12345\n        weight: .nan\n",
     "credentials.openai.keys[0].weight"),
    ("credentials:\n  openai:\n    keys:\n      - key: abcdefgh12345\n        max_rpm: 1e400\n",
     "credentials.openai.keys[0].max_rpm"),
    ("skill_utils:\n  weights:\n    bm25: .nan\n", "skill_utils.weights.bm25"),
    ("skill_utils:\n  weights:\n    bm25: -1\n", "skill_utils.weights"),
    ("skill_utils:\n  weights:\n    bm25: 1e300\n", "skill_utils.weights"),
    ("skill_utils:\n  gate_thresholds:\n    lexical: -.inf\n", "skill_utils.gate_thresholds.lexical"),
    ("skill_utils:\n  threshold: 1e300\n", "skill_utils.threshold"),
    ("llm:\n  routing:\n    context_windows:\n      m: 1000000000000000000000\n",
     "llm.routing.context_windows"),
    ("llm:\n  prices:\n    m: {input: .inf, output: 1}\n", "llm.prices.m.input"),
    ("prompt:\n  max_file_bytes: 1e400\n", "prompt.max_file_bytes"),
    ("llm:\n  seed: 100000000000000000000000\n", "llm.seed"),
    ("llm:\n  max_stream_bytes: 100000000000000\n", "llm.max_stream_bytes"),
])
def test_an_infinite_or_huge_number_is_one_config_error_with_key_and_line(
        tmp_path: Path, body: str, key_path: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, home=tmp_path)
    err = info.value
    assert err.key_path is not None and err.key_path.startswith(key_path), str(err)
    assert err.line == body.count("\n") and err.file == str(path)
    assert "Input should" not in err.reason and "pydantic" not in err.reason   # the config's words


@pytest.mark.parametrize(("value", "said"), [
    ("0", "greater than 0"), ("-1", "greater than 0"), ("true", "boolean"),
    ("256MiB", "whole number"), ("1.5", "whole number")])
def test_a_stream_size_limit_not_a_positive_whole_number_is_a_config_error(
        tmp_path: Path, value: str, said: str) -> None:
    """``llm.max_stream_bytes`` of 0 would cut every stream at its first byte (and, read as "no
    limit", none): each is refused at the file's line, naming the key."""
    path = tmp_path / "config.yaml"
    path.write_text(f"llm:\n  max_stream_bytes: {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=said) as info:
        load_settings(path, home=tmp_path)
    assert info.value.key_path == "llm.max_stream_bytes" and info.value.line == 2
    assert parse_yaml("llm:\n  max_stream_bytes: 1048576\n", env={}).llm.max_stream_bytes == 2**20


def test_large_but_plausible_numbers_still_load(tmp_path: Path) -> None:
    s = parse_yaml("llm:\n  max_tokens: 200000\n  seed: 9223372036854775807\n"
                   "credential_pool:\n  redis_state_ttl_s: 31536000\n"
                   "llm_unused: null\n".replace("llm_unused: null\n", ""), env={})
    assert (s.llm.max_tokens, s.llm.seed, s.credential_pool.redis_state_ttl_s) == (
        200000, 2**63 - 1, 31536000)


@pytest.mark.parametrize(("text", "path", "expected"), [
    ("llm:\n  max_tokens: true\n", "llm.max_tokens", "expected a whole number (an integer)"),
    ("llm:\n  max_tokens: yes\n", "llm.max_tokens", "expected a whole number (an integer)"),
    ("llm:\n  temperature: true\n", "llm.temperature", "expected a number"),
    ("context_engine:\n  max_results: false\n", "context_engine.max_results",
     "expected a whole number (an integer)"),
    ("llm:\n  seed: no\n", "llm.seed", "expected a whole number (an integer)"),
    ("skill_utils:\n  weights:\n    bm25: true\n", "skill_utils.weights.bm25", "expected a number"),
])
def test_a_boolean_is_not_read_as_a_number(text, path, expected):
    """pydantic turns True into 1 for a number: ``max_tokens: yes`` capped every reply at one
    token, ``temperature: true`` meant 1.0 and ``max_results: false`` quietly turned recall off."""
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    err = info.value
    assert err.key_path == path and err.line == text.count("\n")
    assert f"{expected}, got the boolean" in str(err)
