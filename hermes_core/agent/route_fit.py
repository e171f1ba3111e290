"""What a routed turn's prompt is fitted for, and fitting it: the files and recalled sessions cut
in the model's encoding, the history compacted to the model's window.

The prompt is built before routing picks the model (routing reads its size), so its budgets are
cut in the encoding of the model expected (the requested or default model, on the provider it
is first tried on; most turns go there) and cut again when the route, or a failover, names a
model counting in another: gpt-4's cl100k_base spends 2-3x o200k_base's tokens on Thai, so a
MEMORY.md within its 20,000-token budget in one is far over it in the other. A model's own
prompt is the same bytes every turn, whichever encoding the turn was built in first: its
prompt cache keeps hitting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.agent.prompt.token_count import encoding_for
from hermes_core.agent.routing.rules import context_window, long_context_fallback, request_size
from hermes_core.errors import ContextWindowExceeded
from hermes_core.types import Prompt, RouteDecision

if TYPE_CHECKING:
    from hermes_core.agent.agent import Agent


def target(agent: Agent, decision: RouteDecision) -> tuple[str, str]:
    """The model and provider kind ``decision`` is tried on first: what its request is counted,
    cut and compacted for (one model name is counted apart per wire format: only OpenAI's is
    known to serve OpenAI's encodings)."""
    first = decision.candidates[0].provider if decision.candidates else None
    kind = agent.loop.kind(first) if first is not None else agent.provider.kind
    return decision.model, kind


def expected_encoding(agent: Agent) -> str:
    """The encoding a turn's prompt is built in, before routing: the requested (else default)
    model's, on the pinned provider or the first of its candidates."""
    model, pinned = agent.model, agent.pinned_provider
    if pinned is not None:
        return encoding_for(model, agent.loop.kind(pinned))
    candidates = agent.router.candidates_for(model)
    if not candidates:
        return encoding_for(model, agent.provider.kind)
    return encoding_for(candidates[0].model, agent.loop.kind(candidates[0].provider))


def fit_route(agent: Agent, prompt: Prompt, decision: RouteDecision) -> Prompt:
    """``prompt`` for ``decision``'s model: its budgets recut in that model's encoding when the
    prompt was built in another, its history compacted to that model's window."""
    model, kind = target(agent, decision)
    prompt = agent.builder.recut(prompt, encoding_for(model, kind))
    return agent.compactor.fit(prompt, agent.history, model=model, provider_kind=kind)


def refuse_oversized(agent: Agent, prompt: Prompt, model: str) -> None:
    """Raise :class:`ContextWindowExceeded` before sending when the message (with the system
    prompt and tools) alone exceeds ``model``'s known window and no larger long-context model
    that holds it is configured to move to: uploading a pasted 2 MB log only to have it refused
    helps no one, nor uploading it twice. An unknown model's window is a default guess: the
    provider decides then (a long-context model of unknown window is tried)."""
    report = agent.compactor.last
    if report is None or not report.budget.overflow or report.budget.window_source == "default":
        return
    routing = agent.settings.llm.routing
    also = ""
    if (longer := long_context_fallback(model, routing)) is not None:
        window = context_window(longer, routing)
        history = int(prompt.tokens.get("history", 0) or 0)
        size = request_size(prompt, agent.router.encoding(longer))[1] - history
        if window is None or size <= window:
            return
        also = (f"; the long_context_model {longer} ({window:,} tokens) is too small as well "
                f"({size:,} tokens)")
    raise ContextWindowExceeded(report.budget.describe_overflow(model) + also)
