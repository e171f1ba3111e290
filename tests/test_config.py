"""Tests of ``hermes_core/config.py``.

Config: the shared layout loads, interpolation, precedence, and every error names file/key/line.
The keys a config holds (read, stripped, never shown) are in ``test_config_keys.py``; the
``llm.routing`` checks at load in ``test_config_routing.py``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes_core.config import Settings, load_settings, parse_yaml
from hermes_core.config_messages import known_paths
from hermes_core.errors import ConfigError

LAYOUT = Path(__file__).parent / "data" / "config-layout.yaml"
EXAMPLE = Path(__file__).parent.parent / "config.example.yaml"


def test_shared_layout_loads_and_skips_unset_keys(caplog):
    with caplog.at_level(logging.WARNING):
        s = load_settings(LAYOUT, env={"OPENAI_API_KEY": "sk-one-0123456789abcdefgh"})
    assert [p.name for p in s.llm.routing.providers] == ["openai", "anthropic", "together", "local"]
    assert s.provider("together").endpoint == "https://api.together.xyz/v1"
    assert s.provider("local").kind == "openai"
    assert len(s.credentials_for("openai")) == 1  # OPENAI_API_KEY_2 unset -> skipped
    assert s.credentials_for("anthropic") == []
    assert "credentials.anthropic.keys[0].key is empty or unset" in caplog.text
    assert "sk-one" not in caplog.text


def test_example_config_loads():
    s = load_settings(EXAMPLE, env={})
    assert s.llm.routing.default_model


def test_interpolation_default_and_env():
    s = parse_yaml("home: ${H:-/tmp/x}\nllm:\n  routing:\n    default_model: ${M}\n", env={"M": "m1"})
    assert s.home == "/tmp/x" and s.llm.routing.default_model == "m1"


def test_env_key_fallback_when_config_names_none():
    import os

    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-from-env-0123456789"
    try:
        s = parse_yaml("llm:\n  routing:\n    providers: [{name: anthropic}]\n", env={})
        creds = s.credentials_for("anthropic")
        assert len(creds) == 1 and creds[0].secret == "sk-ant-from-env-0123456789"
        assert "sk-ant" not in repr(creds)
    finally:
        del os.environ["ANTHROPIC_API_KEY"]


def test_key_fallback_reads_the_env_mapping_given_not_the_process(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process-0123456789abcdef")
    s = load_settings({}, env={"OPENAI_API_KEY": "sk-given-0123456789abcdef"})
    assert [c.secret for c in s.credentials_for("openai")] == ["sk-given-0123456789abcdef"]
    # an override keeps the mapping; an empty mapping means no key, whatever the process has
    assert [c.secret for c in s.with_overrides(**{"llm.stream": False}).credentials_for("openai")] == [
        "sk-given-0123456789abcdef"]
    assert load_settings({}, env={}).credentials_for("openai") == []
    assert "sk-given" not in repr(s) and "sk-given" not in str(s.model_dump())
    # no mapping given: the process environment, read when asked
    assert [c.secret for c in load_settings({}).credentials_for("openai")] == ["sk-process-0123456789abcdef"]


@pytest.mark.parametrize("text,key_path,line,reason", [
    ("llm:\n  bogus: 1\n", "llm.bogus", 2, "unknown key"),
    ("llm:\n  stream: maybe\n", "llm.stream", 2, "boolean"),
    ("llm:\n  routing:\n    providers:\n      - name: openai\n        priority: high\n",
     "llm.routing.providers[0].priority", 5, "integer"),
    ("home: ${UNSET_VAR}\n", "home", 1, "UNSET_VAR"),
    ("credential_pool:\n  retry_budget: -1\n", "credential_pool.retry_budget", 2, "greater than"),
    ("credential_pool:\n  redis_queue_grace_s: -1\n", "credential_pool.redis_queue_grace_s", 2,
     "greater than"),
    ("credential_pool:\n  redis_queue_poll_s: 0\n", "credential_pool.redis_queue_poll_s", 2,
     "greater than"),
    ("credential_pool:\n  redis_fleet_queue: sometimes\n", "credential_pool.redis_fleet_queue", 2,
     "boolean"),
    ("llm:\n  stream: true\n  stream: false\n", "llm.stream", 3, "duplicate key"),
    ("context_engine:\n  enabled: true\n  retention_days: 0\n", "context_engine.retention_days", 3,
     "greater than"),
    ("context_engine:\n  retention_days: .inf\n", "context_engine.retention_days", 2, "finite"),
    ("context_engine:\n  max_sessions: -5\n", "context_engine.max_sessions", 2, "greater than"),
    ("context_engine:\n  max_sessions: lots\n", "context_engine.max_sessions", 2, "integer"),
])
def test_errors_name_file_key_and_line(text, key_path, line, reason):
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="conf.yaml", env={})
    e = info.value
    assert (e.file, e.key_path, e.line) == ("conf.yaml", key_path, line)
    assert reason in str(e) and f"conf.yaml:{line}" in str(e)


def test_bad_yaml_names_line():
    with pytest.raises(ConfigError) as info:
        parse_yaml("llm:\n  stream: [1,\n", file="c.yaml", env={})
    assert info.value.line is not None and "invalid YAML" in str(info.value)


def test_top_level_must_be_mapping():
    with pytest.raises(ConfigError, match="mapping"):
        parse_yaml("- a\n- b\n", file="c.yaml", env={})


@pytest.mark.parametrize("payload,reason", [(b"\x00\x01binary", "binary"), (b"llm: \xff\xfe\n", "UTF-8")])
def test_binary_and_non_utf8_files(tmp_path, payload, reason):
    p = tmp_path / "c.yaml"
    p.write_bytes(payload)
    with pytest.raises(ConfigError, match=reason) as info:
        load_settings(p, env={})
    assert str(p) in str(info.value)


def test_missing_and_directory(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml", env={})
    with pytest.raises(ConfigError, match="directory"):
        load_settings(tmp_path, env={})


def test_precedence_argument_env_yaml_default(tmp_path):
    p = tmp_path / "c.yaml"
    from_yaml = tmp_path / "from-yaml"
    from_yaml.mkdir()
    p.write_text(f"home: {from_yaml}\n", encoding="utf-8")
    assert load_settings(env={}).home == "~/.hermes"                      # default
    assert load_settings(p, env={}).home == str(from_yaml)                # YAML
    from_env, arg = tmp_path / "from-env", tmp_path / "arg"   # a named home must exist
    from_env.mkdir()
    arg.mkdir()
    assert load_settings(p, env={"HERMES_HOME": str(from_env)}).home == str(from_env)  # env
    assert load_settings(p, env={"HERMES_HOME": str(from_env)}, home=arg).home == str(arg)  # argument


def test_home_config_yaml_is_found(tmp_path):
    (tmp_path / "config.yaml").write_text("llm:\n  stream: false\n", encoding="utf-8")
    assert load_settings(env={"HERMES_HOME": str(tmp_path)}).llm.stream is False


@pytest.mark.parametrize("kind", ["folder", "dangling-link", "link-loop"])
def test_a_home_config_yaml_that_is_not_a_file_is_an_error_naming_it(tmp_path, kind):
    """A config.yaml that is there but cannot be read as a file (a folder, a link to a dotfiles
    checkout that is not there, a link loop) is the user's config gone wrong: said, naming it,
    never skipped for the defaults (the chat would run without the user's keys and routing)."""
    target = tmp_path / "config.yaml"
    if kind == "folder":
        target.mkdir()
    elif kind == "dangling-link":
        target.symlink_to(tmp_path / "dotfiles" / "hermes.yaml")
    else:
        (tmp_path / "loop.yaml").symlink_to(target)
        target.symlink_to(tmp_path / "loop.yaml")
    with pytest.raises(ConfigError) as err:
        load_settings(env={"HERMES_HOME": str(tmp_path)})
    assert str(target) in str(err.value)


def test_overrides_are_immutable_copies():
    s = load_settings({"llm": {"stream": True}}, env={})
    t = s.with_overrides(**{"llm.stream": False})
    assert s.llm.stream is True and t.llm.stream is False
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error type
        s.llm.stream = False  # type: ignore[misc]


def _field_paths(model: type, prefix: str = "") -> list[str]:
    from pydantic import BaseModel

    out = []
    for name, field in model.model_fields.items():
        if name == "source":
            continue
        path = f"{prefix}{name}"
        out.append(path)
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_field_paths(ann, path + "."))
    return out


def test_example_config_documents_every_key():
    from hermes_core.config import KeySettings, ProviderCredentials, ProviderSettings, Settings

    text = EXAMPLE.read_text(encoding="utf-8")
    keys = {p.rsplit(".", 1)[-1] for p in _field_paths(Settings)}
    keys |= set(ProviderSettings.model_fields) | set(KeySettings.model_fields)
    keys |= set(ProviderCredentials.model_fields)
    missing = sorted(k for k in keys if f"{k}:" not in text)
    assert not missing, f"config.example.yaml does not document: {missing}"


# config.example.yaml says it lists "every key with its default": a user who copies it must get the
# defaults. Its injection_categories once lacked output-hijack and learned, so copying the file
# silently turned two injection signals off.

def test_example_config_loads_to_the_defaults():
    from hermes_core.config import Settings

    copied = load_settings(EXAMPLE, env={}).model_dump(mode="json", exclude={"source"})
    default = Settings(source=None).model_dump(mode="json", exclude={"source"})
    assert copied == default

def test_a_fifo_or_device_as_config_is_refused_not_read(tmp_path):  # type: ignore[no-untyped-def]
    import os

    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as e:          # used to block forever in read_bytes()
        load_settings(fifo, env={})
    assert str(fifo) in str(e.value) and "not a regular file" in str(e.value)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings("/dev/zero", env={})


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


# ``context_engine`` numbers that are infinite or NaN (``busy_timeout_s: .inf`` for
# "wait forever") are config errors naming the key and line; ``.inf`` crashed the memory database's
# open with an OverflowError outside the error tree, taking the agent down at start-up.


def test_default_engine_opens_with_a_long_timeout(tmp_path: Path) -> None:
    from hermes_core.agent.context_engine import ContextEngine

    path = tmp_path / "config.yaml"
    path.write_text("context_engine:\n  busy_timeout_s: 1000000\n", encoding="utf-8")
    with ContextEngine.from_settings(load_settings(path, home=tmp_path)) as engine:
        assert engine.stats()["sessions"] == 0


@pytest.mark.parametrize("seconds", [3e6, 1e7, 1e12])
def test_a_long_busy_timeout_is_capped_not_wrapped_to_zero(tmp_path: Path, seconds: float) -> None:
    """SQLite's busy timeout is a C int of milliseconds: 3e6 s (about a month) used to wrap to 0,
    so a writer gave up at once with 'database is locked' instead of waiting longer."""
    from hermes_core.agent.episodic.store import SessionStore

    with SessionStore(tmp_path / "sessions.db", busy_timeout_s=seconds) as store:
        assert store.connection.execute("PRAGMA busy_timeout").fetchone()[0] == 2**31 - 1
# --------------------------------------------------------------------------- hostile and mistaken input

ALIAS_BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]\n"
    for i in range(7))


@pytest.mark.parametrize("text", [
    "llm:\n  routing:\n    fast_model:\n",
    "home:\n",
    "llm:\n",
    "skill_utils:\n  folders:\n",
])
def test_empty_values_load_as_null_then_default(text):
    s = parse_yaml(text, file="c.yaml", env={})
    assert s.llm.routing.fast_model is None and s.home == "~/.hermes"


def test_empty_list_item_is_validated_with_its_path():
    text = "llm:\n  routing:\n    providers:\n      - name: openai\n        models:\n          -\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert info.value.key_path == "llm.routing.providers[0].models[0]" and info.value.line == 6
    assert "empty value" in str(info.value)


def test_recursive_alias_is_an_error_naming_the_key():
    with pytest.raises(ConfigError) as info:
        parse_yaml("llm: &a\n  routing: *a\n", file="c.yaml", env={})
    assert "recursive alias" in str(info.value) and info.value.key_path == "llm.routing"


def test_alias_bomb_is_rejected_by_the_node_budget():
    assert len(ALIAS_BOMB) < 300
    with pytest.raises(ConfigError) as info:
        parse_yaml(ALIAS_BOMB, file="c.yaml", env={})
    assert "alias" in str(info.value) and "c.yaml" in str(info.value)


def test_nesting_500_deep_is_one_config_error():
    with pytest.raises(ConfigError) as info:
        parse_yaml("a: " + "[" * 500 + "]" * 500 + "\n", file="c.yaml", env={})
    assert "levels deep" in str(info.value) and info.value.line == 1


@pytest.mark.parametrize("text,why", [
    ("1: 2\n", "keys must be text"),
    ("? [a]\n: 1\n", "keys must be plain text"),
    ("llm:\n  max_tokens: " + "9" * 5000 + "\n", "a number of 5000 digits"),
    ("a: !!python/object:os.system x\n", "unreadable value"),
    ("a: 1\n---\nb: 2\n", "invalid YAML"),
])
def test_malformed_input_is_one_config_error(text, why):
    with pytest.raises(ConfigError) as info:
        parse_yaml(text, file="c.yaml", env={})
    assert why in str(info.value) and "c.yaml" in str(info.value)


# --------------------------------------------------------------------------- property: any text

from hypothesis import given  # noqa: E402
from hypothesis import settings as hsettings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# a key's random run (mixed case and digits): glued to a word by the strategy ("openaisk-..."),
# it is still a key; a letters-only run glued to a word is a name ("task-...", decision 120)
PASTED_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs"
_YAML_BITS = st.sampled_from(["llm:", "  routing:", "    fast_model:", "credentials:", "  - ", "- ",
                              "&a ", "*a", "[", "]", "{", "}", ": ", "\n", "  ", "openai", "keys",
                              "key: ${X}", "1", "true", "~", "'", '"', "? ", "!!str ", "<<: *a", "#",
                              PASTED_KEY])


@hsettings(max_examples=200, deadline=None)
@given(st.lists(_YAML_BITS, max_size=40).map("".join) | st.text(max_size=200))
def test_any_yaml_text_is_settings_or_one_config_error(text):
    try:
        s = parse_yaml(text, file="c.yaml", env={})
    except ConfigError as e:
        assert str(e).startswith("c.yaml") and PASTED_KEY not in str(e)
    else:
        assert s.source == "c.yaml"


# A config of real key paths (a pasted key or a number, null, a flow mapping as one key), each
# value one of the shapes YAML can write, a line sometimes repeated (a duplicate key), saved with
# a BOM, CRLF or a tab in place of an indent: a Settings, or one ConfigError naming the file, the
# line and (inside a section) the key path, never the key.
_PATHS = [tuple("openai" if k == "*" else k for k in p) for p in known_paths(Settings)]
_VALUES = st.sampled_from([
    "", "~", "&a 1", "*a", "!!python/object:os.system {}", "!!python/name:os.system", "!foo x",
    "!!binary aGVsbG8=", "!!set {a, b}", "!!timestamp 2024-01-01", "!!float 1", "!!str 5",
    "1" + "0" * 400, "-1" + "0" * 30, ".nan", ".inf", "-.inf", "1e400", "0x1F", "[]", "{}",
    "{1: 2}", "{null: 1}", "{.nan: 1}", "yes", PASTED_KEY, f"'{PASTED_KEY}'", "12:30:00", "[*a]",
    "{<<: *a}", "&b [1, *b]", "|\n  text", "\t1", "!!omap [a: 1]"])
_ODD_KEYS = st.sampled_from(["1", "null", "~", "true", ".nan", "[a]", "{a: 1}", "<<",
                             PASTED_KEY, "'x'"])


@st.composite
def _config_bytes(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        path = list(draw(st.sampled_from(_PATHS)))
        if draw(st.booleans()) and draw(st.booleans()):
            path[-1] = draw(_ODD_KEYS)
        lines += ["  " * depth + f"{key}:" for depth, key in enumerate(path[:-1])]
        lines.append("  " * (len(path) - 1) + f"{path[-1]}: {draw(_VALUES)}")
        if draw(st.integers(0, 5)) == 0:
            lines.append(lines[-1])
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 4)) == 0:
        text = text.replace("  ", "\t", 1)
    return (b"\xef\xbb\xbf" * draw(st.booleans())
            + text.replace("\n", draw(st.sampled_from(["\n", "\r\n"]))).encode())


@hsettings(max_examples=300, deadline=None)
@given(_config_bytes())
def test_any_config_of_real_keys_and_odd_yaml_loads_or_is_one_config_error_naming_its_place(
        tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    home = tmp_path_factory.mktemp("home")
    config = home / "config.yaml"
    config.write_bytes(data)
    try:
        load_settings(config, home=home, env={"OPENAI_API_KEY": PASTED_KEY})
    except ConfigError as e:
        assert PASTED_KEY not in str(e) and PASTED_KEY[:14] not in str(e), str(e)
        assert e.file == str(config) and e.line is not None, str(e)
        text = data.decode("utf-8-sig").replace("\r\n", "\n").splitlines()
        indented = text[e.line - 1].startswith((" ", "\t")) if e.line <= len(text) else False
        assert e.key_path or not indented, str(e)   # a top-level line has no section to name


# Every number a config sets is finite and of a size a setting can have: 1e400 reads as infinity,
# and an infinite or astronomically large timeout, limit, budget or weight is a mistake that would
# otherwise reach a timer, SQLite or a provider and fail far from the file.


@pytest.mark.parametrize("body", [
    "llm:\n  routing:\n    providers:\n      - name: '" + "x" * 990_000 + "'\n",
    "llm:\n  routing:\n    rules:\n      - condition: '" + "x==" * 330_000 + "'\n        model: m\n",
    "llm:\n  max_tokens: '${" + "X" * 990_000 + "}'\n",
    "llm:\n  routing:\n    providers:\n      - name: '" + "x " * 495_000 + "'\n",
])
def test_a_megabyte_value_is_named_in_a_short_message(body: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(body, file="c.yaml", env={})
    assert len(str(info.value)) < 400 and str(info.value).startswith("c.yaml:")


@pytest.mark.parametrize("value", ["0", "-3", "soon", ".nan", ".inf"])
def test_a_bad_cache_idle_limit_names_its_key_and_line(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml(f"skill_utils:\n  cache_idle_days: {value}\n", file="c.yaml", env={})
    e = info.value
    assert (e.file, e.key_path, e.line) == ("c.yaml", "skill_utils.cache_idle_days", 2)


def test_the_cache_idle_limit_is_thirty_days_unless_set() -> None:
    assert parse_yaml("{}", file="c.yaml", env={}).skill_utils.cache_idle_days == 30.0
    assert parse_yaml("skill_utils:\n  cache_idle_days: 7.5\n", file="c.yaml",
                      env={}).skill_utils.cache_idle_days == 7.5


def test_the_default_jieba_cache_folder_is_the_users_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # one shared /tmp/hermes-core-jieba: the second user of a machine could not write it, fell
    # back to jieba's own /tmp/jieba.cache (the first user's too, mode 600), and every command that
    # segments Chinese (prompt, skills list) printed jieba's "Dump cache file failed" traceback
    import os
    import tempfile

    from hermes_core.config import jieba_cache_dir_setting

    monkeypatch.delenv("HERMES_JIEBA_CACHE", raising=False)
    path = jieba_cache_dir_setting()
    assert os.path.dirname(path) == tempfile.gettempdir()
    getuid = getattr(os, "getuid", None)   # Windows: the temp dir is the user's already
    assert os.path.basename(path) == ("hermes-core-jieba" if getuid is None
                                      else f"hermes-core-jieba-{getuid()}")
    monkeypatch.setenv("HERMES_JIEBA_CACHE", "/srv/cache/jieba")
    assert jieba_cache_dir_setting() == "/srv/cache/jieba"
