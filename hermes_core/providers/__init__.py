"""Providers: one wire format each. ``build_provider`` turns a config entry into one."""

from __future__ import annotations

from hermes_core.config import ProviderSettings, Settings
from hermes_core.errors import ConfigError
from hermes_core.providers.base import CallOptions, ClientCache, Provider

__all__ = ["CallOptions", "ClientCache", "Provider", "build_provider", "build_providers"]


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
    """Every configured provider by name, in priority order."""
    ordered = sorted(settings.llm.routing.providers, key=lambda p: p.priority)
    return {p.name: build_provider(p) for p in ordered}
