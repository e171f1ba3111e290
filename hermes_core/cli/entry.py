"""Where ``hermes-core`` starts (the console script and ``python -m hermes_core.cli``).

Why a module of its own: start-up is about half a second of imports (config, pydantic, yaml, the
command modules), and a Ctrl-C in that time ended in a KeyboardInterrupt traceback through
importlib, because the handler in :func:`hermes_core.cli.main.main` did not exist yet. This module
imports nothing of the package (and ``import hermes_core`` itself loads nothing heavy), so from
the first line of ours that runs, a Ctrl-C ends like one in a command: a newline, exit 130.

For the same reason a bug met while :mod:`hermes_core.cli.main` loads (a broken module, a
dependency missing from the installation) is reported here as main reports one: exit 70, one
line, ``--json``'s object of kind "bug". The helpers main uses for that may be what failed to
load, so this module does it with the standard library, and shows the error's text only when
the redactor loads to scrub it.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

#: sysexits' EX_SOFTWARE, as main's (hermes_core.cli.argtypes.EXIT_BUG).
EXIT_BUG = 70

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def main() -> int:
    """Run the command line; a Ctrl-C at any moment of start-up exits 130 without a traceback,
    and a bug while the command loads exits 70 with one line."""
    try:
        try:
            from hermes_core.cli.main import main as run
        except Exception as e:
            return report_unloadable(e, sys.argv[1:])
        return run()
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130


def report_unloadable(error: Exception, words: Sequence[str]) -> int:
    """:data:`EXIT_BUG`, after the line (and, with ``-v``, the traceback) main's bug report
    prints, and under ``--json`` its object on stdout. A stream that refuses them is sent to the
    null device, so Python's flush at exit cannot turn the 70 into 120."""
    redactor = _redactor()
    scrub = redactor.redact if redactor is not None else None
    text = " ".join(redactor.redact(str(error)).split()) if redactor is not None else ""
    if redactor is not None and len(text) > 200:
        text = f"{redactor.clip(text, 100)}... ({len(text)} characters)"
    said = f"{type(error).__name__}: {text}" if text else type(error).__name__
    said = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", said)
    options = _options(words)
    try:
        if "verbose" in options:
            shown = (scrub("".join(traceback.format_exception(error))) if scrub is not None
                     else _frames_only(error))
            print(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", shown), end="", file=sys.stderr)
        print("hermes-core: internal error (a bug in hermes-core or its installation): "
              f"{said}; rerun with -v to see the traceback and report it", file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError):
        silence(sys.stderr)
    if "json" in options:
        try:
            print(json.dumps({"error": f"hermes-core: internal error: {said}", "kind": "bug",
                              "exit_code": EXIT_BUG}))
            sys.stdout.flush()
        except (OSError, ValueError):
            silence(sys.stdout)
    return EXIT_BUG


_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


def _frames_only(error: BaseException) -> str:
    """The traceback of ``error`` and of the errors chained to it, each ending in its class
    alone: the messages and notes could hold a key, and no redactor loaded to take it out."""
    out, seen = "", set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out = ("Traceback (most recent call last):\n" + "".join(traceback.format_tb(current.__traceback__))
               + f"{type(current).__name__}\n" + out)
        if current.__cause__ is not None:
            current, out = current.__cause__, _CAUSE + out
        elif current.__context__ is not None and not current.__suppress_context__:
            current, out = current.__context__, _CONTEXT + out
        else:
            current = None
    return out


def _redactor() -> ModuleType | None:
    """:mod:`hermes_core.redact`, or None when it does not load (it may be what is broken):
    then no text of the error is shown, since nothing could take a key out of it."""
    try:
        return importlib.import_module("hermes_core.redact")
    except Exception:
        return None


def _options(words: Sequence[str]) -> set[str]:
    """Which of ``--json`` and ``-v`` (or an abbreviation of either) come before any ``--``,
    read as main reads them before argparse has."""
    found: set[str] = set()
    for word in words:
        if word == "--":
            break
        if len(word) >= 3 and "--json".startswith(word):
            found.add("json")
        if re.fullmatch(r"-v+", word) or (len(word) >= 3 and "--verbose".startswith(word)):
            found.add("verbose")
    return found


def silence(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at the null device: what it still buffers is dropped
    there at exit instead of failing again (an in-memory stream has none: nothing to do).
    Standard library only, so :mod:`hermes_core.cli.output` shares it with this module."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


if __name__ == "__main__":
    sys.exit(main())
