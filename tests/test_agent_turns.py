"""Agent turns end to end with test doubles: skills, memories, routing, tools, cache accounting."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from helpers import copy_example_home, offline_agent

from hermes_core.agent.agent import Agent
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.config import load_settings
from hermes_core.testing import FakeProvider
from hermes_core.testing.pytest_plugin import NetworkBlocked
from hermes_core.types import Completion, Message, ToolCall, Usage


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    copy_example_home(dst)
    return dst


def agent_for(home: Path, provider, **settings) -> Agent:
    return offline_agent(home, provider, fast_model="m-fast", **settings)


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


def test_skill_view_tool_call_is_answered_within_the_turn(home: Path):
    call = ToolCall("call_1", "skill_view", '{"name": "sql-query-optimization"}')
    fake = FakeProvider([Completion("", "m", "fake", tool_calls=(call,)), "Use an index."])
    agent = agent_for(home, fake)
    reply = agent.chat("my SQL query is slow")
    assert reply.text == "Use an index."
    assert [t.name for t in fake.requests[0].prompt.tools] == ["skill_view"]
    second = fake.requests[1].prompt.messages
    assert second[-2].tool_calls == (call,)
    assert second[-1].role == "tool" and second[-1].tool_call_id == "call_1"
    assert "EXPLAIN" in second[-1].content.upper()       # the skill's body came back
    roles = [m.role for m in agent.history]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_unknown_skill_name_gets_a_readable_error(home: Path):
    call = ToolCall("c", "skill_view", '{"name": "no-such-skill"}')
    fake = FakeProvider([Completion("", "m", "fake", tool_calls=(call,)), "sorry"])
    agent = agent_for(home, fake)
    agent.chat("slow sql")
    answer = fake.requests[1].prompt.messages[-1].content
    assert "no skill named 'no-such-skill'" in answer and "sql-query-optimization" in answer


def test_session_cache_hit_ratio(home: Path):
    replies = [Completion("a", "m", "fake", Usage(1000, 10, cache_write_tokens=1500)),
               Completion("b", "m", "fake", Usage(200, 10, cache_read_tokens=1500)),
               Completion("c", "m", "fake", Usage(200, 10, cache_read_tokens=1500))]
    agent = agent_for(home, FakeProvider(replies))
    for text in ("one", "two", "three"):
        agent.chat(text)
    assert agent.stats.cache_hit_ratio == pytest.approx(3000 / (1000 + 1500 + 200 + 1500 + 200 + 1500))


def test_end_session_records_once_and_reset_starts_anew(home: Path):
    fake = FakeProvider(["noted", "SUMMARY: The user said the staging database listens on port "
                                  "6543.\nTAGS: staging, database"])
    agent = agent_for(home, fake)
    agent.chat("Please remember the staging database is on port 6543")
    first = agent.session_id
    result = agent.end_session()
    assert result is not None and result.status == "inserted"
    assert result.summary.source == "model" and result.summary.tags == ("staging", "database")
    assert fake.last_request.model == "m-fast"            # summaries come from the fast model
    assert agent.end_session() is None                  # recorded once
    assert agent.reset() is None                        # nothing new to record
    assert agent.session_id != first and agent.history == []
    assert agent.last_reply is None and agent.last_decision is None   # no trace of the old chat
    found = agent.context_engine.retrieve("staging database port")
    assert [f.session_id for f in found] == [first]


def test_repl_reset_says_whether_anything_was_recorded(home: Path):
    import io

    from hermes_core.cli.repl import Repl

    agent = agent_for(home, FakeProvider(["hi there", "SUMMARY: said hello.\nTAGS: greeting"]))
    out = io.StringIO()
    repl = Repl(agent, stdin=io.StringIO(""), stdout=out)
    repl.dispatch("/reset")
    assert "nothing to record" in out.getvalue()
    agent.chat("hello")
    repl.dispatch("/reset")
    assert "previous conversation recorded" in out.getvalue()
    assert agent.last_reply is None and repl.last_reply is None


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


def test_real_network_is_blocked_in_the_suite():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("93.184.216.34", 80))
    finally:
        s.close()
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.com", 443)


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


async def test_async_turns_build_the_prompt_off_the_event_loop(home: Path):
    """Prompt building (retrieval, memory search, hooks) must not stall the event loop: a
    pre_llm_call hook that waits for the loop itself to act would deadlock if run on it."""
    import asyncio
    import threading

    fake = FakeProvider(["one", "two"])
    agent = agent_for(home, fake)
    entered, release = threading.Event(), threading.Event()
    threads: list[str] = []

    def hook(message: str, prompt):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        entered.set()
        assert release.wait(5.0), "the hook ran on the event loop and blocked it"
        return None

    agent.pre_llm_call = hook

    async def let_go() -> None:
        assert await asyncio.to_thread(entered.wait, 5.0)
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
