"""YAML -> validated, typed settings, loaded once.

Precedence: argument > environment > YAML > default. Every error names the file, the key path and
the line. ``${VAR}`` and ``${VAR:-default}`` are interpolated in string values; an unset variable
with no default is an error, except in a credential key, where the key is skipped with a warning so
one config serves users who hold only some keys.

The sections' types are in :mod:`hermes_core.config_sections`; this module reads the file and the
environment, checks what spans sections (rules against providers, unused credentials) and holds
``Settings``, the whole. Every name of both is importable from here.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, ValidationError

from hermes_core.agent.routing.rules import unserved_models, validate_condition
from hermes_core.config_home import DEFAULT_HOME, check_home, check_named_home
from hermes_core.config_layers import check_layer_weights
from hermes_core.config_messages import (
    NOT_HEADER_SAFE,
    describe_value,
    explain_error,
    header_safe,
    provider_shown,
    safe_path,
)
from hermes_core.config_sections import (
    KNOWN_PROVIDER_TYPES,
    MAX_CONTEXT_WINDOW,
    ClassifierSettings,
    CompactionSettings,
    ContextEngineSettings,
    CredentialPoolSettings,
    GateWeightSettings,
    KeySettings,
    LLMSettings,
    ModelName,
    PriceSettings,
    PromptSettings,
    ProviderCredentials,
    ProviderSettings,
    RecencyWeights,
    RoutingSettings,
    RuleSettings,
    SectionModel,
    SkillSettings,
    Window,
)
from hermes_core.errors import ConfigError
from hermes_core.redact import MIN_SUBSTRING, Redactor, register_secrets, url_passwords
from hermes_core.types import Credential, clean_text, fingerprint
from hermes_core.yaml_safe import Interpolate, YamlLimitError, format_path, load_yaml

__all__ = [
    "ENV_KEYS", "KNOWN_PROVIDER_TYPES", "MAX_CONFIG_BYTES", "MAX_CONTEXT_WINDOW",
    "ClassifierSettings", "CompactionSettings", "ContextEngineSettings", "CredentialPoolSettings",
    "GateWeightSettings", "KeySettings", "LLMSettings", "ModelName", "PriceSettings",
    "PromptSettings", "ProviderCredentials", "ProviderSettings", "RecencyWeights",
    "RoutingSettings", "RuleSettings", "SectionModel", "Settings", "SkillSettings", "Window",
    "jieba_cache_dir_setting", "jieba_disabled", "load_settings", "parse_yaml",
    "register_environment_keys", "warn_short_keys",
]

log = logging.getLogger("hermes_core.config")

MAX_CONFIG_BYTES = 1_000_000
ENV_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class Settings(SectionModel):
    """The whole configuration. ``source`` is the file it came from (None for dicts/defaults)."""

    home: str = DEFAULT_HOME
    llm: LLMSettings = LLMSettings()
    credentials: dict[str, ProviderCredentials] = Field(default_factory=dict)
    credential_pool: CredentialPoolSettings = CredentialPoolSettings()
    context_engine: ContextEngineSettings = ContextEngineSettings()
    skill_utils: SkillSettings = SkillSettings()
    prompt: PromptSettings = PromptSettings()
    source: str | None = Field(None, exclude=True)
    # The provider-key variables (ENV_KEYS) of the ``env`` mapping given to load_settings; None means
    # "read the process environment when asked". Private: never dumped, never in a repr.
    _env_keys: dict[str, str] | None = PrivateAttr(None)
    _redactor: Redactor | None = PrivateAttr(None)

    @property
    def home_path(self) -> Path:
        return Path(os.path.expanduser(self.home))

    def provider(self, name: str) -> ProviderSettings | None:
        return next((p for p in self.llm.routing.providers if p.name == name), None)

    def credentials_for(self, provider: str) -> list[Credential]:
        """Usable keys for a provider; falls back to ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``."""
        p = self.provider(provider)
        endpoint = p.endpoint if p else None
        creds = self.credentials.get(provider)
        # A key never holds whitespace: one pasted with a newline or CR (a CRLF .env file) would
        # be refused by the HTTP client as an invalid header and surface as a connection error.
        keys = [(i, k) for i, k in enumerate(creds.keys if creds else ()) if k.key.strip()]
        if not keys:
            kind = p.kind if p else provider
            env = ENV_KEYS.get(provider) or (ENV_KEYS.get(kind) if provider == kind else None)
            source = os.environ if self._env_keys is None else self._env_keys
            secret = source.get(env, "").strip() if env else ""
            return [Credential(provider, secret, endpoint=endpoint, source=env or "")] if secret else []
        return [Credential(provider, k.key.strip(), k.weight, k.max_rpm, k.max_tpm, endpoint,
                           f"credentials.{provider}.keys[{i}]")
                for i, k in keys]

    def secret_values(self) -> tuple[str, ...]:
        """Every secret this configuration holds: configured keys of any format (a custom
        endpoint's too) and the provider keys read from the environment."""
        out = {k.key.strip() for creds in self.credentials.values() for k in creds.keys
               if k.key.strip()}
        out.update(url_passwords(self.credential_pool.redis_url))
        for p in self.llm.routing.providers:   # a proxy behind basic auth: https://u:pw@host/v1
            out.update(url_passwords(p.endpoint))
        names = {p.name for p in self.llm.routing.providers} | set(ENV_KEYS)
        for name in names:
            out.update(c.secret for c in self.credentials_for(name))
        return tuple(sorted(out))

    def redactor(self) -> Redactor:
        """The one redactor of these settings, built on first use (which also registers the
        secrets process-wide, so every writer scrubs them: logs, errors, sessions.db, output)."""
        if self._redactor is None:
            self._redactor = Redactor(self.secret_values())
        return self._redactor

    def with_overrides(self, **changes: Any) -> Settings:
        """An immutable copy with dotted-path overrides, e.g. ``with_overrides(**{"llm.stream": False})``."""
        data = self.model_dump(exclude={"source"})
        for dotted, value in changes.items():
            node = data
            parts = dotted.split(".")
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = value
        out = _validate(data, file=self.source, lines={}, env=self._env_keys)
        out._env_keys = self._env_keys
        return out


def jieba_cache_dir_setting() -> str:
    """Where jieba should keep its 9 MB dictionary cache: ``HERMES_JIEBA_CACHE``, else the user's
    own folder in the temp dir (jieba's default, one /tmp/jieba.cache, belongs to whoever ran it
    first; another user could not write it and jieba printed a traceback at every command)."""
    import tempfile

    getuid = getattr(os, "getuid", None)   # POSIX; Windows' temp dir is per user already
    name = "hermes-core-jieba" if getuid is None else f"hermes-core-jieba-{getuid()}"
    return os.environ.get("HERMES_JIEBA_CACHE") or os.path.join(tempfile.gettempdir(), name)


def jieba_disabled() -> bool:
    """``HERMES_DISABLE_JIEBA=1``: segment Chinese by characters (a machine without jieba's
    dictionary, or a test of the fallback)."""
    return os.environ.get("HERMES_DISABLE_JIEBA") == "1"


# --------------------------------------------------------------------------- YAML with line numbers

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")
_CRED_KEY = re.compile(r"^credentials\.[^.]+\.keys\.\d+\.key$")
_fmt_path = format_path


def _interpolator(file: str | None, env: Mapping[str, str],
                  skipped: list[tuple[str, int, tuple[str, ...]]]) -> Interpolate:
    """``${VAR}`` / ``${VAR:-default}`` in string values; an unset variable in a credential key
    skips that key (with a warning naming the variable), anywhere else it is an error."""

    def interpolate(text: str, path: tuple[Any, ...], line: int) -> str:
        dotted = ".".join(str(p) for p in path)
        is_cred = bool(_CRED_KEY.match(dotted))
        unset: list[str] = []

        def sub(m: re.Match[str]) -> str:
            name, default = m.group(1), m.group(2)
            if name in env and env[name] != "":
                if clean_text(env[name]) != env[name]:   # bytes that were not UTF-8
                    raise ConfigError(f"environment variable ${{{name}}} is not UTF-8 text",
                                      file=file, key_path=safe_path(path), line=line)
                return env[name]
            if default is not None:
                return default
            if is_cred:
                unset.append(name)
                return ""
            raise ConfigError(f"environment variable ${{{name}}} is not set and has no default "
                              f"(write ${{{name}:-default}} to give one)",
                              file=file, key_path=safe_path(path), line=line)

        if is_cred and "${" in _VAR.sub("", text):
            # taken literally, "${OPENAI_KEY" would be the key sent to the provider (not shown:
            # the rest of the value may be the key itself)
            raise ConfigError("a malformed variable reference: write ${NAME} (letters, digits "
                              "and _, closed by '}') or ${NAME:-default}",
                              file=file, key_path=safe_path(path), line=line)
        out = _VAR.sub(sub, text)
        if is_cred and unset:   # "${ORG}:${TOKEN}" with TOKEN unset is no key, not the key ":"
            skipped.append((_fmt_path(path), line, tuple(unset)))
            return ""
        if is_cred and not out.strip():
            skipped.append((_fmt_path(path), line, tuple(unset)))
        return out

    return interpolate


def _drop_empty_keys(data: dict[str, Any]) -> None:
    creds = data.get("credentials")
    if not isinstance(creds, dict):
        return  # a wrong shape is reported by validation, in the config's words
    for entry in creds.values():
        if isinstance(entry, dict) and isinstance(entry.get("keys"), list):
            entry["keys"] = [k for k in entry["keys"]
                             if not (isinstance(k, dict) and isinstance(k.get("key"), str)
                                     and not k["key"].strip())]


def _validate(data: Any, *, file: str | None, lines: Mapping[str, int],
              env: Mapping[str, str] | None = None) -> Settings:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the top level must be a mapping of settings (key: value lines), "
                          f"not {describe_value(data)}", file=file, line=1)
    failure: ConfigError | None = None
    try:
        settings = Settings.model_validate({**data, "source": file})
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(p for p in err["loc"] if p not in ("function-after",))
        line = None
        probe = loc
        while probe and line is None:
            line = lines.get(_fmt_path(probe))
            probe = probe[:-1]
        msg, key_path = explain_error(Settings, err, loc, secrets=_secret_values(data, env))
        failure = ConfigError(msg, file=file, key_path=key_path or None, line=line)
    if failure is not None:   # raised outside the handler: pydantic's error quotes the input
        raise failure         # (a key under the wrong setting) and would be its __context__
    _check_rules(settings, lines)
    check_layer_weights(settings.skill_utils.weights, file=file, lines=lines,
                        secrets=_secret_values(data, env))
    return settings


def _secret_values(data: Mapping[str, Any],
                   env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The credential strings of raw config data and the provider keys of the environment (the
    pool's keys when the file names none): never echoed by an error message, whatever their shape."""
    env = os.environ if env is None else env
    out: list[str] = [v.strip() for v in (env.get(name) for name in ENV_KEYS.values())
                      if isinstance(v, str) and v.strip()]
    creds = data.get("credentials")
    for entry in (creds.values() if isinstance(creds, dict) else ()):
        keys = entry.get("keys") if isinstance(entry, dict) else None
        for k in (keys if isinstance(keys, list) else ()):
            value = k.get("key") if isinstance(k, dict) else k
            if isinstance(value, str) and value.strip():
                out.append(value.strip())
    return tuple(out)


def _check_credentials(settings: Settings, lines: Mapping[str, int]) -> None:
    """Keys under a provider nothing routes to are never used: say so, or the chat reports
    "no API key configured" for a file that holds one (its name masked if it is a pasted key)."""
    routed = [p.name for p in settings.llm.routing.providers] or list(ENV_KEYS)
    for name, creds in settings.credentials.items():
        if name not in routed and creds.keys:
            log.warning("%s:%s: credentials for '%s' are unused: no provider of that name in "
                        "llm.routing.providers (%s)", settings.source or "<config>",
                        lines.get(f"credentials.{name}", "?"),
                        provider_shown(name, settings.credentials), ", ".join(routed))


_WARNED_SHORT: set[tuple[str, str]] = set()


def warn_short_keys(settings: Settings, lines: Mapping[str, int],
                    env: Mapping[str, str] | None = None) -> None:
    """A configured key shorter than ``redact.MIN_SUBSTRING`` is probably a placeholder or a typo
    (real keys run to dozens of characters). It still works, and is scrubbed from every output
    as a whole word; say so once per key, by its place, never its value."""
    env = os.environ if env is None else env
    places = [(f"credentials.{name}.keys[{i}]", k.key.strip(),   # (where, the key, as shown)
               f"credentials.{provider_shown(name, settings.credentials)}.keys[{i}]")
              for name, c in settings.credentials.items() for i, k in enumerate(c.keys)]
    places += [(f"${name}", env[name].strip(), f"${name}") for name in ENV_KEYS.values()
               if isinstance(env.get(name), str)]
    for place, key, shown in places:
        if not key or len(key) >= MIN_SUBSTRING or (place, fingerprint(key)) in _WARNED_SHORT:
            continue
        _WARNED_SHORT.add((place, fingerprint(key)))
        where = f"{settings.source or '<config>'}:{lines.get(f'{place}.key', '?')}: " \
            if place.startswith("credentials.") else ""
        log.warning("%s%s is only %d characters long: probably not a real key (a placeholder or "
                    "a typo?); it is used as given, and scrubbed from all output wherever it "
                    "stands as a word", where, shown, len(key))


def _check_rules(settings: Settings, lines: Mapping[str, int]) -> None:
    """Rule conditions are validated at load: a bad one names its rule and line."""
    for i, rule in enumerate(settings.llm.routing.rules):
        path = f"llm.routing.rules[{i}].condition"
        try:
            validate_condition(rule.condition)
        except ValueError as e:
            raise ConfigError(f"rule {i + 1} ({rule.condition!r}): {e}", file=settings.source,
                              key_path=path, line=lines.get(path)) from None
    routing = settings.llm.routing
    for path, model in unserved_models(routing, routing.model_fields_set):
        listed = ", ".join(dict.fromkeys(m for p in routing.providers for m in p.models))
        raise ConfigError(f"model '{model}': no provider lists it (listed: {listed}); add it to "
                          "a provider's models or equivalents, or check the spelling",
                          file=settings.source, key_path=path, line=lines.get(path))


def parse_yaml(text: str, *, file: str | None = None,
               env: Mapping[str, str] | None = None) -> Settings:
    """Parse YAML text into Settings (see :func:`load_settings` for file handling).

    Any malformed input ends as one :class:`ConfigError` naming the file, line and key path:
    empty values load as null and are then validated, aliases are expanded under a node budget
    (a recursive alias or an alias bomb is an error, found in milliseconds), nesting is limited.
    """
    return _parse_yaml(text, file=file, env=env)[0]


def _parse_yaml(text: str, *, file: str | None,
                env: Mapping[str, str] | None) -> tuple[Settings, Mapping[str, int]]:
    """:func:`parse_yaml`, and the line of every key path (for errors found after loading)."""
    env = os.environ if env is None else env
    skipped: list[tuple[str, int, tuple[str, ...]]] = []
    try:
        data, lines = load_yaml(text, max_chars=MAX_CONFIG_BYTES,
                                interpolate=_interpolator(file, env, skipped))
    except YamlLimitError as e:
        raise ConfigError(e.reason, file=file, key_path=safe_path(e.path) or None,
                          line=e.line) from None
    for key_path, line, names in skipped:
        why = (f"uses ${{{names[0]}}}, which is not set" if len(names) == 1 else
               f"uses {', '.join('${' + n + '}' for n in names)}, which are not set" if names
               else "is empty")
        log.warning("%s:%s: credential %s is empty or unset (it %s); skipping that key",
                    file or "<config>", line, key_path, why)
    if isinstance(data, dict):
        _drop_empty_keys(data)
    settings = _validate(data, file=file, lines=lines, env=env)
    _check_credentials(settings, lines)   # once per file, not on every with_overrides copy
    warn_short_keys(settings, lines, env)
    return settings, lines


def load_settings(source: str | os.PathLike[str] | Mapping[str, Any] | None = None, *,
                  home: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """Load settings once: argument > environment > YAML > default.

    ``source`` is a YAML path, a dict (already parsed), or None: then ``HERMES_HOME/config.yaml``
    when it exists, else defaults. ``home`` (argument) beats ``HERMES_HOME`` beats ``home:`` in YAML.
    Every home that is named (``home``, ``HERMES_HOME``, ``home:`` in the YAML or the dict, an
    override) must exist: a typo would otherwise become a fresh, empty home with a sessions.db and
    an audit log, answering with the default persona. Only the default ``~/.hermes`` is created on
    first use (it is nobody's typo); see :func:`check_home`.
    """
    given_env = env
    env = os.environ if env is None else env
    for name in ENV_KEYS.values():   # its fingerprint, its HTTP header: a key must be text
        if clean_text(v := env.get(name) or "") != v:
            raise ConfigError(f"{name} is not UTF-8 text (was it set from a file in another encoding?)")
        if not header_safe(v.strip()):
            raise ConfigError(f"{name} {NOT_HEADER_SAFE}")
    if home is not None or env.get("HERMES_HOME"):
        check_home(home, env=env)   # a named home that does not exist is a typo, never created
    lines: Mapping[str, int] = {}
    if isinstance(source, Mapping):
        settings = _validate(dict(source), file=None, lines={}, env=env)
    else:
        path: Path | None
        if source is not None:
            path = Path(source).expanduser()
            if not path.exists():
                raise ConfigError("config file not found", file=str(path))
        else:
            base = Path(os.path.expanduser(str(home or env.get("HERMES_HOME") or DEFAULT_HOME)))
            path = base / "config.yaml"
            # absent: the defaults; there but no file (a folder, a dangling link, a loop): read,
            # so the error names it, never the defaults run without the user's keys and routing
            if not os.path.lexists(path):
                path = None
        if path is None:
            settings = Settings()
        else:
            settings, lines = _parse_yaml(_read_config(path), file=str(path), env=env)
    changes: dict[str, Any] = {}
    if env.get("HERMES_HOME"):
        changes["home"] = env["HERMES_HOME"]
    if env.get("HERMES_REDIS_URL") and not settings.credential_pool.redis_url:
        changes["credential_pool.redis_url"] = env["HERMES_REDIS_URL"]
    if env.get("HERMES_EMBEDDING_MODEL"):
        changes["skill_utils.embedding_model"] = env["HERMES_EMBEDDING_MODEL"]
    if env.get("HERMES_DISABLE_SKILL_RETRIEVAL") == "1":   # every skill listed, no index, no model
        changes["skill_utils.enabled"] = False
    if home is not None:
        changes["home"] = str(home)
    changes.update(overrides or {})
    if "home" not in changes or (overrides and "home" in overrides):
        secrets = (*_secret_values({}, env), *(k.key for c in settings.credentials.values()
                                               for k in c.keys))
        check_named_home(str(changes.get("home", settings.home)), file=settings.source,
                          line=lines.get("home"), secrets=secrets)
    out = settings.with_overrides(**changes) if changes else settings
    if given_env is not None:  # key fallback reads the mapping the caller gave, not os.environ
        out._env_keys = {v: given_env[v] for v in ENV_KEYS.values() if given_env.get(v)}
    out.redactor()   # built once, here: from now on no writer in the process prints these keys
    return out


def register_environment_keys(env: Mapping[str, str] | None = None) -> None:
    """Make the provider keys of the environment known to every :func:`redact` call now, before
    any config is read: argparse answers a mistyped command line first, and a key of no
    recognisable shape pasted after the message would come back in its usage error."""
    env = os.environ if env is None else env
    register_secrets(v.strip() for v in (env.get(name) for name in ENV_KEYS.values())
                     if isinstance(v, str) and v.strip())


def _read_config(path: Path) -> str:
    try:
        if path.is_dir():
            raise ConfigError("is a directory, not a YAML file", file=str(path))
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read forever, a device never end
            raise ConfigError("is not a regular file (a pipe or device?), not a YAML file",
                              file=str(path))
        size = st.st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"too large ({size} bytes; limit {MAX_CONFIG_BYTES})", file=str(path))
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # PowerShell's ">" writes UTF-16
        raise ConfigError("UTF-16 text; save the file as UTF-8", file=str(path))
    if b"\x00" in raw:
        raise ConfigError("binary file, not YAML", file=str(path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError("not valid UTF-8", file=str(path), line=line) from None
