"""Tests of ``hermes_core/cli/repl.py``: Ctrl-C at the prompt, during a turn, a command or the
summary at exit, in a chat on a terminal or a pipe; and whether readline can say keys were
pressed."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.episodic.store import SessionStore
from hermes_core.cli.repl import Repl, at_the_prompt
from hermes_core.cli.repl_commands import Command
from hermes_core.config import load_settings
from hermes_core.providers.offline import OfflineProvider
from hermes_core.testing import FakeProvider
from tests.cli.conftest import Terminal, offline_agent, typing_at_terminal


@pytest.fixture
def agent(copy_example_home, tmp_path: Path) -> Agent:
    home = copy_example_home(tmp_path / "home")
    return Agent.from_config({"home": str(home), "skill_utils": {"embeddings": False}},
                             offline=True)


def test_ctrl_c_between_streamed_lines_cancels_the_turn_and_the_next_line_is_answered(
        home: Path, monkeypatch: pytest.MonkeyPatch):
    """Ctrl-C in the pause between two lines of a streamed reply (where a person's key lands, and
    where the pty test presses it): [cancelled], the rest of that reply is not shown, the turn
    leaves nothing in the history, and the next line is answered in full."""
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:   # after the second line of the first reply
            raise KeyboardInterrupt

    agent = Agent(load_settings({"home": str(home), "skill_utils": {"embeddings": False}}, env={}),
                  provider=OfflineProvider(stream_delay_s=0.4, sleep=pause),
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    out = io.StringIO()
    typing_at_terminal(monkeypatch, ["a long weekly report", "hello after", "/exit"])   # at a terminal
    repl = Repl(agent, stdin=Terminal(), stdout=out, stream=True)
    assert repl.run() == 0
    first, _, rest = out.getvalue().partition("[cancelled]")
    assert "model: " in first and "system prompt: " not in first   # cut after its second line
    assert "your message: 'hello after'" in rest and "per-turn context" in rest
    assert [m.content for m in agent.history if m.role == "user"] == ["hello after"]


def test_ctrl_c_during_a_slash_command_keeps_the_chat(agent: Agent, monkeypatch):
    real = agent.retriever.retrieve
    calls = []

    def interrupted_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:   # the user presses Ctrl-C while /skills runs
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(agent.retriever, "retrieve", interrupted_once)
    out = io.StringIO()
    typing_at_terminal(monkeypatch, ["/skills slow query", "hello after", "/exit"])   # at a terminal
    repl = Repl(agent, stdin=Terminal(), stdout=out, stream=False)
    assert repl.run() == 0
    assert "[cancelled]" in out.getvalue()
    # the line after the interrupted command was still answered
    assert [m.content for m in agent.history if m.role == "user"] == ["hello after"]


def test_ctrl_c_while_the_model_summarises_the_chat_at_exit_records_it_without_that_summary(
        tmp_path: Path):
    """Ctrl-D hands the chat to the model for its memory summary: with a provider that stalls,
    the chat sat silent for two minutes (two 60 s timeouts), and Ctrl-C then ended the process
    with the session not recorded at all. The chat now says what it waits for, and Ctrl-C records
    the session with the extractive summary instead (the notice, shown at a terminal only, is
    pinned over a pty)."""
    cfg = {"home": str(tmp_path), "skill_utils": {"enabled": False},
           "llm": {"routing": {"default_model": "m-default"}}}
    fake = FakeProvider(["Noted."], summaries=[KeyboardInterrupt()])
    agent = Agent(load_settings(cfg, env={}), provider=fake,
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    out = io.StringIO()
    repl = Repl(agent, stdin=io.StringIO("the staging database listens on port 6543\n"),
                stdout=out, stream=False)
    assert repl.run() == 0
    assert "[recorded without the model's summary]" in out.getvalue()
    assert len(fake.summary_requests) == 1
    later = Agent(load_settings(cfg, env={}), provider=FakeProvider(),
                  loop_options={"audit_path": False})
    found = later.context_engine.recall("staging database port", exclude_session="")[1]
    later.close()
    assert found and "6543" in found[0].summary


@pytest.mark.parametrize(("terminal", "ctrl_c"), [
    (True, "(Ctrl-C cancels)"),
    # Ctrl-C in a chat read from a pipe or file stops the whole chat, not this wait
    (False, "(Ctrl-C ends the chat)"),
])
def test_a_wait_for_a_rate_limited_key_is_told_before_it_starts_not_sat_through_in_silence(
        tmp_path: Path, terminal: bool, ctrl_c: str):
    """The only key answered 429: the chat slept out the key's cool-down (the Retry-After, a
    minute when a proxy gives none), up to ``deadline_s`` with no other provider, with nothing
    on screen. It now says what it waits for and how long, before the wait, once, and what
    Ctrl-C does there."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer
    key = "sk-limited-0123456789abcdefXYZ"
    with MockLLMServer(reply="answered after the wait") as srv:
        srv.set_key(key, KeyBehaviour(status=429, retry_after=2))   # a 2 s cool-down either way
        cfg = {"home": str(tmp_path), "skill_utils": {"enabled": False},
               "credential_pool": {"default_cooldown_s": 2},
               "llm": {"routing": {"default_model": "m1", "providers": [
                   {"name": "custom", "type": "openai", "endpoint": f"{srv.url}/v1",
                    "models": ["m1"]}]}},
               "credentials": {"custom": {"keys": [{"key": key}]}}}
        agent = Agent(load_settings(cfg, env={}), loop_options={"audit_path": False})
        out = io.StringIO()
        repl = Repl(agent, stdin=Terminal() if terminal else io.StringIO(""), stdout=out,
                    stream=True)
        real_sleep = agent.loop.sleep

        def heal_then_sleep(seconds: float) -> None:   # the proxy recovers during the wait
            srv.set_key(key, KeyBehaviour())
            real_sleep(seconds)

        agent.loop.sleep = heal_then_sleep
        repl.turn("hello")
        agent.close(wait_warm=False)
    lines = out.getvalue().splitlines()
    waits = [line for line in lines if "waiting" in line]
    assert len(waits) == 1, lines
    assert waits[0].startswith("[custom: ") and "rate limit" in waits[0], waits
    assert waits[0].endswith(f"{ctrl_c}]"), waits
    assert lines.index(waits[0]) < lines.index("answered after the wait")
    assert agent.loop.on_wait is None   # the chat's reporter is the turn's only


@pytest.mark.parametrize(("typed", "warned", "edited", "action"), [
    ("", False, False, "warn"), ("", True, False, "end"), ("   ", True, False, "end"),
    ("half a li", False, True, "drop"), ("half a li", True, True, "drop"),
    ("帮我查", True, True, "drop"),
    # a line typed and erased since the prompt: the press clears it, it is no step to leaving
    ("", True, True, "drop"), ("", False, True, "drop"),
    (None, False, False, "hint"), (None, True, False, "hint"),   # not read through readline
])
def test_ctrl_c_at_the_prompt_drops_a_typed_line_and_only_twice_on_an_empty_one_ends(
        typed: str, warned: bool, edited: bool, action: str):
    assert at_the_prompt(typed, warned=warned, edited=edited) == action


@pytest.mark.parametrize(("keys", "sent", "ended"), [
    # a press on the empty prompt says how to leave, the next one leaves (recorded, exit 0)
    ([("^C", ""), ("^C", ""), "never sent"], ["hello"], True),
    # a press that clears a typed line is not the first of the two
    ([("^C", "half"), ("^C", ""), "still here"], ["hello", "still here"], False),
    # nor is one followed by a line: the warning is forgotten
    ([("^C", ""), "still here", ("^C", "")], ["hello", "still here"], False),
    # nor by a line typed and erased: that press clears it, the next empty one warns again
    ([("^C", ""), ("^C", "", "erased"), ("^C", ""), "still here"], ["hello", "still here"],
     False),
])
def test_ctrl_c_twice_on_an_empty_prompt_ends_the_chat_as_ctrl_d_does(
        home: Path, monkeypatch: pytest.MonkeyPatch, keys: list[object], sent: list[str],
        ended: bool):
    # Ctrl-C on an empty prompt printed a newline and asked again, forever: a user who had not
    # read the banner could not leave the chat the way every terminal program is left
    script: list[object] = ["hello", *keys]
    typing_at_terminal(monkeypatch, script)
    agent = offline_agent(home)
    session = agent.session_id
    out = io.StringIO()
    repl = Repl(agent, stdin=Terminal(), stdout=out, stream=False)
    repl.finish = lambda: seen.extend(m.content for m in agent.history if m.role == "user")
    seen: list[str] = []
    assert repl.run() == 0
    assert seen == sent
    assert (script == ["never sent"]) is ended
    text = out.getvalue()
    assert text.count("[Ctrl-C again, Ctrl-D or /exit ends the chat]") == sum(
        1 for k in keys if k == ("^C", "")) - (1 if ended else 0)
    Repl.finish(repl)   # recorded as Ctrl-D records it
    with SessionStore(home / "sessions.db", read_only=True) as store:
        assert store.get(session) is not None


@pytest.mark.parametrize(("stream", "first"), [
    (True, "first question"), (False, "first question"), (False, "/slow")])
def test_ctrl_c_in_a_chat_read_from_a_pipe_stops_it_recorded_and_exits_130(
        home: Path, stream: bool, first: str):
    # `hermes-core chat < questions.txt`: Ctrl-C cancelled the turn (or command) and the file
    # went on to its next line, so stopping a script took one press per line left in it
    agent = offline_agent(home)
    session = agent.session_id
    presses: list[object] = []

    def ctrl_c_once(*args: object) -> None:
        presses.append(args)
        if len(presses) == 2:   # the line after "hello"
            raise KeyboardInterrupt

    agent.pre_llm_call = ctrl_c_once
    out = io.StringIO()
    repl = Repl(agent, stdin=io.StringIO(f"hello\n{first}\nsecond question\nthird\n"),
                stdout=out, stream=stream)
    repl.register(Command("slow", "/slow", "a command Ctrl-C stops", ctrl_c_once))
    assert repl.run() == 130
    text = out.getvalue()
    assert "[cancelled]" in text and "[Ctrl-C: the rest of the input is not sent]" in text
    assert "second question" not in text
    with SessionStore(home / "sessions.db", read_only=True) as store:
        assert store.get(session) is not None   # the chat up to the press was recorded


def test_ctrl_c_on_a_terminal_whose_output_is_piped_never_ends_the_chat(
        home: Path, monkeypatch: pytest.MonkeyPatch):
    # `hermes-core chat | tee -i chat.log`: input() reads without readline when stdout is not a
    # terminal, so the line typed is unknown (the kernel holds it) and read as empty: Ctrl-C to
    # clear "abc" warned, and Ctrl-C to clear "def" then ended the chat
    script: list[object] = ["hello", ("^C", "abc"), ("^C", "def"), ("^C", ""), "still here"]
    typing_at_terminal(monkeypatch, script, editing=False)
    agent = offline_agent(home)
    out = io.StringIO()
    repl = Repl(agent, stdin=Terminal(), stdout=out, stream=False)
    assert repl.run() == 0
    assert script == []   # every key was read: no press ended the chat
    assert [m.content for m in agent.history if m.role == "user"] == ["hello", "still here"]
    text = out.getvalue()
    assert "Ctrl-C again" not in text
    assert text.count("[Ctrl-D or /exit ends the chat]") == 3


def test_ctrl_c_while_a_piped_chat_waits_for_its_next_line_stops_it_the_same_way(home: Path):
    # `(echo hello; sleep 60; echo more) | hermes-core chat`: a press while the chat waited on
    # the pipe left run() by the KeyboardInterrupt, silent; a press during a turn said why
    class SlowPipe(io.StringIO):
        def __iter__(self) -> Iterator[str]:
            yield "hello\n"
            raise KeyboardInterrupt   # pressed while the next line had not come

    agent = offline_agent(home)
    session = agent.session_id
    out = io.StringIO()
    assert Repl(agent, stdin=SlowPipe(), stdout=out, stream=False).run() == 130
    assert out.getvalue().endswith("[Ctrl-C: the rest of the input is not sent]\n")
    with SessionStore(home / "sessions.db", read_only=True) as store:
        assert store.get(session) is not None


def _module(file: object) -> object:
    import types

    m = types.ModuleType("readline")
    if file is not None:
        m.__file__ = file  # type: ignore[assignment]
    return m


@pytest.mark.parametrize("readline, why", [
    (_module(None), "built in: no file to open"),
    (_module(__file__), "pyreadline3-like: a .py file, not a library"),
    (_module("/nonexistent/readline.so"), "missing file"),
    (_module(sys.executable), "a library without the symbol (libedit's readline lacks it)"),
])
def test_keys_pressed_is_false_where_readline_cannot_say(readline: object, why: str) -> None:
    from hermes_core.cli.repl import _keys_pressed

    assert _keys_pressed(readline) is False, why


def test_keys_pressed_reads_gnu_readline_without_a_prompt_having_run() -> None:
    # a readline never started (no prompt yet in this process): rl_last_func is NULL, no crash
    readline = pytest.importorskip("readline")
    from hermes_core.cli.repl import _keys_pressed

    code = ("import readline\nfrom hermes_core.cli.repl import _keys_pressed\n"
            "print(_keys_pressed(readline))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, stdin=subprocess.DEVNULL).stdout
    assert out.strip() == "False"
    assert isinstance(_keys_pressed(readline), bool)
