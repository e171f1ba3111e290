"""Where prompt-cache markers go: a pure function of the provider, the model and message sizes.

Markers are planned once per call, for the provider and model that will actually receive the
request, because the minimum cacheable prefix and the breakpoint rules differ per provider.

``CachePlan.system`` is set when ``llm.cache_system_prompt`` is on and the system prompt reaches
the model's minimum cacheable size (:data:`CACHE_MINIMUMS`, data not code; less
``prompt.cache_min_slack``, because token counts here are estimates and the costs are lopsided: a
marker on a prefix that proves too short is ignored by the API for free, while a missing marker on
one that was long enough forfeits the cache). Anthropic breakpoints go on the message just before
each of the last ``prompt.message_breakpoints`` user messages -- where each recent turn's cached
prefix ended, so this turn reads what the previous one wrote -- never on the last user message
(its per-turn context changes every turn). A tool round's follow-up request marks its own end
and the previous round's first: within a turn the context stays put and rounds only append, so
each round reads the turn so far. A ``pinned`` message (the "conversation so far" summary
of compacted history, ``Prompt.summary_index``) gets a breakpoint first: everything up to it stays
byte-identical until the next compaction. At most four breakpoints in total. OpenAI caches
automatically from 1024 tokens; it gets ``prompt_cache_key`` (derived from the prefix hash) so
requests with the same prefix land on the same cache shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from hermes_core.config import Settings
from hermes_core.tokens import count_tokens
from hermes_core.types import CachePlan, Message, Prompt

MAX_BREAKPOINTS = 4


@dataclass(frozen=True, slots=True)
class CacheMinimum:
    """The smallest prefix (tokens) a provider caches for models whose id contains ``pattern``.

    Below it the request still succeeds but nothing is cached, silently; so we do not mark it.
    The first matching row wins (more specific patterns first); ``pattern=""`` is the default.
    """

    provider: str
    pattern: str
    min_tokens: int


CACHE_MINIMUMS: tuple[CacheMinimum, ...] = (
    CacheMinimum("anthropic", "opus-4-6", 4096),
    CacheMinimum("anthropic", "opus-4-5", 4096),
    CacheMinimum("anthropic", "haiku-4-5", 4096),
    CacheMinimum("anthropic", "3-5-haiku", 2048),
    CacheMinimum("anthropic", "3-haiku", 2048),
    CacheMinimum("anthropic", "haiku", 2048),
    CacheMinimum("anthropic", "", 1024),   # Sonnet 3.7/4/4.5/4.6, Opus 3/4/4.1
    CacheMinimum("openai", "", 1024),      # automatic prefix caching from 1024 tokens
)


def min_cacheable_tokens(provider_kind: str, model: str | None,
                         table: Sequence[CacheMinimum] = CACHE_MINIMUMS) -> int | None:
    """Minimum cacheable prefix for ``model``; None when the provider does not cache."""
    name = (model or "").lower()
    for row in table:
        if row.provider == provider_kind and row.pattern in name:
            return row.min_tokens
    return None


def plan_cache(*, provider_kind: str, model: str | None, enabled: bool,
               ttl: Literal["5m", "1h"], prefix_sha256: str, prefix_tokens: int,
               messages: Sequence[Message], message_tokens: Sequence[int],
               message_breakpoints: int = 2, min_slack: float = 0.0,
               pinned: Sequence[int] = ()) -> CachePlan:
    """Where the cache markers go (a pure function of sizes and roles; see the module doc).

    ``prefix_tokens`` is everything before the first message (tools + system). A prefix counts
    as cacheable when its estimate reaches ``(1 - min_slack)`` times the model's minimum.
    """
    floor = min_cacheable_tokens(provider_kind, model)
    if not enabled or floor is None:
        return CachePlan(ttl=ttl)
    minimum = floor * (1.0 - min_slack)
    key = "hermes-" + prefix_sha256[:24]
    system = prefix_tokens >= minimum
    if provider_kind != "anthropic":
        return CachePlan(system=system, ttl=ttl, prompt_cache_key=key)
    room = MAX_BREAKPOINTS - int(system)
    cumulative: list[int] = []
    running = prefix_tokens
    for t in message_tokens:
        running += t
        cumulative.append(running)
    last = len(messages) - 1
    picked: list[int] = []
    for j in pinned:
        if len(picked) < room and 0 <= j < last and cumulative[j] >= minimum and j not in picked:
            picked.append(j)
    budget = max(0, min(len(picked) + message_breakpoints, room))
    for j in (*_round_ends(messages), *(i - 1 for i in range(last, 0, -1)
                                        if messages[i].role == "user")):
        if len(picked) >= budget:
            break
        m = messages[j]
        if m.role == "system" or (m.role != "tool" and not m.content and not m.tool_calls):
            continue   # nothing is rendered for it: the marker would have no block to sit on
        if cumulative[j] >= minimum and j not in picked:
            picked.append(j)
    return CachePlan(system=system, message_indices=tuple(sorted(picked)), ttl=ttl,
                     prompt_cache_key=key)


def _round_ends(messages: Sequence[Message]) -> tuple[int, ...]:
    """Where the requests of this turn's tool rounds ended, latest first: the last message of a
    follow-up request (a tool answer), then the last answer before each later round's call.

    A follow-up sends the per-turn context after its tool answers (``render_anthropic``), and
    every round only appends, so a round's end is a prefix the next round, and the next turn,
    resend unchanged: marked, they read the turn so far (tool answers are often the bulk of it)
    instead of paying for it again."""
    last = len(messages) - 1
    if last < 0 or messages[last].role != "tool":
        return ()
    ends = [last]
    for i in range(last, 0, -1):
        if messages[i].role == "user":
            break
        if messages[i].role == "assistant" and messages[i - 1].role == "tool":
            ends.append(i - 1)
    return tuple(ends)


def message_tokens(content: str) -> int:
    """A message's tokens, from the one memo of counts (a second cache here held 8,192 texts,
    100,000-character tool answers too, past the memo's bound on characters)."""
    return count_tokens(content)




def replan_cache(prompt: Prompt, settings: Settings, *, provider_kind: str,
                 model: str | None) -> Prompt:
    """The same prompt with its cache plan computed for another provider or model.

    Routing runs after the prompt is built (it reads the prompt's size), so the plan is redone for
    the provider that will actually be called. The system text, and so the prefix hash, never
    changes: only where the markers go.
    """
    llm = settings.llm
    prefix = int(prompt.tokens.get("system", 0)) + int(prompt.tokens.get("tools", 0))
    cache = plan_cache(provider_kind=provider_kind, model=model, enabled=llm.cache_system_prompt,
                       ttl=llm.cache_ttl, prefix_sha256=prompt.prefix_sha256,
                       prefix_tokens=prefix, messages=prompt.messages,
                       # only Anthropic's message breakpoints read them: not counted per request
                       # for other providers (a long history is many lookups)
                       message_tokens=[message_tokens(m.content) for m in prompt.messages]
                       if provider_kind == "anthropic" else (),
                       message_breakpoints=settings.prompt.message_breakpoints,
                       min_slack=settings.prompt.cache_min_slack,
                       pinned=() if prompt.summary_index is None else (prompt.summary_index,))
    return replace(prompt, cache=cache)
