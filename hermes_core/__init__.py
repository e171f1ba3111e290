"""hermes_core: what goes in the prompt, which model and provider, which key."""

from hermes_core.config import Settings, load_settings
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

# The parts, imported on first use: ``import hermes_core`` stays cheap (no SDK, no torch).
_LAZY = {
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
