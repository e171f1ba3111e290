"""What a call cost, from a price table kept as data (``prices.yaml``) and the user's overrides.

Prices change more often than code: the table ships as a YAML file beside this module and any
model can be priced (or re-priced) in config under ``llm.prices``. An unknown model costs
"unknown", never a made-up zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from hermes_core.errors import ConfigError
from hermes_core.types import Usage

PER_TOKENS = 1_000_000
_FIELDS = ("input", "output", "cache_write", "cache_read")


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


@dataclass(frozen=True, slots=True)
class Cost:
    """USD of one call or a session. ``saved`` is what prompt caching saved against sending the
    same tokens uncached (cache reads at the cheaper rate minus the cache-write premium);
    ``unpriced`` lists the models with no price (their tokens are not in the totals);
    ``unmetered`` the models of calls whose response reported no usage (billed, not counted);
    ``counted`` the models of calls whose response reported none and whose tokens hermes_core
    counted itself (priced, partly an estimate: see ``Usage.estimated_tokens``)."""

    input: float = 0.0
    output: float = 0.0
    cache_write: float = 0.0
    cache_read: float = 0.0
    saved: float = 0.0
    unpriced: tuple[str, ...] = ()
    unmetered: tuple[str, ...] = ()
    counted: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return self.input + self.output + self.cache_write + self.cache_read

    @property
    def known(self) -> bool:
        """The total is the bill: no model unpriced, no usage missing or counted by us."""
        return not self.unpriced and not self.unmetered and not self.counted

    def __add__(self, other: Cost) -> Cost:
        missing = tuple(dict.fromkeys((*self.unpriced, *other.unpriced)))
        silent = tuple(dict.fromkeys((*self.unmetered, *other.unmetered)))
        ours = tuple(dict.fromkeys((*self.counted, *other.counted)))
        return Cost(self.input + other.input, self.output + other.output,
                    self.cache_write + other.cache_write, self.cache_read + other.cache_read,
                    self.saved + other.saved, missing, silent, ours)

    def __str__(self) -> str:
        text = f"${self.total:.4f}"
        if self.saved:
            text += f" (cache saved ${self.saved:.4f})"
        if self.unpriced:
            text += f" (no price for {', '.join(self.unpriced)})"
        if self.unmetered:
            text += f" (no usage reported for {', '.join(self.unmetered)})"
        if self.counted:
            text += f" (partly estimated: no usage reported for {', '.join(self.counted)})"
        return text


def _price(data: Any, where: str) -> Price:
    if not isinstance(data, Mapping):
        raise ConfigError("a price must be a mapping of input, output, cache_write, cache_read",
                          key_path=where)
    values: dict[str, float] = {}
    for f in _FIELDS:
        v = data.get(f)
        if v is None and f.startswith("cache_"):   # unpriced cache tokens cost what input does
            v = data.get("input")
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise ConfigError(f"'{f}' must be a number >= 0 (USD per million tokens)",
                              key_path=f"{where}.{f}")
        values[f] = float(v)
    return Price(**values)


@lru_cache(maxsize=1)
def builtin_prices() -> Mapping[str, Price]:
    """The shipped table (read once)."""
    text = resources.files("hermes_core.agent").joinpath("prices.yaml").read_text("utf-8")
    data = yaml.safe_load(text) or {}
    return {str(k): _price(v, f"prices.yaml:{k}") for k, v in data.items()}


class PriceTable:
    """Prices by model: the shipped table, overridden entry by entry by ``overrides``."""

    def __init__(self, overrides: Mapping[str, Any] | None = None,
                 base: Mapping[str, Price] | None = None) -> None:
        table = dict(builtin_prices() if base is None else base)
        for model, raw in (overrides or {}).items():
            table[model] = raw if isinstance(raw, Price) else _price(raw, f"llm.prices.{model}")
        self._table = table

    def names(self) -> tuple[str, ...]:
        """Every model name the table prices (shipped and configured)."""
        return tuple(self._table)

    def priced_as(self, model: str) -> str | None:
        """The table name ``model`` is charged at: itself, else the longest name it starts with."""
        if model in self._table:
            return model
        return max((name for name in self._table if model.startswith(name)), key=len, default=None)

    def charged_as(self, answered: str, requested: str) -> str:
        """The name a call is priced at: the model the response said answered (a dated name, the
        model behind an Azure deployment) when the table prices it, else the name asked for (a
        gateway's own model names, priced in config under the requested name), else the
        answered name, unpriced."""
        if self.priced_as(answered) is not None or self.priced_as(requested) is None:
            return answered
        return requested

    def price(self, model: str) -> Price | None:
        """The exact model's price, else the longest table name the model starts with."""
        name = self.priced_as(model)
        return self._table[name] if name is not None else None

    def cost(self, model: str, usage: Usage) -> Cost:
        """What ``usage`` of ``model`` cost; a usage hermes_core counted where the provider
        reported none (``Usage.counted``) is priced and named in ``Cost.counted``."""
        if not (usage.reported or usage.counted):
            return Cost(unmetered=(model,))
        p = self.price(model)
        if p is None:
            return Cost(unpriced=(model,)) if usage != Usage() else Cost()
        saved = (usage.cache_read_tokens * (p.input - p.cache_read)
                 - usage.cache_write_tokens * (p.cache_write - p.input)) / PER_TOKENS
        return Cost(usage.input_tokens * p.input / PER_TOKENS,
                    usage.output_tokens * p.output / PER_TOKENS,
                    usage.cache_write_tokens * p.cache_write / PER_TOKENS,
                    usage.cache_read_tokens * p.cache_read / PER_TOKENS, saved,
                    counted=(model,) if usage.counted else ())
