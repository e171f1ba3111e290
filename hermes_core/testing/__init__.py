"""Offline test kit: provider doubles, SDK-accurate response builders, and a pytest plugin.

Load the plugin early (``-p hermes_core.testing.pytest_plugin``) so respx sees both SDKs.
"""

from hermes_core.testing.builders import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
)
from hermes_core.testing.fakes import (
    FakeProvider,
    FunctionProvider,
    RecordedRequest,
    tool_call,
    tool_calls,
)

__all__ = [
    "ANTHROPIC_URL",
    "OPENAI_URL",
    "SSE_HEADERS",
    "FakeProvider",
    "FunctionProvider",
    "RecordedRequest",
    "anthropic_error",
    "anthropic_message",
    "anthropic_stream",
    "openai_chat_completion",
    "openai_chat_stream",
    "openai_error",
    "retry_after_headers",
    "tool_call",
    "tool_calls",
]
