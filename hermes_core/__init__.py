"""hermes_core: what goes in the prompt, which model and provider, which key.

Every exported name loads on first use (PEP 562): ``import hermes_core`` imports nothing heavy
(no config, no pydantic, no SDK), so library users pay only for what they touch, and the
``hermes-core`` command's Ctrl-C handling is in place before any slow import starts
(:mod:`hermes_core.cli.entry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the names the lazy table resolves, for type checkers and editors
    from hermes_core.config import (
        Settings,
        load_settings,
    )
    from hermes_core.errors import (
        AllProvidersFailed,
        AuthenticationFailed,
        BadRequest,
        ConfigError,
        ConnectionFailed,
        ContextWindowExceeded,
        HermesError,
        NoCredentialAvailable,
        Overloaded,
        ProviderError,
        QuotaExhausted,
        RateLimited,
        ServerError,
        StructuredOutputError,
        Timeout,
    )
    from hermes_core.types import (
        CachePlan,
        Candidate,
        Completion,
        Credential,
        Delta,
        MemoryFragment,
        Message,
        Prompt,
        RetrievalQuery,
        RouteDecision,
        Skill,
        ToolCall,
        ToolResult,
        ToolSpec,
        TurnContext,
        Usage,
    )

__version__ = "0.1.0"

# Every exported name, imported on first use: ``import hermes_core`` stays cheap.
_LAZY = {
    "Settings": "hermes_core.config",
    "load_settings": "hermes_core.config",
    "AllProvidersFailed": "hermes_core.errors",
    "AuthenticationFailed": "hermes_core.errors",
    "BadRequest": "hermes_core.errors",
    "ConfigError": "hermes_core.errors",
    "ConnectionFailed": "hermes_core.errors",
    "ContextWindowExceeded": "hermes_core.errors",
    "HermesError": "hermes_core.errors",
    "NoCredentialAvailable": "hermes_core.errors",
    "Overloaded": "hermes_core.errors",
    "ProviderError": "hermes_core.errors",
    "QuotaExhausted": "hermes_core.errors",
    "RateLimited": "hermes_core.errors",
    "ServerError": "hermes_core.errors",
    "StructuredOutputError": "hermes_core.errors",
    "Timeout": "hermes_core.errors",
    "CachePlan": "hermes_core.types",
    "Candidate": "hermes_core.types",
    "Completion": "hermes_core.types",
    "Credential": "hermes_core.types",
    "Delta": "hermes_core.types",
    "MemoryFragment": "hermes_core.types",
    "Message": "hermes_core.types",
    "Prompt": "hermes_core.types",
    "RetrievalQuery": "hermes_core.types",
    "RouteDecision": "hermes_core.types",
    "Skill": "hermes_core.types",
    "ToolCall": "hermes_core.types",
    "ToolResult": "hermes_core.types",
    "ToolSpec": "hermes_core.types",
    "TurnContext": "hermes_core.types",
    "Usage": "hermes_core.types",
    "Agent": "hermes_core.agent.agent",
    "Reply": "hermes_core.agent.reply",
    "PromptBuilder": "hermes_core.agent.prompt_builder",
    "MemoryStore": "hermes_core.agent.prompt.memory_files",
    "ContextEngine": "hermes_core.agent.context_engine",
    "Router": "hermes_core.agent.smart_routing",
    "CredentialPool": "hermes_core.agent.credential_pool",
    "CallLoop": "hermes_core.agent.resilience",
    "SkillRetriever": "hermes_core.retrieval.retriever",
    "get_skill_retriever": "hermes_core.retrieval.retriever",
    "build_provider": "hermes_core.providers",
    "CallOptions": "hermes_core.providers.base",
    "Provider": "hermes_core.providers.base",
    "tool": "hermes_core.agent.tools.schema",
    "Tool": "hermes_core.agent.tools.schema",
    "Cost": "hermes_core.agent.pricing",
    "PriceTable": "hermes_core.agent.pricing",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "Agent",
    "AllProvidersFailed",
    "AuthenticationFailed",
    "BadRequest",
    "CachePlan",
    "CallLoop",
    "CallOptions",
    "Candidate",
    "Completion",
    "ConfigError",
    "ConnectionFailed",
    "ContextEngine",
    "ContextWindowExceeded",
    "Cost",
    "Credential",
    "CredentialPool",
    "Delta",
    "HermesError",
    "MemoryFragment",
    "MemoryStore",
    "Message",
    "NoCredentialAvailable",
    "Overloaded",
    "PriceTable",
    "Prompt",
    "PromptBuilder",
    "Provider",
    "ProviderError",
    "QuotaExhausted",
    "RateLimited",
    "Reply",
    "RetrievalQuery",
    "RouteDecision",
    "Router",
    "ServerError",
    "Settings",
    "Skill",
    "SkillRetriever",
    "StructuredOutputError",
    "Timeout",
    "Tool",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "TurnContext",
    "Usage",
    "build_provider",
    "get_skill_retriever",
    "load_settings",
    "tool",
]
