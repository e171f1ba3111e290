"""The history budget: how many tokens of conversation one request can carry for a model.

A request must fit the model's context window with room for the answer. Everything in it except
the history is fixed for the turn (the system prefix and tools, the per-turn context, the user's
message), so the history gets what is left, less a safety margin for estimation error:

    budget = window - max_tokens - system - context - message - margin

Crossing ``high_water`` x budget triggers compaction (never a failed turn); compaction folds turns
away until the verbatim history is at most ``target`` x budget. Pure arithmetic, so it is pinned by
tests and shown as is by the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core.agent.routing.rules import context_window
from hermes_core.config import CompactionSettings, RoutingSettings


@dataclass(frozen=True, slots=True)
class HistoryBudget:
    """The budget for one turn's history, and the figures it was computed from (tokens)."""

    window: int
    max_tokens: int
    fixed: int          # system prefix + tools + per-turn context + the message
    margin: int
    high_water_ratio: float
    target_ratio: float
    window_source: str = "known"   # configured / known / default

    @property
    def available(self) -> int:
        """Tokens left for the history (0 when the fixed parts alone do not fit)."""
        return max(0, self.window - self.max_tokens - self.fixed - self.margin)

    @property
    def high_water(self) -> int:
        return int(self.available * self.high_water_ratio)

    @property
    def target(self) -> int:
        return int(self.available * self.target_ratio)

    @property
    def overflow(self) -> int:
        """Tokens by which the fixed parts alone exceed what the window leaves them (0: they fit).

        Positive means no compaction can help: the message itself (a pasted log) or the system
        prefix is too large for this model.
        """
        return max(0, self.fixed - (self.window - self.max_tokens - self.margin))

    def describe_overflow(self, model: str) -> str:
        """Why a request with these fixed parts cannot be sent to ``model``, for people."""
        room = self.window - self.max_tokens - self.margin
        return (f"the message, system prompt and tools alone are about {self.fixed} tokens; model "
                f"{model}'s context window of {self.window} tokens leaves {max(0, room)} after the "
                f"answer's llm.max_tokens ({self.max_tokens}) and the safety margin ({self.margin}). "
                "Shorten the message (send a long log as a file, or only its relevant part) or "
                "choose a model with a larger window")

    def over(self, history_tokens: int) -> bool:
        """Whether a history of ``history_tokens`` must be compacted before this turn."""
        return history_tokens > self.high_water

    def as_dict(self) -> dict[str, int | float | str]:
        return {"window": self.window, "window_source": self.window_source,
                "max_tokens": self.max_tokens, "fixed": self.fixed, "margin": self.margin,
                "available": self.available, "high_water": self.high_water,
                "high_water_ratio": self.high_water_ratio, "target": self.target}


def model_window(model: str, routing: RoutingSettings,
                 settings: CompactionSettings) -> tuple[int, str]:
    """(context window, where it came from): configured, the known table, else the default."""
    if model in routing.context_windows:
        return routing.context_windows[model], "configured"
    known = context_window(model)
    if known is not None:
        return known, "known"
    return settings.default_window, "default"


def history_budget(*, window: int, max_tokens: int, fixed_tokens: int,
                   settings: CompactionSettings, window_source: str = "known") -> HistoryBudget:
    """The budget for the history of one request (see the module doc for the formula)."""
    margin = int(window * settings.safety_margin)
    return HistoryBudget(window=window, max_tokens=max_tokens, fixed=fixed_tokens, margin=margin,
                         high_water_ratio=settings.high_water, target_ratio=settings.target,
                         window_source=window_source)
