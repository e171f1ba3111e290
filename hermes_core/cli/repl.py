"""The interactive loop behind ``hermes-core chat``.

Reads lines from a terminal (with readline history kept between runs) or, when stdin is not a
terminal, from stdin, so a chat can be scripted. Every error is one line; the loop survives it.
Ctrl-C cancels the reply in progress, not the REPL; Ctrl-D, ``/exit`` or Ctrl-C twice on an empty
prompt ends the chat.
"""

from __future__ import annotations

import codecs
import difflib
import logging
import math
import os
import re
import signal
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt.outbound import withheld_keys
from hermes_core.agent.tools.printed import handed_back
from hermes_core.agent.tools.stdin_reads import StdinReads
from hermes_core.cli.argtypes import escape_unencodable, shorten, terminal_safe
from hermes_core.cli.repl_commands import BUILTIN_COMMANDS, Command, unquoted
from hermes_core.errors import Attempt, HermesError
from hermes_core.redact import redact
from hermes_core.types import clean_text

log = logging.getLogger("hermes_core.cli.repl")

#: Attempt statuses of a transport that stalled or dropped, as the chat tells them.
_TRANSPORT_WORDS = {"timeout": "timed out", "connection_reset": "the connection dropped",
                    "connection_error": "could not connect"}


#: What the chat says under a reply the model did not finish, by ``Reply.stop_reason``.
_UNFINISHED = {
    "max_tokens": "the reply was cut at the model's output limit (llm.max_tokens); ask it to "
                  "continue, or raise the limit",
    "model_context_window_exceeded": "the reply was cut: the model's context window is full; "
                                     "/reset starts a new conversation",
    "content_filter": "the provider's content filter withheld the rest of the reply",
    "pause_turn": "the model paused a long turn; send a message to let it go on",
    "max_continuations": "the provider paused this long turn too many times; send a message to "
                         "let it go on",
}


class Repl:
    """One chat session on a terminal or a pipe."""

    def __init__(self, agent: Agent, *, stdin: TextIO | None = None, stdout: TextIO | None = None,
                 stream: bool | None = None) -> None:
        self.agent = agent
        self.stdin = stdin or sys.stdin
        self.out = stdout or sys.stdout
        escape_unencodable(self.out)   # what the output encoding cannot show is "\\u4f60"
        self.interactive = self.stdin.isatty()
        self.stream = agent.settings.llm.stream if stream is None else stream
        self.commands: dict[str, Command] = {}
        self.running = True
        self.interrupted = False   # Ctrl-C stopped a chat read from a pipe or file (exit 130)
        self.handed = False   # the prompt's line is one a given-up tool call's read gets
        self.last_reply: Any = None
        self.turn_error: HermesError | None = None   # why the last turn failed (/route, /prompt)
        self.told_withheld: set[str] = set()   # fingerprints of keys the user was told were withheld
        for cmd in BUILTIN_COMMANDS:
            self.register(cmd)

    def register(self, cmd: Command) -> None:
        for name in (cmd.name, *cmd.aliases):
            self.commands[name] = cmd

    # ------------------------------------------------------------------ output

    def say(self, text: str = "", end: str = "\n") -> None:
        # terminal_safe: a reply (or a stored summary, a skill's text) may carry an escape
        # sequence a hostile page asked for (OSC 52 writes the clipboard); shown, never sent
        self.out.write(terminal_safe(redact(text)) + end)
        self.out.flush()

    def error(self, err: BaseException) -> None:
        text = str(err) if isinstance(err, HermesError) else f"{type(err).__name__}: {err}"
        self.say(f"error: {text.splitlines()[0] if text else type(err).__name__}")

    # ------------------------------------------------------------------ input

    def _history_file(self) -> Path:
        return self.agent.home / ".chat_history"

    def _lines(self) -> Iterator[str]:
        # Bytes that are not UTF-8 (a Latin-1 file piped in, a terminal in another encoding)
        # must not end the chat: read them surrogate-escaped, then show each as U+FFFD.
        reconfigure = getattr(self.stdin, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="surrogateescape")
            except (ValueError, OSError):  # pragma: no cover - already reading, or not a text file
                pass
        encoding = getattr(self.stdin, "encoding", None) or "utf-8"
        marked = False   # a UTF-8 BOM began a stream declared otherwise (Latin-1: "ï»¿")
        for n, line in enumerate(self._raw_lines()):
            marked = marked or (n == 0 and _utf8_bom_read_as(encoding, line))
            line = _as_utf8(line, encoding, marked=marked)
            yield line[1:] if n == 0 and line.startswith("\ufeff") else line

    def _given_back(self) -> StdinReads | None:
        """The reads of our stdin when a tool call that asked the person gave up before they
        answered (past its timeout, or cancelled): the read it began goes on, and the line the
        person types is the chat's next. Reading on our own instead would race it for the line
        (on a terminal, readline waits for the call's read to end, the prompt unshown)."""
        reads = handed_back()
        if reads is None or (self.stdin is not sys.stdin and self.stdin is not reads.source):
            return None
        return reads

    def _piped_lines(self) -> Iterator[str]:
        """The lines of a piped stdin, each the one a given-up tool call's read gets when there
        is one (see :meth:`_given_back`)."""
        lines = iter(self.stdin)
        while True:
            reads = self._given_back()
            line = next(lines, "") if reads is None else reads.read(lambda s: s.readline())
            if not line:
                return
            yield line

    def _prompt(self, prompt: str) -> str:
        """``input(prompt)``, or the line a given-up tool call's read gets (see
        :meth:`_given_back`), the prompt shown first; ``EOFError`` at the end of the input."""
        reads = self._given_back()
        self.handed = reads is not None
        if reads is None:
            return input(prompt)
        self.out.write(prompt)
        self.out.flush()
        line = reads.read(lambda s: s.readline())
        if not line:
            raise EOFError
        return line.removesuffix("\n")

    def _raw_lines(self) -> Iterator[str]:
        if not self.interactive:
            try:
                for line in self._piped_lines():
                    yield line.rstrip("\n")
            except KeyboardInterrupt:   # pressed while the pipe's next line had not come
                self._stop_if_scripted()
            return
        try:
            import readline

            _eight_bit_input(readline)
            try:
                readline.read_history_file(self._history_file())
            except OSError:
                pass
        except ImportError:  # pragma: no cover - readline is on every Linux/macOS Python
            readline = None  # type: ignore[assignment]
        warned = False   # the last key at the prompt was a Ctrl-C on an empty line
        try:
            while True:
                try:
                    line = self._prompt("you> ")
                except KeyboardInterrupt:
                    # a handed-back line is typed into the terminal's own line buffer, which
                    # Ctrl-C discards: a press there is one on an empty prompt, so the double
                    # press ends the chat (the warning says so first); readline, whose buffer
                    # is stale then, is not asked
                    editing = not self.handed and readline is not None and _line_editing()
                    typed = "" if self.handed else None
                    action = at_the_prompt(readline.get_line_buffer() if editing else typed,
                                           warned=warned,
                                           edited=editing and _keys_pressed(readline))
                    warned = action == "warn"
                    self.say(f"\n{_SAID_AT_THE_PROMPT[action]}" if action in _SAID_AT_THE_PROMPT
                             else "")
                    if action == "end":
                        return
                    continue
                warned = False
                yield line
        except EOFError:
            self.say("")
        finally:
            if readline is not None:
                self.write_history(readline)

    def write_history(self, readline: Any) -> None:
        """Keep the input history (the last 1,000 lines) in ``HOME/.chat_history``, keys redacted.

        A key pasted into the chat is redacted in the transcript and the session memory; the
        history file is one more copy on disk (read back next run, synced with the home), so each
        line is scrubbed by the settings' redactor first (lines read from an older file too), and
        the file is the user's alone (0600), like a shell's history."""
        scrub = getattr(self.agent, "redact", redact)
        path = self._history_file()
        try:
            for i in range(readline.get_current_history_length(), 0, -1):
                line = readline.get_history_item(i)
                if line and (clean := scrub(line)) != line:
                    readline.replace_history_item(i - 1, clean)
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.set_history_length(1000)
            readline.write_history_file(path)
            os.chmod(path, 0o600)
        except OSError:
            pass

    # ------------------------------------------------------------------ loop

    def banner(self) -> None:
        a = self.agent
        if a.offline_reason:
            self.say(f"[{a.offline_reason}; replies come from the offline provider]")
        if self.interactive:
            model = a.requested_model or "auto (routing)"
            self.say(f"hermes-core chat: model {model}, providers {', '.join(a.providers)}. "
                     "/help for commands, Ctrl-C cancels a reply, Ctrl-D ends.")
            status = getattr(a.retriever, "dense_status", None)
            if status is not None:
                self.say(f"[skill embeddings: {status()}; /skills shows it again]")

    def run(self) -> int:
        """0, or 1 when input was piped in and every turn of it failed (a script can tell), or
        130 when Ctrl-C stopped such a chat."""
        self.banner()
        self.turns = self.failed_turns = 0
        restore = _end_on_signals()
        try:
            for line in self._lines():
                text = line.strip()
                if not text:
                    continue
                if text.startswith(COMMAND_MARKS) and not self._starts_with_a_path(
                        text, parts := command_parts(text)):
                    self._run_command(*parts)   # "/etc/hosts is empty" starts with a path: a message
                else:
                    self.turn(text)
                if not self.running:
                    break
        finally:
            restore()   # a second signal during the recording ends the process at once
            self.finish()
        if self.interrupted:
            return 130
        scripted_and_all_failed = (not self.interactive and self.turns > 0
                                   and self.failed_turns == self.turns)
        return 1 if scripted_and_all_failed else 0

    def _starts_with_a_path(self, text: str, parts: tuple[str, str]) -> bool:
        """Whether the line ``text`` (read as ``parts``) begins with a path, so is a message:
        a slash in the name ("/etc/hosts is empty"), or in the first word of a line whose name is
        no command: Chinese lists paths without a space ("/etc、/var 哪个大？"), and "、" ending
        the name must not make "/etc" a command. "/model，openai/gpt-4o" still sets the model."""
        if "/" in parts[0]:
            return True
        if parts[0].lower() in self.commands:
            return False
        space = _SPACE.search(text, 1)
        return any(mark in text[1:space.start() if space else len(text)] for mark in COMMAND_MARKS)

    def dispatch(self, text: str) -> None:
        """Run the /command ``text``."""
        self._run_command(*command_parts(text))

    def _run_command(self, name: str, arg: str) -> None:
        cmd = self.commands.get(name.lower())
        if cmd is None:
            near = difflib.get_close_matches(name.lower(), list(self.commands), n=1)
            hint = f"did you mean /{near[0]}?" if near else "/help lists them"
            self.say(f"unknown command /{shorten(name)}; {hint}")
            return
        if arg and not cmd.takes_argument:   # "/exit please", "/reset everything": not done
            self.say(f"usage: {cmd.usage} (it takes no argument; nothing was done)")
            return
        try:
            cmd.handler(self, unquoted(arg))
        except KeyboardInterrupt:  # Ctrl-C cancels the command (a slow /skills), not the chat
            self.say("\n[cancelled]")
            self._stop_if_scripted()
        except HermesError as e:
            self.error(e)
        except Exception as e:  # like a turn: a failing command must not end the chat
            log.debug("/%s failed", name, exc_info=True)
            self.error(e)

    def turn(self, text: str) -> None:
        self.turn_error = None
        self.turns = getattr(self, "turns", 0) + 1
        self.failed_turns = getattr(self, "failed_turns", 0)
        loop = getattr(self.agent, "loop", None)
        previous = getattr(loop, "on_attempt", None)
        previous_wait = getattr(loop, "on_wait", None)
        if loop is not None:
            loop.on_attempt = self._attempt_reporter(previous)
            loop.on_wait = self._wait_reporter(previous_wait)
        try:
            self._turn(text)
        finally:
            if loop is not None:
                loop.on_attempt = previous
                loop.on_wait = previous_wait

    def _wait_reporter(self, previous: Callable[[str, float], None] | None
                       ) -> Callable[[str, float], None]:
        """Say once per provider and turn that the request waits for a rate-limited key: with
        one provider the loop sleeps out a key's cool-down (a 429's Retry-After, a minute when a
        proxy gives none) up to ``deadline_s``, and the chat sat silent all that time."""
        told: set[str] = set()

        def report(provider: str, seconds: float) -> None:
            if previous is not None:
                previous(provider, seconds)
            if seconds < 1 or provider in told:
                return
            told.add(provider)
            # a chat read from a pipe or file stops whole at Ctrl-C (_stop_if_scripted)
            ctrl_c = "cancels" if self.interactive else "ends the chat"
            self.say(f"[{provider}: every key is at its rate limit; waiting "
                     f"{math.ceil(seconds)} s for one to free (Ctrl-C {ctrl_c})]")
        return report

    def _attempt_reporter(self, previous: Callable[[Attempt], None] | None
                          ) -> Callable[[Attempt], None]:
        """Say at once that a stalled or dropped attempt is tried again: a server that sends
        nothing (keep-alives only) is given up only after ``stream_idle_timeout_s``, and the
        chat said nothing until every retry had timed out too. Only a retry is told: a failover
        or the last failure ends in the turn's own error line."""
        def report(attempt: Attempt) -> None:
            if previous is not None:
                previous(attempt)
            if attempt.decision != "retry" or attempt.status not in _TRANSPORT_WORDS:
                return
            wait = attempt.retry_after or 0.0
            self.say(f"[{attempt.provider}/{attempt.model}: {_TRANSPORT_WORDS[attempt.status]} "
                     f"after {attempt.latency_ms / 1000:.0f} s; trying again"
                     + (f" in {wait:.0f} s" if wait >= 1 else "") + "]")
        return report

    def _turn(self, text: str) -> None:
        recorded = self.agent.stats.turns
        try:
            if self.stream:
                # each piece is scrubbed by the agent as it arrives (a key split across pieces is
                # held there until whole), so it is written as it comes, escapes shown
                stream = self.agent.stream(text)
                try:
                    for piece in stream:
                        self.out.write(terminal_safe(piece))
                        self.out.flush()
                except KeyboardInterrupt:
                    stream.close()
                    self._interrupted(recorded, shown=True)
                    return
                self.say("")
                self.last_reply = stream.reply
            else:
                reply = self.agent.chat(text)
                self.last_reply = reply
                self.say(reply.text)
            self._tell_withheld()
            self._tell_unfinished()
        except KeyboardInterrupt:
            self._interrupted(recorded, shown=self.stream)
        except HermesError as e:
            self.turn_error = e
            self.failed_turns += 1
            self.say("")
            self.error(e)
            self._no_key_hint(e)
        except Exception as e:  # a bug must not end the user's chat; the log has the traceback
            log.debug("turn failed", exc_info=True)
            self.failed_turns += 1
            self.say("")
            self.error(e)

    def _tell_withheld(self) -> None:
        """Say once per key that a configured key in this turn (typed, in a context file, in a
        tool's answer) was replaced by its fingerprint in what the model was sent: the call loop
        scrubs it silently, and the user should know why the model did not see it."""
        sent = getattr(self.last_reply, "prompt", None)
        if sent is None:
            return
        secrets = getattr(self.agent.redact, "secrets", ())
        for fp in withheld_keys(sent, secrets):
            if fp not in self.told_withheld:
                self.told_withheld.add(fp)
                self.say(f"[a configured key ({fp}) was removed from what was sent to the model; "
                         f"it saw [{fp}] in its place]")

    def _tell_unfinished(self) -> None:
        """Say under a reply the model did not finish why it stopped: a reply cut at the output
        limit reads like a whole one, and only ``Reply.stop_reason`` knows otherwise. A refusal
        says so in its own text, and a turn the tool-round cap ended is logged as a warning."""
        reason = getattr(self.last_reply, "stop_reason", None)
        note = _UNFINISHED.get(reason) if isinstance(reason, str) else None
        if note is not None:
            self.say(f"[{note}]")

    def _interrupted(self, recorded: int, *, shown: bool) -> None:
        """Ctrl-C during a turn: cancelled, unless it landed once the finished reply was recorded
        (the agent records a turn whole, then lets the interrupt through): that turn is in the
        history and goes with the next request, so it is not called cancelled, and a reply not
        streamed is shown (the user would otherwise be asked about an answer never seen)."""
        reply = self.agent.last_reply
        if self.agent.stats.turns > recorded and reply is not None:
            self.last_reply = reply
            if not shown:
                self.say(reply.text)
            self.say("\n[interrupted: the reply was complete and is kept]")
        else:
            self.say("\n[cancelled]")
        self._stop_if_scripted()

    def _stop_if_scripted(self) -> None:
        """Ctrl-C in a chat read from a pipe or a file (``chat < questions.txt``) stops it: the
        person who pressed it cannot type the next line, the file does, so cancelling only the
        turn went on to the next line, and stopping a script of 300 questions took 300 presses.
        The chat is recorded as at the end of its input, and exits 130 (interrupted)."""
        if not self.interactive:
            self.running = False
            self.interrupted = True
            self.say("[Ctrl-C: the rest of the input is not sent]")

    def _no_key_hint(self, err: HermesError) -> None:
        """Every attempt lacked a key (only ANTHROPIC_API_KEY set, the default model is OpenAI's):
        say which key is missing and how to pick a model of a provider that has one."""
        attempts = getattr(err, "attempts", ())
        if not attempts or any(a.status != "no_key" for a in attempts):
            return
        pool = self.agent.pool
        names = list(dict.fromkeys(a.provider for a in attempts))
        removed = [p for p in names if pool.configured(p) and pool.all_rejected(p)]
        if removed:
            self.say(f"[every API key for {', '.join(removed)} was rejected and is out of "
                     "rotation: fix the key named above and start again]")
            names = [p for p in names if p not in removed]
            if not names:
                return
        missing = ", ".join(names)
        have = [p for p in self.agent.providers if pool.has_keys(p) and p not in names]
        self.say(f"[no API key for {missing}"
                 + (f"; keys are set for {', '.join(have)}: choose one of its models with "
                    "/model NAME, --model or llm.routing.default_model" if have else "")
                 + "]")

    def finish(self) -> None:
        """Record the session into episodic memory (a model still loading is not waited for).

        The model's summary is one more request, bounded by its timeouts and retries (two
        minutes on a stalled provider): the user is told what the chat waits for, and Ctrl-C
        records the session with the extractive summary instead of ending without a record."""
        agent = self.agent
        if (self.interactive and agent.history and not getattr(agent, "offline", True)
                and getattr(agent, "context_engine", None) is not None):
            self.say("[recording this chat in memory: the model summarises it; Ctrl-C records it "
                     "without that summary]")
        try:
            try:
                agent.close(wait_warm=False)
            except KeyboardInterrupt:
                agent.close(wait_warm=False, summarize=False)
                self.say("\n[recorded without the model's summary]")
        except HermesError as e:
            self.error(e)


#: What the chat says at a Ctrl-C on the prompt, by :func:`at_the_prompt`'s answer.
_SAID_AT_THE_PROMPT = {"warn": "[Ctrl-C again, Ctrl-D or /exit ends the chat]",
                       "hint": "[Ctrl-D or /exit ends the chat]"}


def _line_editing() -> bool:
    """Whether ``input()`` reads through readline, so ``readline.get_line_buffer()`` holds the
    line typed when Ctrl-C came. CPython uses readline only when stdin and stdout are both the
    process's terminal; with the output piped (``hermes-core chat | tee -i chat.log``) the
    kernel holds the typed line and readline's buffer is empty, so a Ctrl-C that clears a typed
    line would count as a press on an empty prompt and the second one would end the chat."""
    try:
        return all(f.fileno() == n and f.isatty() for n, f in ((0, sys.stdin), (1, sys.stdout)))
    except (AttributeError, ValueError, OSError):   # replaced, closed or detached streams
        return False


def _keys_pressed(readline: Any) -> bool:
    """Whether a key was pressed on the line since its prompt (a line typed and erased leaves
    the buffer empty, but the press that follows clears it, not a step toward leaving). GNU
    readline resets ``rl_last_func`` when a prompt starts and sets it at every key it runs;
    CPython's Ctrl-C clean-up leaves it, and no Python API shows it. Another library (libedit)
    lacks it: then False, the buffer alone decides, as before."""
    try:
        import ctypes

        last = ctypes.c_void_p.in_dll(ctypes.CDLL(readline.__file__), "rl_last_func")
    except (AttributeError, OSError, ValueError, TypeError):
        return False
    return last.value is not None


def at_the_prompt(typed: str | None, *, warned: bool, edited: bool = False) -> str:
    """What Ctrl-C at the prompt does, given the line ``typed`` so far (None: unknown, the line
    is not read through readline), whether the key before it was a Ctrl-C on an empty line
    (``warned``) and whether keys were pressed on this line (``edited``: typed and erased is
    empty yet cleared): ``"drop"`` the typed line, ``"warn"`` how to leave, ``"end"`` the chat as
    Ctrl-D does (recorded, exit 0), or, the line unknown, ``"hint"`` how to leave: never end,
    since the press may have cleared a line being typed.

    Why two presses: Ctrl-C is how people leave a terminal program, and on an empty prompt it
    used to print a newline forever, so a user who had not read the banner was stuck until they
    found Ctrl-D. One press must not end it, though: it clears a line being typed, and a user
    who presses it twice to stop a reply would lose the conversation. So, as Node's and Python
    tools' REPLs do, the first press on an empty line says how to leave and the next one leaves;
    a Ctrl-C that cancels a reply or clears a typed line is not the first of them."""
    if typed is None:
        return "hint"
    if typed.strip() or edited:
        return "drop"
    return "end" if warned else "warn"


#: What starts a /command: the slash, or the full-width one a Chinese input method types.
COMMAND_MARKS = ("/", "\uff0f")
_SPACE = re.compile(r"\s")


def command_parts(text: str) -> tuple[str, str]:
    """A /command line's name and argument (stripped). The name is read in NFKC, so a Chinese
    input method's full-width ``／ｓｔａｔｓ`` is ``/stats`` (``／help`` was sent to the model as a
    message). Any space ends it, the ideographic one (U+3000) too, and so does the full-width
    punctuation such a method types where English has a space (``/save：周报``, ``/model，gpt-4o``,
    ``/skills？``): it is dropped, but an opening quote or bracket (``/memory「快递」``) is kept
    for the argument. A slash of either width stays in the name: ``／etc／hosts`` is a path."""
    rest = text[1:]
    word, arg = rest, ""
    found = _ENDS_A_NAME.search(rest)   # one C pass, full-width letters (ｓａｖｅ) included
    if found:
        i, char = found.start(), found.group()
        opening = not char.isspace() and unicodedata.category(char) in ("Ps", "Pi")
        word, arg = rest[:i], rest[i if char.isspace() or opening else i + 1:]
    return unicodedata.normalize("NFKC", word), arg.strip()


def _ends_a_name(char: str) -> bool:
    """Whether ``char`` (not ASCII) is punctuation that ends a command's name: a full-width
    comma, colon, question mark, a CJK bracket or quote; never a slash."""
    return (unicodedata.category(char).startswith("P")
            and unicodedata.normalize("NFKC", char) != "/")


#: A space, or punctuation from the blocks a Chinese input method types it from (general
#: punctuation, CJK symbols and punctuation, CJK compatibility and full-width forms), as one class:
#: a scan that stopped at each character of these blocks to ask ran a Python loop over a line
#: of full-width letters (a 1 MB paste: 0.5 s, against 10 ms for ASCII).
_ENDS_A_NAME = re.compile("[\\s" + "".join(
    re.escape(c) for start, end in ((0x2010, 0x206F), (0x3000, 0x303F), (0xFE30, 0xFE6F),
                                    (0xFF00, 0xFFEF))
    for c in map(chr, range(start, end + 1)) if _ends_a_name(c)) + "]")


def _as_utf8(line: str, encoding: str, *, marked: bool = False) -> str:
    """``line`` as the UTF-8 it was sent in, when the stream's declared encoding could not read it.

    A stream declared ASCII (``PYTHONIOENCODING=ascii``, a C locale Python did not coerce) still
    gets UTF-8 from the terminal or the file, and every byte of a Chinese message came out as a
    surrogate, then U+FFFD: the message was lost. The surrogate-escaped bytes are put back and
    read as UTF-8; bytes that are not UTF-8 end as U+FFFD, as any other lone surrogate does
    (``clean_text``). ``marked``: the stream began with a UTF-8 byte order mark that its
    declared encoding read as other characters ("ï»¿", "锘"); the file says it is UTF-8, and as
    that encoding (surrogate-escaped) kept the bytes, each line is read back as UTF-8 whatever it
    holds (big5 and cp932 give back a few pairs they map two ways otherwise: U+FFFD there)."""
    if line.isascii():
        return line
    if marked:
        try:
            return line.encode(encoding, "surrogateescape").decode("utf-8", "replace")
        except UnicodeError:   # pragma: no cover - the stream read each of these characters
            return clean_text(line)
    try:
        line.encode("utf-8")   # no surrogate: the line was read whole (checked in C, once)
        return line
    except UnicodeEncodeError:
        pass
    if _codec(encoding) in ("ascii", "utf-8"):   # a Latin-1 stream reads every byte itself
        try:
            return line.encode(encoding, "surrogateescape").decode("utf-8", "replace")
        except UnicodeError:   # a character that stream could never have decoded
            pass
    return clean_text(line)


def _utf8_bom_read_as(encoding: str, line: str) -> bool:
    """Whether ``line``, read in ``encoding``, began as the bytes of a UTF-8 byte order mark in an
    encoding that reads them as other characters (Latin-1 and cp1252: "ï»¿"; cp1251 "п»ї"; GBK,
    a Chinese Windows, "锘" and the third byte escaped or paired with the next). A UTF-8 stream
    reads it as U+FEFF and an ASCII one as surrogates, both handled by :func:`_as_utf8`."""
    if line.isascii() or _codec(encoding) in ("ascii", "utf-8"):
        return False
    try:
        return line[:3].encode(encoding, "surrogateescape").startswith(b"\xef\xbb\xbf")
    except UnicodeError:
        return False


def _codec(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return encoding


def _eight_bit_input(readline: Any) -> None:
    """Let readline pass UTF-8 through in the C/POSIX locale (``LC_ALL=C``, a container or a
    server without locales), where Python still reads UTF-8: readline there takes each byte past
    127 as Meta plus a key, so 帮我查一下 typed or recalled from the history was read as key
    bindings and lost from the line. In every other locale these are readline's defaults."""
    for setting in ("input-meta on", "output-meta on", "convert-meta off"):
        readline.parse_and_bind(f"set {setting}")


def _end_on_signals() -> Callable[[], None]:
    """SIGTERM and SIGHUP (``kill``, a closed terminal window) end the chat as Ctrl-D does.

    Their default action kills the process outright: the session was never recorded and the input
    history never written. Raising SystemExit instead unwinds through ``run``'s cleanup. Returns a
    function that puts the previous handlers back.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            saved[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, previous in saved.items():
            signal.signal(sig, previous)

    return restore
