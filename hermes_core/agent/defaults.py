"""The Agent's default collaborators read from the settings: the providers, the skill retriever
and episodic memory (the last two None, with a warning, when they cannot be had). Kept apart
from the facade, which is long enough; the CLI's prompt preview builds them read-only."""

from __future__ import annotations

import logging
from typing import Any

from hermes_core.config import Settings
from hermes_core.errors import HermesError
from hermes_core.providers.base import Provider
from hermes_core.providers.offline import OfflineProvider

log = logging.getLogger("hermes_core.agent")


def default_retriever(settings: Settings, *, warm: bool = True, read_only: bool = False) -> Any:
    """The skill retriever for the home's skills (None when unavailable); ``read_only`` (a
    preview): its usage history is read, never written.

    With retrieval off (``skill_utils.enabled: false`` or ``HERMES_DISABLE_SKILL_RETRIEVAL=1``) the
    retriever still serves the prompt: it lists every skill, as before retrieval existed, and the
    model can load one with skill_view. It then needs no embedding model, so none is loaded.
    """
    off = not settings.skill_utils.enabled   # HERMES_DISABLE_SKILL_RETRIEVAL=1 arrives here
    if off:
        settings = settings.with_overrides(**{"skill_utils.enabled": False,
                                              "skill_utils.embeddings": False})
    try:
        from hermes_core.retrieval.retriever import build_retriever
    except ImportError:  # retrieval not installed
        return None
    try:
        retriever = build_retriever(settings, read_only=read_only)
    except HermesError as e:
        log.warning("skill retrieval is off: %s", e)
        return None
    warm_up = getattr(retriever, "warm_up", None)
    if warm and not off and warm_up is not None:
        warm_up(background=True)  # the first turn is not blocked by loading the embedding model
    return retriever


def default_context_engine(settings: Settings, *, create: bool = True, read_only: bool = False) -> Any:
    """Episodic memory in the home (None when disabled, or missing and ``create`` is False);
    ``read_only`` (a preview): the database is searched, never written (see ContextEngine)."""
    if not settings.context_engine.enabled:
        return None
    from hermes_core.agent.context_engine import ContextEngine, default_db_path

    if not create and not default_db_path(settings).exists():
        return None
    try:
        return ContextEngine.from_settings(settings, create=create, read_only=read_only)
    except HermesError as e:
        log.warning("episodic memory is off: %s", e)
        return None


def offline_provider(settings: Settings) -> OfflineProvider:
    """The provider a home without an API key talks to (replies made here, no network)."""
    return OfflineProvider(stream_delay_s=settings.llm.offline_stream_delay_s)


def default_providers() -> dict[str, Provider]:
    """The real SDK providers, imported on use: an offline agent never loads either SDK."""
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider

    return {"openai": OpenAIProvider(), "anthropic": AnthropicProvider()}
