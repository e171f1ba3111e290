"""YAML -> validated, typed settings, loaded once.

Precedence: argument > environment > YAML > default. Every error names the file, the key path and
the line. ``${VAR}`` and ``${VAR:-default}`` are interpolated in string values; an unset variable
with no default is an error, except in a credential key, where the key is skipped with a warning so
one config serves users who hold only some keys.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

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
from hermes_core.config_numbers import PRICE, Float, Weight, Whole, as_number, check_numbers
from hermes_core.errors import ConfigError
from hermes_core.redact import MIN_SUBSTRING, Redactor, register_secrets, url_passwords
from hermes_core.types import Credential, clean_text, fingerprint, unfit_model_name
from hermes_core.yaml_safe import Interpolate, YamlLimitError, format_path, load_yaml

log = logging.getLogger("hermes_core.config")

MAX_CONFIG_BYTES = 1_000_000
KNOWN_PROVIDER_TYPES = ("openai", "anthropic", "offline")
ENV_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _numbers_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        """No setting is infinite, NaN or astronomically large (``config_numbers``)."""
        name = info.field_name or ""
        if (field := cls.model_fields.get(name)) is not None:
            check_numbers(value, field.metadata, name=name, default=field.default)
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """``max_tokens: yes`` is not 1; ``weight: 10**399`` is told its range
        (:func:`config_numbers.as_number`)."""
        field = cls.model_fields.get(name := info.field_name or "")
        return value if field is None else as_number(value, field.annotation, field.metadata,
                                                     name=name, default=field.default)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_default(cls, data: Any) -> Any:
        """``key:`` with nothing after it is YAML's null: for a setting that cannot be null it
        means "not set" (the default applies), as an absent key does."""
        if not isinstance(data, dict):
            return data
        return {k: v for k, v in data.items()
                if not (v is None and k in cls.model_fields
                        and type(None) not in typing.get_args(cls.model_fields[k].annotation))}


def _model_name(name: str) -> str:
    if not name or unfit_model_name(name):
        raise ValueError(f"{name!r} is not a model name: it is empty or has spaces, control or "
                         "invisible characters (a provider would answer 404 model_not_found)")
    return name


ModelName = Annotated[str, AfterValidator(_model_name)]
# above any model's window yet (10M tokens), below a count that could only be a typo
MAX_CONTEXT_WINDOW = 100_000_000
Window = Annotated[Whole, Field(gt=0, le=MAX_CONTEXT_WINDOW)]


class RuleSettings(_Model):
    condition: str
    model: ModelName


class ClassifierSettings(_Model):
    path: str | None = None            # trained model file (hermes-core route train)
    min_confidence: float = Field(0.9, ge=0.0, le=1.0)


class ProviderSettings(_Model):
    name: str
    type: Literal["openai", "anthropic", "offline"] | None = None
    priority: int = 100
    models: tuple[ModelName, ...] = ()
    endpoint: str | None = Field(None, repr=False)   # a proxy's URL may hold a password
    timeout_s: float = Field(60.0, gt=0)
    equivalents: dict[ModelName, ModelName] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> ProviderSettings:
        if self.type is None and self.endpoint is None and self.name not in KNOWN_PROVIDER_TYPES:
            raise ValueError(f"unknown provider '{self.name}': give it an 'endpoint' (any "
                             "OpenAI-compatible API) or a 'type' (openai, anthropic, offline)")
        return self

    @property
    def kind(self) -> str:
        """Wire format: explicit ``type``, else the name when it is one, else OpenAI-compatible."""
        if self.type:
            return self.type
        return self.name if self.name in KNOWN_PROVIDER_TYPES else "openai"


class RoutingSettings(_Model):
    default_model: ModelName = "gpt-4o"
    fast_model: ModelName | None = None
    code_model: ModelName | None = None
    long_context_model: ModelName | None = None
    rules: tuple[RuleSettings, ...] = ()
    providers: tuple[ProviderSettings, ...] = ()
    classifier: ClassifierSettings = ClassifierSettings()
    # context window sizes (tokens) by model, to decide whether long_context_model is larger
    context_windows: dict[ModelName, Window] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_providers(self) -> RoutingSettings:
        # the error sits at the repeated entry's name, not at ``routing``: the loader reports the
        # line of its key path, and a long providers list needs the entry itself pointed at
        first: dict[str, int] = {}
        for i, p in enumerate(self.providers):
            if p.name in first:
                raise ValidationError.from_exception_data(type(self).__name__, [InitErrorDetails(
                    type=PydanticCustomError(
                        "provider_listed_twice",
                        "provider '{name}' is listed twice (first as providers[{first}]): "
                        "merge the two entries", {"name": p.name, "first": first[p.name]}),
                    loc=("providers", i, "name"), input=p.name)])
            first[p.name] = i
        return self


class PriceSettings(_Model):
    """USD per million tokens; a cache price left out costs what input does."""

    input: Annotated[float, PRICE] = Field(ge=0)
    output: Annotated[float, PRICE] = Field(ge=0)
    cache_write: Annotated[float | None, PRICE] = Field(None, ge=0)
    cache_read: Annotated[float | None, PRICE] = Field(None, ge=0)


class LLMSettings(_Model):
    stream: bool = True
    cache_system_prompt: bool = True
    cache_ttl: Literal["5m", "1h"] = "5m"
    max_tokens: int = Field(1024, gt=0)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    request_timeout_s: float = Field(60.0, gt=0)
    deadline_s: float = Field(120.0, gt=0)
    stream_idle_timeout_s: float = Field(30.0, gt=0)   # a stream with no content (pings aside) this long: cut
    max_stream_bytes: int = Field(256 * 2**20, gt=0)   # one past this many bytes (inflated): cut too
    offline_stream_delay_s: float = Field(0.0, ge=0, le=10)
    routing: RoutingSettings = RoutingSettings()
    # model calls one turn may make to answer tool calls before it must end
    max_tool_rounds: int = Field(10, ge=0)
    # a tool that sets no timeout of its own gets this one (null: none)
    tool_timeout_s: float | None = Field(60.0, gt=0)
    # passed only to providers and models that accept them
    seed: int | None = Field(None, ge=-2**63, le=2**63 - 1)   # what the APIs take
    stop: tuple[str, ...] = ()
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    thinking_budget_tokens: int | None = Field(None, ge=1024)
    # per-model prices overriding or extending the shipped table (hermes_core/agent/prices.yaml)
    prices: dict[str, PriceSettings] = Field(default_factory=dict)


class KeySettings(_Model):
    key: str = Field(repr=False)
    weight: float = Field(1.0, gt=0)
    max_rpm: int | None = Field(None, gt=0)
    max_tpm: int | None = Field(None, gt=0)

    @field_validator("key")
    @classmethod
    def _fits_a_header(cls, value: str) -> str:
        """A key travels in an HTTP header, which carries printable ASCII only: one with 'é'
        failed at the first request, with an exception whose args held the header, key too."""
        if not header_safe(value.strip()):
            raise ValueError(NOT_HEADER_SAFE)
        return value


class ProviderCredentials(_Model):
    keys: tuple[KeySettings, ...] = ()
    rotation_strategy: Literal["round_robin", "least_loaded", "fill_first", "random"] | None = None


class CredentialPoolSettings(_Model):
    rotation: Literal["round_robin", "least_loaded", "fill_first", "random"] = "round_robin"
    retry_budget: int = Field(3, ge=0)
    backend: Literal["memory", "redis"] = "memory"
    # may carry a password (user info or ?password=): kept out of reprs, listed as a secret
    redis_url: str | None = Field(None, repr=False)
    workers: int = Field(1, ge=1)
    breaker_failures: int = Field(5, ge=1)
    breaker_cooldown_s: float = Field(30.0, gt=0)
    default_cooldown_s: float = Field(60.0, gt=0)
    audit_log: str | None = None
    # sliding window for max_rpm / max_tpm (the providers' limits are per minute)
    window_s: float = Field(60.0, gt=0)
    # wait for a blocked provider's earliest key only this long while other candidates remain;
    # with none left, wait up to the request deadline
    max_wait_s: float = Field(10.0, ge=0)
    # retries of the same provider after a server error before failing over
    retries_per_provider: int = Field(1, ge=0)
    # full-jitter exponential backoff: uniform(0, min(backoff_max_s, backoff_base_s * 2**n))
    backoff_base_s: float = Field(0.5, gt=0)
    backoff_max_s: float = Field(8.0, gt=0)
    # share of a key's per-window limit sent back to back; the rest is paced across the window
    pace_burst: float = Field(0.1, gt=0, le=1)
    # requests in flight per key at most (bounds a key whose limit is not known yet)
    max_in_flight_per_key: int | None = Field(32, ge=1)
    # keys without max_rpm take the limit their 429s reveal
    learn_limits: bool = True
    # Redis backend: key namespace, lease (at least llm.deadline_s + 30) / state TTLs, reconnect
    # probe, socket timeout.
    redis_key_prefix: str = Field(default="hermes:pool", min_length=1)
    redis_lease_ttl_s: float = Field(default=300.0, gt=0)
    redis_state_ttl_s: float = Field(default=7 * 86400.0, gt=0)
    redis_reconnect_s: float = Field(default=5.0, gt=0)
    redis_timeout_s: float = Field(default=0.5, gt=0)
    # processes on one Redis take turns in the order they started waiting (pool/fleet_queue.py):
    # a waiter's place outlives the time it said it would ask again by the grace (bounds what a
    # killed waiter holds the others up); one behind others asks again every poll at most
    redis_fleet_queue: bool = True
    redis_queue_grace_s: float = Field(default=2.0, ge=0)
    redis_queue_poll_s: float = Field(default=0.05, gt=0)
    # a key the provider rejects (401/403/402) is quarantined: one request rechecks it after
    # auth_recheck_s, twice as long after each rejected recheck (at most auth_recheck_max_s);
    # the auth_max_strikes-th rejection in a row removes it for good (1: the first one does)
    auth_recheck_s: float = Field(default=60.0, gt=0)
    auth_recheck_max_s: float = Field(default=3600.0, gt=0)
    auth_max_strikes: int = Field(default=8, ge=1)

    @field_validator("auth_recheck_max_s")
    @classmethod
    def _recheck_cap_covers_the_first(cls, value: float, info: ValidationInfo) -> float:
        first = info.data.get("auth_recheck_s")
        if first is not None and value < first:
            raise ValueError(f"must be at least auth_recheck_s ({first:g}), the first recheck's "
                             "wait")
        return value


class RecencyWeights(_Model):
    """Episodic-memory score multipliers by session age (raised to ``recency_bias``). Each holds
    in the middle of its range; between those ages the weight slides smoothly (no step at 7 days)."""

    week: float = Field(default=2.0, gt=0, allow_inf_nan=False)      # 0-7 days (exact to 3.5)
    month: float = Field(default=1.5, gt=0, allow_inf_nan=False)     # 7-30 days (exact at 18.5)
    quarter: float = Field(default=1.0, gt=0, allow_inf_nan=False)   # 30-90 days (exact at 60)
    older: float = Field(default=0.7, gt=0, allow_inf_nan=False)     # 90 days+ (exact from 120)


class ContextEngineSettings(_Model):
    """Episodic memory (``hermes_core.agent.context_engine``)."""

    enabled: bool = True                                      # off: no memories block, no recording
    max_results: int = Field(default=5, ge=0)                 # sessions injected per turn
    # weight ** bias; 0 turns recency off
    recency_bias: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    recency_weights: RecencyWeights = RecencyWeights()
    db_path: str | None = None                                # relative to home; default sessions.db
    min_score: float = Field(default=0.0, ge=0.0)             # drop weaker matches (after re-rank)
    # wait for another writer's lock
    busy_timeout_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    render_chars: int = Field(default=600, ge=80)             # per-summary clip in the prompt block
    # the whole block's budget (o200k_base tokens): Chinese costs ~4x the tokens of English a char
    block_tokens: int = Field(default=1_000, ge=100)
    # retention: sessions older than this many days, and past this many (the oldest first), are
    # pruned after each recording in bounded steps (agent/episodic/retention.py); null keeps all
    retention_days: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_sessions: int | None = Field(default=None, ge=1)


class GateWeightSettings(_Model):
    """Dense gate score weights for one embedding model (see ``retrieval.fusion.GateWeights``)."""

    anchor_max: float = 0.5
    anchor_mean: float = 0.0
    catalog_mean: float = 0.0


class SkillSettings(_Model):
    enabled: bool = True
    top_k: int = Field(5, ge=1)
    threshold: float | None = Field(None, ge=0.0)
    folders: tuple[str, ...] = ()
    triggers_file: str | None = None
    synonyms_file: str | None = None
    rrf_k: int = Field(60, ge=1)
    weights: dict[str, Weight] = Field(default_factory=dict)   # below 0 would rank in reverse
    embedding_model: str | None = None
    # retrieval: extra JSONL catalogs, fusion rule ("zscore" | "rrf"), dense layer on/off, and gate
    # thresholds keyed by embedder model id or "lexical" (``threshold`` overrides whichever applies)
    catalogs: tuple[str, ...] = ()
    fusion: Literal["zscore", "rrf"] = "zscore"
    embeddings: bool = True
    gate_thresholds: dict[str, Float] = Field(default_factory=dict)
    # dense gate weights keyed by embedder model id (fitted defaults for MiniLM are built in)
    gate_weights: dict[str, GateWeightSettings] = Field(default_factory=dict)
    # the hint lists a top-k skill only if its fused score is >= hint_ratio x the best one's or
    # within hint_margin of it (z-score units; 0 = off), so a small home is not handed 5 loose
    # matches; with embeddings it must also be backed by the calibrated gate (result.hint_cut)
    hint_ratio: float = Field(0.5, ge=0.0, le=1.0)
    hint_margin: float = Field(0.0, ge=0.0)
    # the first dense gate rule's weight on the best anchor cosine (top - anchor_weight x anchor)
    anchor_weight: float = Field(0.5, ge=0.0)
    # seconds between checks (stat only) for added, removed or edited skills; null: never re-check
    refresh_interval_s: float | None = Field(2.0, ge=0.0, allow_inf_nan=False)
    # learning from use: (query, skill) events in <home>/usage.sqlite3 feed the usage layer
    learn: bool = True
    usage_cap: int = Field(20_000, ge=1)
    # per-catalog gate calibration at index time (off: the fixed per-model thresholds)
    calibrate: bool = True
    # MiniLM's query vectors through the shipped query adapter fitted on public tool-use data
    # (retrieval/adapter.py); false: the plain model
    query_adapter: bool = True
    # without embeddings, list a catalog of <= 20 skills whole for a request the lexical gate cannot
    # judge (no skill in its language, no shared word, not small talk); false: reject it
    list_unjudged: bool = True
    # the retriever's restart caches (<home>/cache/embeddings): a file no process has read or
    # written for this many days is removed (retrieval/cache_sweep.py)
    cache_idle_days: float = Field(30.0, gt=0.0, allow_inf_nan=False)


class CompactionSettings(_Model):
    """History compaction (``hermes_core.agent.prompt.compaction``).

    The history budget is the model's context window less ``llm.max_tokens``, the system prefix,
    the per-turn context, the message and ``safety_margin`` of the window. Crossing
    ``high_water`` of that budget folds the oldest turns into a summary until the verbatim history
    is at most ``target`` of it: one large step, so the prefix then stays byte-identical (and
    cached) for many turns. ``keep_turns`` recent turns stay verbatim; fewer (none: a pasted log)
    when they alone are over ``high_water`` less the summary's room (decision 220).
    """

    enabled: bool = True
    high_water: float = Field(0.75, gt=0.0, le=1.0, allow_inf_nan=False)
    target: float = Field(0.35, gt=0.0, lt=1.0, allow_inf_nan=False)
    keep_turns: int = Field(4, ge=1)
    safety_margin: float = Field(0.05, ge=0.0, lt=0.5, allow_inf_nan=False)
    # window for models neither configured (llm.routing.context_windows) nor in the known table
    default_window: int = Field(32_000, ge=1024)
    # the "conversation so far" summary is kept under this share of the history budget
    summary_share: float = Field(0.2, gt=0.0, lt=0.5, allow_inf_nan=False)
    # ask the fast model for the summary (else, and when it fails, an extractive one is made)
    use_model: bool = True

    @model_validator(mode="after")
    def _target_below_high_water(self) -> CompactionSettings:
        if self.target >= self.high_water:
            raise ValueError(f"target ({self.target}) must be below high_water ({self.high_water})")
        return self


class PromptSettings(_Model):
    history_turns: int = Field(5, ge=0)
    file_token_budget: int = Field(20_000, gt=0)
    injection_scan: bool = True
    memory_char_limit: int = Field(20_000, gt=0)
    # USER.md size cap for writes through hermes_core (MEMORY.md uses memory_char_limit).
    user_char_limit: int = Field(10_000, gt=0)
    # Files larger than this are read as a head and a tail only (then the token budget applies).
    max_file_bytes: int = Field(2_000_000, gt=0)
    # Which injection signals block a file; drop one to tolerate it.
    # "learned" is the shipped scorer (hermes_core/injection/learned.py) beside the phrase rules;
    # "learned-semantic" (opt-in, needs the embeddings extra) adds its e5 stage to it;
    # "learned-semantic-data" the same stage where it only adds, in memories only.
    injection_categories: tuple[Literal["ignore-instructions", "role-hijack", "secret-exfiltration",
                                        "invisible-unicode", "output-hijack", "learned",
                                        "learned-semantic", "learned-semantic-data"], ...] = (
        "ignore-instructions", "role-hijack", "secret-exfiltration", "invisible-unicode",
        "output-hijack", "learned")
    # Anthropic breakpoints on recent history (besides the system one); 4 in total at most.
    message_breakpoints: int = Field(2, ge=0, le=3)
    # Mark a prefix whose token *estimate* reaches (1 - slack) x the model's minimum: the estimate
    # is approximate, a marker on a too-short prefix is ignored by the API at no cost, and a
    # missing marker on a long-enough one forfeits the cache.
    cache_min_slack: float = Field(0.15, ge=0.0, lt=1.0)
    compaction: CompactionSettings = CompactionSettings()


class Settings(_Model):
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
    """Where jieba should keep its 9 MB dictionary cache: ``HERMES_JIEBA_CACHE``, else a folder of
    ours in the temp dir (jieba's own default leaves a stray file in /tmp for every user)."""
    import tempfile

    return os.environ.get("HERMES_JIEBA_CACHE") or os.path.join(tempfile.gettempdir(),
                                                                "hermes-core-jieba")


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
