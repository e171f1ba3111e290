"""The agent's tools, as one face: what a turn offers the model and how a round is answered.

The machinery lives in ``agent/tools/`` (``schema``: a function as a tool; ``registry``: tools by
name; ``runner``: running one message's calls; ``structured``: output models). This module joins
them to the agent: the built-in ``skill_view`` beside the author's tools, the cap on tool rounds,
and the audit record of each call (name, status, timing; an argument that matches a secret is
never written).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic_core import to_jsonable_python

from hermes_core.agent.reply import CUT_OFF
from hermes_core.agent.skill_tool import SKILL_VIEW, SkillSelection, answer_skill_view
from hermes_core.agent.tools.docstrings import ToolDocstringWarning
from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import Approver, Builtin, ToolRunner
from hermes_core.agent.tools.schema import KEEP, Tool, ToolDefinitionError, make_tool, tool
from hermes_core.errors import UnofferedToolCall
from hermes_core.redact import redact, shows_a_redacted_key
from hermes_core.tokens import DEFAULT_ENCODING, head_tokens
from hermes_core.types import Completion, Message, Prompt, ToolCall, ToolResult, ToolSpec

__all__ = ["KEEP", "AgentTools", "Approver", "Tool", "ToolDefinitionError", "ToolDocstringWarning",
           "ToolRegistry", "ToolRunner", "make_tool", "tool"]

#: An audit record's sink (``AuditLog.append``).
AuditSink = Callable[[Mapping[str, Any]], None]
_ARG_CHARS = 200


#: The least of the window a tool result is cut to (a model with no room left still sees a head).
MIN_RESULT_TOKENS = 256


def cut_to_tokens(text: str, tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """``text`` cut to ``tokens`` of ``encoding`` (what ``Turn._room`` hands out: the model's own
    encoding, or o200k_base for a model counted calibrated), with a note saying how much the model
    did not see. Cut after redaction: the text is already scrubbed."""
    head = head_tokens(text, tokens, encoding)
    if head == text:
        return text
    return (f"{head}\n[... truncated to fit the model's context window: the first {len(head)} "
            f"of {len(text)} characters]")


def fit_results(results: Sequence[ToolResult], room: int | None,
                encoding: str = DEFAULT_ENCODING) -> tuple[ToolResult, ...]:
    """One round's results sharing ``room`` tokens of ``encoding`` (what the model's window has
    left); each gets an equal share, at least ``MIN_RESULT_TOKENS``. None: no limit beyond the
    runner's own cap."""
    if room is None or not results:
        return tuple(results)
    share = max(MIN_RESULT_TOKENS, room // len(results))
    return tuple(replace(r, output=cut_to_tokens(r.output, share, encoding)) for r in results)


def audit_arguments(args: Mapping[str, Any] | None, secrets: Sequence[str]) -> dict[str, str]:
    """Arguments as the audit log keeps them: each value as short JSON, or ``[REDACTED]`` when it
    holds a secret we know or anything shaped like a key."""
    out: dict[str, str] = {}
    for name, value in (args or {}).items():
        try:   # validated arguments hold the function's types (models, enums): their JSON
            value = to_jsonable_python(value, fallback=str)
        except Exception:   # a serializer that raises costs the form, not the record
            pass
        text = json.dumps(value, ensure_ascii=False, default=str)
        secret = redact(text, secrets) != text or shows_a_redacted_key(text)
        out[name] = "[REDACTED]" if secret else text[:_ARG_CHARS]
    return out


def _offered(prompt: Prompt, done: Completion, choice: str | None = None) -> None:
    """Refuse a round whose calls answer a request that offered no tools (``prompt.tools`` is
    what the request offered): answered "unknown tool", the next request would carry tool_use
    and tool_result blocks and no ``tools``, which Anthropic's API refuses with a 400, as it
    would every later turn holding them. No call is run or kept; the model's words go with the
    error. (A structured request on Anthropic's wire offers its output tool and forces it, so a
    call beside it breaks the request as surely.) ``choice``: the turn's ``tool_choice``
    (see :func:`_chosen`)."""
    if prompt.tools or not done.tool_calls:
        _chosen(done, choice)
        return
    names = tuple(dict.fromkeys(c.name for c in done.tool_calls))
    called = ", ".join(repr(n) for n in names)
    raise UnofferedToolCall(
        f"{done.model or 'the model'} answered a request that offered no tools with a call to "
        f"{called}; a compatible server sending calls the request did not offer: nothing was "
        f"run and the turn is not kept", tools=names, text=done.text)


def _chosen(done: Completion, choice: str | None) -> None:
    """Refuse a round calling a tool the turn's ``tool_choice`` rules out (``none``: every
    tool; a tool's name: every other), as :func:`_offered` refuses an unoffered one: a compatible
    server ignoring ``tool_choice`` (the APIs honour it) must not run a tool the caller excluded,
    one with side effects as surely as a harmless one."""
    if choice in (None, "auto", "required"):
        return
    names = tuple(dict.fromkeys(c.name for c in done.tool_calls if c.name != choice))
    if names:
        raise UnofferedToolCall(
            f"{done.model or 'the model'} answered a request with tool_choice '{choice}' with a "
            f"call to {', '.join(repr(n) for n in names)}; a compatible server ignoring "
            f"tool_choice: nothing was run and the turn is not kept", tools=names, text=done.text)


class AgentTools:
    """Which tools an agent's turns offer, and the answers to a round of calls."""

    def __init__(self, tools: Iterable[Callable[..., Any] | Tool] = (), *,
                 approve: Approver | None = None, max_rounds: int = 10,
                 timeout_s: float | None = None, audit: AuditSink | None = None,
                 secrets: Callable[[], Iterable[str]] = tuple,
                 session_id: Callable[[], str] = str) -> None:
        self.registry = ToolRegistry(tools)
        self.max_rounds = max_rounds
        self._audit = audit
        self._secrets = secrets
        self._session_id = session_id
        self.runner = ToolRunner(self.registry, approve=approve, timeout_s=timeout_s,
                                 on_result=self._record, secrets=secrets)

    @property
    def approve(self) -> Approver | None:
        return self.runner.approve

    @approve.setter
    def approve(self, fn: Approver | None) -> None:
        self.runner.approve = fn

    def add(self, fn: Callable[..., Any] | Tool, **options: Any) -> Tool:
        return self.registry.add(fn, **options)

    def specs(self, skills: SkillSelection | None) -> tuple[ToolSpec, ...]:
        """skill_view first (when there are skills), then the author's tools in order added."""
        builtin = (SKILL_VIEW,) if skills is not None and skills.has_skills() else ()
        return (*builtin, *self.registry.specs())

    @staticmethod
    def builtins(skills: SkillSelection | None) -> dict[str, Builtin]:
        """The built-ins answered this round: those :meth:`specs` offers. One not offered is an
        unknown tool, and the unknown-tool answer lists only what the model may call."""
        if skills is None or not skills.has_skills():
            return {}
        return {SKILL_VIEW.name: lambda call: answer_skill_view(call, skills)}

    def _should_answer(self, done: Completion, round_no: int) -> bool:
        return self.answers(bool(done.tool_calls), round_no)

    def answers(self, called: bool, round_no: int) -> bool:
        """Whether a round (``round_no`` from 0) that ``called`` tools has its calls run: not
        the last allowed round's (``max_rounds``)."""
        return called and round_no < self.max_rounds

    def _extend(self, prompt: Prompt, done: Completion,
                results: Sequence[ToolResult]) -> Prompt:
        """The next request: the model's message replayed and the answers, every text in them
        redacted. A model may put a key it saw into a call's arguments or its text, and a server
        echo one into the reply; the tool ran with the arguments as sent, but what goes back to
        the provider is scrubbed like the history and the audit log. A key's replacement holds
        no quote or backslash, so arguments stay valid JSON."""
        secrets = list(self._secrets())
        calls = tuple(replace(c, arguments=redact(c.arguments, secrets)) for c in done.tool_calls)
        assistant = Message("assistant", redact(done.text, secrets), tool_calls=calls,
                            reasoning=done.reasoning)
        answers = [Message("tool", redact(r.output, secrets), tool_call_id=r.call_id, name=r.name)
                   for r in results]
        return replace(prompt, messages=(*prompt.messages, assistant, *answers))

    def follow_up(self, prompt: Prompt, done: Completion, round_no: int,
                  skills: SkillSelection | None, room: int | None = None,
                  encoding: str = DEFAULT_ENCODING, choice: str | None = None
                  ) -> tuple[Prompt, tuple[ToolResult, ...]] | None:
        """The next request, carrying the calls and their answers; None once the turn must end
        (no calls, or the last allowed round: its calls stay unanswered and out of the history).
        ``room``: the tokens of ``encoding`` the model's window has left for this round's answers
        (see :func:`fit_results`); ``choice``: the turn's ``tool_choice`` (see :func:`_chosen`)."""
        if not self._should_answer(done, round_no):
            return None
        _offered(prompt, done, choice)
        results = fit_results(self.runner.run(done.tool_calls, self.builtins(skills),
                                              cut_off=done.finish_reason in CUT_OFF),
                              room, encoding)
        return self._extend(prompt, done, results), results

    async def afollow_up(self, prompt: Prompt, done: Completion, round_no: int,
                         skills: SkillSelection | None, room: int | None = None,
                         encoding: str = DEFAULT_ENCODING, choice: str | None = None
                         ) -> tuple[Prompt, tuple[ToolResult, ...]] | None:
        if not self._should_answer(done, round_no):
            return None
        _offered(prompt, done, choice)
        results = fit_results(await self.runner.arun(done.tool_calls, self.builtins(skills),
                                                     cut_off=done.finish_reason in CUT_OFF),
                              room, encoding)
        return self._extend(prompt, done, results), results

    def _record(self, call: ToolCall, args: Mapping[str, Any] | None, result: ToolResult) -> None:
        if self._audit is None:
            return
        self._audit({"time": round(time.time(), 6), "event": "tool_call",
                     "session_id": self._session_id(), "tool": call.name, "call_id": call.id,
                     "status": result.status, "duration_ms": result.duration_ms,
                     "arguments": audit_arguments(args, list(self._secrets()))})

    def close(self) -> None:
        self.runner.close()
