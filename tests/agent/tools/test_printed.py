"""The stdout wrapper that keeps what a tool call prints for that call."""

from __future__ import annotations

import contextvars
import io
import sys

import pytest

from hermes_core.agent.tools.printed import RoutedStdout, captured


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, as the user's stdout in ``hermes-core chat`` does."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("value", [b"raw", bytearray(b"raw"), 3, None])
def test_a_capture_refuses_what_a_text_stream_refuses(monkeypatch: pytest.MonkeyPatch,
                                                      value: object) -> None:
    """``sys.stdout.write(b"...")`` raises TypeError on a text stream; the capture took it, so a
    tool that catches it ran on, and the call then failed making the text ("sequence item 0:
    expected str instance, bytes found"). click probes ``stdout.write(b"")`` to tell a binary
    stream from a text one: every ``click.echo`` in a tool failed that way."""
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with captured() as printed:
        with pytest.raises(TypeError, match="must be str"):
            sys.stdout.write(value)  # type: ignore[arg-type]
        print("after")
    assert (printed.text, printed.total) == ("after\n", 6)


def test_a_capture_is_no_terminal_while_the_stream_it_wraps_is(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a call prints is read by a model, not a terminal: ``isatty()`` forwarded the user's
    True, and click and rich wrote colour escapes into the tool's answer. Outside a call the
    wrapped stream answers."""
    monkeypatch.setattr(sys, "stdout", _Terminal())
    with captured():
        inside = sys.stdout.isatty()
    assert isinstance(sys.stdout, RoutedStdout)
    assert (inside, sys.stdout.isatty()) == (False, True)


def test_a_print_after_its_call_ended_reaches_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task or thread a tool starts in its context (``create_task``, ``asyncio.to_thread``)
    may print after the call has ended: the text went into the ended call's buffer, which nobody
    reads, and was lost (neither the model nor stdout nor the log had it)."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    with captured() as printed:
        print("during")
        later = contextvars.copy_context()
    later.run(print, "after")
    assert (printed.text, stream.getvalue()) == ("during\n", "after\n")
