"""A tool call the turn's ``tool_choice`` rules out (``none``, or another tool's name), from a
compatible server that ignores the setting: refused, nothing run; ``auto``, ``required`` and the
named tool itself run. Split from test_tool_runner.py (ToolRunner.follow_up) by behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.errors import UnofferedToolCall
from hermes_core.types import ToolCall
from tests.agent.conftest import ALL_MODES, KINDS, URLS, make_agent, run_turn, wire_response


def _weather_and_time_agent(home: Path, kind: str, ran: list[str]) -> Any:
    agent = make_agent(home, kind)

    @agent.tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append("get_weather")
        return "cold"

    @agent.tool
    def get_time(city: str) -> str:
        """The time in a city."""
        ran.append("get_time")
        return "noon"

    return agent


@pytest.mark.parametrize("choice", ["none", "get_time"])
@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_call_the_turn_s_tool_choice_forbids_is_refused_and_nothing_is_run(
        kind: str, mode: str, choice: str, empty_home: Path, respx_mock: Any) -> None:
    """A compatible server that ignores ``tool_choice`` (``none``: no call; a tool's name: that
    tool only) and calls another tool: the call was run, a tool the caller ruled out for this
    turn (one with side effects as surely as a harmless one). Refused as a call to a tool the
    request did not offer is: nothing run, no second request, the history untouched."""
    streamed = mode in ("stream", "astream")
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "Let me check.",
                      (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)),
        wire_response(kind, streamed, "It is cold in Oslo.")])
    ran: list[str] = []
    agent = _weather_and_time_agent(empty_home, kind, ran)
    with pytest.raises(UnofferedToolCall) as caught:
        run_turn(agent, mode, "weather in Oslo?", options={"tool_choice": choice})
    assert ran == [] and route.call_count == 1 and agent.history == []
    assert caught.value.tools == ("get_weather",)
    assert "'get_weather'" in str(caught.value) and f"tool_choice '{choice}'" in str(caught.value)


@pytest.mark.parametrize("choice", ["get_weather", "required", "auto"])
@pytest.mark.parametrize("mode", ["sync", "stream"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_call_the_turn_s_tool_choice_allows_is_run(
        kind: str, mode: str, choice: str, empty_home: Path, respx_mock: Any) -> None:
    streamed = mode == "stream"
    respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "", (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)),
        wire_response(kind, streamed, "It is cold in Oslo.")])
    ran: list[str] = []
    agent = _weather_and_time_agent(empty_home, kind, ran)
    reply = run_turn(agent, mode, "weather in Oslo?", options={"tool_choice": choice})
    assert ran == ["get_weather"] and reply.text == "It is cold in Oslo."
