"""The settings of each section of the configuration (``llm`` and its routing, ``credentials``,
``credential_pool``, ``context_engine``, ``skill_utils``, ``prompt``): typed, frozen, validated.

Only the shape and the range of each value live here; reading the file, the environment and the
checks across sections are :mod:`hermes_core.config`'s, which assembles these into ``Settings``
and re-exports every name, so ``from hermes_core.config import LLMSettings`` keeps working.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from hermes_core.config_messages import NOT_HEADER_SAFE, header_safe
from hermes_core.config_numbers import PRICE, Float, Weight, Whole, as_number, check_numbers
from hermes_core.types import unfit_model_name

KNOWN_PROVIDER_TYPES = ("openai", "anthropic", "offline")


class SectionModel(BaseModel):
    """Every section's base: an unknown key is an error (a typo is not silently ignored), a
    loaded value never changes, defaults are validated as a file's values are, and no number is
    infinite, NaN or a boolean."""

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


class RuleSettings(SectionModel):
    condition: str
    model: ModelName


class ClassifierSettings(SectionModel):
    path: str | None = None            # trained model file (hermes-core route train)
    min_confidence: float = Field(0.9, ge=0.0, le=1.0)


class ProviderSettings(SectionModel):
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


class RoutingSettings(SectionModel):
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


class PriceSettings(SectionModel):
    """USD per million tokens; a cache price left out costs what input does."""

    input: Annotated[float, PRICE] = Field(ge=0)
    output: Annotated[float, PRICE] = Field(ge=0)
    cache_write: Annotated[float | None, PRICE] = Field(None, ge=0)
    cache_read: Annotated[float | None, PRICE] = Field(None, ge=0)


class LLMSettings(SectionModel):
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


class KeySettings(SectionModel):
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


class ProviderCredentials(SectionModel):
    keys: tuple[KeySettings, ...] = ()
    rotation_strategy: Literal["round_robin", "least_loaded", "fill_first", "random"] | None = None


class CredentialPoolSettings(SectionModel):
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


class RecencyWeights(SectionModel):
    """Episodic-memory score multipliers by session age (raised to ``recency_bias``). Each holds
    in the middle of its range; between those ages the weight slides smoothly (no step at 7 days)."""

    week: float = Field(default=2.0, gt=0, allow_inf_nan=False)      # 0-7 days (exact to 3.5)
    month: float = Field(default=1.5, gt=0, allow_inf_nan=False)     # 7-30 days (exact at 18.5)
    quarter: float = Field(default=1.0, gt=0, allow_inf_nan=False)   # 30-90 days (exact at 60)
    older: float = Field(default=0.7, gt=0, allow_inf_nan=False)     # 90 days+ (exact from 120)


class ContextEngineSettings(SectionModel):
    """Episodic memory (``hermes_core.agent.context_engine``)."""

    enabled: bool = True                                      # off: no memories block, no recording
    max_results: int = Field(default=5, ge=0)                 # sessions injected per turn
    # weight ** bias; 0 turns recency off
    recency_bias: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    recency_weights: RecencyWeights = RecencyWeights()
    db_path: str | None = None                                # relative to home; default sessions.db
    min_score: float = Field(default=0.0, ge=0.0)             # floor after re-rank, scaled to the index
    # wait for another writer's lock
    busy_timeout_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    render_chars: int = Field(default=600, ge=80)             # per-summary clip in the prompt block
    # the whole block's budget (o200k_base tokens): Chinese costs ~4x the tokens of English a char
    block_tokens: int = Field(default=1_000, ge=100)
    # retention: sessions older than this many days, and past this many (the oldest first), are
    # pruned after each recording in bounded steps (agent/episodic/retention.py); null keeps all
    retention_days: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_sessions: int | None = Field(default=None, ge=1)


class GateWeightSettings(SectionModel):
    """Dense gate score weights for one embedding model (see ``retrieval.fusion.GateWeights``)."""

    anchor_max: float = 0.5
    anchor_mean: float = 0.0
    catalog_mean: float = 0.0


class SkillSettings(SectionModel):
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


class CompactionSettings(SectionModel):
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


class PromptSettings(SectionModel):
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
