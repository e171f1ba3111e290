"""One turn's running state across tool rounds (:class:`Turn`), and joining a stream's deltas into
the Completion they amount to; shared by the Agent's sync, async and stream shells.

A turn's history was compacted for the model its route chose. When the call loop fails over to a
candidate serving another model (another provider's equivalent), :meth:`Turn.fit_for` compacts
what is sent again for that model's window: a smaller window would refuse the request.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Generator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hermes_core.agent.interrupts import held_interrupts
from hermes_core.agent.pricing import Cost
from hermes_core.agent.prompt.budget import model_window
from hermes_core.agent.prompt.token_count import (
    choose_counter,
    encoding_for,
    message_cost,
    prompt_cost,
)
from hermes_core.agent.reply import PAUSED
from hermes_core.errors import Attempt
from hermes_core.providers.base import Accumulator
from hermes_core.redact import StreamRedactor
from hermes_core.types import (
    Candidate,
    Completion,
    Delta,
    Message,
    Prompt,
    RouteDecision,
    ToolCall,
    ToolResult,
    Usage,
)

if TYPE_CHECKING:
    from hermes_core.agent.agent import Agent
    from hermes_core.agent.partial_output import Drafts

log = logging.getLogger(__name__)

# Between the text of two tool rounds in a stream ("Let me check the skill." ... "Here is how"):
# without it the two rounds print as one run-on sentence.
ROUND_BREAK = "\n\n"


class Turn:
    """One turn's running state across tool rounds, shared by the sync, async and stream shells."""

    def __init__(self, agent: Agent, message: str, prompt: Prompt, decision: RouteDecision) -> None:
        self.agent, self.message = agent, message
        self.prompt, self.decision = prompt, decision
        self.rounds_from = len(prompt.messages)  # tool rounds append after this
        self.usage = Usage()
        self.cost = Cost()   # everything billed, the wasted part too
        self.wasted = Usage()   # billed by attempts that failed and were retried or given up
        self.wasted_cost = Cost()
        self.attempts: list[Attempt] = []
        self.rounds = 0
        self.done: Completion | None = None
        self.calls: list[ToolCall] = []
        self.results: list[ToolResult] = []
        self.request_ids: list[str] = []   # the provider's id of each round's request, if said
        self.tool_choice: str | None = None   # the turn's: a call it rules out is never run
        self.capped = False
        self.continued = 0        # paused replies sent back to go on (Anthropic's pause_turn)
        self.continuing = False   # the last reply was paused: the next one goes on with it
        self.paused_out = False   # the turn ended paused, at the limit of continuations
        self.held: list[str] = []   # the text of the paused replies the next reply goes on from
        self.said = False   # a round's reply had text: the next one's starts a paragraph (lead)
        # a structured stream's paused words, scrubbed, not shown yet: the continuation says
        # whether they lead its answer or are dropped (its output tool's input is the answer,
        # or it is a tool round)
        self.unshown = ""
        # the stream redactor of a paused reply that goes on, for its continuation (``Shown``)
        self.scrub: StreamRedactor | None = None
        self._ids: set[str] | None = None   # tool-call ids in the conversation, once a call came
        self._billed: set[int] = set()   # the failed attempts already counted, by identity
        fitted = agent.fitted
        # the model and provider kind this turn's prompt was fitted for; None: not ours to fit again
        self.fitted_for = fitted[1:] if fitted is not None and fitted[0] is prompt.messages else None

    @property
    def lead(self) -> str:
        """What a streamed round's text goes after (the one rule both stream shells read): a
        paragraph break once an earlier round had text, none for a reply going on from a paused
        one."""
        return ROUND_BREAK if self.said else ""

    def _account(self, done: Completion, tried: Sequence[Attempt]) -> None:
        """Count a call; with Ctrl-C held back, so a turn interrupted now and counted as lost
        has its tokens and their cost both or neither."""
        ok = succeeded(tried)
        cost = self.agent.cost_of(done, ok.model if ok is not None else None)
        with held_interrupts():
            if ok is not None:
                # a failed attempt of an Azure deployment, in this turn or a later one, is
                # priced as the model behind it, as its reply is
                self.agent.served_as.learn(ok.provider, ok.model, done.model)
            self.done = done
            self.usage = self.usage + done.usage
            self.cost = self.cost + cost
            self.attempts.extend(tried)
            self.calls.extend(done.tool_calls)
            if done.request_id:
                self.request_ids.append(done.request_id)
            self.billed(tried)
        self.said = self.said or bool(done.text)

    def billed(self, tried: Sequence[Attempt]) -> None:
        """Count the tokens failed attempts of ``tried`` were billed (a stream cut after its
        usage came, then retried): in the turn's cost, apart as wasted, never in ``usage``. Each
        attempt once: a turn that fails after a call was accounted hands its attempts in again."""
        for a in tried:
            if a.usage is not None and id(a) not in self._billed:
                self._billed.add(id(a))   # alive in ``attempts`` or the caller's: not reused
                answered = self.agent.served_as.get(a.provider, a.model)
                spent = self.agent.prices.cost(self.agent.prices.charged_as(answered, a.model),
                                               a.usage)
                self.wasted = self.wasted + a.usage
                self.wasted_cost = self.wasted_cost + spent
                self.cost = self.cost + spent

    def _advance(self, follow: tuple[Prompt, tuple[ToolResult, ...]] | None) -> bool:
        self.rounds += 1
        if follow is None:
            # calls left unanswered: the round cap, not the model, ended the turn
            self.capped = self.done is not None and bool(self.done.tool_calls)
            return False
        self.prompt = follow[0]
        self.results.extend(follow[1])
        self.held = []   # paused replies before a tool round stay messages of their own
        return True

    def _unique(self, done: Completion) -> Completion:
        """``done`` with each tool call's id unique in the conversation (see :func:`unique_ids`)."""
        if not done.tool_calls:
            return done
        if self._ids is None:
            self._ids = used_ids((*self.agent.history, *self.prompt.messages))
        calls = unique_ids(done.tool_calls, self._ids)
        return done if calls == done.tool_calls else replace(done, tool_calls=calls)

    def _scrubbed(self, done: Completion) -> Completion:
        """``done`` as the agent keeps, shows and acts on it: a configured key (or a key shape)
        in the model's text or a tool call's arguments replaced by its fingerprint. What is sent
        is scrubbed in the call loop; what comes back is scrubbed here, once, so the reply, the
        history, the structured output parsed from it and the tools all see the same text. The
        request id is the server's text too (a proxy may echo the Authorization value into its
        header), and ``Reply.request_ids`` is printed and quoted in tickets."""
        scrub = self.agent.redact
        text = scrub(done.text) if done.text else done.text
        calls = tuple(c if (a := scrub(c.arguments)) == c.arguments else replace(c, arguments=a)
                      for c in done.tool_calls)
        rid = scrub(done.request_id) if done.request_id else done.request_id
        if text == done.text and calls == done.tool_calls and rid == done.request_id:
            return done
        return replace(done, text=text, tool_calls=calls, request_id=rid)

    def _go_on(self, done: Completion) -> bool:
        """True when ``done`` was paused (Anthropic's ``pause_turn``: a long server-tool turn)
        and is sent back as it came so the model goes on, at most ``agent.max_continuations``
        times a turn; the next request is the same one with the paused reply appended."""
        self.continuing = False
        if done.finish_reason != PAUSED or not done.paused:
            return False
        self.held.append(done.text)
        if not self.goes_on(done.finish_reason, done.paused):
            self.paused_out = True   # still paused: the reply says the limit ended it
            return False
        self.continued += 1
        self.continuing = True
        if done.text:   # the next reply goes on in the same paragraph; after none, a round
            self.said = False   # with text before it still wants its break
        paused = Message("assistant", done.text, replay=done.paused, container=done.container)
        self.prompt = replace(self.prompt, messages=(*self.prompt.messages, paused))
        return True

    def goes_on(self, finish: str | None, paused: Sequence[Mapping[str, Any]]) -> bool:
        """Whether a reply ending so is sent back to go on (see :meth:`_go_on`): paused, with
        its content to send back, and continuations left this turn."""
        return finish == PAUSED and bool(paused) and self.continued < self.agent.max_continuations

    def answers(self, calls: Sequence[ToolCall]) -> bool:
        """Whether this round's ``calls`` are run and answered, so the turn goes on (none are at
        the round cap: the round is then the reply; see ``ToolRunner.follow_up``)."""
        return self.agent.tools.answers(bool(calls), self.rounds)

    def next_round(self, done: Completion, tried: Sequence[Attempt]) -> bool:
        """Account for one call; True when another request follows: the model called tools, or
        its reply was paused and goes on."""
        done = self._unique(self._scrubbed(done))
        self._account(done, tried)
        if self._go_on(done):
            return True
        return self._advance(self.agent.tools.follow_up(self.prompt, done, self.rounds,
                                                        self.agent.skills, *self._room(done),
                                                        choice=self.tool_choice))

    async def anext_round(self, done: Completion, tried: Sequence[Attempt]) -> bool:
        """``next_round`` running the tools without blocking the event loop."""
        done = self._unique(self._scrubbed(done))
        self._account(done, tried)
        if self._go_on(done):
            return True
        return self._advance(await self.agent.tools.afollow_up(
            self.prompt, done, self.rounds, self.agent.skills, *self._room(done),
            choice=self.tool_choice))

    def _room(self, done: Completion) -> tuple[int, str]:
        """Tokens the model's window has left for this round's tool answers, and their encoding:
        the window less the reply's ``max_tokens``, the safety margin, the request so far and the
        model's own message. Without it a big result (a log, a page) made a request the provider
        refused. Counted as the history is, for the model that answered (after any failover):
        an OpenAI model's own encoding, which the answers are then cut in (gpt-4's cl100k_base
        spends ~3x o200k's tokens on Thai), else o200k_base calibrated on the last bill, handed
        out unscaled. A character estimate put JSON and base64 answers at half their size."""
        settings = self.agent.settings
        cfg = settings.prompt.compaction
        # the model and provider the request named (the attempt that answered, after any
        # failover): the reply's own name may be a dated snapshot the configured window does not list
        ok = succeeded(self.attempts)
        model = self.named_model()
        kind = self.agent.loop.kind(ok.provider) if ok is not None else ""
        window, _ = model_window(model, settings.llm.routing, cfg)
        counter = choose_counter(model, kind, self.agent.compactor.ratio_for(model))
        used = prompt_cost(self.prompt, counter) + message_cost(
            Message("assistant", done.text, tool_calls=done.tool_calls), counter)
        room = window - settings.llm.max_tokens - int(window * cfg.safety_margin) - used
        return int(room / counter.ratio), counter.encoding

    def fit_for(self, prompt: Prompt, candidate: Candidate) -> Prompt:
        """What is sent to ``candidate`` (the call loop asks before each attempt): ``prompt``, its
        files and recalled sessions cut again when the candidate counts in another encoding, its
        history compacted again when the candidate's model has a smaller window than the one the
        turn was compacted for (a failover to another provider's equivalent model). This round's
        tool calls and answers are kept whole and reserved for in the budget. Its counts are the
        candidate's either way: the same model name served in another wire format may count
        otherwise (only OpenAI's is known exact). The fold is the extractive one: a failover is
        already late, and an async turn must not block its event loop on a summary call."""
        if self.fitted_for is None:
            return prompt
        agent = self.agent
        kind = agent.loop.kind(candidate.provider)
        model, fitted_kind = self.fitted_for
        if candidate.model == model and (
                choose_counter(model, kind, None) == choose_counter(model, fitted_kind, None)):
            return prompt
        prompt = agent.builder.recut(prompt, encoding_for(candidate.model, kind))
        routing, cfg = agent.settings.llm.routing, agent.settings.prompt.compaction
        head, rounds = prompt.messages[:self.rounds_from], prompt.messages[self.rounds_from:]
        if model_window(candidate.model, routing, cfg)[0] >= model_window(model, routing, cfg)[0]:
            # sent as it is, but counted as the candidate's model counts (gpt-4o -> gpt-4:
            # o200k -> cl100k), the turn's request without its tool rounds as when it was fitted
            counted = agent.compactor.recount(replace(prompt, messages=head),
                                              model=candidate.model, provider_kind=kind)
            return replace(counted, messages=prompt.messages)
        counter = choose_counter(candidate.model, kind, agent.compactor.ratio_for(candidate.model))
        reserve = sum(message_cost(m, counter) for m in rounds)
        compactor = agent.compactor
        summarizer, compactor.summarizer = compactor.summarizer, None
        try:
            fitted = compactor.fit(replace(prompt, messages=head[-1:]), agent.history,
                                   model=candidate.model, provider_kind=kind,
                                   max_tokens=agent.settings.llm.max_tokens + reserve)
        finally:
            compactor.summarizer = summarizer
        return replace(fitted, messages=fitted.messages + rounds)

    def named_model(self) -> str:
        """The model the request that answered named (after any failover), else the routed one:
        the reply's own name may be a dated snapshot no setting lists."""
        ok = succeeded(self.attempts)
        return ok.model if ok is not None else self.decision.model

    def answer(self) -> tuple[Completion, Prompt]:
        """The turn's last answer and the prompt whose messages the history keeps, for the
        Agent to record. A reply that went on from paused ones is one answer: their text leads
        its own, and the paused messages it went on from are not kept apart. A reply through the
        structured output tool is its input alone: the paused words before it are not the answer
        (a guess there was parsed as the answer, its first object), as within one message."""
        assert self.done is not None
        done, prompt = self.done, self.prompt
        if self.held:
            went_on = len(self.held) - (1 if done.finish_reason == PAUSED else 0)
            words = "".join(self.held[:went_on])
            if not done.from_output_tool:   # scrubbed again: a key split across the pause
                done = replace(done, text=self.agent.redact(words + done.text))
            elif words:
                log.debug("%d characters of paused words before the output tool dropped "
                          "(its input is the answer)", len(words))
            prompt = replace(prompt, messages=prompt.messages[:len(prompt.messages) - went_on])
        return done, prompt


def as_kept(m: Message) -> Message:
    """A round's message as the history keeps it: its reasoning blocks, paused content and
    container were the turn's to send back, not the conversation's."""
    if m.reasoning or m.replay or m.container:
        return replace(m, reasoning=(), replay=(), container=None)
    return m


def used_ids(messages: Sequence[Message]) -> set[str]:
    """The tool-call ids ``messages`` carry (calls and the answers naming them)."""
    ids = {c.id for m in messages for c in m.tool_calls}
    ids.update(m.tool_call_id for m in messages if m.tool_call_id)
    return ids


def unique_ids(calls: Sequence[ToolCall], used: set[str]) -> tuple[ToolCall, ...]:
    """``calls`` with an id already in ``used`` (or earlier in ``calls``) renamed ``<id>-2``,
    ``-3``, ...; ``used`` gains every id. Anthropic refuses a conversation with one tool_use id
    twice, and each answer must name its own call: a test script that gives the same id in two
    rounds, or a server that numbers calls from call_0 each round, must not end the chat. The
    first use keeps its id, so an author asserting on it finds it as written.

    An id is made one every wire takes first (:func:`_wire_safe`), and a renamed one stays
    within :data:`_ID_MAX` with its ``-2``: a conversation begun on one server must be able to
    fail over to another and back."""
    out = []
    for call in calls:
        own = _wire_safe(call.id)
        cid, n = own, 1
        while cid in used:
            n += 1
            cid = f"{own[:_ID_MAX - len(str(n)) - 1]}-{n}"
        used.add(cid)
        out.append(call if cid == call.id else replace(call, id=cid))
    return tuple(out)


#: A character Anthropic refuses in a tool_use id (its pattern is ``^[a-zA-Z0-9_-]+$``).
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

#: The longest tool-call id OpenAI takes ("string too long. Expected a string with maximum
#: length 40": a 400 for the whole request).
_ID_MAX = 40


def _wire_safe(cid: str) -> str:
    """``cid`` as an id both wires take. Each character Anthropic refuses (Kimi numbers calls
    ``functions.add:0``) is written ``_``; an id over :data:`_ID_MAX` (the 53-character
    ``fc_...`` ids of OpenAI's Responses API, replayed by gateways) keeps its head, still
    recognisable, and a digest of the whole, so two ids alike in their head stay apart."""
    own = _ID_UNSAFE.sub("_", cid)
    if len(own) <= _ID_MAX:
        return own
    digest = hashlib.blake2s(cid.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{own[:_ID_MAX - len(digest) - 1]}_{digest}"


class Shown:
    """What a streamed round shows, one delta at a time: the one step ``collect`` (sync) and
    ``Agent._astream_turn`` (async) both drive (:meth:`feed` each delta, then :meth:`end`, or
    :meth:`failed` when the stream raised). Text goes through ``scrub`` (its first piece after
    the turn's ``lead``), which holds back only the tail that could still become a key; with
    ``drafts``, a draft that makes a new partial object shows an empty piece (the object is
    ``drafts.latest``). ``acc`` joins every delta into the round's Completion.

    ``hold`` (a structured request): the round's text is shown at its end, once it is known
    whether the reply was paused and goes on, or is a tool round. What is shown is then the
    reply's text and nothing else (``Reply.text``, the JSON an author parses): a tool round's
    words (a preamble to its calls, or a guessed object) are not the reply's and are dropped, as
    ``chat`` drops them; a paused reply's words wait in the turn (``Turn.unshown``) for its
    continuation: words lead its answer and are shown with it; the output tool's input, or a
    tool round, drops them (:meth:`Turn.answer`). No paragraph break is due before the reply's
    text, as none was shown before it. Both providers give a structured reply's text whole at
    its end: holding it delays nothing.

    The drafts start anew with each round but one ``continuing`` a paused reply: the reply is
    the last round's, so an object in a tool round's text is no partial object of it."""

    def __init__(self, turn: Turn, scrub: StreamRedactor | None = None,
                 drafts: Drafts[Any] | None = None, *, hold: bool = False) -> None:
        self.turn, self.acc = turn, Accumulator(turn.decision.model)
        # a paused reply's continuation goes on with its redactor: a key split across the pause
        # is caught as one split across two pieces is (a flush at the pause released its head)
        carried, turn.scrub = turn.scrub, None
        self.went_on = carried is not None
        self.lead = "" if hold else turn.lead
        self.scrub, self.drafts = carried or scrub or StreamRedactor(), drafts
        self.hold, self.kept = hold, ""
        if drafts is not None and not turn.continuing:
            drafts.restart()

    def feed(self, d: Delta) -> str | None:
        """The piece ``d`` shows, or None."""
        if self.acc.add(d):
            if d.from_output_tool and self.went_on:
                self._drop()
            if self.hold:   # shown at the end, if the reply's (``end``)
                self.kept += self.scrub.feed(d.text)
                return None
            shown, self.lead = self.scrub.feed(self.lead + d.text), ""
            return shown or None
        return "" if self.drafts is not None and self.drafts.feed(d) else None

    def _drop(self, why: str = "the output tool's input is the answer") -> None:
        """The paused words this reply goes on from are not shown, nor, at a tool round's
        end, the round's own: the output tool's input is the answer alone, a tool round's words
        are no part of the reply (:meth:`Turn.answer`). Their held tail goes with them."""
        turn, self.went_on = self.turn, False
        dropped = len(turn.unshown) + len(self.scrub.abandon())
        if dropped:
            log.debug("%d characters of a structured reply's stream not shown (%s)", dropped,
                      why)
        turn.unshown = ""

    def end(self) -> str:
        """What the round shows once its stream ended (the key-shaped tail held back, the text
        held): carried in the turn instead when the reply is paused and goes on, with the
        redactor and its held tail."""
        turn = self.turn
        if turn.goes_on(self.acc.finish, self.acc.paused):
            turn.scrub = self.scrub
            turn.unshown, self.kept = turn.unshown + self.kept, ""
            return ""
        if self.hold and turn.answers(self.acc.calls):
            self.kept, turn.unshown = "", turn.unshown + self.kept
            self._drop("a tool round's words")
            return ""
        rest = self.kept + self.scrub.flush()
        return self._after_unshown(rest) if self.hold else rest

    def _after_unshown(self, rest: str) -> str:
        """``rest`` after the turn's paused words still unshown, which are cleared."""
        rest, self.turn.unshown = self.turn.unshown + rest, ""
        return rest

    def failed(self) -> str:
        """What a round whose stream failed shows: what arrived, less the start of a key."""
        rest, self.kept = self.kept + self.scrub.abandon(), ""
        return self._after_unshown(rest) if self.hold else rest


def collect(stream: Any, turn: Turn, scrub: StreamRedactor | None = None,
            drafts: Drafts[Any] | None = None, *,
            hold: bool = False) -> Generator[str, None, Completion]:
    """Yield what a stream shows (:class:`Shown`); return its Completion. A failure mid-stream
    shows what arrived, less the start of a key."""
    shown = Shown(turn, scrub, drafts, hold=hold)
    try:
        for d in stream:
            if (piece := shown.feed(d)) is not None:
                yield piece
    except Exception:
        if rest := shown.failed():
            yield rest
        raise
    if rest := shown.end():
        yield rest
    return completed(shown.acc, stream)


def succeeded(attempts: Sequence[Attempt]) -> Attempt | None:
    """The attempt that answered (the last one ok, after any failover), if any."""
    return next((a for a in reversed(attempts) if a.status == "ok"), None)


def completed(acc: Accumulator, stream: Any) -> Completion:
    """The streamed Completion, named as a whole reply is: after the model the stream says
    answered, else the one the attempt that succeeded asked for (after any failover); carrying
    the request that attempt sent."""
    attempts = getattr(stream, "attempts", ())
    ok = succeeded(attempts)
    done = replace(acc.completion(ok.provider if ok else ""), prompt=getattr(stream, "prompt", None))
    if ok is not None and acc.model is None:
        done = replace(done, model=ok.model)
    return done


