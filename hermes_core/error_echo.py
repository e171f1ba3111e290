"""A provider's error message without the parts of the request it quotes back.

Why: a 400 or 403 whose words say the balance is spent takes the key out of rotation for every
process (:func:`hermes_core.errors.error_from_status`), and the words searched are the whole
message. Validation errors quote the request: vLLM's and SGLang's carry the offending input,
often the whole conversation (``'input': [{'role': 'user', 'content': ...}]``, ``input_value=``),
OpenAI's name the function or quote the value (``'...' is not of type 'object'``). A user's
prompt about an overdue balance, a telecom help desk's 欠费, a tool named for arrears, sent in a
malformed request, read as the provider's own words of an empty balance, and every key went.

:func:`own_words` blanks each quotation (``'...'``, ``"..."``, a backtick span), except the
value of a message, code or type field, which a gateway re-raising the provider's error quotes
whole (LiteLLM's ``{'error': {'code': 'Arrearage', 'message': 'Access denied, ...'}}``): that
one is kept, and what it quotes in turn (its escapes undone first) is blanked the same way (a
tool's result in an echoed conversation holding an API error's code goes with the rest of that
message's content). No field is kept inside the request a validation error echoes
(``'input': ...``, ``input_value=``): a message sent with ``message`` where ``content`` belongs,
a tool's result sent as a dict with an ``error``, are the request's words. A quotation opens
after a space or punctuation (not inside a word: ``don't``, ``users'``) and closes at the same
mark not followed by a letter or a digit nor escaped (after an odd run of backslashes); an
opening never closed (a message cut short) blanks the rest.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["own_words"]

_OPEN = re.compile(r"(?<![\w\\])['\"`]")
# a closing mark escaped by no backslash: after an even run of them (``"C:\\"``, a message
# ending in a backslash, closes there; taken for an escaped quote, the quotation ran on to the
# next message's opening mark and left that message outside any)
_CLOSE = re.compile(r"(?<!\\)(?:\\\\)*(['\"`])(?!\w)")
# the fields whose quoted value is the provider's (or a gateway's) own: its message, its code
# (not a description's: a tool's, echoed with the tools, may well speak of arrears)
_KEPT = re.compile(r"(?:message|msg|error|code|type)['\"]?\s*[:=]\s*$")
# a quote mark or a backslash escaped inside a kept value: a gateway's repr of a message holding
# both marks writes each of its quotes so (``\'content\': \'...\'``), read as no quotation
_ESCAPED = re.compile(r"\\([\\'\"`])")
# a double quote no backslash escapes; a message with none but escaped ones is an escaped JSON
# document (claude-code-router's "Error from provider: {\"error\": ...}"), read unescaped
_PLAIN_DQ = re.compile(r'(?<!\\)(?:\\\\)*"')
_DEPTH = 4          # a gateway's message quoting a provider's quoting a validation error's
_MAX_CHARS = 65_536  # an empty balance is said in the first words, not past an echoed 100 MB


# pydantic's echo of the request (``'input': {...}``, ``input_value=[...]``) as it opens: no
# field inside it is the provider's, whatever its name (``message`` where ``content`` belongs)
_ECHO_AFTER_KEY = re.compile(r"\s*[:=]\s*[\[{(]")
_ECHO_IN_WORDS = re.compile(r"\binput_value\s*=\s*[\[{(]")
_ECHO_KEYS = ("input", "input_value")


class _Echo:
    """Where the unquoted stretches read so far leave the text: how deep in brackets, and from
    which depth an echoed request began (None: outside one)."""

    def __init__(self) -> None:
        self.level = 0
        self.began: int | None = None

    def read(self, stretch: str, after_key: str | None) -> None:
        """Follow ``stretch``'s brackets; ``after_key``: the quotation just before it."""
        opens = _ECHO_AFTER_KEY.match(stretch) if after_key in _ECHO_KEYS else None
        at = opens.end() - 1 if opens else -1
        if at < 0 and (m := _ECHO_IN_WORDS.search(stretch)) is not None:
            at = m.end() - 1
        for i, c in enumerate(stretch):
            if c in "[{(":
                if i == at and self.began is None:
                    self.began = self.level
                self.level += 1
            elif c in "]})":
                self.level -= 1
                if self.began is not None and self.level <= self.began:
                    self.began = None


def own_words(text: str, depth: int = 0) -> str:
    """``text`` (lower-cased by the caller, or not) with the request it quotes blanked out."""
    text = text[:_MAX_CHARS]
    if depth == 0 and '\\"' in text and _PLAIN_DQ.search(text) is None:
        text = _ESCAPED.sub(r"\1", text)
    ends: dict[str, list[int]] = {q: [] for q in "'\"`"}
    for close in _CLOSE.finditer(text):
        ends[close.group(1)].append(close.start(1))
    out: list[str] = []
    at = 0
    pos = 0
    echo = _Echo()
    key: str | None = None
    while (m := _OPEN.search(text, pos)) is not None:
        start = m.start()
        closes = ends[m.group()]
        i = bisect.bisect_right(closes, start)
        if i == len(closes):          # never closed: cut short, or an opening apostrophe
            out.append(text[at:start])
            return "".join(out)
        end = closes[i]
        out.append(text[at:start])
        echo.read(text[at:start], key)
        key = text[start + 1:end]
        if depth < _DEPTH and echo.began is None and _KEPT.search(text, max(0, start - 24),
                                                                  start):
            inner = _ESCAPED.sub(r"\1", text[start + 1:end])   # as the quoting server wrote it
            out.append(m.group() + own_words(inner, depth + 1) + m.group())
        else:
            out.append(" ")
        at = pos = end + 1
    out.append(text[at:])
    return "".join(out)
