"""The log lines ``hermes-core -v``/``-vv`` print on stderr.

Log messages quote what the library read: a home's path, a skill folder's name, a file's text, an
SDK's request options. Each command shows such values escaped (:func:`terminal_safe`), but log
lines are formatted by :mod:`logging`, past every command's own printing, so one formatter here
escapes each whole line (message, traceback and stack) as it leaves for the terminal.
"""

from __future__ import annotations

import logging
from typing import Any, TextIO

from hermes_core.cli.argtypes import terminal_safe
from hermes_core.log_lines import messages_one_line, one_line
from hermes_core.redact import RedactingFilter

FORMAT = "%(levelname)s %(name)s: %(message)s"


class TerminalSafeFormatter(logging.Formatter):
    """A formatter whose output carries no control character but tab and newline: an escape
    sequence in a logged path (ESC [2J clears the screen, OSC 52 writes the clipboard) is shown
    as ``\\x1b``; Chinese and every other printable text is left as it is. A record of any
    logger (a library's, a tool author's: only ours are made one line as they are made) is one
    line on the terminal: its message, and each exception's message in its traceback, has every
    line break escaped (:mod:`hermes_core.log_lines`)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = one_line(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return messages_one_line(super().formatException(ei), ei[1])

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


def level_for(verbose: int) -> int:
    """WARNING by default, INFO for ``-v``, DEBUG (SDK and HTTP internals) for ``-vv``."""
    return logging.WARNING if verbose <= 0 else (logging.INFO if verbose == 1 else logging.DEBUG)


def configure_logging(verbose: int, stream: TextIO) -> None:
    """Send log records to ``stream`` (the CLI's scrubbed stderr), keys redacted and escapes shown.

    A process whose root logger already has handlers (a caller running ``main`` in-process) keeps
    them, as :func:`logging.basicConfig` does; each gets the redacting filter once."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TerminalSafeFormatter(FORMAT))
    logging.basicConfig(level=level_for(verbose), handlers=[handler])
    for each in logging.getLogger().handlers:  # -vv logs SDK internals: scrub key-shaped text
        if not any(isinstance(f, RedactingFilter) for f in each.filters):
            each.addFilter(RedactingFilter())
