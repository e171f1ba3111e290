"""The Agent facade: one conversation, wired end to end.

Each turn: PromptBuilder (stable prefix + per-turn skills and memories) -> history compaction to
the model's budget (:mod:`hermes_core.agent.prompt.compaction`) -> Router -> call loop (keys,
retries, failover) -> Reply; history kept whole (compaction changes only what is sent); at the
end of a chat the session is summarised into episodic memory. Every part can be passed in (tests
swap the provider with ``override``); the defaults come from settings. With no API key anywhere
the agent runs on the offline provider.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import aclosing, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast, overload

from pydantic import BaseModel, ValidationError

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.defaults import (
    default_context_engine,
    default_providers,
    default_retriever,
    offline_provider,
)
from hermes_core.agent.interrupts import held_interrupts
from hermes_core.agent.partial_output import AsyncOutputStream, Drafts, OutputStream
from hermes_core.agent.prepare_gate import PrepareGate
from hermes_core.agent.pricing import Cost, PriceTable
from hermes_core.agent.prompt.compaction import (
    HistoryCompactor,
    HistorySummarizer,
    model_summarizer,
)
from hermes_core.agent.prompt_builder import PromptBuilder
from hermes_core.agent.reply import DECLINED, Reply, ReplyStream, SessionStats, stop_reason
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.route_fit import expected_encoding, fit_route, refuse_oversized, target
from hermes_core.agent.served_as import FILE_NAME as SERVED_AS_FILE
from hermes_core.agent.served_as import ServedAs
from hermes_core.agent.skill_tool import SKILL_VIEW, SkillSelection
from hermes_core.agent.smart_routing import Router
from hermes_core.agent.tool_runner import AgentTools, Approver, Tool
from hermes_core.agent.tools import structured
from hermes_core.agent.turn import ROUND_BREAK, Shown, Turn, as_kept, collect, completed
from hermes_core.config import Settings, load_settings
from hermes_core.errors import Attempt, ConfigError, HermesError
from hermes_core.forked import renew_in_child
from hermes_core.providers import build_providers, keep_lessons
from hermes_core.providers.base import CallOptions, Provider, requires_key
from hermes_core.providers.offline import OfflineProvider
from hermes_core.providers.steps import Steps, arun, run
from hermes_core.types import (
    Completion,
    Message,
    Prompt,
    RouteDecision,
    TurnContext,
    Usage,
    clean_text,
)

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger("hermes_core.agent")

MAX_TOOL_ROUNDS = 10   # the default of llm.max_tool_rounds
#: How many times a turn the provider paused (Anthropic's pause_turn) is sent back to go on: each
#: continuation is a request carrying the whole turn so far, billed again.
MAX_CONTINUATIONS = 5
NO_KEY_HELP = ("no API key configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add keys under "
               "'credentials' in config.yaml (see config.example.yaml)")


def _usable(providers: Mapping[str, Provider], pool: CredentialPool) -> bool:
    return any(pool.has_keys(name) or not requires_key(p)
               for name, p in providers.items())


class Agent:
    """One conversation with a model. Create one per session; parts may be shared."""

    def __init__(self, settings: Settings | None = None, *,
                 provider: Provider | None = None,
                 providers: Mapping[str, Provider] | None = None,
                 pool: CredentialPool | None = None,
                 router: Router | None = None,
                 call_loop: CallLoop | None = None,
                 prompt_builder: PromptBuilder | None = None,
                 retriever: Any = None,
                 context_engine: Any = None,
                 model: str | None = None,
                 session_id: str | None = None,
                 cwd: str | os.PathLike[str] | None = None,
                 pre_llm_call: Callable[[str, Prompt], Prompt | str | None] | None = None,
                 post_llm_call: Callable[[Reply], None] | None = None,
                 on_route: Callable[[RouteDecision], None] | None = None,
                 loop_options: Mapping[str, Any] | None = None,
                 tools: Sequence[Callable[..., Any] | Tool] = (),
                 approve: Approver | None = None,
                 max_tool_rounds: int | None = None) -> None:
        self.settings = settings or load_settings()
        self.redact = self.settings.redactor()   # the one redactor, for every writer below
        self.home = self.settings.home_path
        if self.home.exists() and not self.home.is_dir():
            # every part below would warn on its own (SOUL.md, skills/, sessions.db): say it once
            raise ConfigError("the home is not a folder (set HERMES_HOME or --home to a directory)",
                              file=str(self.home), key_path="home")
        self.session_id = session_id or uuid.uuid4().hex[:12]
        renew_in_child(self)   # a forked child's session is its own
        self.requested_model = model
        self.history: list[Message] = []
        self.stats = SessionStats()
        self.pre_llm_call, self.post_llm_call, self.on_route = pre_llm_call, post_llm_call, on_route
        self.offline_reason: str | None = None
        self.last_reply: Reply | None = None
        self.last_decision: RouteDecision | None = None
        self.last_turn: TurnContext | None = None   # what retrieval and memory decided last prepare()
        self.max_continuations = MAX_CONTINUATIONS   # paused replies sent back, a turn
        self._recorded = 0   # len(history) at the last record: later turns are recorded again
        # the messages prepare() last compacted and the model they were compacted for
        self.fitted: tuple[tuple[Message, ...], str, str] | None = None   # messages, model, kind
        self.prepare_gate = PrepareGate()   # where the next async turn builds its prompt
        self._options: tuple[Any, CallOptions] | None = None   # (settings.llm, its options)
        self._history_summarizer: tuple[Mapping[str, Provider], HistorySummarizer | None] | None = None

        self.pool = pool or CredentialPool.from_settings(self.settings)  # alerts log fingerprints
        if provider is not None:
            providers = {provider.name: provider}
        elif providers is None:
            providers = build_providers(self.settings) or keep_lessons(default_providers(),
                                                                        self.settings)
        if not _usable(providers, self.pool):
            if provider is not None:   # said, not silent: the provider handed in is never called
                log.warning("provider %r (%s) needs a key and none is configured for it: the "
                            "agent answers offline and never calls it", provider.name,
                            type(provider).__name__)
            providers = {"offline": offline_provider(self.settings)}
            self.offline_reason = NO_KEY_HELP
        self._pinned = provider is not None or self.offline_reason is not None
        self.router = router or Router.from_settings(self.settings)
        self.loop = call_loop or CallLoop(providers, self.pool, self.settings, **(loop_options or {}))
        llm = self.settings.llm
        self.prices = PriceTable({m: p.model_dump() for m, p in llm.prices.items()})
        # what a deployment's replies said it runs, kept in the home for the next process
        self.served_as = ServedAs(self.home / "cache" / SERVED_AS_FILE, scrub=self.redact)
        self.tools = AgentTools(
            tools, approve=approve, timeout_s=llm.tool_timeout_s,
            max_rounds=llm.max_tool_rounds if max_tool_rounds is None else max_tool_rounds,
            audit=getattr(getattr(self.loop, "audit", None), "append", None),
            secrets=self._secrets,
            session_id=lambda: self.session_id)
        self.retriever = retriever if retriever is not None else default_retriever(self.settings)
        self.context_engine = (context_engine if context_engine is not None
                               else default_context_engine(self.settings))
        # the folds kept in the home: another process on this chat sends the summary this one did
        # and the billed-token ratios: it counts as this one did
        self.compactor = HistoryCompactor.in_home(self.settings, self.redact)
        self.skills = SkillSelection(self.retriever) if self.retriever is not None else None
        self.builder = prompt_builder or PromptBuilder(
            self.home, self.settings, cwd=Path(cwd) if cwd else None,
            skill_selector=self.skills, memory_source=self.context_engine)
        self.compactor.sections = self.builder.section_tokens
        if prompt_builder is not None:
            # a builder passed in without its own skill selector or memory source gets the agent's,
            # or it would silently drop skills and memories (and /skills would show nothing)
            if prompt_builder.skill_selector is None:
                prompt_builder.skill_selector = self.skills
            if prompt_builder.memory_source is None:
                prompt_builder.memory_source = self.context_engine

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_config(cls, config: str | os.PathLike[str] | Mapping[str, Any] | None = None, *,
                    home: str | os.PathLike[str] | None = None, offline: bool = False,
                    **kwargs: Any) -> Agent:
        """Settings from a YAML path or a dict (``home`` overrides the configured home)."""
        settings = load_settings(config, home=home)
        if offline:
            kwargs["provider"] = offline_provider(settings)
        agent = cls(settings, **kwargs)
        if offline:
            agent.offline_reason = "offline mode (--offline)"
        return agent

    def tool(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Register a tool: ``@agent.tool`` or ``@agent.tool(needs_approval=True, timeout_s=5)``."""
        if fn is not None:
            return self.tools.add(fn, **options)
        return lambda f: self.tools.add(f, **options)

    def cost_of(self, done: Completion, requested: str | None = None) -> Cost:
        """What ``done`` cost, priced as the model that answered, else as ``requested`` (the
        model asked for; see :meth:`PriceTable.charged_as`); nothing when the offline provider
        answered (no model was called, its token counts only describe the request)."""
        if isinstance(self.loop.providers.get(done.provider), OfflineProvider):
            return Cost()
        name = done.model if requested is None else self.prices.charged_as(done.model, requested)
        return self.prices.cost(name, done.usage)

    def _secrets(self) -> list[str]:
        return [c.secret for name in self.loop.providers for c in self.pool.credentials(name)]

    @property
    def providers(self) -> dict[str, Provider]:
        return self.loop.providers

    @property
    def provider(self) -> Provider:
        """The provider tried first (for display; routing may choose another per turn)."""
        return next(iter(self.loop.providers.values()))

    @property
    def offline(self) -> bool:
        return all(isinstance(p, OfflineProvider) for p in self.loop.providers.values())

    @property
    def model(self) -> str:
        return self.requested_model or self.settings.llm.routing.default_model

    def options(self, **overrides: Any) -> CallOptions:
        """The call options from settings; ``overrides`` set CallOptions fields for one call."""
        llm = self.settings.llm
        if (made := self._options) is None or made[0] is not llm:   # one per settings, not per turn
            made = self._options = (llm, CallOptions(
                max_tokens=llm.max_tokens, temperature=llm.temperature,
                timeout_s=llm.request_timeout_s, stop=llm.stop, seed=llm.seed,
                reasoning_effort=llm.reasoning_effort, thinking_budget_tokens=llm.thinking_budget_tokens,
                idle_timeout_s=llm.stream_idle_timeout_s, max_stream_bytes=llm.max_stream_bytes))
        return replace(made[1], **overrides) if overrides else made[1]

    @property
    def pinned_provider(self) -> str | None:
        """The one provider every request must go to (passed in by hand, or offline), if any:
        routing and route fitting (``route_fit``) read it."""
        return next(iter(self.loop.providers)) if self._pinned else None

    # ------------------------------------------------------------------ one turn: prepare

    def prepare(self, message: str) -> tuple[Prompt, RouteDecision]:
        """The prompt and the route for ``message`` (what ``/prompt`` and ``prompt`` show)."""
        _require_str(message)
        message = clean_text(message)
        tools = self.tools.specs(self.skills)
        built = self.builder.build(message, self.history, session_id=self.session_id,
                                   model=self.requested_model, tools=tools,
                                   encoding=expected_encoding(self))
        self.compactor.summarizer = self.history_summarizer()
        # The history budget is the window of the model the request is routed to: routed on the
        # whole request (a long chat may be what sends it to the long-context model), compacted
        # for that model's window, routed again on what is sent, and compacted again if that
        # route chose another model (a smaller window must not refuse the request); the files and
        # recalled sessions are cut again when the model counts in another encoding (route_fit).
        first = self._route(built)
        prompt = fitted = fit_route(self, built, first)
        compacted = prompt.messages
        if self.pre_llm_call is not None:
            extra = self.pre_llm_call(message, prompt)
            if extra is not None and not isinstance(extra, (str, Prompt)):
                if inspect.iscoroutine(extra):   # an async hook: close it, never awaited
                    extra.close()
                raise TypeError(f"pre_llm_call must return str, Prompt or None, not "
                                f"{type(extra).__name__} (hooks are called synchronously, also "
                                "from achat/astream)")
            if isinstance(extra, Prompt):
                # the hook's prompt is what is sent; the turn's decisions stay the builder's
                prompt = extra if extra.turn is not None else replace(extra, turn=prompt.turn)
            elif extra:
                prompt = replace(prompt, context="\n\n".join(p for p in (prompt.context, extra) if p))
        ours = prompt.messages is compacted   # not a hook's own messages, sent as they are
        fits = True
        if ours and prompt is not fitted:   # the hook's text counted once; the route reads it
            prompt, fits = self.compactor.rebudget(prompt, *target(self, first))
        decision = self._route(prompt)
        aim = target(self, decision)
        if ours and (not fits or aim != target(self, first)):
            prompt = fit_route(self, prompt, decision)   # no room beside the hook, or another model
        if ours:
            refuse_oversized(self, prompt, decision.model)
        self.fitted = (prompt.messages, *aim) if ours else None
        self.last_decision = decision
        self.last_turn = prompt.turn
        if self.on_route is not None:
            self.on_route(decision)
        return prompt, decision

    def _route(self, prompt: Prompt) -> RouteDecision:
        # skill_view is offered on every turn and is optional: it does not make a request need tools
        needs_tools = any(t.name != SKILL_VIEW.name for t in prompt.tools)
        return self.router.select(prompt, requested_model=self.requested_model,
                                  requires_tools=needs_tools, turn_count=len(self.history) // 2,
                                  pinned=self.pinned_provider, pin_note=self.offline_reason)

    def _record(self, turn: Turn) -> Reply:
        """Record the finished turn from what it answers (:meth:`Turn.answer`): its prompt holds
        the turn's messages; ``done.prompt`` (when the call loop returned it) is the last request
        exactly as sent, cache markers included."""
        done, prompt = turn.answer()
        usage, capped = turn.usage, turn.capped
        if turn.paused_out:
            log.warning("the turn ended still paused by the provider after %d continuations "
                        "(Agent.max_continuations); its reply is what came so far",
                        turn.continued)
        if capped:
            log.warning("the turn ended at llm.max_tool_rounds (%d) with the model still calling "
                        "tools (%s); its last calls were not run", self.tools.max_rounds,
                        ", ".join(sorted({c.name for c in done.tool_calls})))
        # the user's message; the tool calls and answers, if any, appended after the messages
        # prepare() sent, which may differ from the history (a pre_llm_call hook can return a
        # Prompt with other messages); the reply
        added = (Message("user", clean_text(turn.message)),
                 *(as_kept(m) for m in prompt.messages[turn.rounds_from:]),
                 Message("assistant", done.text))
        with held_interrupts():   # Ctrl-C now: the turn is recorded whole, then interrupted
            self.history.extend(added)
            self.stats.turns += 1
            self.stats.usage = self.stats.usage + usage
            self.stats.cost = self.stats.cost + turn.cost
            self.stats.wasted = self.stats.wasted + turn.wasted
            self.stats.tool_calls += len(turn.results)
            # the last call's billed prompt tokens, by the model that request named, set against
            # that request as sent (a failover to a smaller window was sent a shorter one)
            self.compactor.observe(done.prompt or prompt, done.usage, turn.named_model())
            # the retrieval as sent: its copy of the message is scrubbed of configured keys
            sent = done.prompt or prompt
            self.last_reply = reply = Reply(
                done.text, done.model, done.provider, usage, sent, turn.decision,
                sent.turn.retrieval if sent.turn is not None else None, tuple(turn.attempts),
                tuple(turn.calls), tuple(turn.results), turn.cost,
                compaction=self.compactor.last, wasted=turn.wasted, wasted_cost=turn.wasted_cost,
                request_ids=tuple(turn.request_ids),
                stop_reason="max_tool_rounds" if capped else "max_continuations"
                if turn.paused_out else stop_reason(done.finish_reason))
        if self.post_llm_call is not None:
            self.post_llm_call(reply)
        return reply

    # ------------------------------------------------------------------ the shells

    def _turn(self, message: str) -> Turn:
        return Turn(self, message, *self.prepare(message))

    @overload
    def chat(self, message: str, *, options: Mapping[str, Any] | None = None) -> Reply: ...

    @overload
    def chat(self, message: str, *, output: type[T],
             options: Mapping[str, Any] | None = None) -> T: ...

    def chat(self, message: str, *, output: type[T] | None = None,
             options: Mapping[str, Any] | None = None) -> Reply | T:
        """Send one user message; returns the reply. A failed turn leaves the history as it was.

        ``output=Model`` (a pydantic model): the reply is asked for in that shape and returned as a
        validated instance (``last_reply.output`` too); one repair round follows a reply that
        does not validate, then :class:`~hermes_core.errors.StructuredOutputError`. ``options``:
        CallOptions fields for this turn (``tool_choice``, ``seed``, ``stop``, ...).
        """
        reply = run(self._answering(message, output, self._turn_options(output, options),
                                    is_async=False))
        return reply if output is None else cast(T, reply.output)

    def _answering(self, message: str, output: type[BaseModel] | None, opts: CallOptions, *,
                   is_async: bool) -> Steps[Reply]:
        """One whole turn, ``chat``'s and ``achat``'s one body (see :mod:`~hermes_core.
        providers.steps`: :func:`run` calls each step, :func:`arun` awaits it): each message
        :meth:`_asks` sends is prepared, then its rounds are asked for, their tools run, until a
        reply is recorded. A failure or an interruption anywhere in the rounds is thrown in
        here, so the rounds done are billed (:meth:`_lost`) however the turn was driven."""
        asks = self._asks(message, output)
        ask = next(asks)
        call = self.loop.acomplete if is_async else self.loop.complete
        while True:
            turn: Turn = yield partial(self._aturn if is_async else self._turn, ask)
            turn.tool_choice = opts.tool_choice
            go_on = turn.anext_round if is_async else turn.next_round
            while True:
                try:
                    done, tried = yield partial(call, turn.prompt, turn.decision, opts,
                                                fit=turn.fit_for)
                    more = yield partial(go_on, done, tried)
                except BaseException as e:   # failed, or interrupted: the rounds done were billed
                    self._lost(turn, getattr(e, "attempts", ()))
                    raise
                if not more:
                    break
            try:
                ask = asks.send(self._record(turn))
            except StopIteration as answered:
                reply: Reply = answered.value
                return reply

    def _asks(self, message: str, output: type[BaseModel] | None) -> Generator[str, Reply, Reply]:
        """The messages of one turn, each sent back answered by the shell driving it (``chat``,
        ``achat``, ``stream``, ``astream``; whole or streamed): ``message``, then, when its reply
        does not validate as ``output``, the repair round's. Returns the reply, its ``output``
        validated; a second failure raises :class:`~hermes_core.errors.StructuredOutputError`."""
        reply = yield message
        if output is None:
            return reply
        try:
            return self._structured_reply(reply, output)
        except (ValidationError, ValueError) as e:
            first = e
        repaired = yield structured.repair_message(output, first)
        try:
            return self._structured_reply(_after(repaired, reply), output)
        except (ValidationError, ValueError) as e:
            raise structured.failed(output, e, repaired.text) from None

    def _turn_options(self, output: type[BaseModel] | None,
                      options: Mapping[str, Any] | None) -> CallOptions:
        extra = dict(options or {})
        if isinstance(extra.get("stop"), list | str):   # ["END"] or "END" from a caller
            stop = extra["stop"]
            extra["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
        if output is not None:
            extra["response_format"] = structured.response_format(output)
        return self.options(**extra)

    def _structured_reply(self, reply: Reply, output: type[BaseModel]) -> Reply:
        """``reply`` with its validated ``output`` (also as ``last_reply``); raises on a mismatch.

        A refusal (or a reply a content filter withheld) is raised as it is, with no repair
        round: asking again for "only a JSON object" would press the model past its refusal, and
        the error would call it bad JSON."""
        if reply.stop_reason in DECLINED:
            raise structured.refused(output, reply.text)
        self.last_reply = replace(reply, output=structured.parse_output(reply.text, output))
        return self.last_reply

    def stream(self, message: str, *, output: type[BaseModel] | None = None,
               options: Mapping[str, Any] | None = None) -> ReplyStream:
        """Stream the reply's text; the history is updated only when the stream completes.

        The turn's prompt is built when the stream is first read, not when it is made (as
        ``astream``, a generator, always was): from the history as it is then, so a stream made
        before an earlier one was read carries the earlier turn once that one has finished.
        Errors of preparing (an oversized message, a hook's wrong return) come from that read.

        With ``output=Model`` the JSON is shown once it is whole (a stream cut inside it is asked
        again unseen, on both wire formats) and ``reply.output`` holds the validated object at
        the end (a repair round streams after a break; a second failure raises
        :class:`~hermes_core.errors.StructuredOutputError` from the iteration).
        """
        _require_str(message)   # a caller's mistake, said where it was made
        opts = self._turn_options(output, options)

        def pieces() -> Iterator[str]:
            holder.reply = yield from self._stream_pieces(message, output, opts)

        holder = ReplyStream(pieces())
        return holder

    def stream_output(self, message: str, *, output: type[T],
                      options: Mapping[str, Any] | None = None) -> OutputStream[T]:
        """Stream a structured reply as ``output`` objects: partial ones while its JSON arrives
        (validated leniently: the fields so far), then the final one validated strictly, which
        alone is the stream's ``output`` (see :class:`~hermes_core.agent.partial_output.
        OutputStream`: retries and the repair round, errors, cancelling)."""
        _require_str(message)   # a caller's mistake, said where it was made
        drafts = Drafts(output, self.redact.stream)
        return OutputStream(drafts, self._stream_pieces(
            message, output, self._turn_options(output, options), drafts))

    def _stream_pieces(self, message: str, output: type[BaseModel] | None, opts: CallOptions,
                       drafts: Drafts[Any] | None = None) -> Generator[str, None, Reply]:
        asks = self._asks(message, output)
        ask = next(asks)
        while True:
            reply = yield from self._stream_turn(self._turn(ask), opts, drafts)
            try:
                ask = asks.send(reply)
            except StopIteration as done:
                validated: Reply = done.value
                return validated
            yield ROUND_BREAK   # the repair round's drafts start anew (``Shown``)

    def _stream_turn(self, turn: Turn, opts: CallOptions,
                     drafts: Drafts[Any] | None = None) -> Generator[str, None, Reply]:
        turn.tool_choice = opts.tool_choice
        while True:
            stream = self.loop.stream(turn.prompt, turn.decision, opts, fit=turn.fit_for)
            try:
                done = yield from collect(stream, turn, self.redact.stream(), drafts,
                                          hold=opts.response_format is not None)
                stream.close()
                more = turn.next_round(done, stream.attempts)
            except BaseException:   # a failure, or the reply abandoned (Ctrl-C, closed)
                stream.close()      # the call loop records the abandoned attempt first
                self._lost(turn, stream.attempts)
                raise
            finally:
                stream.close()
            if not more:
                return self._record(turn)

    def _lost(self, turn: Turn, tried: Sequence[Attempt]) -> None:
        """A turn failed (its history untouched): what it was billed, the rounds it finished
        and its failed attempts (``tried``: the failing call's), is in the session's totals as
        wasted, though no reply is."""
        turn.billed(tried)
        spent = turn.usage + turn.wasted
        if spent == Usage() and not turn.cost.total:
            return
        with held_interrupts():
            self.stats.wasted = self.stats.wasted + spent
            self.stats.cost = self.stats.cost + turn.cost

    async def _aturn(self, message: str) -> Turn:
        """``_turn`` in a worker thread (file stats, retrieval, memory search and the ``pre_llm_call``
        hook must not stall the event loop), or on the loop when builds have been cheap
        (:mod:`~hermes_core.agent.prepare_gate`): timed there by the wall clock, no system call."""
        if self.prepare_gate.inline(hooked=self.pre_llm_call is not None):
            started = time.perf_counter()
            turn = self._turn(message)
            self.prepare_gate.ran_inline(time.perf_counter() - started)
            return turn
        return await asyncio.to_thread(self._measured_turn, message)

    def _measured_turn(self, message: str) -> Turn:
        started = time.thread_time()
        turn = self._turn(message)
        self.prepare_gate.ran_in_thread(time.thread_time() - started)
        return turn

    @overload
    async def achat(self, message: str, *, options: Mapping[str, Any] | None = None) -> Reply: ...

    @overload
    async def achat(self, message: str, *, output: type[T],
                    options: Mapping[str, Any] | None = None) -> T: ...

    async def achat(self, message: str, *, output: type[T] | None = None,
                    options: Mapping[str, Any] | None = None) -> Reply | T:
        """``chat`` for async code: async tools run as tasks, sync ones in threads."""
        reply = await arun(self._answering(message, output, self._turn_options(output, options),
                                           is_async=True))
        return reply if output is None else cast(T, reply.output)

    async def astream(self, message: str, *, output: type[BaseModel] | None = None,
                      options: Mapping[str, Any] | None = None) -> AsyncIterator[str]:
        """Async text pieces; ``self.last_reply`` holds the Reply once the stream completes
        (with ``output=Model``, its ``output`` is the validated object; see ``stream``). Its
        ``aclose()`` closes the turn's stream before it returns (each inner generator closed)."""
        opts = self._turn_options(output, options)
        async with aclosing(self._astream_pieces(message, output, opts)) as pieces:
            async for piece in pieces:
                yield piece

    def astream_output(self, message: str, *, output: type[T],
                       options: Mapping[str, Any] | None = None) -> AsyncOutputStream[T]:
        """:meth:`stream_output` for async code (``async for obj in agent.astream_output(...)``)."""
        drafts = Drafts(output, self.redact.stream)
        return AsyncOutputStream(drafts, self._astream_pieces(
            message, output, self._turn_options(output, options), drafts),
            lambda: self.last_reply)

    async def _astream_pieces(self, message: str, output: type[BaseModel] | None,
                              opts: CallOptions, drafts: Drafts[Any] | None = None,
                              ) -> AsyncGenerator[str, None]:
        asks = self._asks(message, output)
        ask = next(asks)
        while True:
            turn = await self._aturn(ask)
            async with aclosing(self._astream_turn(turn, opts, drafts)) as pieces:
                async for piece in pieces:
                    yield piece
            assert self.last_reply is not None   # the turn ran to its end: recorded
            try:
                ask = asks.send(self.last_reply)
            except StopIteration:
                return
            yield ROUND_BREAK   # as in :meth:`_stream_pieces`

    async def _astream_turn(self, turn: Turn, opts: CallOptions,
                            drafts: Drafts[Any] | None = None) -> AsyncGenerator[str, None]:
        turn.tool_choice = opts.tool_choice
        while True:
            stream = self.loop.astream(turn.prompt, turn.decision, opts, fit=turn.fit_for)
            shown = Shown(turn, self.redact.stream(), drafts,
                          hold=opts.response_format is not None)
            try:
                try:
                    async for d in stream:   # the step ``collect`` drives
                        if (piece := shown.feed(d)) is not None:
                            yield piece
                except Exception:   # what arrived is shown, less the start of a key
                    self._lost(turn, stream.attempts)
                    if rest := shown.failed():
                        yield rest
                    raise
                except BaseException:   # abandoned (cancelled, closed): nothing more is shown
                    await stream.aclose()   # the call loop records the abandoned attempt first
                    self._lost(turn, stream.attempts)
                    raise
                if rest := shown.end():
                    yield rest
            finally:
                await stream.aclose()
            try:
                more = await turn.anext_round(completed(shown.acc, stream), stream.attempts)
            except BaseException:   # a tool interrupted or failed: the round was billed
                self._lost(turn, stream.attempts)
                raise
            if not more:
                self._record(turn)
                return

    # ------------------------------------------------------------------ session

    def _complete_fast(self, prompt: Prompt) -> Completion:
        """One call on the fast model through the normal call path (keys, retries, failover)."""
        routing = self.settings.llm.routing
        fast = routing.fast_model or routing.default_model
        decision = self.router.select(prompt, requested_model=fast, pinned=self.pinned_provider)
        done, _ = self.loop.complete(prompt, decision, self.options())
        return done

    def summarizer(self) -> Callable[[Sequence[Message]], Any] | None:
        """A summariser on the fast model through the normal call path; None when offline."""
        if self.offline:
            return None
        from hermes_core.agent.episodic.summarise import ModelSummarizer

        return ModelSummarizer(self._complete_fast)

    def history_summarizer(self) -> HistorySummarizer | None:
        """What folds old turns into the "conversation so far": the fast model; None offline.
        Made once per set of providers (every turn asks)."""
        if (made := self._history_summarizer) is None or made[0] is not self.loop.providers:
            made = self._history_summarizer = (
                self.loop.providers, None if self.offline else model_summarizer(self._complete_fast))
        return made[1]

    def feedback(self, skill: str, *, good: bool = True) -> bool:
        """Tell skill retrieval whether ``skill`` was right for the last message (``good=False``:
        it was wrong). Stored as a usage event (redacted) that later, similar messages are ranked
        with; nothing is stored when ``skill_utils.learn`` is off or there is no such skill.
        The name is resolved as ``skill_view`` resolves it (case forgiven when no skill has the
        exact name). Returns whether it was recorded; ``good`` that is not a bool is a TypeError
        (``good="no"`` would be true)."""
        from hermes_core.retrieval.usage_store import verdict
        good = verdict(good)
        if not isinstance(skill, str):   # the lookup would fail on it, naming neither
            raise TypeError(f"skill must be a skill's name (str), not {skill!r} ({type(skill).__name__})")
        turn = self.last_turn
        if self.skills is None or turn is None or turn.query is None:
            return False
        found = self.skills.find(skill)
        if found is None:
            return False
        return self.skills.record(found.name, "feedback", good=good, message=turn.query.message)

    def end_session(self, *, summarize: bool = True) -> Any:
        """Summarise the chat into episodic memory; returns the record result, or None when
        nothing was said since the last record. Recording again replaces the session's memory.
        ``summarize=False`` records the extractive summary without asking the model (the chat,
        when Ctrl-C interrupts the model's summary at its end)."""
        if len(self.history) <= self._recorded or self.context_engine is None:
            return None
        upto = len(self.history)
        # Offline replies describe the request, not the conversation: remember only what was said.
        messages = ([m for m in self.history if m.role == "user"] if self.offline
                    else self.history)
        try:
            result = self.context_engine.record_session(
                self.session_id, messages, self.summarizer() if summarize else None)
        except HermesError as e:
            # Not marked recorded: a full disk or a locked database is retried by the next
            # end_session (``/reset``, close) instead of losing the session for good.
            log.warning("could not record session %s: %s", self.session_id, e)
            return None
        self._recorded = upto
        return result

    def renew_after_fork(self) -> None:
        """In a forked child (a worker of a server that made its agent first): a new session id.
        Each process chats on and records its session at close, and a record replaces the earlier
        one of its id: under one id the process that closed last wiped the other's conversation
        from memory. The history so far stays, in both records."""
        self.session_id = uuid.uuid4().hex[:12]

    def close(self, *, wait_warm: bool = True, summarize: bool = True) -> None:
        """Record the session (``summarize``: see :meth:`end_session`), let a background model
        load finish (or, with ``wait_warm=False``, tell it to stop at its next step), and close
        the memory store."""
        self.end_session(summarize=summarize)
        if not wait_warm:
            cancel = getattr(self.retriever, "cancel_warm", None)
            if cancel is not None:
                cancel()
        wait = getattr(self.retriever, "wait_warm", None)
        if wait is not None and wait_warm:
            wait()
        close = getattr(self.context_engine, "close", None)
        if close is not None:
            close()
        self.tools.close()
        audit = getattr(self.loop, "audit", None)
        if audit is not None:
            audit.close()   # reopened on the next attempt if the agent is used again

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def aclose(self, *, wait_warm: bool = True) -> None:
        """:meth:`close` in a worker thread: recording the session may call the fast model and
        write SQLite, and waiting for a model load can take seconds, none of which may stall the
        event loop."""
        await asyncio.to_thread(self.close, wait_warm=wait_warm)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def reset(self) -> Any:
        """Record the conversation so far, then start a new one (new session id, no trace of the
        old turn in ``last_reply`` / ``last_decision``). Returns what ``end_session`` returned:
        None when nothing was recorded."""
        recorded = self.end_session()
        self.history.clear()
        self.compactor.reset()
        self.stats = SessionStats()
        self.session_id = uuid.uuid4().hex[:12]
        self._recorded = 0
        self.last_reply = None
        self.last_decision = None
        self.last_turn = None
        return recorded

    @contextmanager
    def override(self, *, provider: Provider | None = None, retriever: Any = None,
                 context_engine: Any = None) -> Iterator[Agent]:
        """Temporarily swap parts, e.g. ``with agent.override(provider=FakeProvider()):``."""
        saved = (self.loop.providers, self._pinned, self.builder.memory_source)
        saved_skills = (self.retriever, self.skills, self.builder.skill_selector)
        saved_engine = self.context_engine  # not the builder's memory source: they may differ
        if provider is not None:
            self.loop.providers = {provider.name: provider}
            self._pinned = True
        if retriever is not None:
            self.retriever, self.skills = retriever, SkillSelection(retriever)
            self.builder.skill_selector = self.skills
        if context_engine is not None:
            self.context_engine = self.builder.memory_source = context_engine
        try:
            yield self
        finally:
            self.loop.providers, self._pinned, self.builder.memory_source = saved
            self.retriever, self.skills, self.builder.skill_selector = saved_skills
            self.context_engine = saved_engine


# ---------------------------------------------------------------------- helpers


def _require_str(message: object) -> None:
    """A message that is not text is refused where the caller passed it (``prepare``,
    ``stream``, ``stream_output``), not deep inside the turn."""
    if not isinstance(message, str):
        raise TypeError(f"message must be str, not {type(message).__name__}")


def _after(repaired: Reply, rejected: Reply) -> Reply:
    """A repaired structured reply that reports the reply it replaced: that one's tokens as
    wasted and in its cost (the session's totals have both turns already), and its requests'
    ids before its own."""
    return replace(repaired, wasted=repaired.wasted + rejected.usage + rejected.wasted,
                   wasted_cost=repaired.wasted_cost + rejected.cost,
                   cost=repaired.cost + rejected.cost,
                   request_ids=rejected.request_ids + repaired.request_ids)

