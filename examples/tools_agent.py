"""A tool-using agent, end to end, against the loopback server in ``hermes_core.testing``.

The "model" is a script inside the server: it asks for two tools at once, then answers from their
results; the agent sends the real wire format through the official SDK, runs the tools
concurrently and sends their results back. Then a structured-output turn returns a pydantic object.
Run: python examples/tools_agent.py [--wire openai|anthropic] [--stream]
"""

from __future__ import annotations

import json
import sys
import tempfile
from typing import Any

from pydantic import BaseModel

from hermes_core import Agent, tool
from hermes_core.testing.server import MockLLMServer
from hermes_core.types import Completion, ToolCall


def get_weather(city: str) -> dict[str, Any]:
    """Current weather in a city.

    Args:
        city: the city's name, e.g. "Oslo"
    """
    return {"city": city, "temp_c": 21, "sky": "clear"}


@tool(timeout_s=5)
async def local_time(city: str) -> str:
    """The local time in a city (an async tool).

    Args:
        city: the city's name
    """
    return "14:05"


class Trip(BaseModel):
    """A day-trip suggestion."""

    city: str
    activity: str
    bring_umbrella: bool


def scripted_model(body: dict[str, Any]) -> str | Completion:
    """Stands in for the model: tools first, then an answer from their results, or JSON."""
    structured_tool = any(t.get("name") == "structured_output" for t in body.get("tools", []))
    if body.get("response_format") or structured_tool:
        trip = {"city": "Oslo", "activity": "walk the harbour", "bring_umbrella": False}
        if "response_format" in body:
            return json.dumps(trip)
        return Completion("", "", "", tool_calls=(ToolCall("t1", "structured_output",
                                                           json.dumps(trip)),))
    results = _tool_results(body)
    if not results:
        return Completion("Let me check.", "", "", tool_calls=(
            ToolCall("w1", "get_weather", '{"city": "Oslo"}'),
            ToolCall("t1", "local_time", '{"city": "Oslo"}')))
    weather = json.loads(results[0])
    return f"In {weather['city']} it is {weather['temp_c']}°C and {weather['sky']}; local time {results[1]}."


def _tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results of the last round, in either wire format."""
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            out.append(m["content"])
        elif isinstance(m.get("content"), list):
            out += [b["content"] for b in m["content"] if b.get("type") == "tool_result"]
    return out


def main(argv: list[str]) -> int:
    wire = argv[argv.index("--wire") + 1] if "--wire" in argv else "openai"
    with MockLLMServer(scripted_model) as server, tempfile.TemporaryDirectory() as home:
        endpoint = server.url + ("/v1" if wire == "openai" else "")
        config = {"home": home, "context_engine": {"enabled": False},
                  "skill_utils": {"enabled": False},
                  "llm": {"routing": {"default_model": "local-model", "providers": [
                      {"name": "local", "type": wire, "endpoint": endpoint}]}},
                  "credentials": {"local": {"keys": [{"key": "local-test-key"}]}}}
        with Agent.from_config(config, tools=[get_weather, local_time]) as agent:
            if "--stream" in argv:
                stream = agent.stream("What's the weather in Oslo, and the time there?")
                print("".join(stream))
                reply = stream.reply
            else:
                reply = agent.chat("What's the weather in Oslo, and the time there?")
                print(reply.text)
            assert reply is not None
            for r in reply.tool_results:
                print(f"  [tool {r.name}: {r.status}, {r.duration_ms:.1f} ms] {r.output}")
            trip = agent.chat("Suggest a day trip.", output=Trip)
            print(f"structured: {trip!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
