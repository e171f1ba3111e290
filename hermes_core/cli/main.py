"""The ``hermes-core`` command: a thin argparse shell over the library.

Each command group lives in its own module exposing ``register(subparsers)``; the handler it sets
returns an exit code. Every HermesError ends as one clear line on stderr, never a traceback or a key.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from hermes_core.cli.argtypes import (
    EXIT_BUG,
    Parser,
    escape_unencodable,
    fail,
    json_requested,
    print_json_error,
    shorten,
    terminal_safe,
    verbose_requested,
)
from hermes_core.cli.logs import configure_logging
from hermes_core.cli.output import Output, input_stream, output_lost
from hermes_core.config import register_environment_keys
from hermes_core.config_home import check_home
from hermes_core.errors import HermesError
from hermes_core.log_lines import one_line

COMMAND_MODULES = (
    "hermes_core.cli.chat_cmd",
    "hermes_core.cli.prompt_cmd",
    "hermes_core.cli.skills_cmd",
    "hermes_core.cli.memory_cmd",
    "hermes_core.cli.route_cmd",
    "hermes_core.cli.keys_cmd",
)


EXIT_STATUSES = """exit status:
  0    done (also when the reader of the output went away: `| head`)
  1    an error, said in one line on stderr; with --json also one {"error", "kind": "error",
       "exit_code"} object on stdout; `chat` with piped input: every turn failed
  2    a usage error: unknown option, missing or malformed argument (same JSON, kind "usage")
  70   a bug in hermes-core: one line naming it on stderr (-v shows its traceback, to report);
       same JSON, kind "bug"
  130  interrupted (Ctrl-C; same JSON, kind "interrupted"); `chat` with piped input: Ctrl-C
       stops it, the chat recorded (at a terminal Ctrl-C cancels a reply; twice on an empty
       prompt it ends the chat as Ctrl-D does, 0)
  143  `chat` ended by SIGTERM (`kill`; 129: SIGHUP, its terminal closed), the chat recorded

output: a character the output's encoding cannot show (Chinese on an ASCII or Latin-1 stdout,
  PYTHONIOENCODING=ascii, LANG=C) is written as its escape, \\uXXXX, never as "?"; --json
  escapes it as JSON does. Set PYTHONIOENCODING=utf-8 to write the text itself.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="hermes-core",
        description="Prompt assembly, skill retrieval, episodic memory, routing and key rotation.",
        examples=("hermes-core chat --home examples/home --offline",
                  "hermes-core skills search '帮我查一下快递' --home examples/home",
                  "hermes-core COMMAND --help"),
        footer=EXIT_STATUSES)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    escape_unencodable(sys.stdout)
    escape_unencodable(sys.stderr)   # the interpreter's own escapes; a caller's may be strict
    streams = sys.stdin, sys.stdout, sys.stderr
    register_environment_keys()   # argparse may echo the command line before any config loads
    out, err = Output(streams[1]), Output(streams[2])
    sys.stdin, sys.stdout, sys.stderr = input_stream(streams[0]), out, err
    try:
        code = _run(argv)
        return _flushed(out, err) or code
    except SystemExit as done:   # argparse after --help or a usage error (it ignores write errors)
        lost = _flushed(out, err)
        if lost and not done.code:
            raise SystemExit(lost) from None
        raise
    except KeyboardInterrupt:   # while the command modules load (a second or two of imports)
        print("", file=sys.stderr)
        if json_requested(_words(argv)):
            print_json_error("hermes-core: interrupted", 130)
        return 130
    except OSError as e:
        if e is out.failure or e is err.failure:
            return output_lost(e, (out, err))
        return _bug(e, argv, err)
    except Exception as e:
        return _bug(e, argv, err)
    finally:
        if streams[0] is None:
            sys.stdin.close()
        out.close_discard()
        err.close_discard()
        sys.stdin, sys.stdout, sys.stderr = streams


def _bug(e: BaseException, argv: Sequence[str] | None, err: Output) -> int:
    """A bug (or a library's error quoting its input, as pydantic's ``input_value=...``): exit 70
    (sysexits' EX_SOFTWARE), so neither a person nor a script takes it for an error in their
    input (1). One line names it; ``-v`` adds the traceback, to report. Both are printed here,
    through the redacting stderr, not by the interpreter after the raw stream is back, and
    escaped as a log line is: the message may quote a file's escape sequences. A stderr that
    refuses them (``2>/dev/full``) leaves the JSON object and the 70 to say it, as ``fail`` does;
    what it kept buffered goes to the null device, or the flush at exit fails again and the
    interpreter exits 120 instead of 70."""
    words = _words(argv)
    name = type(e).__name__
    said = shorten(one_line(str(e)), 200)
    message = f"{name}: {said}" if said else name
    try:
        if verbose_requested(words):
            print(terminal_safe("".join(traceback.format_exception(e))), end="", file=sys.stderr)
        print(terminal_safe("hermes-core: internal error (a bug in hermes-core or its "
                            f"installation): {message}; "
                            "rerun with -v to see the traceback and report it"), file=sys.stderr)
    except OSError:
        err.silence()
    if json_requested(words):
        print_json_error(f"hermes-core: internal error: {message}", EXIT_BUG)
    return EXIT_BUG


def _words(argv: Sequence[str] | None) -> Sequence[str]:
    """The command line's words, for a failure caught before (or outside) argparse's reading."""
    return sys.argv[1:] if argv is None else argv


def _flushed(out: Output, err: Output) -> int:
    """Flush both streams now, so a write that fails is reported here rather than by Python's
    flush at exit, which turns any exit into 120. 0: the output was written (or its reader went
    away); diagnostics lost on a failed stderr do not fail a command that did its work."""
    try:
        out.flush()
        err.flush()
    except OSError as e:
        if e is not out.failure and e is not err.failure:
            raise
        lost = output_lost(e, (out, err))
        return lost if out.failure is not None else 0
    return 0


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.process_entry = argv is None   # the console script itself, not a caller in-process
    configure_logging(args.verbose, sys.stderr)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        check_home(getattr(args, "home", None))   # a mistyped home is an error, never created
        return int(args.handler(args) or 0)
    except HermesError as e:
        return fail(args, f"hermes-core: {e}", 1)
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        if getattr(args, "json", False):
            print_json_error("hermes-core: interrupted", 130)
        return 130
    except OSError as e:
        # a path argument the system refuses by its name alone: reported as the input error it
        # is, wherever the first stat of it happens; any other OSError is still a bug's traceback
        if e.errno != errno.ENAMETOOLONG or e.filename is None:
            raise
        name = shorten(os.fsdecode(e.filename))
        return fail(args, f"hermes-core: {name}: name too long for the file system "
                          f"({e.strerror})", 1)


if __name__ == "__main__":
    sys.exit(main())
