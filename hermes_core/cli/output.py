"""The command's standard streams as ``hermes-core`` runs with them: closed, full, or gone.

A command started with a stream closed (``>&-``, ``<&-``: cron, a detached service) finds it
None; one whose output goes to a full disk or to a reader that has gone (``| head -1``) gets an
OSError from a write, or from the flush Python makes at exit, where it prints "Exception ignored"
and exits 120. Each stream is wrapped here so that a closed one behaves as Python's ``print``
treats it (output discarded, input empty) and a failed write is known to be the output's, not a
file the command was reading or writing.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from hermes_core.cli.entry import silence
from hermes_core.redact import RedactingWriter


class Output(RedactingWriter):
    """A scrubbed output stream that remembers the write error that ended it (``failure``)."""

    def __init__(self, inner: Any) -> None:
        self.discard = inner is None
        # closed by close_discard(): the stream lives as long as the command
        super().__init__(open(os.devnull, "w", encoding="utf-8")   # noqa: SIM115
                         if inner is None else inner)
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as e:
            self.failure = e
            raise

    def flush(self) -> None:
        try:
            self.inner.flush()
        except OSError as e:
            self.failure = e
            raise

    def close_discard(self) -> None:
        """Close the null device opened for a closed stream (nothing else is ours to close)."""
        if self.discard:
            self.inner.close()

    def silence(self) -> None:
        """Send whatever is still buffered, now or at exit, to the null device: the flush at
        exit would fail as the last write did."""
        silence(self.inner)


def input_stream(stdin: Any) -> Any:
    """``stdin``, or an empty stream from the null device when it was closed."""
    return open(os.devnull, encoding="utf-8") if stdin is None else stdin


def output_lost(error: OSError, streams: tuple[Output, Output]) -> int:
    """The exit code once ``error`` ended the output: 0 for a reader that went away (the usual
    ``| head``), else one line on stderr (when it still takes one) and 1."""
    for stream in streams:
        if stream.failure is not None:
            stream.silence()
    if error.errno == errno.EPIPE:
        return 0
    err = streams[1]
    if err.failure is None:
        try:
            err.write(f"hermes-core: cannot write the output: {error.strerror or error}\n")
            err.flush()
        except OSError:
            err.silence()
    return 1
