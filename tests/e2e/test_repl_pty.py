"""The REPL over a pseudo-terminal, as a person uses it (pexpect)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pexpect

from tests.e2e.conftest import press_ctrl_c_at_the_prompt, pty_env

Spawn = Callable[..., pexpect.spawn]


def _chat_args(home: Path, *args: str) -> tuple[str, ...]:
    return ("-m", "hermes_core.cli", "chat", "--home", str(home), *args)


def _quit(child: pexpect.spawn, *notices: str) -> None:
    """Ctrl-D at the prompt: the chat says ``notices`` and ends with status 0."""
    child.sendeof()
    for notice in notices:
        child.expect(notice)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def _save_and_quit(child: pexpect.spawn, home: Path, *notices: str) -> list[dict[str, str]]:
    """``/save`` the chat's two messages, quit as :func:`_quit`, and read them back."""
    child.sendline("/save after.json")
    child.expect(r"\[saved 2 messages to ")
    child.expect("you> ")
    _quit(child, *notices)
    saved = json.loads((home / "transcripts" / "after.json").read_text(encoding="utf-8"))
    messages: list[dict[str, str]] = saved["messages"]
    return messages


def _memory_search(home: Path, query: str) -> list[dict[str, object]]:
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "memory", "search", query,
                          "--home", str(home), "--json"], capture_output=True, text=True,
                         env=pty_env(), timeout=120)
    assert res.returncode == 0, res.stderr
    found: list[dict[str, object]] = json.loads(res.stdout)
    return found


def test_offline_chat_commands_ctrl_d_then_memory(copy_example_home, tmp_path: Path,
                                                   spawn_python: Spawn):
    home = tmp_path / "home"
    copy_example_home(home)
    child = spawn_python(*_chat_args(home))
    child.expect("no API key configured")
    child.expect("you> ")
    child.sendline("How do I resolve a git rebase conflict?")
    child.expect("offline reply")
    child.expect("you> ")

    child.sendline("/skills")
    child.expect("decided by")
    child.expect("git-rebase-conflicts")
    child.expect("you> ")

    child.sendline("/route")
    child.expect("reason: ")
    child.expect("candidates: offline/")
    child.expect("you> ")

    child.sendline("/prompt")
    child.expect('"messages"')
    child.expect("you> ")

    child.sendline("/keys")
    child.expect("no API key configured: set")
    child.expect("you> ")

    child.sendline("帮我查一下快递")
    child.expect("offline reply")
    child.expect("you> ")
    _quit(child)   # Ctrl-D ends the chat and records the session

    found = _memory_search(home, "rebase")
    assert len(found) == 1
    assert "rebase" in str(found[0]["summary"]).lower()
    # both answered turns were summarised into one session
    assert (home / ".chat_history").is_file()  # input history kept between runs


def test_ctrl_c_while_a_reply_streams_cancels_it_and_twice_on_the_empty_prompt_ends_the_chat(
        copy_example_home, tmp_path: Path, spawn_python: Spawn):
    """A line of the offline reply every 5 s: Ctrl-C, sent once the first line shows, lands
    mid-reply even when this test process is held up for seconds (a loaded machine). With 0.4 s
    a line the whole reply (about 3 s) could be out before the key, which then only gave a new
    prompt, and the test failed."""
    home = tmp_path / "home"
    copy_example_home(home)
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  offline_stream_delay_s: 5\nskill_utils:\n  embeddings: false\n",
                   encoding="utf-8")
    child = spawn_python(*_chat_args(home, "--config", str(cfg)))
    child.expect("you> ")
    child.sendline("Write a long weekly report about the rebase work")
    child.expect(r"\[offline reply")
    child.sendintr()
    # [cancelled] comes before the prompt, and the reply stopped: its context lines (20 s and
    # more after the first line) never came
    assert child.expect([r"\[cancelled\]", "you> "]) == 0, child.before
    assert "per-turn context" not in child.before, child.before
    child.expect("you> ")

    child.sendline("/stats")   # the chat goes on; the cancelled turn is not counted
    child.expect(r"turns (\d+)")
    assert child.match.group(1) == "0"
    child.expect("you> ")
    # Ctrl-C on the empty prompt says how to leave (it only printed a newline, forever), and
    # the next one ends the chat as Ctrl-D does: status 0, the session recorded
    press_ctrl_c_at_the_prompt(child)
    child.expect(r"\[Ctrl-C again, Ctrl-D or /exit ends the chat\]")
    child.expect("you> ")
    press_ctrl_c_at_the_prompt(child)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    # the cancelled turn left no trace in memory
    assert _memory_search(home, "weekly") == []



def test_ctrl_c_after_a_line_typed_and_erased_clears_it_and_does_not_end_the_chat(
        copy_example_home, tmp_path: Path, spawn_python: Spawn):
    """After the warning, a line typed and erased leaves readline's buffer empty: the press
    that follows cleared it, and ended the chat as a second press on an empty prompt."""
    home = tmp_path / "home"
    copy_example_home(home)
    child = spawn_python(*_chat_args(home))
    child.expect("you> ")
    press_ctrl_c_at_the_prompt(child)
    child.expect(r"\[Ctrl-C again, Ctrl-D or /exit ends the chat\]")
    child.expect("you> ")
    child.send("abc")
    child.expect("abc")
    child.send("\x7f\x7f\x7f")   # erased with Backspace; readline echoes each erase
    child.expect(r"(?:\x08(?: \x08|\x1b\[K)){3}")
    press_ctrl_c_at_the_prompt(child)
    child.expect("you> ")           # the line was cleared; the chat goes on
    press_ctrl_c_at_the_prompt(child)   # a press on the untouched empty prompt warns again
    child.expect(r"\[Ctrl-C again, Ctrl-D or /exit ends the chat\]")
    child.expect("you> ")
    _quit(child)


# A chat on the loopback server whose model calls a slow tool on the first message and answers
# every other one; the tool prints a marker when it starts, so the test presses Ctrl-C mid-tool.
_TOOL_CHAT = r'''
import os, sys, time
from hermes_core import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing import tool_call, tool_calls
from hermes_core.testing.server import MockLLMServer

def wait_for_build(minutes: int) -> str:
    """Wait for the CI build to finish."""
    # on stderr: what a tool prints on stdout is its call's own (decision 230), not the chat's
    print("\n[tool started]", file=sys.stderr, flush=True)
    time.sleep(minutes * 60)
    return "green"

def model(body):
    last = body["messages"][-1]
    content = last["content"]   # the turn's context block, then the message
    text = content[-1]["text"] if isinstance(content, list) else str(content)
    if last["role"] == "user" and "build" in text:
        return tool_calls(tool_call("wait_for_build", minutes=5))
    return "answered: " + text

with MockLLMServer(model) as srv:
    cfg = {"home": sys.argv[1], "skill_utils": {"enabled": False},
           "llm": {"routing": {"default_model": "m1", "providers": [
               {"name": "custom", "type": "openai", "endpoint": srv.url + "/v1",
                "models": ["m1"]}]}},
           "credentials": {"custom": {"keys": [{"key": "sk-pty-0123456789abcdefXYZ"}]}}}
    agent = Agent(load_settings(cfg, env={}), tools=[wait_for_build])
    code = Repl(agent).run()
# the cancelled tool's thread sleeps on (Python cannot stop a thread) and the interpreter would
# join it at exit: end as the chat command ends past a model still loading
sys.stdout.flush()
os._exit(code)
'''


def test_ctrl_c_while_a_tool_runs_cancels_the_turn_and_the_next_turn_works(
        new_home: Path, spawn_python: Spawn):
    """Ctrl-C while the model's tool call runs (a five-minute wait): the turn is cancelled at
    once, nothing of it stays in the history (the saved transcript holds only the next turn),
    and the next message is answered."""
    child = spawn_python("-c", _TOOL_CHAT, str(new_home))
    child.expect("you> ")
    child.sendline("wait for the build, then tell me")
    child.expect(r"\[tool started\]")
    child.sendintr()
    assert child.expect([r"\[cancelled\]", "you> "]) == 0, child.before
    child.expect("you> ")

    child.sendline("和之前一样吗？")
    child.expect("answered: 和之前一样吗？")
    child.expect("you> ")
    assert [(m["role"], m["content"]) for m in _save_and_quit(child, new_home)] == [
        ("user", "和之前一样吗？"), ("assistant", "answered: 和之前一样吗？")]


def test_a_chinese_line_typed_in_the_c_locale_is_kept_in_the_history_and_recalled(
        new_home: Path, spawn_python: Spawn):
    """``LC_ALL=C`` (a container, a server without locales): Python reads UTF-8, but readline
    took each byte past 127 as Meta plus a key, so 帮我查一下快递 was lost from the line as typed,
    from HOME/.chat_history, and from the line recalled with the up arrow next run."""
    env = pty_env(LC_ALL="C", LANG="C")
    line = "帮我查一下快递 📦"
    child = spawn_python(*_chat_args(new_home, "--offline"), env=env)
    child.expect("you> ")
    child.sendline(line)
    child.expect("your message: '(.*)'\r\n")
    assert child.match.group(1) == line
    child.expect("you> ")
    _quit(child)
    assert line in (new_home / ".chat_history").read_text(encoding="utf-8")
    child = spawn_python(*_chat_args(new_home, "--offline"), env=env)
    child.expect("you> ")
    child.send("\x1b[A\r")   # up arrow, then Enter: the line of the last run, sent again
    child.expect("your message: '(.*)'\r\n")
    assert child.match.group(1) == line
    child.expect("you> ")
    _quit(child)


# A chat whose first reply stalls after "Hello wor" (the real OpenAI SDK reading over a socket);
# every later request is answered at once.
_STALL_CHAT = r'''
import sys, threading, time
from hermes_core import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing.server import KeyBehaviour, MockLLMServer

KEY = "sk-pty-stall-0123456789abcdefXYZ"
with MockLLMServer("second answer") as srv:
    srv.set_key(KEY, KeyBehaviour(fault="stall", fault_interval_s=0.5))

    def heal():
        while not srv.requests:
            time.sleep(0.05)
        srv.set_key(KEY, KeyBehaviour())

    threading.Thread(target=heal, daemon=True).start()
    cfg = {"home": sys.argv[1], "skill_utils": {"enabled": False},
           "llm": {"routing": {"default_model": "m1", "providers": [
               {"name": "custom", "type": "openai", "endpoint": srv.url + "/v1",
                "models": ["m1"]}]}},
           "credentials": {"custom": {"keys": [{"key": KEY}]}}}
    code = Repl(Agent(load_settings(cfg, env={}))).run()
sys.exit(code)
'''


def test_ctrl_c_while_an_sdk_stream_stalls_cancels_it_and_the_next_turn_is_answered(
        new_home: Path, spawn_python: Spawn):
    """The OpenAI SDK reading a stream that stopped after "Hello wor" (keep-alives only, 30 s
    before the idle timeout): Ctrl-C cancels at once, and the next message is answered."""
    child = spawn_python("-c", _STALL_CHAT, str(new_home))
    child.expect("you> ")
    child.sendline("say hello")
    child.expect("Hello")
    child.sendintr()
    assert child.expect([r"\[cancelled\]", "you> "]) == 0, child.before
    child.expect("you> ")
    child.sendline("再说一次")
    child.expect("second answer")
    child.expect("you> ")
    # at Ctrl-D the model summarises the chat for memory: the chat says so first
    saved = _save_and_quit(
        child, new_home, r"\[recording this chat in memory: the model summarises it; Ctrl-C")
    assert [m["content"] for m in saved] == ["再说一次", "second answer"]


# A chat on the loopback server whose model, asked where to go, calls a tool that asks the
# person (print the question, then ``input()``) under a 1 s tool timeout; after the tool's
# answer the model says it heard nothing, and it answers every other message with its text.
_ASKING_CHAT = r'''
import os, sys
from hermes_core import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.testing import tool_call, tool_calls
from hermes_core.testing.server import MockLLMServer

def ask_person() -> str:
    """Ask the person where to go."""
    print("Oslo or Bergen?")
    return input()

def model(body):
    last = body["messages"][-1]
    if last["role"] == "tool":
        return "no answer came"
    content = last["content"]   # the turn's context block, then the message
    text = content[-1]["text"] if isinstance(content, list) else str(content)
    if "where" in text:
        return tool_calls(tool_call("ask_person"))
    return "answered: " + text

with MockLLMServer(model) as srv:
    cfg = {"home": sys.argv[1], "skill_utils": {"enabled": False},
           "llm": {"tool_timeout_s": 1, "routing": {"default_model": "m1", "providers": [
               {"name": "custom", "type": "openai", "endpoint": srv.url + "/v1",
                "models": ["m1"]}]}},
           "credentials": {"custom": {"keys": [{"key": "sk-pty-0123456789abcdefXYZ"}]}}}
    agent = Agent(load_settings(cfg, env={}), tools=[ask_person])
    code = Repl(agent).run()
sys.stdout.flush()
os._exit(code)
'''


def test_a_line_typed_after_an_asking_tool_timed_out_goes_to_the_chat_prompt(
        new_home: Path, spawn_python: Spawn):
    """A tool asks the person and gets no answer within ``llm.tool_timeout_s``: the call is
    answered "timed out" and the turn ends, but its thread still waited on the terminal and
    took the next line typed at ``you> `` (the prompt did not even show: readline serves one
    reader at a time). The line typed after the timeout is the chat's next message."""
    child = spawn_python("-c", _ASKING_CHAT, str(new_home))
    child.expect("you> ")
    child.sendline("where should I go?")
    child.expect("Oslo or Bergen?")
    child.expect("no answer came")
    child.expect("you> ")
    child.sendline("a second message")
    child.expect("answered: a second message")
    child.expect("you> ")
    child.sendline("a third message")
    child.expect("answered: a third message")
    child.expect("you> ")
    _quit(child)


def test_ctrl_c_twice_at_the_prompt_ends_the_chat_while_a_timed_out_tool_s_read_waits(
        new_home: Path, spawn_python: Spawn):
    """While the read of a tool call past its timeout waits for the person's next line (which is
    the chat's), the prompt reads that line, not readline: Ctrl-C there only said how to leave,
    at every press, and never ended the chat. The chat's rule holds: the first press on the
    prompt warns, the second ends the chat as Ctrl-D does (status 0)."""
    child = spawn_python("-c", _ASKING_CHAT, str(new_home))
    child.expect("you> ")
    child.sendline("where should I go?")
    child.expect("no answer came")
    child.expect("you> ")
    child.sendintr()   # a wait on a lock sees the signal whenever it lands, unlike readline
    child.expect(r"\[Ctrl-C again, Ctrl-D or /exit ends the chat\]")
    child.expect("you> ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
