"""The SDK-accurate builders: what they build reads as the real servers' answers read."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core.errors import parse_retry_after
from hermes_core.testing import retry_after_headers


@pytest.mark.parametrize("form", ["http-date", "anthropic-reset"])
def test_an_absolute_wait_is_stated_on_the_server_s_clock_however_late_it_is_read(
        form: str) -> None:
    """A wait stated as a time (an HTTP date, Anthropic's RFC 3339 reset) came without the
    ``Date`` a server sends beside it, so it was read against the reader's clock: a test on a
    loaded machine that read it seconds after building it saw a shorter wait, and failed."""
    built = time.time() - 5.0     # read five seconds after it was made
    headers = retry_after_headers(form, 30, now=built)
    assert parse_retry_after(headers) == 30.0
    assert parse_retry_after(headers, now=built + 3600) == 30.0   # whatever the reader's clock


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_tool_round_then_a_structured_answer_scripted_on_either_wire(
        wire: str, hermes_home: Path, respx_mock: Any) -> None:
    """The README's forms for an author's agent with tools and ``output=``: the real SDKs run
    against the builders' bodies, a tool round first, then the answer (OpenAI's as JSON text,
    Anthropic's as a call of the output tool)."""
    import httpx
    from pydantic import BaseModel

    from hermes_core import Agent
    from hermes_core.config import load_settings
    from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
    from hermes_core.testing import (
        ANTHROPIC_URL,
        OPENAI_URL,
        anthropic_message,
        openai_chat_completion,
        tool_call,
    )

    class Trip(BaseModel):
        city: str
        bring_umbrella: bool

    def get_weather(city: str) -> dict[str, Any]:
        """Current weather in a city."""
        return {"city": city, "rain": True}

    ask = tool_call("get_weather", city="Bergen")
    answer = {"city": "Bergen", "bring_umbrella": True}
    if wire == "openai":
        url, model = OPENAI_URL, "gpt-4o"
        bodies = [openai_chat_completion("", tool_calls=[ask]),
                  openai_chat_completion(json.dumps(answer))]
    else:
        url, model = ANTHROPIC_URL, "claude-sonnet-4-5"
        bodies = [anthropic_message("", tool_calls=[ask]),
                  anthropic_message("", tool_calls=[tool_call(STRUCTURED_OUTPUT_TOOL, **answer)])]
    route = respx_mock.post(url).mock(side_effect=[httpx.Response(200, json=b) for b in bodies])
    settings = load_settings({"home": str(hermes_home),
                              "credentials": {wire: {"keys": [{"key": "sk-test-0123456789ab"}]}},
                              "llm": {"routing": {"default_model": model}}}, env={})
    agent = Agent(settings, tools=[get_weather], loop_options={"audit_path": False})
    assert agent.chat("Plan a day in Bergen", output=Trip) == Trip(**answer)
    assert route.call_count == 2
    sent = json.dumps(json.loads(route.calls[1].request.content))   # the tool's answer went back
    assert '\\"rain\\": true' in sent
