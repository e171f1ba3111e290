"""Router: which model a request goes to, and which providers may serve it, in order.

An explicitly requested model wins. Otherwise the request's features (size, code, URLs, tools,
shell intent, turn count, attachments) feed the configured rules, first match wins; an optional
trained classifier (:mod:`hermes_core.agent.routing.classifier`) decides first when it is
confident enough. Features, the condition language and candidate ordering live in
:mod:`hermes_core.agent.routing.rules`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.agent.prompt.token_count import encoding_for
from hermes_core.agent.routing.rules import (
    SLOT_NAMES,
    Condition,
    candidates_for,
    compile_condition,
    condition_names,
    context_window,
    extract_features,
    last_user_text,
    request_size,
)
from hermes_core.errors import ConfigError
from hermes_core.types import Candidate, Prompt, RouteDecision

if TYPE_CHECKING:
    from hermes_core.agent.routing.classifier import RouteClassifier
    from hermes_core.config import RoutingSettings, Settings

log = logging.getLogger("hermes_core.routing")

SLOTS = SLOT_NAMES

# --------------------------------------------------------------------------- the router

def pin(decision: RouteDecision, provider: str, note: str | None = None) -> RouteDecision:
    """``decision`` served by ``provider`` alone, its reason extended by ``note``; pure."""
    reason = decision.reason + (f"; {note}" if note else "")
    return replace(decision, candidates=(Candidate(provider, decision.model),), reason=reason)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    index: int          # 1-based, as shown in reasons and errors
    condition: str
    target: str         # a slot name or a literal model name
    test: Condition
    names: tuple[str, ...] = ()   # the features it reads, to say which ones held


def because(names: tuple[str, ...], feats: Mapping[str, Any]) -> str:
    """Which of ``names`` made a rule hold: the true flags and the numbers; pure."""
    said = [n if v is True else f"{n}={v}" for n in names
            if (v := feats.get(n)) is not False and v not in ("", None)]
    return ", because " + ", ".join(said) if said else ""


#: What the default code rule reads; without a code model the fast rule passes these over.
NO_CODE_TIER = "has_code or asks_for_code"


def default_rules(routing: RoutingSettings) -> tuple[tuple[str, str], ...]:
    """The documented default rules for the configured model slots (used when ``rules`` is empty)."""
    out = []
    if routing.long_context_model:
        out.append(("prompt_tokens > 50000", "long_context_model"))
    if routing.code_model:
        out.append(("has_code or asks_for_code or requires_shell_execution", "code_model"))
    if routing.fast_model:
        # with no code model a code request goes to the default, not to the chit-chat tier
        out.append(("token_estimate < 500 and not requires_tools and not needs_reasoning"
                    + ("" if routing.code_model else f" and not ({NO_CODE_TIER})"), "fast_model"))
    return tuple(out)


class Router:
    """Chooses the model (requested > classifier > rules > default) and the candidates."""

    def __init__(self, routing: RoutingSettings, classifier: RouteClassifier | None = None) -> None:
        self.routing = routing
        self.classifier = classifier
        # a model's candidates, per model: settings are frozen, and sorting the providers on
        # every route was a cost of every request
        self._candidates: dict[str, tuple[Candidate, ...]] = {}
        pairs = ([(r.condition, r.model) for r in routing.rules] if routing.rules
                 else list(default_rules(routing)))
        self.rules: tuple[CompiledRule, ...] = tuple(
            CompiledRule(i, cond, target, self._compile(i, cond), condition_names(cond))
            for i, (cond, target) in enumerate(pairs, 1))

    @staticmethod
    def _compile(index: int, condition: str) -> Condition:
        try:
            return compile_condition(condition)
        except ValueError as e:
            raise ConfigError(f"rule {index} ({condition!r}): {e}",
                              key_path=f"llm.routing.rules[{index - 1}].condition") from None

    @classmethod
    def from_settings(cls, settings: Settings) -> Router:
        """Rules from ``llm.routing``; the classifier too when ``classifier.path`` is set."""
        routing = settings.llm.routing
        classifier = None
        if routing.classifier.path:
            from hermes_core.agent.routing.classifier import RouteClassifier

            path = Path(routing.classifier.path).expanduser()
            if not path.is_absolute():
                path = settings.home_path / path
            classifier = RouteClassifier.load(path, key_path="llm.routing.classifier.path",
                                              config_file=settings.source)
        return cls(routing, classifier)

    def resolve(self, target: str) -> str | None:
        """A slot name ("fast_model", or "fast") to its configured model; a model name as is."""
        slot = target if target in SLOTS else f"{target}_model"
        if slot in SLOTS:
            value: str | None = getattr(self.routing, slot)
            return value
        return target

    def candidates_for(self, model: str) -> tuple[Candidate, ...]:
        found = self._candidates.get(model)
        if found is None:
            found = candidates_for(model, self.routing)
            if len(self._candidates) < 1024:   # models named by callers: bounded
                self._candidates[model] = found
        return found

    def select(self, prompt_or_text: Prompt | str, *, requested_model: str | None = None,
               requires_tools: bool = False, turn_count: int = 0,
               attachments: int = 0, pinned: str | None = None,
               pin_note: str | None = None) -> RouteDecision:
        """The model and its candidates. ``pinned`` names the one provider that must serve the
        request (a provider passed in by hand, the offline fallback): the model is still chosen
        by the rules, but failover candidates are not offered; ``pin_note`` joins the reason."""
        encoding = self.encoding(requested_model or self.routing.default_model)
        feats = extract_features(prompt_or_text, requires_tools=requires_tools,
                                 turn_count=turn_count, attachments=attachments,
                                 encoding=encoding)
        named = feats.as_dict()
        # what a model's window must hold: all but the history, which the agent compacts to the
        # window of the model chosen (a long chat is no reason to leave a small default)
        history = (int(prompt_or_text.tokens.get("history", 0) or 0)
                   if isinstance(prompt_or_text, Prompt) else 0)
        sizes = {encoding: feats.prompt_tokens - history}

        def size(model: str) -> int:
            """The request's size as ``model``'s tokenizer reads it (each family counted once)."""
            own = self.encoding(model)
            if own not in sizes:
                sizes[own] = request_size(prompt_or_text, own)[1] - history
            return sizes[own]

        model, reason = self._choose(prompt_or_text, named, requested_model, size)
        cands = self.candidates_for(model)
        if pinned is None and cands and all(c.model != model for c in cands):   # or reads as sent
            reason += f"; no provider lists {model}: sent as " + ", ".join(
                f"{c.provider}/{c.model}" for c in cands)
        decision = RouteDecision(model, cands, reason, named)
        return pin(decision, pinned, pin_note) if pinned is not None else decision

    def encoding(self, model: str) -> str:
        """The tokenizer family ``model`` counts in, on the first provider that would serve it:
        an OpenAI model's own (cl100k for gpt-4, o200k for gpt-4o), else o200k
        (:func:`~hermes_core.agent.prompt.token_count.encoding_for`). There is always a first
        candidate: without providers it is the guessed one, named by its kind."""
        first = self.candidates_for(model)[0]
        kind = next((p.kind for p in self.routing.providers if p.name == first.provider),
                    first.provider)
        return encoding_for(first.model, kind)

    def _too_small(self, target: str, model: str, size: Callable[[str], int]) -> str | None:
        """Why ``model`` cannot take the request (``size(model)``: tokens as its own tokenizer
        reads them), or None when it can (or its window is unknown: the provider decides then).
        A rule says what a request is like, not how large it is: "has a code block" sent an
        18,000-token paste to an 8,192-token code model, to be refused and failed over after
        uploading it."""
        window = context_window(model, self.routing)
        if window is None:
            return None
        prompt_tokens = size(model)
        if prompt_tokens <= window:
            return None
        label = target if target in SLOTS else f"{target}_model" if f"{target}_model" in SLOTS \
            else "model"
        return f"{label} {model} ({window:,} tokens) is too small for {prompt_tokens:,} tokens"

    def _choose(self, prompt_or_text: Prompt | str, feats: Mapping[str, Any],
                requested_model: str | None, size: Callable[[str], int]) -> tuple[str, str]:
        if requested_model:
            return requested_model, "requested model"
        text = (last_user_text(prompt_or_text) if isinstance(prompt_or_text, Prompt)
                else prompt_or_text)
        skipped: list[str] = []

        def chosen(model: str, reason: str) -> tuple[str, str]:
            return model, reason + "".join(f"; skipped: {note}" for note in skipped)

        if self.classifier is not None and text.strip():
            label, confidence = self.classifier.predict(text)
            floor = self.routing.classifier.min_confidence
            model = self.resolve(label)
            if confidence >= floor and model:
                small = self._too_small(label, model, size)
                if small is None:
                    return chosen(model, f"classifier: {label} (confidence {confidence:.2f} "
                                         f">= {floor:.2f})")
                skipped.append(small)
        env = {**feats, "message": text.lower()}
        reasoning_read = False   # a rule that reads needs_reasoning was weighed and passed over
        code_read = False        # likewise a rule that passes code over for want of a code model
        for rule in self.rules:
            model = self.resolve(rule.target)
            if not model:
                continue
            reasoning_read = reasoning_read or "needs_reasoning" in rule.names
            code_read = code_read or NO_CODE_TIER in rule.condition
            try:
                hit = rule.test(env)
            except (TypeError, ArithmeticError) as e:
                log.warning("routing rule %d (%s) failed: %s", rule.index, rule.condition, e)
                continue
            if hit:
                small = self._too_small(rule.target, model, size)
                if small is None:
                    return chosen(model, f"rule {rule.index}: {rule.condition} -> {rule.target}"
                                         + because(rule.names, feats))
                skipped.append(small)
        default = self.routing.default_model
        small = self._too_small("default_model", default, size)
        longer = self.routing.long_context_model
        if small is not None and longer and longer != default \
                and self._too_small("long_context_model", longer, size) is None:
            return chosen(longer, f"long_context_model: {small}")
        if feats.get("needs_reasoning") and reasoning_read:
            return chosen(default, f"default_model: needs reasoning ({feats['reasoning_cue']})")
        if code_read and (feats.get("has_code") or feats.get("asks_for_code")):
            return chosen(default, "default_model: a code request, and no code_model is configured")
        return chosen(default, "default_model")
