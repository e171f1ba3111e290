"""Which tokenizer measures a request, and how far to trust it.

Every count is a real tokenizer's (:mod:`hermes_core.tokens`, OpenAI's encodings, offline):

* ``exact:<encoding>`` -- OpenAI models, counted with their own encoding (``o200k_base`` for
  gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and the o-series; ``cl100k_base`` for gpt-4 and
  gpt-3.5). These are the provider's own counts (the framing of each message aside).
* ``calibrated:o200k_base`` -- every other model (Anthropic, Gemini, local models behind an
  OpenAI-compatible server): ``o200k_base`` scaled by the ratio between what the provider billed for
  the last request (its ``prompt_tokens``, cache reads and writes included) and our count of that
  same request. A BPE count tracks another BPE tokenizer's closely across content types (JSON,
  Thai, code); one ratio carries over from one turn to the next where the character estimate's
  ratio swung with what the conversation held.
* ``o200k_base`` -- the same before any reply has been billed.

Which counter was used is reported (``Prompt.tokens`` consumers and ``hermes-core prompt --json``
show it), so a budget can be judged by how it was measured.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from hermes_core.forked import child_lock
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import Message, Prompt, ToolSpec, Usage

#: OpenAI's chat framing, the one definition of it (the budgets here, and the count of a bill a
#: response never stated in ``providers/unreported.py``): each message costs 3 tokens besides its
#: role and text, a ``name`` 1 besides its own, and 3 prime the reply (OpenAI's cookbook, "How to
#: count tokens with tiktoken", gpt-3.5-turbo-0613 onwards). Tool calls and a tool answer's call id
#: are counted as their text, framed no further (their framing is not documented).
PER_MESSAGE, PER_NAME, REPLY_PRIMING = 3, 1, 3
#: A calibration ratio outside this range says the measurement went wrong, not the count.
RATIO_BOUNDS = (0.25, 4.0)

#: OpenAI model families by name, and their encoding (tiktoken's table, with the families
#: released since): a family name whole or followed by a variant ("o1-mini", "gpt-5.1",
#: "gpt-4o-2024-08-06"), not "o1x" or "gpt-40". A fine-tune (``ft:gpt-4o-mini:org::id``) counts
#: as its base.
_OPENAI_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:gpt-4o|gpt-4\.[1-9]|gpt-5|gpt-oss|chatgpt-4o|o[1-9])(?:[-.].*)?"), "o200k_base"),
    (re.compile(r"(?:gpt-4|gpt-3\.5|gpt-35)(?:-.*)?"), "cl100k_base"),
)


def openai_encoding(model: str) -> str | None:
    """The encoding of OpenAI model ``model``, or None for a name that is not one of OpenAI's
    families (a Llama or DeepSeek model behind an OpenAI-compatible server counts calibrated)."""
    name = model.strip().lower().removeprefix("openai/")
    if name.startswith("ft:"):
        name = name[3:].split(":", 1)[0]
    return next((enc for family, enc in _OPENAI_FAMILIES if family.fullmatch(name)), None)


class TokenCounter(Protocol):
    """Counts tokens of text; ``name`` says how (``exact:...``, ``calibrated:...``, ...)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class BpeCounter:
    """Counts with ``encoding``, scaled by ``ratio`` (1: unscaled). ``exact``: the encoding is the
    model's own, so no ratio applies."""

    encoding: str = DEFAULT_ENCODING
    ratio: float = 1.0
    exact: bool = False

    @property
    def name(self) -> str:
        if self.exact:
            return f"exact:{self.encoding}"
        return self.encoding if self.ratio == 1.0 else f"calibrated:{self.encoding}"

    @property
    def unscaled(self) -> BpeCounter:
        """This counter without its ratio: what a count is cached as, then scaled."""
        return self if self.ratio == 1.0 else BpeCounter(self.encoding, 1.0, self.exact)

    def count(self, text: str) -> int:
        n = count_tokens(text, self.encoding)
        return n if self.ratio == 1.0 else round(n * self.ratio)


# --------------------------------------------------------------------------- prompts and calibration

#: The chat roles, each one token in both encodings (pinned by a test): not looked up per message.
ONE_TOKEN_ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})


def frame(count: Callable[[str], int], role: str, name: str = "") -> int:
    """The framing of one chat message with ``role`` (and ``name``), its texts aside."""
    n = PER_MESSAGE + (1 if role in ONE_TOKEN_ROLES else count(role))
    return n + PER_NAME + count(name) if name else n


def framed(count: Callable[[str], int], role: str, texts: Iterable[str], name: str = "") -> int:
    """Tokens of one chat message as framed (:func:`frame`): ``texts`` are what it carries (its
    content, each tool call's name and arguments, a tool answer's call id), each counted with
    ``count`` as it is sent."""
    return frame(count, role, name) + sum(count(t) for t in texts if t)


def message_cost(m: Message, counter: TokenCounter) -> int:
    """Tokens of one message as sent: its text, its tool calls, the framing. A plain message is
    counted without gathering its texts: every message of the history is costed on each bill."""
    if m.role in ONE_TOKEN_ROLES and not (m.tool_calls or m.tool_call_id or m.name):
        return PER_MESSAGE + 1 + counter.count(m.content)   # frame(), inlined
    texts = [m.content]
    for c in m.tool_calls:
        texts += (c.name, c.arguments)
    if m.tool_call_id:
        texts.append(m.tool_call_id)
    return framed(counter.count, m.role, texts, m.name or "")


def prompt_cost(prompt: Prompt, counter: TokenCounter) -> int:
    """Tokens of the whole request: system, tools, per-turn context and every message."""
    return fixed_cost(prompt, counter) + sum(message_cost(m, counter) for m in prompt.messages)


class _ToolsText:
    """The tools' JSON by the identity of the specs offered, at most ``limit`` tool sets.

    One module-wide slot held the last tools' text: two agents with different tools in one
    process dumped their schemas again on every count (a turn counts them several times). An
    entry holds the specs it was made of, so their ids cannot be reused while it is kept; a
    lookup is one ``dict.get`` without a lock (an agent's specs are the same objects every turn),
    a new set is added under one. A spec is frozen; its ``parameters`` are read when first seen."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], str]] = {}
        # free in a forked child (one a thread held at the fork hung the child's first use)
        self.lock = child_lock(threading.Lock())

    def get(self, tools: tuple[ToolSpec, ...]) -> str:
        key = tuple(map(id, tools))
        hit = self.held.get(key)
        if hit is not None:
            return hit[1]
        text = json.dumps([{"name": t.name, "description": t.description,
                            "parameters": dict(t.parameters)} for t in tools],
                          ensure_ascii=False, default=str)
        with self.lock:
            hit = self.held.get(key)
            if hit is not None:   # another thread made it first: one text for all
                return hit[1]
            while len(self.held) >= self.limit:
                del self.held[next(iter(self.held))]   # the oldest added
            self.held[key] = (tools, text)
        return text


_tools_text = _ToolsText(64)


def tools_json(tools: Sequence[ToolSpec]) -> str:
    """The tools as counted ("" for none): their names, descriptions and parameter schemas as
    JSON, made once per tool set (see :class:`_ToolsText`)."""
    return _tools_text.get(tuple(tools)) if tools else ""


def fixed_cost(prompt: Prompt, counter: TokenCounter) -> int:
    """Tokens of the request but its messages: the system message, tools, the per-turn context
    and the reply's priming."""
    system = framed(counter.count, "system", (prompt.system,)) if prompt.system else 0
    return (system + counter.count(prompt.context) + counter.count(tools_json(prompt.tools))
            + REPLY_PRIMING)


def measured(prompt: Prompt, counter: TokenCounter, history: int) -> dict[str, int]:
    """``prompt.tokens`` counted again with ``counter`` (the model the request goes to), its
    history costing ``history``: the builder counts before routing picks the model, in
    o200k_base, and a gpt-4 request reported o200k counts beside an exact cl100k budget. Every
    count is of the text itself (remembered by content), never converted from another
    encoding's. The files' sections (``soul``, ``memory``, ...) are the builder's to count."""
    tokens = dict(prompt.tokens)
    tokens.update(system=counter.count(prompt.system), context=counter.count(prompt.context),
                  tools=counter.count(tools_json(prompt.tools)), history=history,
                  message=counter.count(prompt.messages[-1].content) if prompt.messages else 0)
    if prompt.turn is not None:
        tokens.update(skills=counter.count(prompt.turn.skills_block),
                      memories=counter.count(prompt.turn.memories_block))
    tokens["total"] = sum(tokens[k] for k in ("system", "context", "history", "message", "tools"))
    return tokens


def calibration_ratio(prompt: Prompt, usage: Usage, *,
                      estimated: int | None = None) -> float | None:
    """Billed prompt tokens over our ``o200k_base`` count of the same request (``estimated``, when
    the caller has it: ``prompt_cost`` with ``BpeCounter()``); None when unusable."""
    billed = usage.total_input_tokens
    if estimated is None:
        estimated = prompt_cost(prompt, BpeCounter())
    if billed <= 0 or estimated <= 0:
        return None
    ratio = billed / estimated
    low, high = RATIO_BOUNDS
    return ratio if low <= ratio <= high else None


@lru_cache(maxsize=1024)
def encoding_for(model: str, provider_kind: str) -> str:
    """The encoding ``model`` served by a provider of ``provider_kind`` is counted and cut in
    (remembered: asked several times a turn, for a handful of models)."""
    return choose_counter(model, provider_kind, None).encoding


def choose_counter(model: str, provider_kind: str, ratio: float | None) -> BpeCounter:
    """The model's own encoding for an OpenAI model, else ``o200k_base`` scaled by ``ratio`` (the
    last billed request's calibration; None: none yet)."""
    encoding = openai_encoding(model) if provider_kind == "openai" else None
    if encoding is not None:
        return BpeCounter(encoding, exact=True)
    return BpeCounter(ratio=ratio if ratio is not None else 1.0)
