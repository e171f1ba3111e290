"""Providers: one wire format each. ``build_provider`` turns a config entry into one."""

from __future__ import annotations

from hermes_core.config import ProviderSettings, Settings
from hermes_core.errors import ConfigError
from hermes_core.providers.base import CallOptions, ClientCache, Provider

__all__ = ["CallOptions", "ClientCache", "Provider", "build_provider", "build_providers",
           "keep_lessons"]


def build_provider(p: ProviderSettings) -> Provider:
    """The adapter for a provider entry: by ``type``, else its name, else OpenAI-compatible."""
    kind = p.kind
    if kind == "anthropic":
        from hermes_core.providers.anthropic import AnthropicProvider

        return AnthropicProvider(p.name, p.endpoint, p.timeout_s)
    if kind == "offline":
        from hermes_core.providers.offline import OfflineProvider

        return OfflineProvider(p.name)
    if kind == "openai":
        from hermes_core.providers.openai import OpenAIProvider

        return OpenAIProvider(p.name, p.endpoint, p.timeout_s)
    raise ConfigError(f"unknown provider type '{kind}'", key_path="llm.routing.providers")


def build_providers(settings: Settings) -> dict[str, Provider]:
    """Every configured provider by name, in priority order, each keeping what its models
    refused in the home (see :func:`keep_lessons`)."""
    ordered = sorted(settings.llm.routing.providers, key=lambda p: p.priority)
    return keep_lessons({p.name: build_provider(p) for p in ordered}, settings)


def keep_lessons(providers: dict[str, Provider], settings: Settings) -> dict[str, Provider]:
    """``providers``, those that learn refusals from a 400 reading and keeping them in the
    home's ``learned_refusals.json`` (:mod:`hermes_core.providers.lessons`): one file, read once."""
    from hermes_core.providers.lessons import FILE_NAME, RefusalMemory

    memory = RefusalMemory(settings.home_path / FILE_NAME)
    for provider in providers.values():
        keep = getattr(provider, "keep_lessons", None)
        if keep is not None:
            keep(memory)
    return providers
