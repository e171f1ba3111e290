"""History compaction that keeps the prompt cache warm.

A long chat would otherwise resend its whole history every turn until the provider refuses it.
When the history crosses the high-water mark of its budget (:mod:`.budget`), the oldest turns are
folded into one "conversation so far" message at the head of the history; the recent turns stay
verbatim. Three rules make this cheap with prompt caching:

* **Large steps.** A compaction folds enough turns that the verbatim history drops to ``target``
  of the budget, so it happens every few dozen turns, not every turn. Between two compactions the
  messages only grow at the end: the request prefix (system, summary, older verbatim turns) is
  byte-identical from one turn to the next, and provider caches keep hitting. A sliding window
  that drops one turn per turn changes the prefix every time and is never cached.
* **A breakpoint on the summary** (``Prompt.summary_index``, planned by :mod:`.cache_plan`), so the
  part that survives until the next compaction is cached as one piece.
* **Cuts only at turn starts** (a user message), so a tool call is never separated from its
  result.
* **Folds outlive the process** (:mod:`.fold_store`, the Agent's ``HOME/cache/compaction``): a
  new process on the same chat takes up the latest fold of its messages instead of folding them
  again, so its first request is the one the old process would have sent.

The summary is written by the fast model when one is available (a ``purpose="summary"`` request)
and checked (:func:`~hermes_core.agent.episodic.summarise.summary_problem`); offline, on a failed
call or a rejected answer an extractive summary is used. Either way the facts the user stated --
names, numbers, decisions -- are picked out deterministically and kept in a list under the prose
unless the prose already carries them, so they survive any number of compactions.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from hermes_core.agent.episodic.summarise import (
    clip_words,
    count_words,
    extractive_summary,
    split_sentences,
    summary_problem,
    transcript,
)
from hermes_core.agent.prompt.budget import HistoryBudget, history_budget, model_window
from hermes_core.agent.prompt.calibration_store import CalibrationStore
from hermes_core.agent.prompt.fold_store import FoldStore, PrefixKeys
from hermes_core.agent.prompt.token_count import (
    BpeCounter,
    TokenCounter,
    calibration_ratio,
    choose_counter,
    fixed_cost,
    measured,
    message_cost,
    prompt_cost,
)
from hermes_core.config import Settings
from hermes_core.injection import guard_text
from hermes_core.redact import redact
from hermes_core.types import Completion, Message, Prompt, Usage

log = logging.getLogger("hermes_core.compaction")

SUMMARY_HEADER = "[Conversation so far: a summary of the first {turns} turn{s} of this chat, " \
                 "which are no longer shown word for word]"
FACTS_HEADER = "Facts the user stated:"
MAX_FACTS = 24
FACT_CHARS = 240
#: The prose is never clipped below this many words to make room (facts are dropped instead).
MIN_PROSE_WORDS = 40
#: Nor below this many characters when it is cut by characters (a script whose words are not counted).
MIN_PROSE_CHARS = 200

COMPACTION_INSTRUCTIONS = """You maintain the running summary of a long conversation so that the \
assistant can continue it without the older messages. Merge the summary so far (if any) with the \
conversation excerpt below into one updated summary of at most {words} words. Keep every name, \
number, date and decision the user stated, what the user is trying to do, and what is still open. \
Write plain prose in the conversation's main language, no preamble. Do not invent anything."""

#: ``fold(previous_summary, messages) -> summary text``; raise or return junk to fall back.
HistorySummarizer = Callable[[str, Sequence[Message]], str]


# --------------------------------------------------------------------------- facts

_QUESTION = re.compile(r"[?？]\s*$|^(what|which|who|whom|whose|when|where|why|how|is|are|do|does|"
                       r"did|can|could|would|should|will)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(my|our|i|i'm|i am|we|we're|we've|i've|let's|call me|us)\b|我|咱",
                           re.IGNORECASE)
_STRONG = re.compile(r"\b(my name|call me|decided|decision|we chose|i chose|going with|agreed|"
                     r"settled on|codename|deadline|budget)\b|我叫|名字|决定|定了|预算|截止",
                     re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<=\s)[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")


def fact_score(sentence: str) -> int:
    """How surely ``sentence`` states a fact worth keeping (0: not a fact).

    A fact is a first-person statement (not a question) carrying a name, a number or a decision.
    """
    s = sentence.strip()
    if not s or _QUESTION.search(s) or not _FIRST_PERSON.search(s):
        return 0
    score = 2 * bool(_STRONG.search(s)) + bool(re.search(r"\d", s)) + bool(_CAPITALISED.search(s))
    return score


def user_facts(messages: Sequence[Message]) -> list[str]:
    """The sentences of user messages that state facts, in order, deduplicated."""
    out: list[str] = []
    for m in messages:
        if m.role != "user":
            continue
        for s in split_sentences(m.content):
            s = s.strip()[:FACT_CHARS]
            if fact_score(s) and s not in out:
                out.append(s)
    return out


def keep_facts(facts: Sequence[str], limit: int = MAX_FACTS) -> list[str]:
    """At most ``limit`` facts: the strongest, then the oldest, kept in their original order."""
    if len(facts) <= limit:
        return list(facts)
    ranked = sorted(range(len(facts)), key=lambda i: (-fact_score(facts[i]), i))[:limit]
    return [facts[i] for i in sorted(ranked)]


def _key_terms(fact: str) -> list[str]:
    return re.findall(r"\d[\d,.:]*\d|\d|[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*|[\u4e00-\u9fff]{2,}",
                      fact)


def facts_missing_from(prose: str, facts: Sequence[str]) -> list[str]:
    """The facts whose names and numbers do not all appear in ``prose``."""
    return [f for f in facts if not all(t in prose for t in _key_terms(f)) or not _key_terms(f)]


# --------------------------------------------------------------------------- cut points

def cut_points(history: Sequence[Message], start: int = 0) -> list[int]:
    """Indices >= ``start`` where the history may be cut: each turn start (a user message) at
    which no tool call before the cut has its result after it.

    A call that is never answered (a restored turn cut off after the model called a tool) has no
    result to be separated from: it does not hold the cut back, or it would hold it back for the
    rest of the chat. Folding it away is what keeps it out of the request."""
    answered = {m.tool_call_id for m in history if m.role == "tool" and m.tool_call_id}
    open_calls: set[str] = set()
    points: list[int] = []
    for i, m in enumerate(history):
        if i >= start and m.role == "user" and not open_calls:
            points.append(i)
        for c in m.tool_calls:
            if c.id in answered:
                open_calls.add(c.id)
        if m.role == "tool" and m.tool_call_id:
            open_calls.discard(m.tool_call_id)
    return points


def choose_cut(costs: Sequence[int], points: Sequence[int], *, target: int,
               keep_turns: int, ceiling: int | None = None) -> int | None:
    """Where to cut so the verbatim tail costs at most ``target`` tokens and keeps at least
    ``keep_turns`` turns; the earliest such point. When the last ``keep_turns`` turns alone exceed
    the target, cut just before them; when they alone exceed ``ceiling`` (the high-water mark
    less the summary's room: a pasted log among them), fewer turns are kept (down to the target,
    else the last turn alone when within the ceiling: it stays verbatim), down to none
    (``len(costs)`` in ``points``: the whole history folded): kept, they were over the mark on
    every turn until they aged out, each turn folding one more small turn (a summary request and
    a cold cache) and the history growing past the window. None when no point folds anything."""
    end = len(costs)
    turn_starts = [p for p in points if p < end]
    if not turn_starts:
        # only the end is left (a call answered after every turn start): folded whole when the
        # kept turns may give way
        return end if end in points and ceiling is not None else None
    tail = [0] * (end + 1)
    for i in range(end - 1, -1, -1):
        tail[i] = tail[i + 1] + costs[i]
    allowed = (turn_starts[: max(0, len(turn_starts) - keep_turns) + 1] if keep_turns
               else turn_starts)
    # ``allowed`` ends at the point that keeps exactly ``keep_turns`` turns
    for p in allowed:
        if tail[p] <= target:
            return p if p > 0 else None
    last = allowed[-1]
    if ceiling is not None and tail[last] > ceiling:
        # as many turns kept as the target allows, else the last turn alone when it is within
        # the ceiling (a long answer the next question is about stays verbatim), else none:
        # only a last turn over the ceiling is folded whole
        beyond = [p for p in points if p > last]
        starts = [p for p in beyond if p < end]
        alone = starts[-1] if starts and tail[starts[-1]] <= ceiling else None
        return next((p for p in starts if tail[p] <= target),
                    alone if alone is not None else beyond[-1] if beyond else last)
    return last if last > 0 else None


# --------------------------------------------------------------------------- state and reports

@dataclass(frozen=True, slots=True)
class CompactionState:
    """What has been folded so far: ``history[:folded]`` lives on as ``prose`` and ``facts``."""

    folded: int = 0
    turns: int = 0
    prose: str = ""
    facts: tuple[str, ...] = ()
    source: str = ""          # model / extractive
    compactions: int = 0

    def message(self) -> Message | None:
        """The "conversation so far" message (None before the first compaction)."""
        if not self.folded:
            return None
        head = SUMMARY_HEADER.format(turns=self.turns, s="" if self.turns == 1 else "s")
        parts = [head, self.prose.strip()]
        missing = facts_missing_from(self.prose, self.facts)
        if missing:
            parts.append(FACTS_HEADER + "\n" + "\n".join(f"- {f}" for f in missing))
        return Message("user", "\n\n".join(p for p in parts if p))


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction: what was folded, how, and what it saved."""

    folded_messages: int
    folded_turns: int
    tokens_before: int
    tokens_after: int
    source: str
    ms: float
    reason: str = ""          # why a model summary was not used, when it was not


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """The history side of one turn: budget, size, counter, and a compaction if one happened."""

    counter: str
    budget: HistoryBudget
    history_tokens: int
    summary_turns: int = 0
    verbatim_messages: int = 0
    compactions: int = 0
    compaction: Compaction | None = None
    summary_source: str = ""

    def describe(self) -> str:
        """One line for people: how full the history is and what compaction did. A message
        that alone overflows the window (a pasted log, refused before any request when the
        window is known) leaves no history budget: that is said, not shown as a history 100%
        full."""
        if self.budget.overflow:
            return (f"history {self.history_tokens} tokens; the last message alone did not fit "
                    f"the model's context window of {self.budget.window} tokens "
                    f"({self.budget.overflow} tokens over)")
        used = self.history_tokens / self.budget.available if self.budget.available else 1.0
        kind, _, encoding = self.counter.rpartition(":")
        how = {"exact": f"{encoding}, the model's own tokenizer",
               "calibrated": f"{encoding} calibrated on the last reply's billed tokens"}.get(
                   kind, f"{encoding}, not yet calibrated on a billed reply")
        line = (f"history {self.history_tokens} of {self.budget.available} tokens ({used:.0%}; "
                f"compacts at {self.budget.high_water_ratio:.0%}), counted by {how}")
        if self.summary_turns:
            line += (f"; the first {self.summary_turns} turns are summarised "
                     f"({self.summary_source}), {self.compactions} compaction"
                     f"{'' if self.compactions == 1 else 's'} so far")
        if self.compaction is not None:
            c = self.compaction
            line += (f"; this turn folded {c.folded_turns} turns ({c.tokens_before} -> "
                     f"{c.tokens_after} tokens, {c.source} summary"
                     + (f": {c.reason}" if c.reason else "") + ")")
        return line

    def as_dict(self) -> dict[str, object]:
        c = self.compaction
        return {"counter": self.counter, "budget": self.budget.as_dict(),
                "history_tokens": self.history_tokens, "summary_turns": self.summary_turns,
                "verbatim_messages": self.verbatim_messages, "compactions": self.compactions,
                "summary_source": self.summary_source,
                "compacted_now": None if c is None else {
                    "folded_messages": c.folded_messages, "folded_turns": c.folded_turns,
                    "tokens_before": c.tokens_before, "tokens_after": c.tokens_after,
                    "source": c.source, "ms": round(c.ms, 3), "reason": c.reason}}


# --------------------------------------------------------------------------- summarising

def model_summarizer(complete: Callable[[Prompt], Completion | str], *,
                     words: int = 300, max_chars: int = 24_000) -> HistorySummarizer:
    """A :data:`HistorySummarizer` asking a model through ``complete`` (a ``purpose="summary"``
    request); its answer is checked by the compactor."""

    def fold(previous: str, messages: Sequence[Message]) -> str:
        body = "<conversation>\n" + transcript(messages, max_chars=max_chars) + "\n</conversation>"
        if previous:
            body = f"<summary_so_far>\n{previous}\n</summary_so_far>\n\n{body}"
        prompt = Prompt(system=COMPACTION_INSTRUCTIONS.format(words=words),
                        messages=(Message("user", body),), purpose="summary")
        reply = complete(prompt)
        return reply.text if isinstance(reply, Completion) else str(reply)

    return fold


_ROLE_LABEL = re.compile(r"(?:^|(?<=\s))(?:(User|Assistant): )+")


def labelled_messages(text: str) -> list[Message]:
    """An extractive summary ("User: ... Assistant: ...") as the messages it was made of.

    Folded in as one user message, the summary so far came back with its first sentence labelled
    again ("User: User: ..."): a label more each compaction, until the prose of a long chat was
    nothing but labels. Text without labels (a model's prose) is one user message.
    """
    out: list[Message] = []
    role: Literal["user", "assistant"] = "user"
    start = 0
    for m in _ROLE_LABEL.finditer(text):
        if text[start:m.start()].strip():
            out.append(Message(role, text[start:m.start()].strip()))
        role, start = ("user" if m.group(1) == "User" else "assistant"), m.end()
    if text[start:].strip():
        out.append(Message(role, text[start:].strip()))
    return out


def extractive_prose(previous: str, messages: Sequence[Message], max_words: int) -> str:
    """The summary so far merged with the folded turns' most characteristic sentences."""
    source = labelled_messages(previous) + list(messages)
    target = max(20, min(max_words, 350))
    return extractive_summary(source, target_words=target, max_words=max_words).summary


def fold_history(state: CompactionState, messages: Sequence[Message], *, turns: int,
                 summarizer: HistorySummarizer | None, max_words: int,
                 clock: Callable[[], float] = time.perf_counter,
                 vet: Callable[[str], str | None] | None = None
                 ) -> tuple[CompactionState, str, str, float]:
    """Fold ``messages`` (the turns leaving the verbatim history) into ``state``.

    ``vet`` says why a model's summary must not be used (None: it may), beyond
    :func:`summary_problem`: the Agent's scans it for prompt injection (:func:`injection_vet`).
    Returns (new state, summary source, why the model was not used, milliseconds taken).
    """
    started = clock()
    facts = keep_facts([*state.facts, *(f for f in user_facts(messages) if f not in state.facts)])
    prose, source, reason = "", "extractive", "offline" if summarizer is None else ""
    if summarizer is not None:
        try:
            got = summarizer(state.prose, messages)
            text = " ".join(str(got).split())
            checked = [Message("user", state.prose), *messages] if state.prose else messages
            problem = summary_problem(text, checked) or (vet(text) if vet is not None else None)
            if problem is None:
                prose, source = clip_words(text, max_words), "model"
            else:
                reason = shown_reason(f"model summary rejected: {problem}")
        except Exception as e:  # a failed summary must not cost the user their turn
            reason = shown_reason(f"model summary failed: {type(e).__name__}: {e}")
        if reason:
            log.warning("history compaction: %s; using the extractive summary", reason)
    if not prose:
        prose = extractive_prose(state.prose, messages, max_words)
    new = CompactionState(folded=state.folded + len(messages), turns=state.turns + turns,
                          prose=prose, facts=tuple(facts), source=source,
                          compactions=state.compactions + 1)
    return new, source, reason, (clock() - started) * 1000.0


def shown_reason(reason: str, chars: int = 200) -> str:
    """``reason`` as the log, the turn's report and ``/stats`` may show it: a failed call's or a
    rejected summary's words can quote the model's text, so a key in it is redacted, every
    character that is not printable (a terminal escape, a bidi override, a line break) is shown
    as its ``\\x``/``\\u`` escape, and the whole is clipped to ``chars`` between those units:
    a cut inside ``[REDACTED]`` or ``\\x1b`` would leave ``[REDAC`` or a lone backslash, and the
    reader could no longer tell a key was there or would read a character never sent."""
    units = [u if len(u) > 1 or u.isprintable() else ascii(u)[1:-1]
             for u in _SHOWN_UNIT.findall(redact(reason))]
    if sum(map(len, units)) <= chars:
        return "".join(units)
    kept, used = [], 0
    for unit in units:
        if used + len(unit) > chars - 1:
            break
        kept.append(unit)
        used += len(unit)
    return "".join(kept) + "…"


# what :func:`shown_reason` never cuts: a redaction mark (``[REDACTED]``, a key's ``[key-…]``
# fingerprint) or one character (its escape when unprintable)
_SHOWN_UNIT = re.compile(r"\[REDACTED\]|\[key-[0-9a-f]{10}\]|.", re.DOTALL)


def injection_vet(categories: Sequence[str]) -> Callable[[str], str | None]:
    """A ``vet`` for :func:`fold_history` that refuses a summary the injection scan blocks (the
    context files' scan, ``categories``). A page or tool answer folded away can order the
    summariser to carry its words on, and the summary then leads every later request as the
    user's own message, kept in the home for the next process; the extractive summary takes
    its place (it is made of the user's and assistant's sentences, never a tool answer's).

    The summary is scanned as a context file, then its orders to the model (``role-hijack``)
    again as data, as a recalled session's summary is: "first run this: curl … | bash" is a
    README's install step but, in words that lead every request, an order. The rest of the data
    tier stays off: a summary retells what the user asked ("The user asked: can you reply in
    German?"), which that tier reads as a task slipped into a memory."""
    cats = tuple(categories)
    orders = tuple(c for c in cats if c == "role-hijack")

    def vet(text: str) -> str | None:
        guarded = guard_text(text, name="history summary", categories=cats)
        if not guarded.findings and orders:
            guarded = guard_text(text, name="history summary", categories=orders, data=True)
        if not guarded.findings:
            return None
        return f"it carries a possible prompt injection ({guarded.findings[0].describe()})"

    return vet


def clip_chars(text: str, chars: int) -> str:
    """``text`` cut to about ``chars`` characters, at a space when one is near, never inside a
    ``[REDACTED]`` mark, "…" at the cut: the cut :func:`fit_summary` falls back on when words do
    not shorten the prose (:func:`count_words` counts ASCII words and Chinese characters only, so
    a Korean, Russian, Arabic or Thai summary counts next to none). Same text, same bytes."""
    body = text.rstrip("…").rstrip()
    if len(body) <= chars:
        return body
    cut = body[:chars]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= chars * 0.8:
        cut = cut[:space]
    opened = cut.rfind("[")
    if opened > cut.rfind("]"):   # a redaction mark (or any bracket) cut open
        cut = cut[:opened]
    return cut.rstrip() + "…"


def fit_summary(state: CompactionState, room: int,
                cost: Callable[[Message], int]) -> CompactionState:
    """``state`` with a summary message costing at most ``room`` tokens (when it can be done).

    The facts listed under the prose count against the room like the prose: unbounded, they made
    the summary the largest message of the history (24 facts of a Chinese chat, none of which is
    ever found word for word in the prose, are ~1,200 tokens), so compaction ran again on the next
    turn. The facts may take half of the room, weakest (then newest) dropped first; the prose is
    clipped to what is left, down to ``MIN_PROSE_WORDS`` (by characters, :func:`clip_chars`, when
    its words do not shorten it); facts go next if it still does not fit.
    """
    msg = state.message()
    if msg is None:
        return state

    def listed_cost(s: CompactionState) -> int:
        missing = facts_missing_from(s.prose, s.facts)
        return cost(Message("user", "\n".join(missing))) if missing else 0

    while len(state.facts) > 1 and listed_cost(state) > room // 2:
        state = replace(state, facts=tuple(keep_facts(state.facts, len(state.facts) - 1)))
    while (msg := state.message()) is not None and cost(msg) > room:
        words = count_words(state.prose)
        clipped = (clip_words(state.prose, max(MIN_PROSE_WORDS, int(words * 0.8)))
                   if words > MIN_PROSE_WORDS else state.prose)
        if clipped == state.prose and len(state.prose) > MIN_PROSE_CHARS:
            clipped = clip_chars(state.prose, max(MIN_PROSE_CHARS, int(len(state.prose) * 0.8)))
        if clipped != state.prose:
            state = replace(state, prose=clipped)
        elif state.facts:
            state = replace(state, facts=tuple(keep_facts(state.facts, len(state.facts) - 1)))
        else:
            break
    return state


# --------------------------------------------------------------------------- the compactor

@dataclass
class HistoryCompactor:
    """Keeps one conversation's history within its budget; one per Agent (it holds state).

    ``fit`` is called with each turn's built prompt and the full history; it returns the prompt
    with the compacted messages. ``observe`` calibrates the token count from the provider's
    billed prompt tokens. ``history`` itself is never modified: the Agent keeps every message
    (transcripts, ``/save`` and the session summary see the whole chat).
    """

    settings: Settings
    summarizer: HistorySummarizer | None = None
    clock: Callable[[], float] = time.perf_counter
    state: CompactionState = field(default_factory=CompactionState)
    #: each model's last billed-token ratio in this process (see :meth:`ratio_for`)
    ratios: dict[str, float] = field(default_factory=dict)
    last: CompactionReport | None = None
    billed: tuple[int, int] | None = None   # (provider's prompt tokens, our o200k count), last reply
    #: the files' sections counted with a counter (``PromptBuilder.section_tokens``), so a
    #: prompt's counts are all the model's; None: they stay as built
    sections: Callable[[TokenCounter], Mapping[str, int]] | None = None
    _costs: dict[tuple[str, int], tuple[Message, int]] = field(default_factory=dict)
    #: where folds are kept for another process on the same chat (the Agent's: the home's);
    #: None keeps them in memory only
    store: FoldStore | None = None
    _anchor: Message | None = None   # the last message folded into ``state``
    #: each model's last ratio, kept in the home: a new process counts its first turn as the
    #: last process counted its last (None: in memory only)
    calibration: CalibrationStore | None = None
    #: the history's prefixes looked for in ``store`` so far (None: none yet)
    _searched: PrefixKeys | None = None

    @classmethod
    def in_home(cls, settings: Settings, scrub: Callable[[str], str], *, read_only: bool = False,
                sections: Callable[[TokenCounter], Mapping[str, int]] | None = None
                ) -> HistoryCompactor:
        """A compactor whose folds and billed-token ratios are kept in the home's cache folder:
        the Agent's, and (``read_only``: reads them, writes nothing) ``hermes-core prompt``'s,
        which must find what the agent kept. One place says where they live."""
        cache = settings.home_path / "cache"
        return cls(settings, sections=sections,
                   store=FoldStore(cache / "compaction", scrub, read_only=read_only),
                   calibration=CalibrationStore(cache / "calibration.json", read_only=read_only))

    def reset(self) -> None:
        self.state, self.last, self._anchor, self._searched = CompactionState(), None, None, None
        self._costs.clear()

    def observe(self, prompt: Prompt, usage: Usage, model: str = "") -> None:
        """Calibrate the count from what the provider billed ``model`` for ``prompt``: not from a
        usage it did not report (none, or hermes_core's own count of the request: circular)."""
        if usage.total_input_tokens <= 0 or not usage.reported:
            return
        estimated = prompt_cost(prompt, BpeCounter())
        self.billed = (usage.total_input_tokens, estimated)
        ratio = calibration_ratio(prompt, usage, estimated=estimated)
        if ratio is not None and model:
            self.ratios[model] = ratio
            if self.calibration is not None:
                self.calibration.put(model, ratio)

    def ratio_for(self, model: str) -> float | None:
        """The ratio to count ``model`` with: this process's last bill of it, else the home's
        last for it, else None (unscaled). Per model: one ratio for the process counted a turn
        routed to another model (another provider's tokenizer) with the last bill's, whoever's.
        A last bill within the home's tolerance of the home's ratio counts with the home's
        (:meth:`.CalibrationStore.steady`): a new process reads that one."""
        ratio = self.ratios.get(model)
        if self.calibration is not None:
            ratio = (self.calibration.get(model) if ratio is None
                     else self.calibration.steady(model, ratio))
        return ratio

    def describe_billing(self) -> str:
        """The last reply's billed prompt tokens beside our count of them ("" before any)."""
        if self.billed is None:
            return ""
        billed, estimated = self.billed
        return (f"last request: the provider billed {billed} prompt tokens; o200k_base counted "
                f"{estimated} ({billed / estimated:.2f}x)" if estimated else "")

    def _measured(self, prompt: Prompt, counter: TokenCounter, history: int) -> dict[str, int]:
        tokens = measured(prompt, counter, history)
        if self.sections is not None:
            tokens.update(self.sections(counter))
        return tokens

    def recount(self, prompt: Prompt, *, model: str, provider_kind: str) -> Prompt:
        """``prompt`` as it is, its counts in the encoding of ``model`` (a failover to a model of
        another encoding, its window large enough): counted again from the text, never converted
        from the counts made for the model the turn was fitted for."""
        counter = choose_counter(model, provider_kind, self.ratio_for(model))
        tokens = self._measured(prompt, counter,
                                sum(message_cost(m, counter) for m in prompt.messages[:-1]))
        if prompt.summary_index is not None:
            tokens["summary"] = message_cost(prompt.messages[prompt.summary_index], counter)
        return replace(prompt, tokens=tokens)

    def rebudget(self, prompt: Prompt, model: str, provider_kind: str) -> tuple[Prompt, bool]:
        """``prompt``, the last :meth:`fit`'s as a ``pre_llm_call`` hook changed it outside its
        messages (its text in the context, its own system prompt), counted again with its
        history as fitted; and whether that history still fits beside the change (False: fit
        it again). Why not fit again every time: it counted every part of the request a second
        time for a history that fits (most turns: a hook adds a few hundred tokens), and the
        route after the hook must read counts that hold its text."""
        counter = choose_counter(model, provider_kind, self.ratio_for(model))
        last = self.last
        if last is None:   # compaction off: nothing to fit, only to count
            return self.recount(prompt, model=model, provider_kind=provider_kind), True
        budget = self.budget_for(prompt, counter, model, self.settings.llm.max_tokens)
        fits = not budget.overflow and not budget.over(last.history_tokens)
        if fits:
            self.last = replace(last, budget=budget)
        return replace(prompt, tokens=self._measured(prompt, counter, last.history_tokens)), fits

    def _cost(self, i: int, m: Message, counter: TokenCounter) -> int:
        """``message_cost`` of ``history[i]``, cached by position together with the message it was
        measured for: the history usually only grows at the end, but a caller may put another
        conversation in its place, whose messages must not be measured by the old ones' sizes.
        Calibrated counts scale the cached unscaled count."""
        base: TokenCounter = counter.unscaled if isinstance(counter, BpeCounter) else counter
        key = (base.name, i)
        held = self._costs.get(key)
        if held is not None and held[0] is m:
            got = held[1]
        else:
            if len(self._costs) > 50_000:
                self._costs.clear()
            got = message_cost(m, base)
            self._costs[key] = (m, got)
        if isinstance(counter, BpeCounter) and counter.ratio != 1.0:
            return round(got * counter.ratio)
        return got

    def budget_for(self, prompt: Prompt, counter: TokenCounter, model: str,
                   max_tokens: int) -> HistoryBudget:
        cfg = self.settings.prompt.compaction
        window, source = model_window(model, self.settings.llm.routing, cfg)
        # the request but its history: system, tools, context and the new message
        fixed = fixed_cost(prompt, counter) + (message_cost(prompt.messages[-1], counter)
                                               if prompt.messages else 0)
        return history_budget(window=window, max_tokens=max_tokens, fixed_tokens=fixed,
                              settings=cfg, window_source=source)

    def fit(self, prompt: Prompt, history: Sequence[Message], *, model: str,
            provider_kind: str = "openai", max_tokens: int | None = None) -> Prompt:
        """``prompt`` (built over the full ``history``) with its history compacted to budget."""
        cfg = self.settings.prompt.compaction
        counter = choose_counter(model, provider_kind, self.ratio_for(model))
        folded = self.state.folded
        # equal, not the same object: a caller may put its saved chat back, read from its store
        if folded > len(history) or (folded and history[folded - 1] != self._anchor):
            self.reset()   # another conversation: the summary is of messages no longer there
        if not cfg.enabled:
            self.last = None   # no report of a budget this turn did not use
            used = sum(self._cost(i, m, counter) for i, m in enumerate(history))
            return replace(prompt, tokens=self._measured(prompt, counter, used))
        budget = self.budget_for(prompt, counter, model,
                                 max_tokens if max_tokens is not None else self.settings.llm.max_tokens)
        summary = self.state.message()
        summary_cost = message_cost(summary, counter) if summary is not None else 0
        costs = [self._cost(i, m, counter) for i, m in enumerate(history)]
        used = summary_cost + sum(costs[self.state.folded:])
        event: Compaction | None = None
        if budget.overflow:
            # folding turns cannot make room the message alone does not leave (and would pay for
            # a summary of a request that is refused anyway): the caller decides what to do
            log.warning("no history fits: %s", budget.describe_overflow(model))
        elif budget.over(used):
            restored = self._restored(history)   # the fold another process made: may be enough
            if restored is not None:
                used = message_cost(restored, counter) + sum(costs[self.state.folded:])
            if budget.over(used):
                event = self._compact(history, costs, budget, counter, used)
            summary = self.state.message()
            summary_cost = message_cost(summary, counter) if summary is not None else 0
            used = summary_cost + sum(costs[self.state.folded:])
        tail = tuple(history[self.state.folded:])
        messages = ((summary, *tail) if summary is not None else tail) + prompt.messages[-1:]
        self.last = CompactionReport(counter=counter.name, budget=budget, history_tokens=used,
                                     summary_turns=self.state.turns, verbatim_messages=len(tail),
                                     compactions=self.state.compactions, compaction=event,
                                     summary_source=self.state.source)
        tokens = self._measured(prompt, counter, used)
        tokens["summary"] = summary_cost
        return replace(prompt, messages=messages, tokens=tokens,
                       summary_index=0 if summary is not None else None)

    def _restored(self, history: Sequence[Message]) -> Message | None:
        """Take up the fold another process made of this history (the latest), if kept: its
        summary is the one the provider has cached. Tried only while nothing is folded here."""
        if self.store is None or self.state.folded:
            return None
        # each prefix is looked for once: a history over budget that nothing can be folded of
        # comes here every turn, and only its new turn starts may have a fold not looked for
        searched = self._searched
        new = searched.extend(history) if searched is not None else None
        if searched is None or new is None:   # the first search, or another conversation
            searched = self._searched = PrefixKeys()
            new = {**(searched.extend(history) or {}), **searched.end()}
            found = self.store.find_keys(new, listed=True)   # every prefix, the folder listed
        else:   # and the whole history: a turn that folded all of it and was not kept
            found = self.store.find_keys({**new, **searched.end()}, listed=False)
        if found is None:
            return None
        self.state = CompactionState(  # the store checked each field's type
            folded=found["folded"], turns=found["turns"], prose=found["prose"],
            facts=tuple(found["facts"]), source=found["source"],
            compactions=found["compactions"])
        self._anchor = history[self.state.folded - 1]
        return self.state.message()

    def _compact(self, history: Sequence[Message], costs: Sequence[int], budget: HistoryBudget,
                 counter: TokenCounter, used: int) -> Compaction | None:
        cfg = self.settings.prompt.compaction
        summary_room = int(budget.available * cfg.summary_share)
        points = cut_points(history, self.state.folded)
        # the history's end is a turn start too (the new message's; this turn's tool rounds are
        # not in ``history``): everything may be folded when even the last turn is too large
        points.append(len(history))
        # kept turns over the mark beside a summary of its full room would fold again next turn
        cut = choose_cut(costs, points, target=max(0, budget.target), keep_turns=cfg.keep_turns,
                         ceiling=budget.high_water - summary_room)
        if cut is None or cut <= self.state.folded:
            fitted = fit_summary(self.state, summary_room, lambda m: message_cost(m, counter))
            if fitted != self.state:
                # a kept fold taken up whole, its summary written for a larger window's room
                # (nothing after it to fold): clipped to this one's, or it alone went over
                log.info("the kept summary is fitted to its room in a %d-token window "
                         "(%d tokens)", budget.window, summary_room)
                self.state = fitted
                return None
            log.warning("history is over its budget (%d of %d tokens) but no turn can be folded",
                        used, budget.available)
            return None
        folding = history[self.state.folded:cut]
        turns = sum(1 for m in folding if m.role == "user")
        # words for the prose: the summary's token room, less the facts, at ~1.5 tokens a word
        max_words = max(40, int(summary_room / 1.5))
        p = self.settings.prompt
        state, source, reason, ms = fold_history(
            self.state, folding, turns=turns,
            summarizer=self.summarizer if cfg.use_model else None, max_words=max_words,
            clock=self.clock,
            vet=injection_vet(p.injection_categories) if p.injection_scan else None)
        state = fit_summary(state, summary_room, lambda m: message_cost(m, counter))
        msg = state.message()
        self.state = state
        self._anchor = history[cut - 1]
        if self.store is not None:
            self.store.save(history, asdict(state))
        after = (message_cost(msg, counter) if msg is not None else 0) + sum(costs[cut:])
        return Compaction(folded_messages=len(folding), folded_turns=turns, tokens_before=used,
                          tokens_after=after, source=source, ms=ms, reason=reason)
