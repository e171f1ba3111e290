"""Tests of ``hermes_core/log_lines.py``: one log record is one line, whatever its values hold."""

from __future__ import annotations

import io
import logging

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.log_lines import one_line, traceback_text
from hermes_core.redact import Redactor

#: Every character a reader may take for the end of a line (``str.splitlines`` cuts at each), the
#: escape that starts a terminal sequence, and ordinary text around them.
BREAKERS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x1b\x07\x00\x7f\x9b"
VALUES = st.text(alphabet=st.sampled_from([*BREAKERS, "a", "Z", " ", "\t", "部", "署", ":", "é"]),
                 max_size=40)
FORGED = "x\nWARNING hermes_core.agent: the key sk-fake was accepted"


def _formatted(logger: str, msg: str, *args: object, exc: BaseException | None = None) -> str:
    Redactor([])   # what load_settings does: our loggers' records are made safe as they are made
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    log = logging.getLogger(logger)
    old, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        log.debug(msg, *args, exc_info=(type(exc), exc, exc.__traceback__) if exc else None)
    finally:
        log.removeHandler(handler)
        log.setLevel(old)
        log.propagate = propagate
    return out.getvalue().removesuffix("\n")


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_a_logged_value_never_breaks_its_record_into_two_lines(value: str) -> None:
    for name in ("hermes_core.agent", "openai._base_client", "httpx._client"):
        line = _formatted(name, "tool %s said %r", value, value)
        assert len(line.splitlines()) == 1, line
        assert not any(c in line for c in BREAKERS), line


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_one_line_keeps_printable_text_and_tabs_and_only_escapes(value: str) -> None:
    shown = one_line(value)
    assert len(shown.splitlines()) <= 1 and not any(c in shown for c in BREAKERS)
    assert shown.count("\t") == value.count("\t")
    assert [c for c in shown if c in "aZ部署é"] == [c for c in value if c in "aZ部署é"]


def test_a_forged_line_in_a_value_is_shown_escaped_and_chinese_kept() -> None:
    line = _formatted("hermes_core.agent.tools.runner", "tool %s raised", "查询" + FORGED)
    assert line == ("DEBUG hermes_core.agent.tools.runner: tool 查询x\\nWARNING "
                    "hermes_core.agent: the key sk-fake was accepted raised")


def test_an_exception_message_in_a_logged_traceback_cannot_start_a_line_of_its_own() -> None:
    """The traceback keeps its lines (frames, the chain's joints); the exception's message, a value
    that may quote a tool's arguments, is one line in it."""
    try:
        try:
            raise KeyError(FORGED)
        except KeyError as inner:
            raise ValueError("wrapped\u2028ERROR hermes_core: forged") from inner
    except ValueError as e:
        text = _formatted("hermes_core.agent", "tool failed", exc=e)
    lines = text.split("\n")
    assert lines[0] == "DEBUG hermes_core.agent: tool failed"
    assert not any(line.startswith(("WARNING", "ERROR")) for line in lines), text
    assert "ValueError: wrapped\\u2028ERROR hermes_core: forged" in text
    assert "The above exception was the direct cause" in text and "Traceback" in text
    assert not any(c in text for c in "\r\x85\u2028\u2029")


def test_traceback_text_of_a_plain_exception_is_the_standard_one() -> None:
    try:
        raise RuntimeError("plain 消息")
    except RuntimeError as e:
        import traceback
        assert traceback_text((type(e), e, e.__traceback__)) == "".join(
            traceback.format_exception(e)).rstrip("\n")


def test_the_redacting_filter_on_a_users_handler_keeps_a_record_of_any_logger_on_one_line() -> None:
    from hermes_core.redact import RedactingFilter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactingFilter())
    log = logging.getLogger("myapp.tools")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("fetched %s", FORGED)
    finally:
        log.removeHandler(handler)
        log.propagate = True
    assert out.getvalue() == ("fetched x\\nWARNING hermes_core.agent: the key sk-fake was "
                              "accepted\n")
