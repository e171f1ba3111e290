"""Author tools through the Agent, over both wire formats and the real SDKs (HTTP mocked by respx).

One assistant message calls five tools at once: two that must run concurrently (each waits at a
barrier for the other: run one after the other, both would time out), one that raises, one with
arguments that fail validation and one whose approval is refused. Every call is answered, in call
order, and the turn ends on the model's next reply.
"""

from __future__ import annotations

import asyncio
import json
import threading
import typing
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from hermes_core import tool
from hermes_core.agent.agent import MAX_TOOL_ROUNDS, Agent
from hermes_core.config import load_settings
from hermes_core.errors import UnofferedToolCall
from hermes_core.testing import (
    SSE_HEADERS,
    FakeProvider,
    FunctionProvider,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
)
from hermes_core.types import Completion, ToolCall, fingerprint
from tests.agent.conftest import (
    ALL_MODES,
    KEYS,
    KINDS,
    MODES,
    URLS,
    Forecast,
    default_agent_for,
    make_agent,
    request_json,
    run_turn,
    tool_answers,
    wire_response,
)


def _tools() -> tuple[list[Any], dict[str, list[Any]]]:
    barrier = threading.Barrier(2, timeout=10)
    ran: dict[str, list[Any]] = {"weather": [], "add": [], "delete": []}

    def get_weather(city: str) -> str:
        """Current weather in a city.

        Args:
            city: the city's name
        """
        barrier.wait()
        ran["weather"].append(city)
        return f"sunny in {city}"

    def add(a: int, b: int) -> int:
        """Add two integers."""
        barrier.wait()
        ran["add"].append((a, b))
        return a + b

    def explode() -> str:
        """A tool that fails."""
        raise RuntimeError("disk on fire")

    @tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran["delete"].append(path)
        return "deleted"

    return [get_weather, add, explode, delete_file], ran


CALLS = (ToolCall("c1", "get_weather", '{"city": "Paris"}'),
         ToolCall("c2", "add", '{"a": 2, "b": 3}'),
         ToolCall("c3", "explode", "{}"),
         ToolCall("c4", "add", '{"a": "two", "b": 3}'),
         ToolCall("c5", "delete_file", '{"path": "/etc/passwd"}'))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_parallel_calls_errors_validation_and_refusal_are_all_answered_in_order(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    streamed = mode == "stream"
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "Let me check.", CALLS),
        wire_response(kind, streamed, "Paris is sunny and 2+3=5.")])
    tools, ran = _tools()
    asked: list[tuple[str, dict[str, Any]]] = []

    def approve(name: str, args: Any) -> bool:
        asked.append((name, dict(args)))
        return False

    agent = make_agent(empty_home, kind, tools=tools, approve=approve)
    reply = run_turn(agent, mode, "weather in Paris, and 2+3?")

    assert reply.text == "Paris is sunny and 2+3=5."
    assert route.call_count == 2
    # the tools ran (concurrently: the barrier let both through), the refused one did not
    assert ran == {"weather": ["Paris"], "add": [(2, 3)], "delete": []}
    assert asked == [("delete_file", {"path": "/etc/passwd"})]
    answers = tool_answers(kind, request_json(route, 1))
    assert [cid for cid, _ in answers] == ["c1", "c2", "c3", "c4", "c5"]
    text = dict(answers)
    assert text["c1"] == "sunny in Paris" and text["c2"] == "5"
    assert text["c3"] == "error: explode raised RuntimeError: disk on fire"
    assert text["c4"].startswith("error: invalid arguments for add: a:")
    assert "did not approve" in text["c5"]
    assert "Traceback" not in json.dumps(request_json(route, 1))
    statuses = [(r.call_id, r.status) for r in reply.tool_results]
    assert statuses == [("c1", "ok"), ("c2", "ok"), ("c3", "error"), ("c4", "invalid"),
                        ("c5", "refused")]
    assert [c.id for c in reply.tool_calls] == ["c1", "c2", "c3", "c4", "c5"]
    # the tools were offered in the request, with schemas from the type hints
    first = request_json(route, 0)
    names = ([t["function"]["name"] for t in first["tools"]] if kind == "openai"
             else [t["name"] for t in first["tools"]])
    assert names == ["get_weather", "add", "explode", "delete_file"]
    # the history carries the round: the calls, then one answer per call, then the reply
    roles = [m.role for m in agent.history]
    assert roles == ["user", "assistant", *["tool"] * 5, "assistant"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_audit_log_has_tool_names_and_timings_but_no_secret_arguments(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    def lookup(token: str, q: str) -> str:
        """Look something up."""
        return "found"

    args = json.dumps({"token": KEYS[kind], "q": "weather"})
    respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, mode == "stream", "", (ToolCall("c1", "lookup", args),)),
        wire_response(kind, mode == "stream", "done")])
    agent = make_agent(empty_home, kind, tools=[lookup])
    run_turn(agent, mode, "look it up")
    agent.loop.audit.flush()     # lines recorded on an event loop reach the file within 50 ms
    audit = (empty_home / "audit.jsonl").read_text(encoding="utf-8")
    assert KEYS[kind] not in audit
    (record,) = [json.loads(line) for line in audit.splitlines() if "tool_call" in line]
    assert (record["tool"], record["status"]) == ("lookup", "ok")
    assert record["duration_ms"] >= 0
    assert record["arguments"] == {"token": "[REDACTED]", "q": '"weather"'}


HOSTILE_KEY = "endpointKEY-9f3Kq2Lx7"   # a custom endpoint's key: no shape to recognise it by


def _echoing_model(body: dict[str, Any]) -> Any:
    """A model that calls a tool with a configured key in its arguments, then answers; the
    server adds the key it received to every reply text (``echo_keys``)."""
    from hermes_core.types import Completion

    sent = json.dumps(body)
    if '"tool_call_id"' in sent or '"tool_result"' in sent:
        return "done"
    return Completion(f"calling with {HOSTILE_KEY}", "m", "p", tool_calls=(
        ToolCall("call_1", "lookup", json.dumps({"query": HOSTILE_KEY, "note": "ok"})),))


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_no_configured_key_is_sent_back_to_the_provider_in_a_tool_round(
        tmp_path: Path, wire: str, mode: str) -> None:
    import asyncio

    from hermes_core import Agent
    from hermes_core.testing.server import MockLLMServer

    seen: list[str] = []

    def lookup(query: str, note: str) -> str:
        seen.append(query)
        return f"found {query}"

    with MockLLMServer(_echoing_model, echo_keys=True) as server:
        config = {"home": str(tmp_path), "context_engine": {"enabled": False},
                  "skill_utils": {"enabled": False},
                  "llm": {"stream": mode in ("stream", "astream"), "routing": {
                      "default_model": "local-model", "providers": [
                          {"name": "local", "type": wire,
                           "endpoint": server.url + ("/v1" if wire == "openai" else "")}]}},
                  "credentials": {"local": {"keys": [{"key": HOSTILE_KEY}]}}}
        with Agent.from_config(config, tools=[lookup]) as agent:
            if mode == "astream":
                async def consume() -> None:
                    async for _ in agent.astream("look it up"):
                        pass
                asyncio.run(consume())
            else:
                run_turn(agent, mode, "look it up")
        bodies = [json.dumps(r.body) for r in server.requests]
    # the key the model echoed reaches the tool as its fingerprint, as it reaches the history
    assert len(bodies) == 2 and seen == [f"[{fingerprint(HOSTILE_KEY)}]"]
    assert not [b for b in bodies if HOSTILE_KEY in b]


@pytest.mark.parametrize("text", [
    "The log line says nothing new. " * 2000, "日志里没有新的内容。" * 5000,
    # JSON counts ~1.9x a character estimate: cut to the estimate, it was twice the room
    json.dumps([{"id": i, "sha": f"{i * 7919:08x}", "ok": i % 3 == 0} for i in range(2000)])])
@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_result_too_large_for_the_models_window_is_cut_to_fit_it(
        kind: str, text: str, empty_home: Path, respx_mock: Any) -> None:
    """A model with an 8,000-token window got a 60,000-character tool result back (the fixed
    100,000-character cap is ~25k tokens, ~60k in Chinese): the follow-up request could never fit,
    and the provider's context-length error ended the turn."""
    from hermes_core.tokens import count_tokens

    def read_log() -> str:
        """The whole log."""
        return text

    agent = make_agent(empty_home, kind, tools=[read_log])
    agent.settings = agent.settings.with_overrides(
        **{"llm.routing.context_windows": {agent.model: 8000}})
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, calls=(ToolCall("c1", "read_log", "{}"),)),
        wire_response(kind, False, "Nothing new in the log.")])
    reply = agent.chat("anything new in the log?")
    ((call_id, answer),) = tool_answers(kind, request_json(route, 1))
    assert call_id == "c1" and answer.startswith(text[:200])
    assert count_tokens(answer) < 8000 - agent.settings.llm.max_tokens
    assert "context window" in answer and str(len(text)) in answer
    assert reply.tool_results[0].output == answer and reply.text == "Nothing new in the log."


def test_a_cl100k_models_tool_answer_is_cut_in_cl100k_tokens(
        empty_home: Path, respx_mock: Any) -> None:
    """gpt-4 counts in cl100k_base, which spends ~3x o200k's tokens on Thai: an answer cut to
    the room in o200k tokens was three times the room the model had left."""
    from hermes_core.tokens import count_tokens

    text = "บันทึกไม่มีอะไรใหม่ในวันนี้ " * 3000

    def read_log() -> str:
        """The whole log."""
        return text

    agent = make_agent(empty_home, "openai", tools=[read_log], model="gpt-4")
    agent.settings = agent.settings.with_overrides(
        **{"llm.routing.context_windows": {"gpt-4": 8000}})
    route = respx_mock.post(URLS["openai"]).mock(side_effect=[
        wire_response("openai", False, calls=(ToolCall("c1", "read_log", "{}"),)),
        wire_response("openai", False, "Nothing new.")])
    agent.chat("anything new in the log?")
    ((_, answer),) = tool_answers("openai", request_json(route, 1))
    assert answer.startswith(text[:100]) and "context window" in answer
    room = 8000 - agent.settings.llm.max_tokens
    assert count_tokens(answer, "cl100k_base") < room
    assert count_tokens(answer, "cl100k_base") > room // 4   # cut to the room, not far below


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_failing_tool_is_logged_with_its_traceback_and_no_key(
        mode: str, empty_home: Path, respx_mock: Any, caplog: pytest.LogCaptureFixture) -> None:
    kind = "openai"

    def login() -> str:
        """Log in."""
        raise PermissionError(f"token {KEYS[kind]} refused")

    respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, "", (ToolCall("c1", "login", "{}"),)),
        wire_response(kind, False, "could not log in")])
    agent = make_agent(empty_home, kind, tools=[login])
    with caplog.at_level("DEBUG", logger="hermes_core.agent.tools"):
        reply = run_turn(agent, mode, "log in")
    assert reply.text == "could not log in"
    (result,) = reply.tool_results
    assert result.status == "error" and KEYS[kind] not in result.output
    assert "Traceback" in caplog.text and "in login" in caplog.text
    assert "refused" in caplog.text and KEYS[kind] not in caplog.text


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_tool_is_answered_with_the_tools_offered_and_the_turn_goes_on(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """With no skills, skill_view is not offered, so the model is not told it exists."""
    kind = "openai"

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, mode == "stream", "", (ToolCall("c1", "subtract", '{"a": 1}'),)),
        wire_response(kind, mode == "stream", "sorry")])
    agent = make_agent(empty_home, kind, tools=[add])
    reply = run_turn(agent, mode, "1 - 1?")
    assert reply.text == "sorry"
    assert tool_answers(kind, request_json(route, 1)) == [
        ("c1", "error: unknown tool 'subtract'; the tools are: add")]
    assert [t["function"]["name"] for t in request_json(route, 0)["tools"]] == ["add"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind, reason", [("openai", "length"), ("anthropic", "max_tokens"),
                                          ("anthropic", "model_context_window_exceeded")])
def test_a_call_cut_off_at_the_token_limit_is_answered_as_cut_off_not_as_bad_json(
        kind: str, reason: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A reply that reaches max_tokens mid-call ends with half a JSON object ("length" on OpenAI,
    "max_tokens" on Anthropic, "model_context_window_exceeded" when the window ran out first).
    Answered "Expecting ',' delimiter", the model would not know its call was cut and send the
    same long call again, to be cut again."""
    def write_file(path: str, text: str) -> str:
        """Write a file."""
        return "written"

    cut = ToolCall("c1", "write_file", '{"path": "a.txt", "text": "Once upon a ti')
    if kind == "openai":
        first = httpx.Response(200, json=openai_chat_completion("", tool_calls=(cut,),
                                                                finish_reason=reason))
    else:   # the API's tool_use input is an object: a compatible server's cut text stands in
        body = anthropic_message("", tool_calls=(ToolCall("c1", "write_file", "{}"),),
                                 stop_reason=reason)
        body["content"][0]["input"] = {}
        first = httpx.Response(200, json=body)
    route = respx_mock.post(URLS[kind]).mock(side_effect=[first,
                                                          wire_response(kind, False, "Sorry.")])
    agent = make_agent(empty_home, kind, tools=[write_file])
    run_turn(agent, mode, "write a story to a.txt")
    ((_, answer),) = tool_answers(kind, request_json(route, 1))
    assert answer.startswith("error: ") and "max_tokens" in answer and "cut off" in answer


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind, reason, written", [("openai", "length", ""), ("openai", "length", "{}"),
                                                   ("anthropic", "max_tokens", "{}")])
def test_the_last_call_of_a_cut_reply_with_no_arguments_yet_is_not_run_with_its_defaults(
        kind: str, reason: str, written: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The reply reached max_tokens right after the call's name: its arguments were never
    written (OpenAI sends "", Anthropic's block keeps its start's ``{}``). Every parameter has a
    default, so they validated and the tool ran, on the whole drive, a call the model had not
    finished. The call before it was whole and runs."""
    ran: list[tuple[str, str]] = []

    def clean(folder: str = "/", pattern: str = "*") -> str:
        """Delete the files matching a pattern."""
        ran.append((folder, pattern))
        return "deleted"

    calls = (ToolCall("c1", "clean", '{"folder": "/tmp/build"}'), ToolCall("c2", "clean", written))
    if kind == "openai":
        first = httpx.Response(200, json=openai_chat_completion("", tool_calls=calls,
                                                                finish_reason=reason))
    else:
        first = httpx.Response(200, json=anthropic_message("", tool_calls=calls, stop_reason=reason))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[first,
                                                          wire_response(kind, False, "Sorry.")])
    agent = make_agent(empty_home, kind, tools=[clean])
    run_turn(agent, mode, "clean the build folder")
    assert ran == [("/tmp/build", "*")]
    (_, whole), (_, cut) = tool_answers(kind, request_json(route, 1))
    assert whole == "deleted"
    assert cut.startswith("error: ") and "cut off" in cut and "not run" in cut


def _cut_inside_a_call() -> httpx.Response:
    """An OpenAI stream dropped (closed cleanly, no finish reason) halfway through a call's
    arguments: no text was shown."""
    from hermes_core.testing.builders import _sse

    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}

    def part(arguments: str, **head: Any) -> tuple[None, dict[str, Any]]:
        call = {"index": 0, **head, "function": {"arguments": arguments,
                                                  **({"name": "write_file"} if head else {})}}
        return (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]},
                                            "finish_reason": None}]})

    return httpx.Response(200, headers=SSE_HEADERS, content=_sse([
        part('{"path": "a.txt", ', id="c1", type="function"), part('"text": "Once upo')]))


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_stream_dropped_inside_a_calls_arguments_runs_nothing_and_is_asked_again(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """Half a call is never run (with half its arguments, or cut to ``{}``): the stream is an
    incomplete answer, and with nothing shown yet the request is simply sent again."""
    import asyncio

    ran: list[tuple[str, str]] = []

    def write_file(path: str, text: str) -> str:
        """Write a file."""
        ran.append((path, text))
        return "written"

    whole = ToolCall("c2", "write_file", '{"path": "a.txt", "text": "Once upon a time."}')
    route = respx_mock.post(URLS["openai"]).mock(side_effect=[
        _cut_inside_a_call(), wire_response("openai", True, "", (whole,)),
        wire_response("openai", True, "Done.")])
    agent = make_agent(empty_home, "openai", tools=[write_file])
    if mode == "stream":
        stream = agent.stream("write a story to a.txt")
        text = "".join(stream)
    else:
        async def collect() -> str:
            return "".join([p async for p in agent.astream("write a story to a.txt")])
        text = asyncio.run(collect())
    assert text == "Done." and route.call_count == 3
    assert ran == [("a.txt", "Once upon a time.")]
    assert [c.id for c in agent.last_reply.tool_calls] == ["c2"]


THINKING = {"type": "thinking", "thinking": "Weather needs the tool.", "signature": "c2lnLTE="}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVkLXRoaW5raW5n"}


def _thinking_tool_round(streamed: bool) -> httpx.Response:
    """Claude thinking (a summary and a redacted block), then calling get_weather."""
    call = ToolCall("toolu_1", "get_weather", '{"city": "Oslo"}')
    if not streamed:
        body = anthropic_message("", tool_calls=(call,))
        body["content"] = [THINKING, REDACTED, *body["content"]]
        return httpx.Response(200, json=body)
    from hermes_core.testing.builders import _sse

    events = [e for e in anthropic_stream((), tool_calls=(call,)).split(b"\n\n") if e]
    # the builder's empty text block at index 0 becomes the thinking block, redacted at index 9
    thinking = _sse([
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": "",
                                                   "signature": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "thinking_delta", "thinking": THINKING["thinking"][:7]}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "thinking_delta", "thinking": THINKING["thinking"][7:]}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "signature_delta", "signature": THINKING["signature"]}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 9,
                                 "content_block": REDACTED}),
        ("content_block_stop", {"type": "content_block_stop", "index": 9})])
    kept = [events[0], thinking.strip(), *(e for e in events[1:] if b'"index": 0' not in e)]
    return httpx.Response(200, content=b"\n\n".join(kept) + b"\n\n", headers=SSE_HEADERS)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_thinking_blocks_go_back_verbatim_with_the_tool_results_and_thinking_stays_on(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """With extended thinking on, the follow-up of a tool round must start the assistant message
    with the round's thinking blocks, signatures intact. They were dropped (and thinking switched
    off for the follow-up, so the model reasoned on without its own reasoning)."""
    def get_weather(city: str) -> str:
        """Weather of a city."""
        return "sunny"

    route = respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        _thinking_tool_round(mode == "stream"), wire_response("anthropic", mode == "stream",
                                                             "It is sunny.")])
    agent = make_agent(empty_home, "anthropic", tools=[get_weather])
    reply = run_turn(agent, mode, "weather in Oslo?", options={"reasoning_effort": "low"})
    assert reply.text == "It is sunny."
    follow = request_json(route, 1)
    assistant = [m for m in follow["messages"] if m["role"] == "assistant"][-1]
    assert assistant["content"][:2] == [THINKING, REDACTED]
    assert assistant["content"][2]["type"] == "tool_use"
    assert follow["thinking"]["type"] == "enabled"
    # the turn kept in the history holds no thinking: it is the round's, sent back only in it
    assert all(not m.reasoning for m in agent.history)


def test_the_audit_keeps_model_and_enum_arguments_as_json_not_reprs() -> None:
    """Validated arguments are the function's types: a pydantic model was audited as its repr
    (``"city='Oslo' high_c=3.0"``), an Enum as ``"Unit.C"``; a key inside a model still hides it."""
    import enum

    from hermes_core.agent.tool_runner import audit_arguments

    class Unit(enum.Enum):
        C = "c"

    class Login(BaseModel):
        user: str
        token: str

    audited = audit_arguments({"where": Forecast(city="Oslo", high_c=3), "unit": Unit.C,
                               "login": Login(user="a", token=KEYS["openai"])}, [KEYS["openai"]])
    assert audited == {"where": '{"city": "Oslo", "high_c": 3.0}', "unit": '"c"',
                       "login": "[REDACTED]"}


def _always_calls_a_tool(n: int) -> list[Completion]:
    return [Completion(f"round {i}", "m-default", "fake",
                       tool_calls=(ToolCall(f"call_{i}", "skill_view", '{"name": "docker"}'),))
            for i in range(n)]


@pytest.mark.parametrize("streamed", [False, True])
def test_tool_rounds_cap_keeps_prompt_as_sent_and_history_clean(home: Path, streamed: bool):
    fake = FakeProvider(_always_calls_a_tool(MAX_TOOL_ROUNDS + 1), name="fake")
    agent = default_agent_for(home, fake)
    if streamed:
        stream = agent.stream("keep calling tools")
        "".join(stream)
        reply = stream.reply
    else:
        reply = agent.chat("keep calling tools")
    assert reply is not None and len(fake.requests) == MAX_TOOL_ROUNDS + 1
    # /prompt shows the last request exactly as sent: no tool answers the model never saw
    assert reply.prompt == fake.requests[-1].prompt
    texts = [m.content for m in agent.history if m.role == "assistant"]
    assert texts.count(f"round {MAX_TOOL_ROUNDS}") == 1
    # every tool call in the history is answered, and every answer follows its call
    asked = [c.id for m in agent.history for c in m.tool_calls]
    answered = [m.tool_call_id for m in agent.history if m.role == "tool"]
    assert asked == answered


@pytest.mark.parametrize("mode", ["chat", "stream", "achat", "astream"])
def test_a_model_calling_tools_forever_ends_with_a_reply_that_says_the_cap_stopped_it(
        tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture):
    """A model that only ever calls a tool: after llm.max_tool_rounds the turn used to end with
    an empty reply and nothing saying why (the CLI printed a blank line)."""
    def ping() -> str:
        """Ping."""
        return "pong"

    looping = FunctionProvider(lambda p, m: Completion(
        "", m, "", tool_calls=(ToolCall(f"c{len(p.messages)}", "ping", "{}"),)))
    agent = Agent(load_settings({"home": str(tmp_path), "llm": {"max_tool_rounds": 2}}, env={}),
                  provider=looping, tools=[ping], loop_options={"audit_path": False})
    with caplog.at_level("WARNING", logger="hermes_core.agent"):
        if mode == "chat":
            reply = agent.chat("loop")
        elif mode == "stream":
            stream = agent.stream("loop")
            "".join(stream)
            reply = stream.reply
        elif mode == "achat":
            reply = asyncio.run(agent.achat("loop"))
        else:
            async def drain() -> None:
                async for _ in agent.astream("loop"):
                    pass
            asyncio.run(drain())
            reply = agent.last_reply
    assert reply is not None and reply.stop_reason == "max_tool_rounds"
    assert len(reply.tool_results) == 2 and len(reply.tool_calls) == 3
    assert "llm.max_tool_rounds (2)" in caplog.text
    # a turn the model ends by itself says so too
    agent.tools.max_rounds = 5
    with agent.override(provider=FakeProvider(["done"])):
        assert agent.chat("stop").stop_reason is None


class _Stop(BaseModel):
    name: str


#: Tokens shaped like keys the agent was never given: only their shape says they are secrets.
_GITHUB_TOKEN = "ghp_" + "Zq8Lm2Xc4Vb6Nn1Aa3Ss5Dd7Ff9Gg0Hh2Jj4"
_SLACK_TOKEN = "xoxb-" + "1234567890-abcdefghijklmnop"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_calls_as_models_send_them_are_run_or_told_the_fix_and_no_returned_secret_is_kept(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """Through each SDK: a list sent as JSON text and null for a defaulted parameter run the
    tool; arguments encoded twice run it; a name in other case is told the tool it meant; a
    token a tool returns or raises reaches neither the provider, the reply, the history nor any
    file in the home (the audit log, the session store)."""
    ran: list[tuple[str, list[str], str]] = []

    def plan(city: str, stops: list[_Stop], pace: typing.Literal["slow", "fast"] = "slow") -> str:
        """Plan a walk."""
        ran.append((city, [s.name for s in stops], pace))
        return f"{city}: {len(stops)} stops"

    def credentials() -> dict[str, str]:
        """Read the deploy credentials."""
        return {"github": _GITHUB_TOKEN, "user": "deploy"}

    def notify() -> str:
        """Notify the team."""
        raise PermissionError(f"slack refused token {_SLACK_TOKEN}")

    stops = json.dumps([{"name": "harbour"}, {"name": "fort"}])
    calls = (ToolCall("c1", "plan", json.dumps({"city": "Oslo", "stops": stops, "pace": None})),
             ToolCall("c2", "Plan", json.dumps({"city": "Oslo", "stops": []})),
             ToolCall("c3", "plan", json.dumps(json.dumps({"city": "Bergen", "stops": []}))),
             ToolCall("c4", "credentials", "{}"),
             ToolCall("c5", "notify", "{}"))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, mode == "stream", "On it.", calls),
        wire_response(kind, mode == "stream", "Done.")])
    agent = make_agent(empty_home, kind, tools=[plan, credentials, notify])
    reply = run_turn(agent, mode, "plan walks and notify the team")

    assert reply.text == "Done."
    # the calls run in threads of their own: their order of running is not the order sent
    assert sorted(ran) == [("Bergen", [], "slow"), ("Oslo", ["harbour", "fort"], "slow")]
    answers = dict(tool_answers(kind, request_json(route, 1)))
    assert answers["c1"] == "Oslo: 2 stops" and answers["c3"] == "Bergen: 0 stops"
    assert answers["c2"].startswith("error: unknown tool 'Plan'; did you mean 'plan'?")
    assert json.loads(answers["c4"]) == {"github": "[REDACTED]", "user": "deploy"}
    assert answers["c5"] == "error: notify raised PermissionError: slack refused token [REDACTED]"
    agent.close(wait_warm=False, summarize=False)
    kept = [json.dumps(request_json(route, 1)), repr(reply), repr(agent.history),
            *(p.read_bytes().decode("utf-8", "replace") for p in empty_home.rglob("*")
              if p.is_file())]
    assert not [k for k in kept if _GITHUB_TOKEN in k or _SLACK_TOKEN in k]


class _Spot(BaseModel):
    name: str
    score: float


def _hostile_tools() -> list[Any]:
    def echo(n: int) -> int:
        """Doubles n."""
        return n * 2

    async def aecho(n: int) -> int:
        """Triples n."""
        await asyncio.sleep(0.001)
        return n * 3

    def shout(n: int) -> None:
        """Prints n."""
        print(f"n is {n}")

    def odd(kind: str) -> Any:
        """Returns or raises something odd."""
        if kind == "cycle":
            loop: dict[str, Any] = {}
            loop["self"] = loop
            return loop
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "exit":
            raise SystemExit(3)
        if kind == "genexit":
            raise GeneratorExit
        import numpy as np
        return {"nan": float("nan"), "bytes": b"\xff\x00", "numpy": np.arange(3),
                "model": _Spot(name="Oslo", score=0.5)}[kind]

    return [echo, aecho, shout, odd]


_ODD = {"cycle": "error: odd returned a value that cannot be shown as text (it holds itself (a "
                 "cycle))",
        "interrupt": "error: odd raised KeyboardInterrupt",
        "exit": "error: odd exited (status 3)",
        "genexit": "error: odd raised GeneratorExit",
        "nan": "null\n[note: JSON has no NaN or Infinity; null stands for $ (NaN)]",
        "bytes": "[binary data: 2 bytes, not shown]",
        "numpy": "[0, 1, 2]",
        "model": '{"name": "Oslo", "score": 0.5}'}


def _hostile_round() -> tuple[tuple[ToolCall, ...], list[str]]:
    """64 calls in one message and the answer each must get."""
    calls, answers = [], []
    odd_kinds = list(_ODD)
    for i in range(64):
        slot = i % 8
        if slot in (0, 1, 2):
            calls.append(ToolCall(f"c{i}", "echo", json.dumps({"n": i})))
            answers.append(str(i * 2))
        elif slot in (3, 4):
            calls.append(ToolCall(f"c{i}", "aecho", json.dumps({"n": i})))
            answers.append(str(i * 3))
        elif slot == 5:
            calls.append(ToolCall(f"c{i}", "shout", json.dumps({"n": i})))
            answers.append(f"n is {i}")
        elif slot == 6:
            kind = odd_kinds[(i // 8) % len(odd_kinds)]
            calls.append(ToolCall(f"c{i}", "odd", json.dumps({"kind": kind})))
            answers.append(_ODD[kind])
        else:   # true for a number
            calls.append(ToolCall(f"c{i}", "echo", '{"n": true}'))
            answers.append("error: invalid arguments for echo: n: a JSON true or false is no "
                           "number; send a number (sent true)")
    return tuple(calls), answers


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_sixty_four_calls_in_one_message_each_get_their_own_answer_in_order(
        kind: str, mode: str, empty_home: Path, respx_mock: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One message calling 64 tools at once, sync and async, some returning or raising what an
    author's tool should not (a cycle, NaN, binary, numpy, a model; KeyboardInterrupt,
    SystemExit, GeneratorExit), printing, or sent ``true`` for a number: every call is answered,
    in call order, on the wire through the real SDK, and the turn ends on the model's reply."""
    calls, expected = _hostile_round()
    streamed = mode == "stream"
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "Working.", calls),
        wire_response(kind, streamed, "All done.")])
    agent = make_agent(empty_home, kind, tools=_hostile_tools())
    reply = run_turn(agent, mode, "do all of it")
    assert reply.text == "All done." and route.call_count == 2
    answers = tool_answers(kind, request_json(route, 1))
    assert [cid for cid, _ in answers] == [c.id for c in calls]
    assert [text for _, text in answers] == expected
    assert [m.role for m in agent.history] == ["user", "assistant", *["tool"] * 64, "assistant"]
    assert "n is" not in capsys.readouterr().out


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_call_to_a_request_that_offered_no_tools_is_refused_and_nothing_is_sent_after_it(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A compatible server answering a request that offered no tools with a tool call (the API
    itself sends none): the call was answered "unknown tool ...; the tools are: none" and the
    follow-up carried tool_use and tool_result blocks with no ``tools``, which Anthropic's API
    refuses with a 400 ("Requests which include tool_use or tool_result blocks must define
    tools"). The turn is refused with a typed error naming the call, no second request is sent,
    the history is untouched and the next turn sends no trace of the call."""
    streamed = mode in ("stream", "astream")
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "Let me check.",
                      (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)),
        wire_response(kind, streamed, "It is cold in Oslo.")])
    agent = make_agent(empty_home, kind)
    with pytest.raises(UnofferedToolCall) as caught:
        run_turn(agent, mode, "weather in Oslo?")
    assert "tools" not in request_json(route, 0) and route.call_count == 1
    assert caught.value.tools == ("get_weather",) and caught.value.text == "Let me check."
    assert "'get_weather'" in str(caught.value) and "offered no tools" in str(caught.value)
    assert agent.history == []
    assert run_turn(agent, mode, "and now?").text == "It is cold in Oslo."
    assert "get_weather" not in route.calls[1].request.content.decode()



@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_history_with_a_tool_round_goes_on_with_an_agent_offering_no_tools(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A history holding a tool round, handed to an agent with no tools: Anthropic's API
    refuses tool blocks in a request that defines no tools (400, every later turn). The
    history's tools are declared on Anthropic's wire, never to be called (``tool_choice``
    none); OpenAI's takes the round as it is, with no ``tools``."""
    streamed = mode == "stream"
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "Let me check.",
                      (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)),
        wire_response(kind, streamed, "Cold in Oslo."),
        wire_response(kind, streamed, "It was mild.")])

    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return f"cold in {city}"

    first = make_agent(empty_home, kind, tools=[get_weather])
    run_turn(first, mode, "weather in Oslo?")
    later = make_agent(empty_home, kind)
    later.history = list(first.history)
    assert run_turn(later, mode, "and yesterday?").text == "It was mild."
    sent = request_json(route, 2)
    assert tool_answers(kind, sent) == [("c1", "cold in Oslo")]
    if kind == "anthropic":
        assert [t["name"] for t in sent["tools"]] == ["get_weather"]
        assert sent["tool_choice"] == {"type": "none"}
    else:
        assert "tools" not in sent and "tool_choice" not in sent
