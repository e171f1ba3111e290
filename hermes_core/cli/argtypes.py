"""Helpers shared by the command groups: argparse value types and output."""

from __future__ import annotations

import argparse
import codecs
import json
import re
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from wcwidth import wcswidth

from hermes_core.errors import PromptInputError
from hermes_core.redact import clip
from hermes_core.types import unfit_model_name

if typing.TYPE_CHECKING:
    from _typeshed import SupportsWrite

#: Digits a count, turn number or seed may have: "as many as there are" may be written 10**20,
#: and int() refuses over 4,300 (a ValueError, read as "not a whole number").
MAX_DIGITS = 100


def _whole(text: str, minimum: int | None) -> int:
    digits = len(text.strip().lstrip("+-"))
    if re.fullmatch(r"\s*[+-]?\d+\s*", text) and digits > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"too large (a number of {digits} digits)")
    try:
        value = int(text)
    except ValueError:
        shown = repr(text)   # escapes included: a control character is shown, never sent
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise argparse.ArgumentTypeError(f"not a whole number: {shown}") from None
    if minimum is not None and value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum} (got {value})")
    return value


#: Characters of a user-supplied value a message shows whole; a longer one is cut to its head.
CLIP_AT = 80


def shorten(text: str, limit: int = CLIP_AT) -> str:
    """``text`` for a message: whole when short, else its head and its length.

    A value typed or pasted on the command line (a model name, a path) may be 10,000 characters;
    echoed whole it buries the message it was quoted in."""
    if len(text) <= limit:
        return text
    return f"{clip(text, limit // 2)}... ({len(text)} characters)"


_LONG_WORD = re.compile(rf"\S{{{CLIP_AT + 1},}}")


class Parser(argparse.ArgumentParser):
    """argparse, with each long word of a usage error shown by its head and length: "invalid
    choice" and "unrecognized arguments" quote what was typed, 10,000 characters included.
    Subparsers are made of the same class."""

    _last_args: tuple[str, ...] = ()

    def __init__(self, *args: typing.Any, examples: Sequence[str] = (), footer: str = "",
                 **kwargs: typing.Any) -> None:
        """``examples``: command lines shown under "examples:" at the end of ``--help`` (a person
        starts from one); ``footer``: text shown as written after them (the exit statuses)."""
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)
        self.footer = footer
        self.register("action", "parsers", _Commands)

    def format_help(self) -> str:
        text = super().format_help()
        if self.examples:
            text += "\nexamples:\n" + "".join(f"  {line}\n" for line in self.examples)
        return text + (f"\n{self.footer}" if self.footer else "")

    def parse_known_args(self, args: typing.Any = None, namespace: typing.Any = None
                         ) -> typing.Any:
        """argparse's, remembering the words this parser was given, for :meth:`error`."""
        self._last_args = tuple(str(a) for a in (sys.argv[1:] if args is None else args))
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> typing.NoReturn:
        message += self._dash_hint(message)
        message = _LONG_WORD.sub(lambda m: shorten(m.group()), message)
        if json_requested(self._last_args):
            print_json_error(f"{self.prog}: error: {message}", 2)
        super().error(message)

    def _dash_hint(self, message: str) -> str:
        """A value that begins with "-" (``memory search -rebase``) is read as an unknown option,
        and argparse then says only that the value is missing. Name the word and the ``--`` that
        passes it, so the person sees their query was there and how to give it."""
        if not message.startswith("the following arguments are required"):
            return ""
        for word in self._last_args:
            if word == "--":
                return ""
            name = word.split("=", 1)[0]
            known = any(option == name or (name.startswith("--") and option.startswith(name))
                        for option in self._option_string_actions)   # abbreviations included
            if len(word) > 1 and word.startswith("-") and not known:
                return (f" ('{shorten(word)}' was read as an option; a value that starts with '-' "
                        f"goes after '--': {self.prog} -- {shorten(word)})")
        return ""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Usage, help and error text whose stream refuses it is dropped, so a usage error still
        exits 2 and ``--help`` still exits: Python 3.11.7 and later argparse do this themselves,
        earlier 3.11 releases (Debian's 3.11.2) let the OSError out before ``exit``. The CLI's
        own stream wrapper has noted the failure and reports it once the command ends."""
        try:
            super()._print_message(message, file)
        except OSError:
            pass


class _Commands(argparse._SubParsersAction):   # type: ignore[type-arg]
    """A command's one-line ``help`` (its row in the parent's list) is its ``--help``
    description too, unless it has a longer one: ``chat --help`` did not say what chat does."""

    def add_parser(self, name: str, **kwargs: typing.Any) -> typing.Any:
        if kwargs.get("help") and not kwargs.get("description"):
            kwargs["description"] = kwargs["help"][0].upper() + kwargs["help"][1:] + "."
        return super().add_parser(name, **kwargs)


def model_name(text: str) -> str:
    """``--model``: a name :func:`unfit_model_name` does not refuse."""
    if unfit_model_name(text):
        raise argparse.ArgumentTypeError(
            f"{terminal_safe(shorten(text))!s} is not a model name: it has spaces, control or "
            "invisible characters")
    return text


def positive_int(text: str) -> int:
    """A whole number >= 1: counts where 0 would silently mean "the default" and -1 would slice."""
    return _whole(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0: a count of what has happened (turns so far)."""
    return _whole(text, 0)


def whole_number(text: str) -> int:
    """Any whole number of at most :data:`MAX_DIGITS` digits (a seed)."""
    return _whole(text, None)


def escape_unencodable(stream: object) -> None:
    """Let ``stream`` write each character its encoding lacks as an escape (``\\u5feb``, as a
    Python or JSON string would) instead of failing with UnicodeEncodeError (a Chinese reply must
    not end a turn in a traceback) or writing "?" (``PYTHONIOENCODING=ascii`` or ``LANG=C`` with
    the output saved to a file: the text was lost for good). The escape keeps every character
    and a person can read it back; a Latin-1 terminal still shows its accents as they are."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # pragma: no cover - not a reconfigurable text stream
            pass


# C0 and C1 control characters but tab and newline, and DEL
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with each control character shown as ``\\xNN`` instead of sent to the terminal.

    Stored text (a session summary, a skill's description) holds whatever a chat or a file said;
    an escape sequence printed raw clears the screen, retitles the window or writes the clipboard
    (OSC 52). JSON output needs none of this: ``json.dumps`` escapes control characters itself."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (``wcwidth``: a CJK character takes two, a
    combining mark none); ``len`` would pad a row naming 快递查询 four columns short. Text the
    library cannot measure (a control character) counts a column a character."""
    width = wcswidth(text)
    return width if width >= 0 else len(text)


def pad(text: str, width: int) -> str:
    """``text`` shown (control characters escaped) and padded with spaces to ``width`` terminal
    columns; text already that wide is left whole, never cut."""
    shown = terminal_safe(text)
    return shown + " " * max(0, width - columns(shown))


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON for stdout: Chinese as written where stdout takes it, escaped (``\\u5feb``)
    where its encoding does not (``PYTHONIOENCODING=ascii``, a Latin-1 terminal). Text output
    there shows such characters as "?"; ``--json`` did too, valid JSON that had lost its data."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        unicode_out = codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        unicode_out = False
    return json.dumps(data, ensure_ascii=not unicode_out, indent=indent)


def json_requested(words: Sequence[str]) -> bool:
    """Whether the command line asks for ``--json`` (or an abbreviation argparse takes for it)
    before any ``--``: known before argparse has read it, so a usage error can answer in JSON."""
    for word in words:
        if word == "--":
            return False
        if len(word) >= 3 and "--json".startswith(word):
            return True
    return False


def verbose_requested(words: Sequence[str]) -> bool:
    """Whether the command line asks for ``-v`` (``-vv``, ``--verbose`` or an abbreviation of it)
    before any ``--``: known for a failure caught before or outside argparse's reading."""
    for word in words:
        if word == "--":
            return False
        if re.fullmatch(r"-v+", word) or (len(word) >= 3 and "--verbose".startswith(word)):
            return True
    return False


#: Exit statuses of a failed command (the top-level help lists them).
EXIT_ERROR, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPTED = 1, 2, 70, 130

#: The ``kind`` of ``--json``'s error object, by exit status: a script tells "fix the input"
#: (error, usage) from "report this" (bug, sysexits' EX_SOFTWARE) without parsing the message.
ERROR_KINDS = {EXIT_ERROR: "error", EXIT_USAGE: "usage", EXIT_BUG: "bug",
               EXIT_INTERRUPTED: "interrupted"}


def print_json_error(message: str, code: int) -> None:
    """The one object ``--json`` prints on stdout when the command fails: a script reading it
    gets the error, its kind and the exit code, not an empty stream (the line for a person is on
    stderr). A stdout that refuses it (its reader gone, a full disk) is left at that: the failed
    write would otherwise be taken for ``| head`` after a command that worked, and exit 0."""
    try:
        print(json_text({"error": message, "kind": ERROR_KINDS.get(code, "error"),
                         "exit_code": code}))
    except OSError:
        pass


def fail(args: argparse.Namespace, message: str, code: int) -> int:
    """``code``, after the one stderr line of a failed command (escaped: it quotes a path or a
    value) and, under ``--json``, the same error as one JSON object on stdout. A stderr that
    refuses the line (``2>&1 | head -c0``) leaves ``code`` to say it: the failed write was taken
    for a reader gone after a command that worked, and exited 0."""
    try:
        print(terminal_safe(message), file=sys.stderr)
    except OSError:
        pass
    if getattr(args, "json", False):
        print_json_error(message, code)
    return code


def print_mapping(data: Mapping[str, Any], *, as_json: bool) -> None:
    """One JSON object (``--json``, for scripts) or aligned ``key  value`` lines (for people)."""
    if as_json:
        print(json_text(data))
        return
    width = max((len(k) for k in data), default=0) + 2
    for key, value in data.items():
        print(f"{key:{width}}{value}")


# a message piped in, at most (as prompt's --history file): ``route - < /dev/zero`` or ``yes |``
# would otherwise be read until memory runs out
MAX_STDIN_BYTES = 20_000_000


def stdin_text() -> str:
    """The message piped in: bytes that are not UTF-8 become U+FFFD rather than a traceback. A
    file saved on Windows is read as the text it holds: no byte order mark, "\\n" line ends, and
    the line end that closes the file (``echo``'s, an editor's) is no part of the message. More
    than ``MAX_STDIN_BYTES`` is refused (:class:`PromptInputError`) without reading the rest."""
    if sys.stdin.isatty():   # `route -` typed at a shell: silent, it looked hung
        end = "Ctrl-Z, Enter" if sys.platform == "win32" else "Ctrl-D"
        print(f"(reading the message from stdin: end it with {end})", file=sys.stderr)
    if hasattr(sys.stdin, "buffer"):
        data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    else:
        data = sys.stdin.read(MAX_STDIN_BYTES + 1).encode()
    if len(data) > MAX_STDIN_BYTES:
        raise PromptInputError("<stdin>", "", f"the message piped in is over {MAX_STDIN_BYTES:,} "
                                              "bytes; give a shorter one")
    return data.decode("utf-8-sig", "replace").replace("\r\n", "\n").removesuffix("\n")
