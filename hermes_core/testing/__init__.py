"""Offline test kit: provider doubles, SDK-accurate response builders, a fake clock, and a
pytest plugin.

Heavier helpers are imported from their modules: ``hermes_core.testing.agents`` (an Agent wired
for tests), ``hermes_core.testing.retrieval`` (a hashing embedder, SKILL.md writers),
``hermes_core.testing.redis_server`` (a real redis-server on a free port).

Load the plugin early (``-p hermes_core.testing.pytest_plugin``) so respx sees both SDKs.
"""

from hermes_core.testing.builders import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_blocks_stream,
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    code_execution_blocks,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
    retry_after_headers,
    web_search_blocks,
)
from hermes_core.testing.clock import FakeClock
from hermes_core.testing.fakes import (
    FakeProvider,
    FunctionProvider,
    RecordedRequest,
    Streamed,
    streamed,
    tool_call,
    tool_calls,
)
from hermes_core.testing.scripted import ScriptedCall, ScriptedProvider

__all__ = [
    "ANTHROPIC_URL",
    "OPENAI_URL",
    "SSE_HEADERS",
    "FakeClock",
    "FakeProvider",
    "FunctionProvider",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedProvider",
    "Streamed",
    "anthropic_blocks_stream",
    "anthropic_error",
    "anthropic_message",
    "anthropic_stream",
    "code_execution_blocks",
    "openai_chat_completion",
    "openai_chat_stream",
    "openai_error",
    "retry_after_headers",
    "streamed",
    "tool_call",
    "tool_calls",
    "web_search_blocks",
]
