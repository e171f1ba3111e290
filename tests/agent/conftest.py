"""Fixtures for agents that call tools over the real SDKs, with HTTP mocked by respx; offline
agents on test doubles shared by several modules' tests (``agent_for``, ``routed_agent``, fakes
that refuse a request over their model's window, a home with a Thai MEMORY.md); a slow Redis
(a delaying proxy in front of a real redis-server) for the pool's clean-up off the event loop;
the call loop's scripted builder (``make``, ``decision``) and the two-provider HTTP settings
(``settings_for``) shared by the resilience test files. A forked child's report
(``in_forked_child``, ``held_by_a_thread``) is the suite's (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import BaseModel

from hermes_core.agent.agent import Agent
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.resilience_policy import LoopPolicy
from hermes_core.agent.smart_routing import Router
from hermes_core.config import Settings, load_settings, parse_yaml
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL, CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeProvider,
    ScriptedProvider,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
    openai_error,
)
from hermes_core.testing.agents import offline_agent
from hermes_core.testing.clock import FakeClock
from hermes_core.types import (
    Candidate,
    Completion,
    Credential,
    Message,
    Prompt,
    RouteDecision,
    ToolCall,
    Usage,
)

KEYS = {"openai": "sk-proj-toolsTESTkey0123456789abcdef",
        "anthropic": "sk-ant-toolsTESTkey0123456789abcdef"}


MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}


URLS = {"openai": OPENAI_URL, "anthropic": ANTHROPIC_URL}

#: The wire formats and the Agent's shells a tool test runs through (``run_turn``'s modes).
KINDS = ("openai", "anthropic")
MODES = ("sync", "async", "stream")
ALL_MODES = (*MODES, "astream")


class Forecast(BaseModel):
    """A weather forecast."""

    city: str
    high_c: float


def structured_reply(kind: str, streamed: bool, data: dict[str, Any] | str) -> httpx.Response:
    """A reply carrying ``data`` the way each format returns structured output."""
    if kind == "openai":
        return wire_response(kind, streamed, data if isinstance(data, str) else json.dumps(data))
    assert not isinstance(data, str)
    return wire_response(kind, streamed, "", (ToolCall("s1", STRUCTURED_OUTPUT_TOOL,
                                                       json.dumps(data)),))


def strict_json(content: bytes) -> dict[str, Any]:
    """A request body read as strict JSON: ``NaN`` or ``Infinity`` in it fails the test."""
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in a request body")
    body: dict[str, Any] = json.loads(content, parse_constant=refuse)
    return body


def wire_response(kind: str, streamed: bool, text: str = "",
                  calls: Sequence[ToolCall] = ()) -> httpx.Response:
    """One model reply in ``kind``'s wire format, whole or as SSE (tool calls as deltas)."""
    if streamed:
        pieces = tuple(text[i:i + 5] for i in range(0, len(text), 5))
        body = (openai_chat_stream(pieces, tool_calls=calls) if kind == "openai"
                else anthropic_stream(pieces, tool_calls=calls))
        return httpx.Response(200, content=body, headers=SSE_HEADERS)
    data = (openai_chat_completion(text, tool_calls=calls) if kind == "openai"
            else anthropic_message(text, tool_calls=calls))
    return httpx.Response(200, json=data)


def make_agent(home: Path, kind: str, **kwargs: Any) -> Any:
    """An Agent speaking ``kind`` through the official SDK, one key, audit log in the home."""
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider

    cfg = {"home": str(home), "llm": {"routing": {"default_model": MODELS[kind]}},
           "credentials": {kind: {"keys": [{"key": KEYS[kind]}]}},
           "context_engine": {"enabled": False}}
    provider = OpenAIProvider() if kind == "openai" else AnthropicProvider()
    agent = Agent(load_settings(cfg, env={}), provider=provider,
                  loop_options={"sleep": lambda s: None, "audit_path": home / "audit.jsonl"},
                  **kwargs)
    _MADE.append(agent)
    return agent


#: Agents :func:`make_agent` made in the running test, closed after it: each holds its audit log
#: open, and one left to the garbage collector is reported (ResourceWarning) in whichever later
#: test the collection happens to run.
_MADE: list[Any] = []


@pytest.fixture(autouse=True)
def _close_made_agents() -> Iterator[None]:
    yield
    while _MADE:
        _MADE.pop().close(wait_warm=False, summarize=False)


def run_turn(agent: Any, mode: str, message: str, **kwargs: Any) -> Any:
    """One turn through the sync, async, streaming or async streaming shell; returns the Reply
    (with ``output``, the validated object, as ``chat`` does)."""
    if mode == "sync":
        return agent.chat(message, **kwargs)
    if mode == "async":
        return asyncio.run(agent.achat(message, **kwargs))
    if mode == "astream":
        async def drain() -> None:
            _ = [p async for p in agent.astream(message, **kwargs)]
        asyncio.run(drain())
        return agent.last_reply.output if "output" in kwargs else agent.last_reply
    stream = agent.stream(message, **kwargs)
    "".join(stream)
    return stream.reply.output if "output" in kwargs else stream.reply


def arrays_without_items(schema: Any, at: str = "") -> list[str]:
    """Where an array schema in ``schema`` has no ``items``, as OpenAI names the place
    (``properties.pair``). OpenAI refuses a tool or response format holding one with a 400 for
    the whole request ("Invalid schema for function 'view': In context=('properties',
    'view_range'), array schema missing items", AnswerDotAI/fastcore#798), strict mode or
    not; JSON Schema itself allows it (a tuple's ``prefixItems``)."""
    found: list[str] = []
    if isinstance(schema, dict):
        if schema.get("type") == "array" and "items" not in schema:
            found.append(at or "(root)")
        for key, value in schema.items():
            found += arrays_without_items(value, f"{at}.{key}" if at else key)
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += arrays_without_items(value, f"{at}[{i}]")
    return found


def openai_schema_check(*replies: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    """A respx side effect playing OpenAI's check of the schemas a chat.completions request
    carries (each tool's ``parameters``, the ``response_format``'s schema): one that has an
    array without ``items`` is answered 400 as the API answers it; otherwise the next of
    ``replies``."""
    left = list(replies)

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        schemas = [(f"function '{t['function']['name']}'", t["function"]["parameters"])
                   for t in body.get("tools", ())]
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            schemas.append(("response_format", rf["json_schema"]["schema"]))
        for named, schema in schemas:
            bad = arrays_without_items(schema)
            if bad:
                return httpx.Response(400, json=openai_error(
                    400, f"Invalid schema for {named}: In context=({bad[0]!r}), array schema "
                         "missing items.", code="invalid_function_parameters"))
        return left.pop(0)
    return answer


def request_json(route: Any, i: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(route.calls[i].request.content)
    return body


def tool_answers(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(call id, text) of every tool result in a request body, in order."""
    if kind == "openai":
        return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    out = []
    for m in body["messages"]:
        for block in m["content"] if isinstance(m["content"], list) else ():
            if block.get("type") == "tool_result":
                out.append((block["tool_use_id"], block["content"]))
    return out


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt, as in a terminal (a shell's
    background job, as CI may be, starts with it ignored, and then nothing raises)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def empty_home(tmp_path: Path) -> Path:
    """A home folder with nothing in it (no persona, no skills), so only the tools are in play."""
    h = tmp_path / "home"
    h.mkdir()
    return h


Responder = Callable[..., httpx.Response]


@pytest.fixture
def clock() -> FakeClock:
    """A clock that only moves when a test body (or a recorded sleep) moves it."""
    return FakeClock(1000.0)


class SlowRedis:
    """A TCP proxy in front of a real redis-server that, while ``delay`` is set, holds each chunk
    a client sends for ``delay`` seconds before passing it on: a Redis far away or overloaded.
    ``held`` counts the chunks it held, as each is passed on, so a test can tell whether a command
    sent while it was slow has reached Redis yet (counted, not timed)."""

    def __init__(self, url: str) -> None:
        parsed = urlsplit(url)
        self._target = (parsed.hostname or "127.0.0.1", parsed.port or 6379)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self._listener.getsockname()[1]}{parsed.path or '/0'}"
        self.delay = 0.0
        self.held = 0
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            self._socks += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, slowed: bool) -> None:
        try:
            while data := src.recv(65536):
                if slowed and self.delay:
                    time.sleep(self.delay)
                    # counted before it is passed on: Redis's reply, and the test reading
                    # ``held`` after it, may otherwise come before this thread runs again
                    self.held += 1
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
        for s in self._socks:
            s.close()


@pytest.fixture
def slow_redis(redis_url: str) -> Iterator[SlowRedis]:
    """A :class:`SlowRedis` in front of the session's redis-server (not slow until told)."""
    proxy = SlowRedis(redis_url)
    yield proxy
    proxy.close()


def agent_for(home: Path, provider, **settings) -> Agent:
    return offline_agent(home, provider, fast_model="m-fast", **settings)


def usage_events(agent: Agent) -> list[Any]:
    """What the agent's skill-usage store recorded (views after a hint, feedback); none when
    learning is off."""
    usage = agent.retriever.usage
    return [] if usage is None else usage.store.events()


def default_agent_for(home: Path, provider, **settings) -> Agent:
    return offline_agent(home, provider, **settings)


class WindowsByModel(FakeProvider):
    """Refuses a request longer than the window of the model it is sent to, as a real API does."""

    def __init__(self, windows: dict[str, int], **kw) -> None:
        super().__init__(**kw)
        self.windows = windows

    def _reply(self, prompt: Prompt, model: str):
        if prompt.purpose == "summary" or self._script:   # scripted errors first
            return super()._reply(prompt, model)
        from hermes_core.errors import ContextWindowExceeded
        from hermes_core.tokens import count_tokens
        sent = count_tokens(prompt.system + prompt.context
                            + "".join(m.content for m in prompt.messages))
        if sent + 256 > self.windows[model]:
            return ContextWindowExceeded(f"{sent} tokens is over {model}'s window", status_code=400)
        return Completion("Noted: reproduce it, check what changed, isolate one part at a time, "
                          "then verify the fix and add a regression test. " * 2, model, self.name,
                          Usage(sent, 40), finish_reason="stop")


def routed_agent(home: Path, providers, *, routing, prompt=None, context_engine=None) -> Agent:
    settings = load_settings({
        "home": str(home), "llm": {"max_tokens": 256, "routing": routing},
        "skill_utils": {"enabled": False, "embeddings": False}, "prompt": prompt or {},
        "context_engine": context_engine or {"enabled": False}}, env={})
    kw = {"provider": providers} if not isinstance(providers, dict) else {"providers": providers}
    return Agent(settings, **kw, loop_options={"sleep": lambda s: None, "audit_path": False})


LONG = ("Here is more detail about the deployment: the staging cluster runs three replicas behind "
        "the load balancer and the health check path is /healthz on port 8080. ")


class OpenAIWindows(WindowsByModel):
    """A WindowsByModel that speaks for OpenAI models: their counts are exact."""

    kind = "openai"


class AnthropicWindows(WindowsByModel):
    """A WindowsByModel speaking Anthropic's wire format (a gateway serving any model name)."""

    kind = "anthropic"


THAI_NOTE = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์\n"


BUDGET = 300


def memory_section(system: str) -> str:
    from hermes_core.agent.prompt_builder import SECTION_SEPARATOR
    header = "## Memory (MEMORY.md)\n\n"
    part = next(p for p in system.split(SECTION_SEPARATOR) if p.startswith(header))
    return part[len(header):]


def thai_memory_agent(home: Path, providers, routing) -> Agent:
    (home / "MEMORY.md").write_text(THAI_NOTE * 200, encoding="utf-8")
    return routed_agent(home, providers, routing=routing,
                        prompt={"file_token_budget": BUDGET, "injection_scan": False})


#: A day in seconds, and the clock of the context-engine tests: ``engine`` stands at NOW, and a
#: session recorded ``NOW - k * DAY`` is k days old.
DAY = 86_400.0


NOW = 1_800_000_000.0


@pytest.fixture
def engine(tmp_path: Path) -> ContextEngine:
    """A ContextEngine on a new ``sessions.db`` in ``tmp_path``, its clock standing at NOW."""
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW)
    yield eng
    eng.close()


PROMPT = Prompt(system="s", messages=(Message("user", "hi"),))


B1 = Credential("b", "sk-b-one-secret")


def decision(*cands: tuple[str, str]) -> RouteDecision:
    return RouteDecision(cands[0][1], tuple(Candidate(p, m) for p, m in cands), "test")


def make(providers: dict[str, ScriptedProvider], creds: dict[str, list[Credential]], *,
         policy: LoopPolicy | None = None, pool_policy: PoolPolicy | None = None,
         settings: object = None, audit: Path | None = None) -> tuple[CallLoop, FakeClock]:
    clock = FakeClock()
    pool = CredentialPool(creds, policy=pool_policy or PoolPolicy(strategy="fill_first"),
                          backend=InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(providers, pool, settings, clock=clock, sleep=clock.sleep,  # type: ignore[arg-type]
                    asleep=clock.asleep, rng=random.Random(7), audit_path=audit or False,
                    policy=policy or LoopPolicy())
    return loop, clock


K1, K2 = "sk-primary-one-SECRET-0001", "sk-primary-two-SECRET-0002"


K3 = "sk-ant-backup-SECRET-0003"


PRIMARY = "https://primary.test/v1"


PRIMARY_URL = PRIMARY + "/chat/completions"


PROMPT_HTTP = Prompt(system="You are Hermes.", messages=(Message("user", "hi"),))


OPTS = CallOptions(max_tokens=32, timeout_s=5)


def settings_for(primary_kind: str = "openai", *, retries_per_provider: int = 1,
                 audit: Path | None = None) -> Settings:
    primary = ({"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                "endpoint": PRIMARY} if primary_kind == "openai" else
               {"name": "primary", "type": "anthropic", "priority": 1, "models": ["claude-sonnet-4"]})
    return load_settings({
        "llm": {"deadline_s": 120, "routing": {
            "default_model": primary["models"][0],
            "providers": [primary, {"name": "backup", "type": "anthropic", "priority": 2,
                                    "models": ["claude-haiku"]}]}},
        "credentials": {"primary": {"keys": [{"key": K1}, {"key": K2}]},
                        "backup": {"keys": [{"key": K3}]}},
        "credential_pool": {"rotation": "fill_first", "retries_per_provider": retries_per_provider,
                            "audit_log": str(audit) if audit else None},
    })


LOW = ("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
       "to upgrade or purchase credits.")


# The agents and readers the tests of turn.py share (test_turn*.py).
def adder(tmp_path: Path, fake: FakeProvider) -> Agent:
    """An agent on ``fake`` with one tool, ``add``, and no retrieval, so a turn is its rounds alone."""
    settings = load_settings({"home": str(tmp_path), "llm": {"routing": {"default_model": "m"}},
                              "skill_utils": {"enabled": False, "embeddings": False},
                              "context_engine": {"enabled": False}}, env={})
    agent = Agent(settings, provider=fake, loop_options={"sleep": lambda s: None,
                                                         "audit_path": False})

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return agent


def run(agent: Agent, mode: str, message: str):
    """One turn through ``mode`` (sync, async or stream), read to its end; its Reply."""
    if mode == "sync":
        return agent.chat(message)
    if mode == "async":
        return asyncio.run(agent.achat(message))
    stream = agent.stream(message)
    "".join(stream)
    return stream.reply


ODD_KEY = "Zq7 odd-key"   # a custom endpoint's key: short, a space, no shape to recognise


def keyed_agent(tmp_path: Path, fake: FakeProvider) -> Agent:
    """An agent whose configured key is ``ODD_KEY``, which only the configured secrets can scrub."""
    settings = load_settings({"home": str(tmp_path), "llm": {"routing": {"default_model": "m"}},
                              "skill_utils": {"enabled": False, "embeddings": False},
                              "context_engine": {"enabled": False},
                              "credentials": {"custom": {"keys": [{"key": ODD_KEY}]}}}, env={})
    return Agent(settings, provider=fake, loop_options={"sleep": lambda s: None,
                                                        "audit_path": False})


async def astream(agent: Agent, message: str) -> list[str]:
    """The pieces ``astream`` shows of one turn."""
    return [piece async for piece in agent.astream(message)]


def read_turn(agent: Agent, mode: str, message: str, **kwargs: Any):
    """The Reply of one turn through ``mode``: sync, async, stream or astream (with ``output``,
    what ``run_turn`` returns in the first three: the output, for a stream too)."""
    if mode != "astream":
        return run_turn(agent, mode, message, **kwargs)

    async def read() -> None:
        async for _ in agent.astream(message, **kwargs):
            pass
    asyncio.run(read())
    return agent.last_reply


# the structured replies of test_partial_output.py (the drafts read) and
# test_partial_output_stream.py (the agent's partial objects)


class Stop(BaseModel):
    name: str
    days: int = 1


class Trip(BaseModel):
    """A trip plan."""

    city: str
    stops: list[Stop] = []


WHOLE = '{"city": "Oslo", "stops": [{"name": "Museum", "days": 2}, {"name": "Park"}]}'

FENCED = ("```json\n", '{"city": "Os', 'lo", "stops": [{"name": "Museum", "days": 2}', "]}\n", "```")
PREAMBLE = ("Here is the plan:\n", '{"city": "Os', 'lo", "stops": [{"name": "Museum", "days": 2}',
            "]}")


# the router of test_smart_routing.py and test_smart_routing_difficulty.py, and the labelled
# table's configuration both read their requests against


def routed_by(**routing: Any) -> Router:
    """A router over the ``llm.routing`` section ``routing``, read by the real config parser (a
    JSON document is YAML): every test's settings are one mapping, not a YAML block each."""
    return Router.from_settings(parse_yaml(json.dumps({"llm": {"routing": routing}})))


TABLE_ROUTING: dict[str, Any] = {
    "default_model": "gpt-4o", "fast_model": "gpt-4o-mini", "code_model": "gpt-4.1",
    "long_context_model": "gpt-4.1-long", "context_windows": {"gpt-4.1-long": 1000000}}


def assert_routed(text: str, slot: str) -> RouteDecision:
    """The table's config sends ``text`` to its ``slot`` model ("fast", "code", "default"); the
    decision, for what else a test reads in it."""
    d = routed_by(**TABLE_ROUTING).select(text)
    assert d.model == TABLE_ROUTING[f"{slot}_model"], (slot, d.reason, d.features)
    return d
