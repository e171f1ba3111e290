"""Tests of ``hermes_core/cli/repl.py``.

REPL input that is not clean UTF-8 or breaks a command: one clear line, the chat goes on.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.errors import BadRequest, ServerError
from hermes_core.providers.offline import OfflineProvider
from hermes_core.testing import FakeProvider
from hermes_core.testing.server import MockLLMServer
from hermes_core.types import Completion
from tests.agent.conftest import (
    agent_for,
)
from tests.cli.conftest import Terminal, offline_agent, typing_at_terminal


def _run(agent: Agent, text: str) -> str:
    out = io.StringIO()
    assert Repl(agent, stdin=io.StringIO(text), stdout=out, stream=False).run() == 0
    return out.getvalue()


def test_save_without_a_name_writes_the_sessions_file_in_transcripts(home: Path):
    agent = offline_agent(home)
    out = _run(agent, "hello\n/save\n/exit\n")
    saved = home / "transcripts" / f"{agent.session_id}.json"
    assert f"saved 2 messages to {saved}" in out
    assert json.loads(saved.read_text(encoding="utf-8"))["messages"][0]["content"] == "hello"
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]   # no .tmp litter


def test_a_failing_save_leaves_no_temp_file_and_the_chat_goes_on(home: Path):
    agent = offline_agent(home)
    blocker = home / "transcripts" / f"{agent.session_id}.json"   # a directory where the file would go
    (blocker / "inside").mkdir(parents=True)
    out = _run(agent, "hello\n/save\nstill here\n/exit\n")
    # refused by what is in the way before any write (it was the rename's "Is a directory")
    assert f"error: not saved: {blocker} is a folder, not a regular file" in out
    assert "still here" in out
    assert [p.name for p in blocker.parent.iterdir()] == [blocker.name]


def test_save_to_a_name_with_a_nul_byte_is_one_line(home: Path):
    agent = offline_agent(home)
    out = _run(agent, "hello\n/save bad\x00name.json\nafter the error\n/exit\n")
    assert "error: not saved: the name holds control" in out and "Traceback" not in out
    assert [m.content for m in agent.history if m.role == "user"] == ["hello", "after the error"]


class _BrokenRetriever:
    skills = ()

    def retrieve(self, query: str):
        raise OSError("model file truncated")


def test_a_command_hitting_an_unexpected_error_is_one_line_not_a_crash(home: Path):
    agent = offline_agent(home)
    with agent.override(retriever=_BrokenRetriever()):
        out = _run(agent, "/skills docker\nafter the error\n/exit\n")
    assert "error: OSError: model file truncated" in out and "Traceback" not in out
    assert [m.content for m in agent.history if m.role == "user"] == ["after the error"]


def test_turn_without_a_key_for_the_routed_provider_says_what_to_do(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}},
                             env={"ANTHROPIC_API_KEY": "sk-ant-test-abcdefghijklmnop0123"})
    agent = Agent(settings)
    assert agent.offline_reason is None            # a key exists: not offline
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("hello\n/exit\n"), stdout=out, stream=False).run()
    text = out.getvalue()
    assert "openai/gpt-4o:no_key" in text
    assert "no API key for openai" in text and "/model" in text, text
    assert "sk-ant-test" not in text


def test_after_the_only_key_is_rejected_the_hint_says_so_not_choose_its_models(tmp_path: Path):
    """Turn 1: the only OpenAI key gets a 401 and leaves the rotation. Turn 2 has no key: the hint
    must say the key was rejected, never "keys are set for openai: choose one of its models"."""
    from hermes_core.errors import AuthenticationFailed
    from hermes_core.testing import ScriptedProvider

    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}},
                             env={"OPENAI_API_KEY": "sk-proj-rejected-abcdefghijklmnop0123"})
    provider = ScriptedProvider("openai", script=[AuthenticationFailed("HTTP 401: bad key",
                                                                       status_code=401)])
    agent = Agent(settings, providers={"openai": provider},
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    out = io.StringIO()
    code = Repl(agent, stdin=io.StringIO("hello\nagain\n"), stdout=out, stream=False).run()
    text = out.getvalue()
    first, second = text.split("error:")[1:3]
    assert "1 attempt(s)" in first and "OPENAI_API_KEY" in first and "was rejected" in first
    assert "every API key for openai was rejected" in second
    assert "keys are set for" not in text and "sk-proj-rejected" not in text
    assert code != 0 and len(provider.calls) == 1


@pytest.mark.parametrize("stream", [True, False])
def test_reply_outside_the_output_encoding_is_shown_as_escapes_not_lost(tmp_path: Path, stream: bool):
    # a Latin-1 terminal (or a file piped to from one) keeps its accents; 你好… was shown "???"
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    agent = Agent(settings, provider=FakeProvider(["café 你好… done"]))
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1", errors="strict", write_through=True)
    Repl(agent, stdin=io.StringIO("hello\n/exit\n"), stdout=out, stream=stream).run()
    shown = raw.getvalue().decode("latin-1")
    assert "error" not in shown, shown
    assert "café \\u4f60\\u597d\\u2026 done" in shown
    assert [m.content for m in agent.history] == ["hello", "café 你好… done"]


@pytest.mark.parametrize("stream", [True, False])
def test_escape_sequences_in_a_reply_are_shown_not_sent_to_the_terminal(tmp_path: Path, stream: bool):
    """A model's reply may carry what a hostile page told it to write: an OSC 52 sequence sets the
    clipboard, ESC[2J clears the screen. The REPL shows them as text; the history keeps the reply."""
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    evil = "ok\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 and\x1b[2J\tdone\nnext line"
    agent = Agent(settings, provider=FakeProvider([evil]))
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("hello\n/exit\n"), stdout=out, stream=stream).run()
    shown = out.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "ok\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07 and\\x1b[2J\tdone\nnext line" in shown
    assert agent.history[-1].content == evil


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("finish", "says"), [
    ("length", "cut at the model's output limit"),
    ("max_tokens", "cut at the model's output limit"),
    ("model_context_window_exceeded", "context window is full"),
    ("content_filter", "content filter"),
    ("pause_turn", "paused"),
])
def test_a_reply_the_model_did_not_finish_is_shown_with_why(tmp_path: Path, stream: bool,
                                                             finish: str, says: str):
    """A reply cut at the token limit reads like a whole one: the user must be told, once, under
    it, in the words of what happened (``Reply.stop_reason``)."""
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    cut = Completion("The three steps are: first, stop the", "", "", finish_reason=finish)
    agent = Agent(settings, provider=FakeProvider([cut, "a whole answer"]))
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("hello\nand now?\n/exit\n"), stdout=out, stream=stream).run()
    shown = out.getvalue()
    assert "The three steps are: first, stop the" in shown
    assert shown.count(says) == 1, shown   # the cut reply only, not the whole one after it
    assert shown.index(says) > shown.index("stop the") and shown.index(says) < shown.index(
        "a whole answer")


def test_commands_print_chinese_to_an_ascii_stdout_without_a_traceback(copy_example_home, tmp_path: Path):
    import os
    import subprocess
    import sys

    home = copy_example_home(tmp_path / "home")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "ascii"})
    env.pop("HERMES_HOME", None)
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "skills", "search", "帮我查快递",
                          "--home", str(home), "--no-embeddings"], capture_output=True, text=True,
                         encoding="ascii", errors="replace", timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "\\u" in res.stdout and "??" not in res.stdout   # the Chinese, escaped (not lost)


def test_a_leading_path_is_a_message_and_commands_still_work(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    fake = FakeProvider(["answered"])
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("/etc/hosts is empty, why?\n/nosuch\n/stats\n/exit\n"),
         stdout=out, stream=False).run()
    text = out.getvalue()
    assert [m.content for m in agent.history if m.role == "user"] == ["/etc/hosts is empty, why?"]
    assert "unknown command /etc" not in text
    assert "unknown command /nosuch" in text       # a mistyped command is still caught
    assert "turns 1" in text


def _routes(tmp_path: Path, failure: Exception) -> tuple[str, str]:
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False},
                              "credential_pool": {"backoff_base_s": 0.001, "backoff_max_s": 0.001}})
    fake = FakeProvider(["first answer"], default=None)
    fake.add(*[failure] * 10)
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("first\n/route\nsecond\n/route\n/exit\n"), stdout=out,
         stream=False).run()
    text = out.getvalue()
    assert "error: " in text
    first, second = text.split("model: ")[1:3]
    return first, second


@pytest.mark.parametrize("failure", [ServerError("upstream broke", status_code=500),
                                     BadRequest("bad request body", status_code=400)])
def test_route_after_a_failed_turn_describes_the_failed_turn(tmp_path: Path, failure):
    first, second = _routes(tmp_path, failure)
    assert "fake/gpt-4o: ok -> done" in first
    assert ": ok -> done" not in second, second
    if isinstance(failure, ServerError):   # the call loop's attempts, from AllProvidersFailed
        assert "attempt fake/gpt-4o: 500 -> failover" in second, second
    else:                                  # raised at once: the error itself
        assert "failed: bad request body" in second, second


def test_prompt_after_a_failed_turn_says_it_shows_the_turn_before(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    fake = FakeProvider(["first answer", BadRequest("bad request body", status_code=400)])
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("first\nsecond\n/prompt\n/exit\n"), stdout=out,
         stream=False).run()
    shown = out.getvalue().split("bad request body", 1)[1]
    assert "the last turn failed" in shown and '"first"' in shown


_HISTORY_KEY = "zq9Horse7battery.Staple-42"   # a configured key of no recognisable shape


def test_the_input_history_file_never_holds_a_key_pasted_into_the_chat(tmp_path: Path):
    """Every line typed was written to HOME/.chat_history as typed: a key pasted into the chat
    (configured, or of a known shape) stayed there in clear, while the transcript and the session
    memory had it redacted."""
    import readline

    home = tmp_path / "home"
    home.mkdir()
    settings = load_settings({"home": str(home), "skill_utils": {"enabled": False},
                              "credentials": {"openai": {"keys": [{"key": _HISTORY_KEY}]}}}, env={})
    repl = Repl(Agent(settings, provider=OfflineProvider()), stdin=io.StringIO(""), stdout=io.StringIO())
    shaped = "sk-ant-api03-" + "Q" * 40
    readline.clear_history()
    try:
        for line in (f"use {_HISTORY_KEY} for staging", f"and {shaped}", "what changed?"):
            readline.add_history(line)
        repl.write_history(readline)
        kept = (home / ".chat_history").read_text(encoding="utf-8")
        recalled = [readline.get_history_item(i + 1) for i in range(readline.get_current_history_length())]
    finally:
        readline.clear_history()
    assert _HISTORY_KEY not in kept and shaped not in kept
    assert "for staging" in kept and "what changed?" in kept   # the rest of each line is kept
    assert all(_HISTORY_KEY not in item and shaped not in item for item in recalled)
    assert (home / ".chat_history").stat().st_mode & 0o077 == 0   # typed lines are the user's own


_TYPED_KEY = "zq-custom-0123456789abcdef"   # a custom endpoint's key: no known key shape


@pytest.mark.parametrize("stream", [False, True])
def test_a_configured_key_typed_in_a_turn_is_withheld_and_the_user_told_once(tmp_path: Path,
                                                                              stream: bool):
    from hermes_core.types import fingerprint

    home = tmp_path / "home"
    home.mkdir()
    settings = load_settings({"home": str(home), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False},
                              "credentials": {"custom": {"keys": [{"key": _TYPED_KEY}]}}}, env={})
    fake = FakeProvider(["ok", "ok again"])
    out = io.StringIO()
    repl = Repl(Agent(settings, provider=fake), stdout=out, stream=stream,
                stdin=io.StringIO(f"my key is {_TYPED_KEY}\nwhat now?\n/exit\n"))
    assert repl.run() == 0
    assert len(fake.turn_requests) == 2
    for r in fake.requests:
        assert _TYPED_KEY not in r.prompt.system + r.prompt.context + repr(r.prompt.messages)
    text = out.getvalue()
    fp = fingerprint(_TYPED_KEY)
    assert text.count(f"a configured key ({fp})") == 1, text   # the second turn resends it: not told again
    assert _TYPED_KEY not in text


@pytest.mark.parametrize("stream", [True, False])
def test_ctrl_c_after_the_turn_was_recorded_says_the_reply_was_kept(
        home: Path, monkeypatch: pytest.MonkeyPatch, stream: bool):
    """Ctrl-C that lands once the finished reply is in the history (the agent holds it back while
    it records the turn, then lets it through): saying [cancelled] would be wrong, the next
    request carries that turn."""
    agent = offline_agent(home)
    presses: list[object] = []

    def ctrl_c_once(reply: object) -> None:
        presses.append(reply)
        if len(presses) == 1:
            raise KeyboardInterrupt

    agent.post_llm_call = ctrl_c_once
    out = io.StringIO()
    typing_at_terminal(monkeypatch, ["first question", "second question", "/exit"])
    repl = Repl(agent, stdin=Terminal(), stdout=out, stream=stream)
    assert repl.run() == 0
    assert "[cancelled]" not in out.getvalue()
    assert "[interrupted: the reply was complete and is kept]" in out.getvalue()
    assert [m.content for m in agent.history if m.role == "user"] == ["first question",
                                                                       "second question"]
    assert repl.last_reply is agent.last_reply
    assert agent.history[1].content.splitlines()[0] in out.getvalue()   # the kept reply was shown


def test_an_unknown_command_of_10000_characters_is_named_by_its_head_and_length(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    out = io.StringIO()
    Repl(Agent(settings, provider=FakeProvider([])), stdin=io.StringIO("/" + "x" * 10_000 + "\n/exit\n"),
         stdout=out, stream=False).run()
    text = out.getvalue()
    assert "unknown command /xxxx" in text and "(10000 characters)" in text
    assert "x" * 200 not in text


_STREAM_KEY = "zq7Stream.Split-Key-93"   # a configured key of no recognisable shape


class _Writes(io.StringIO):
    """The REPL's stdout, keeping each write apart: what reached the terminal, and when."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def _streaming_repl(home: Path, chunks: list[str]) -> tuple[Repl, _Writes]:
    from hermes_core.testing import ScriptedProvider
    cfg = {"home": str(home), "skill_utils": {"enabled": False},
           "llm": {"routing": {"default_model": "m-default"}},
           "credentials": {"custom": {"keys": [{"key": _STREAM_KEY}]}}}
    agent = Agent(load_settings(cfg, env={}),
                  provider=ScriptedProvider("custom", kind="openai", script=[chunks]),
                  loop_options={"sleep": lambda s: None, "audit_path": False})
    out = _Writes()
    return Repl(agent, stdin=io.StringIO(""), stdout=out, stream=True), out


def test_a_key_split_across_streamed_chunks_never_shows_in_the_chat(tmp_path: Path):
    """The model echoes a configured key cut in three chunks: neither the key nor a piece of it
    that could be read as its start reaches the terminal; its fingerprint does."""
    repl, out = _streaming_repl(tmp_path, ["your key is zq7Str", "eam.Split-K", "ey-93, keep it"])
    repl.turn("what is my key?")
    shown = out.getvalue()
    assert _STREAM_KEY not in shown and "zq7Str" not in shown and "eam.Split" not in shown
    assert "your key is [key-" in shown and ", keep it" in shown


def test_chinese_streamed_text_is_written_chunk_by_chunk_never_held_to_the_end(tmp_path: Path):
    """A reply without spaces (Chinese) is shown as each chunk arrives: one write per chunk."""
    chunks = ["部署到预发布环境", "之前，请先", "运行全部测试。"]
    repl, out = _streaming_repl(tmp_path, chunks)
    repl.turn("怎么部署？")
    assert out.writes[:3] == chunks and out.getvalue() == "".join(chunks) + "\n"


def test_the_repl_adds_no_hold_of_its_own_to_what_the_agent_released(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``Agent.stream`` yields pieces already scrubbed (each held only while it could still
    become a key): the REPL writes each one as it comes, before asking for the next, instead of
    scrubbing the stream a second time and holding an English word back to the next piece."""
    from hermes_core.agent.reply import ReplyStream
    repl, out = _streaming_repl(tmp_path, [])
    released = ["Run the deploy", " script, then", " check the logs"]
    seen: list[str] = []

    def pieces() -> Iterator[str]:
        for piece in released:
            yield piece
            seen.append(out.getvalue())   # what the terminal showed when the next was asked for

    monkeypatch.setattr(repl.agent, "stream", lambda text: ReplyStream(pieces()))
    repl.turn("how do I deploy?")
    assert seen == ["Run the deploy", "Run the deploy script, then",
                    "Run the deploy script, then check the logs"]


def _agent_on(srv: MockLLMServer, key: str, tmp_path: Path) -> Agent:
    """An agent whose one provider is ``srv`` (OpenAI wire, model m1), with a 1 s idle timeout
    so a stalled stream is given up quickly, and no back-off sleeps."""
    cfg = {"home": str(tmp_path), "skill_utils": {"enabled": False},
           "llm": {"stream_idle_timeout_s": 1, "routing": {
               "default_model": "m1", "providers": [
                   {"name": "custom", "type": "openai", "endpoint": f"{srv.url}/v1",
                    "models": ["m1"]}]}},
           "credentials": {"custom": {"keys": [{"key": key}]}}}
    return Agent(load_settings(cfg, env={}),
                 loop_options={"sleep": lambda s: None, "audit_path": False})


def test_a_stalled_stream_is_reported_at_its_first_idle_timeout_not_only_at_the_end(
        tmp_path: Path):
    """A server that sends nothing but keep-alives: the chat said nothing at all until every
    retry had timed out (two idle timeouts and a back-off, a minute with the defaults), then one
    error line. Each stalled attempt is now one line as it is given up, saying what comes next."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer
    key = "sk-stall-0123456789abcdefXYZ"
    with MockLLMServer() as srv:
        srv.set_key(key, KeyBehaviour(fault="pings", fault_interval_s=0.2))
        agent = _agent_on(srv, key, tmp_path)
        out = io.StringIO()
        repl = Repl(agent, stdin=io.StringIO(""), stdout=out, stream=True)
        repl.turn("hello")
    lines = out.getvalue().splitlines()
    notices = [i for i, line in enumerate(lines) if line.startswith("[custom/m1: ")]
    failed = next(i for i, line in enumerate(lines) if line.startswith("error: all providers"))
    assert notices and notices[0] < failed
    assert "timed out" in lines[notices[0]] and "trying again" in lines[notices[0]]
    assert agent.loop.on_attempt is None   # the chat's reporter is the turn's only


def test_a_stream_that_stalls_mid_reply_shows_what_came_then_one_error_and_the_chat_goes_on(
        tmp_path: Path):
    """The server sends "Hello wor" and then only keep-alives: the words stay on screen, one
    error line says the reply stopped, the turn leaves no trace, and the next turn is answered."""
    from hermes_core.testing.server import KeyBehaviour, MockLLMServer
    key = "sk-stall-0123456789abcdefXYZ"
    with MockLLMServer(reply="second answer") as srv:
        srv.set_key(key, KeyBehaviour(fault="stall", fault_interval_s=0.2))
        agent = _agent_on(srv, key, tmp_path)
        out = io.StringIO()
        repl = Repl(agent, stdin=io.StringIO(""), stdout=out, stream=True)
        repl.turn("hello")
        first = out.getvalue()
        srv.set_key(key, KeyBehaviour())
        repl.turn("again")
    assert first.startswith("Hello wor\n") and "error: " in first
    assert out.getvalue()[len(first):] == "second answer\n"
    assert [m.content for m in agent.history] == ["again", "second answer"]


def test_quit_and_q_end_the_chat_and_a_mistyped_command_names_the_nearest_one(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    for line in ("/quit", "/q", "/QUIT"):
        agent = Agent(settings, provider=FakeProvider(["never"]))
        out = io.StringIO()
        Repl(agent, stdin=io.StringIO(f"{line}\nhello\n"), stdout=out, stream=False).run()
        assert agent.history == [], line          # the chat ended before "hello"
        assert "unknown command" not in out.getvalue()
    agent = Agent(settings, provider=FakeProvider(["answered"]))
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("/stast\n/hlep\n/exit\n"), stdout=out, stream=False).run()
    text = out.getvalue()
    assert "unknown command /stast; did you mean /stats?" in text
    assert "unknown command /hlep; did you mean /help?" in text
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("/help\n/exit\n"), stdout=out, stream=False).run()
    helped = out.getvalue()
    assert "/exit" in helped and "/quit" in helped     # the aliases are listed with the command
    assert helped.count("end the chat") == 1


def test_repl_reset_says_whether_anything_was_recorded(home: Path):
    import io

    from hermes_core.cli.repl import Repl

    agent = agent_for(home, FakeProvider(["hi there"], summaries=["SUMMARY: said hello.\nTAGS: greeting"]))
    out = io.StringIO()
    repl = Repl(agent, stdin=io.StringIO(""), stdout=out)
    repl.dispatch("/reset")
    assert "nothing to record" in out.getvalue()
    agent.chat("hello")
    repl.dispatch("/reset")
    assert "previous conversation recorded" in out.getvalue()
    assert agent.last_reply is None and repl.last_reply is None


def test_what_a_tool_prints_during_a_streamed_turn_stays_out_of_the_reply(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An author's REPL over an agent with tools writes to the process's stdout, and so did
    the tool's ``print``: "DEBUG working" appeared between "Let me look." and the answer, read
    as the model's words. The reply is shown whole and the tool's line is not."""
    from hermes_core.types import ToolCall

    def chatty() -> str:
        """Works noisily."""
        print("DEBUG working")
        return "42"

    fake = FakeProvider([Completion("Let me look. ", "m-default", "fake",
                                    tool_calls=(ToolCall("c1", "chatty", "{}"),)),
                         Completion("It is 42.", "m-default", "fake")], name="fake")
    agent = agent_for(home, fake, tools=[chatty])
    Repl(agent, stdin=io.StringIO(""), stream=True).turn("what is it?")
    shown = capsys.readouterr().out
    assert "It is 42." in shown and "DEBUG working" not in shown
