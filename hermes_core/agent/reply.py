"""What a turn hands back (:class:`Reply`), a streamed turn (:class:`ReplyStream`) and a
session's running totals (:class:`SessionStats`): plain values the Agent fills, kept apart from the
facade so a caller can type against them without importing the whole agent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_core.agent.pricing import Cost
from hermes_core.agent.prompt.compaction import CompactionReport
from hermes_core.errors import Attempt
from hermes_core.types import Prompt, RouteDecision, ToolCall, ToolResult, Usage

#: Finish reasons of a reply its model ended by itself: the end of its answer, a stop sequence, or
#: tool calls (OpenAI's words, Anthropic's, and the legacy ``function_call``).
FINISHED = frozenset({"stop", "end_turn", "stop_sequence", "tool_calls", "tool_use",
                      "function_call"})
#: Finish reasons of a reply that is not an answer to read as given: declined or filtered.
DECLINED = frozenset({"refusal", "content_filter"})
#: Finish reasons of a reply that reached its output token limit (OpenAI's ``length``,
#: Anthropic's ``max_tokens``), or the model's context window while writing (Claude 4.5 on).
CUT_OFF = frozenset({"length", "max_tokens", "model_context_window_exceeded"})
#: The finish reason of a reply the provider paused (Anthropic's server-tool loop): the agent sends
#: it back to go on (:meth:`hermes_core.agent.turn.Turn.next_round`).
PAUSED = "pause_turn"


def stop_reason(finish: str | None) -> str | None:
    """What :attr:`Reply.stop_reason` says of a reply that ended for ``finish``: None when the
    model finished, else why it did not, in Anthropic's words where both APIs have one (OpenAI's
    ``length`` is ``max_tokens``). A cut-off, filtered or paused reply passed for a whole answer."""
    if not finish or finish in FINISHED:
        return None
    return "max_tokens" if finish == "length" else finish


@dataclass(frozen=True, slots=True)
class Reply:
    """What one turn produced, with everything needed to explain it."""

    text: str
    model: str
    provider: str
    usage: Usage = field(default_factory=Usage)
    prompt: Prompt | None = None
    route: RouteDecision | None = None
    retrieval: Any = None
    attempts: tuple[Attempt, ...] = ()
    # every call the model made this turn, and the answers it got (a call of the round the cap
    # ended is in tool_calls without an answer)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    cost: Cost = field(default_factory=Cost)
    output: Any = None   # the validated object of ``chat(..., output=Model)``
    compaction: CompactionReport | None = None   # history budget, and a compaction if one ran
    # None when the model ended the turn; "max_tool_rounds" when llm.max_tool_rounds did, the
    # model still calling tools (its text may then be empty: this says why); "refusal" when the
    # model declined (OpenAI's refusal field, Anthropic's refusal stop reason); "max_tokens" or
    # "model_context_window_exceeded" when the text was cut there; "content_filter" when a filter
    # withheld it; "max_continuations" when Anthropic paused a long turn again and again and
    # the agent stopped sending it back (Agent.max_continuations; see :func:`stop_reason`)
    stop_reason: str | None = None
    # Billed but thrown away: attempts that failed after their usage came (a stream cut, then
    # retried) and, for a structured reply, the replies that did not validate. ``cost`` includes
    # ``wasted_cost``; ``usage`` is the answer's calls only.
    wasted: Usage = field(default_factory=Usage)
    wasted_cost: Cost = field(default_factory=Cost)
    # The provider's id of each request that answered a round of this turn (a tool round, a
    # paused reply, the answer; a structured reply's rejected one before its repair), in order:
    # the response's request-id header, what a provider's support asks for, else the reply's own
    # id. A request that failed and was retried or failed over is not here (``attempts``).
    request_ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text

    @property
    def request_id(self) -> str | None:
        """The provider's id of the request that gave the answer (the last round's), if any."""
        return self.request_ids[-1] if self.request_ids else None


class ReplyStream:
    """Text pieces as they arrive; ``reply`` is set once the stream is exhausted.

    ``close()`` (or breaking out and dropping it) cancels the call; the turn then leaves no trace
    in the history.
    """

    def __init__(self, pieces: Iterator[str]) -> None:
        self._pieces = pieces
        self.reply: Reply | None = None

    def __iter__(self) -> Iterator[str]:
        return self._pieces

    def close(self) -> None:
        close = getattr(self._pieces, "close", None)
        if close is not None:
            close()


@dataclass
class SessionStats:
    """Running totals of one session; the cache hit ratio is what prompt caching saved."""

    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: Cost = field(default_factory=Cost)   # everything billed, wasted tokens too
    tool_calls: int = 0
    wasted: Usage = field(default_factory=Usage)   # billed on failed attempts (see Reply.wasted)

    @property
    def cache_hit_ratio(self) -> float:
        return self.usage.cache_hit_ratio
